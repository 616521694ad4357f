"""referee: Bayesian analysis of gameplay traces from multi-agent evaluations.

The one installed top-level name. Its notebook API (`referee.api`) is loaded on first use, so that
`import referee` and the command line start without pandas or PyMC:

    import referee
    store = referee.open("logs/")                  # or an existing store.duckdb
    referee.ratings(store, "bt", bootstrap=200)    # ratings, rank, compare, fit, audit, report, sample

The modules below it: `referee.io` (loaders, store), `referee.prepare`, `referee.run`, `referee.present`,
`referee.simulate`, `referee.cli`, and `referee.models` (the statistical models).
"""

from __future__ import annotations

API = ("open", "sample", "ratings", "rank", "compare", "ratings_cv", "fit", "predictors", "describe", "socio", "audit",
       "report", "use_style", "Result")
__all__ = list(API)


def __getattr__(name: str):
    if name in API:
        from referee import api

        return getattr(api, name)
    raise AttributeError(f"module 'referee' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(API))
