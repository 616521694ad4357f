"""referee: Bayesian analysis of gameplay traces from multi-agent evaluations.

The one installed top-level name. Its notebook API (`referee.api`) is loaded on first use, so that
`import referee` and the command line start without pandas or PyMC:

    import referee
    store = referee.open("logs/")                  # or an existing store.duckdb
    referee.ratings(store, "bt", bootstrap=200)    # ratings, rank, compare, fit, audit, report, sample

The modules below it: `referee.io` (loaders, store), `referee.prepare`, `referee.run`, `referee.present`,
`referee.simulators`, `referee.cli`, and `referee.models` (the statistical models).
"""

from __future__ import annotations

from referee.composing import JOBS

API = ("open", "sample", "use_style", "trace", "Result") + tuple(job.api for job in JOBS.values())
__all__ = list(API) + ["__version__"]


def __getattr__(name: str):
    if name == "__version__":
        from referee.names import referee_version

        return referee_version()
    if name in API:
        from referee import api

        return getattr(api, name)
    raise AttributeError(f"module 'referee' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(API))
