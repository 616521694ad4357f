"""referee in a notebook: one call per job of the job table, the same function the command of that name runs.

    import referee
    store = referee.open(referee.sample("concordia", "logs"), catalogue=referee.sample("concordia", "catalogue.toml"))
    bt = referee.ratings(store, "bt", bootstrap=200)       # a Result: bt.table(), bt.plot(), bt.notes
    referee.compare(store, "agent_01", "rational_agent")    # P(A stronger than B), difference, head to head
    referee.rank(store, "copeland"); referee.audit(store, outcome=["nation_power:higher"]).verdict
    referee.report(store, out="reports/mine")

Every job of `referee.composing.JOBS` is a call here, named as its command with underscores
(`referee.ratings_cv`, `referee.compare_predictors`, `referee.judge_agreement`): its options are the command's,
with the same names (underscored), defaults and checks; its first argument, for a job that reads a store, is a
store (`referee.open`), a store file, logs to ingest, or a DataFrame of results (columns match, agent, score and
the table runner's optional ones, `referee formats table`). It returns the `Result` the command writes
(`referee.result`): `table(name)`, `plot(name)`, `notes`, `diagnostics`, named fields as attributes, and a
rich `_repr_html_` for Jupyter. Every call also takes `progress=True`: its progress as a notebook widget (default
none). `use_style()` draws a notebook's own figures in referee's style.
"""

from __future__ import annotations

import contextlib
import inspect
import tempfile
from pathlib import Path

from referee.io.resources import shipped
from referee.io.store import Store
from referee.models import progress
from referee.models.registry import suggest
from referee.composing import JOBS
from referee.run.job_table import Job
from referee.result import Result

__all__ = ["open", "sample", "use_style", "trace", "Result"] + [job.api for job in JOBS.values()]


def sample(*parts: str) -> Path:
    """The path of a bundled sample (`data/sample/...`), e.g. `sample("concordia", "logs")`."""
    return shipped("sample", *parts)


def open(source, runner: str | Path | None = None, catalogue: str | Path | None = None,
         store: str | Path | None = None, **ingest) -> Store:
    """A store to analyse: an existing `.duckdb` store file (opened read-only), logs (a file, a folder or a list of
    them) ingested into `store` (default: a new file in a temporary folder) with `runner`, `catalogue` and any
    other `Store.ingest` option, or a DataFrame of results (the table runner's columns: match, agent, score, ...).
    The ingest report is `store.last_ingest` (None for a store file opened as it is)."""
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        folder = Path(tempfile.mkdtemp(prefix="referee-"))
        source.to_csv(folder / "results.csv", index=False)
        return open(folder / "results.csv", runner=runner or "table", catalogue=catalogue, store=store, **ingest)
    paths = source if isinstance(source, list) else [source]
    if len(paths) == 1 and str(paths[0]).endswith(".duckdb") and Path(paths[0]).is_file():
        return Store(paths[0], read_only=True)
    target = Path(store) if store is not None else Path(tempfile.mkdtemp(prefix="referee-")) / "store.duckdb"
    opened = Store(target)
    opened.ingest(paths, runner=runner, catalogue=catalogue, **ingest)
    return opened


def _data(job: Job, data):
    """The store `job` reads from `data` (a context manager): a Store as it is (left open), else one opened here
    and closed after the job: `open(data)` (a store file, logs or a DataFrame), a store file opened writable for
    a job that writes to its store."""
    if data is None or isinstance(data, Store):
        if data is None and job.data in ("store", "writable"):
            raise ValueError(f"{job.api} reads a store: give a store (referee.open), a store file, logs or a "
                             "DataFrame of results")
        return contextlib.nullcontext(data)
    if job.data not in ("store", "read-optional") and str(data).endswith(".duckdb"):
        return Store(data)
    return open(data)


def _call(job: Job):
    """`referee.<job>`: the job's function with its options as parameters (same names, defaults and checks as the
    command's), its first parameter the data it reads."""
    params = [] if job.data == "none" else [inspect.Parameter(
        "data", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None if job.data in ("optional", "read-optional") else
        inspect.Parameter.empty)]
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    for option in job.options:
        if option.required and params and params[-1].default is not inspect.Parameter.empty:
            kind = inspect.Parameter.KEYWORD_ONLY  # a required option after an optional one: by name only
        default = inspect.Parameter.empty if option.required else option.default
        params.append(inspect.Parameter(option.name, kind, default=default))
    params.append(inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(params)

    def call(*args, **kwargs) -> Result:
        unknown = [k for k in kwargs if k not in signature.parameters]
        if unknown:  # a misspelt option: said as the command line says it, with the closest option
            raise TypeError(f"referee.{job.api} has no option {unknown[0]!r}"
                            f"{suggest(unknown[0], [o.name for o in job.options])}; options: "
                            + ", ".join(o.name for o in job.options))
        given = dict(signature.bind(*args, **kwargs).arguments)
        with progress.showing(progress.from_argument(given.pop("progress", None))), \
                _data(job, given.pop("data", None)) as data:
            return job.run(data, **given)

    from referee.models.registry import implementation

    call.__name__ = call.__qualname__ = job.api
    call.__signature__ = signature
    options = "\n".join(f"    {o.name} : {o.help}" + ("" if o.required else f" (default {o.default!r})")
                        for o in job.options)
    options += ("\n    progress : True shows the job's progress as a notebook widget (ingest, fits, bootstraps, "
                "report stages), False or None (default) shows nothing")
    call.__doc__ = (f"`referee {job.name}` in a notebook: {job.help}.\n\n"
                    f"{inspect.getdoc(implementation(job.function)) or ''}\n\nOptions:\n{options}")
    return call


def __getattr__(name: str):
    for job in JOBS.values():
        if job.api == name:
            found = _call(job)
            globals()[name] = found
            return found
    raise AttributeError(f"module 'referee.api' has no attribute {name!r}")


def trace(data, match: str):
    """A match's events in order (seq, round, stage, actor, type, target, text, value, status, reason), the table
    `referee show MATCH` prints, as a DataFrame (it renders in a notebook). `data` as every job's: a store, a store
    file, logs or a DataFrame of results."""
    from referee.run.ratings.show import trace as match_trace

    with _data(JOBS["show"], data) as store:
        return match_trace(store, match)


def use_style() -> None:
    """Draw a notebook's own matplotlib figures in referee's style (paper widths, colour-blind-safe palette)."""
    from referee.present.figures import use_style as apply

    apply()
