"""The one result contract of every job (`referee.run.job_table.JOBS`): what `referee.<job>(...)` returns in a
notebook and what `referee <job>` writes and prints.

A `Result` holds named tables (the first is the main one, `table()`), figures drawn on demand (`plot(name)`, a
matplotlib Figure, never shown), notes, diagnostics, named fields (typed values the job reports beside its tables:
a verdict, the finalists, a method), and `value`, the typed object the job computed (a `FitResult`, a
`RatingResult`, a `GameRanking`, ...; posteriors as `value.idata`).

A job with fields returns its own subclass of `Result` (`AuditJobResult`, `LeaderboardJobResult`, ...), on which
each field is a typed attribute (`audit.verdict: str`), declared once here as a `Field` and read from `fields`;
constructing one without a declared field fails at once. Nothing is looked up by name at run time: an editor and
a type checker see every field.
"""

from __future__ import annotations

import html
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar, overload

import numpy as np
import pandas as pd

ROWS_SHOWN = 30  # rows of a table a notebook displays
RESERVED = ("tables", "notes", "diagnostics")  # the `--json` keys beside the fields
T = TypeVar("T")
_MISSING = object()
# the Python types a field's declared type admits: numpy's numbers count as Python's, an int as a float
KINDS: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int, np.integer), "float": (float, int, np.floating, np.integer),
    "bool": (bool, np.bool_), "list": (list, tuple), "dict": (dict,), "None": (type(None),)}


class Field(Generic[T]):
    """A typed field of a job's result, declared on its `Result` subclass (`verdict = Field[str]()`) and read
    from the result's `fields` under the attribute's own name. `optional`: a field some paths of the job do not
    report reads as None there."""

    def __init__(self, optional: bool = False):
        self.optional = optional
        self.name = ""

    def __set_name__(self, owner, name: str) -> None:
        # `Field[float]()` has set `__orig_class__` by now: its declared type, read once here
        self.name = name
        declared = typing.get_args(getattr(self, "__orig_class__", Field[Any]))[0]  # `Field["str | None"]`: a ForwardRef
        self.declared = getattr(declared, "__forward_arg__", None) or getattr(declared, "__name__", str(declared))
        self.kinds = tuple(kind for part in self.declared.split("|")
                           for kind in KINDS.get(part.strip().split("[")[0], (object,)))

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> "Field[T]": ...

    @overload
    def __get__(self, obj: "Result", owner: type | None = None) -> T: ...

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        found = obj.fields.get(self.name, _MISSING)
        if found is _MISSING:
            if self.optional:
                return None
            raise KeyError(f"a {obj.job} result lacks its field {self.name!r}")
        return found

    def __set__(self, obj: "Result", value: T) -> None:
        obj.fields[self.name] = value


@dataclass
class Result:
    """What one job returns.

    job : the job's name ('ratings', 'rank', ...); tables : name -> table (written as NAME.csv; the first is the
    main table); notes, diagnostics : as the fit reported them; figures : name -> a function drawing that figure
    (the first is `plot()`'s default); fields : named values reported with the tables (in `--json` and as
    attributes); lines : the reading the command prints after its main table; value : the typed object behind
    the result; documents : name -> text files the command writes (e.g. the audit's report.md); failure : why a
    job that finished did not succeed (a failed calibration), else None; drawn : what the figures draw that
    is not a table (computed with the result; the figures themselves are `referee.present.job_figures`').
    """

    job: str
    tables: dict[str, pd.DataFrame]
    notes: list[str] = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)
    figures: dict[str, Callable[[], Any]] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    value: Any = None
    documents: dict[str, str] = field(default_factory=dict)
    failure: str | None = None
    drawn: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # the job's options as it ran (`Job.compute` sets them)

    def table(self, name: str | None = None) -> pd.DataFrame:
        """The table `name` (default the main table: the CSV the command writes first). KeyError naming the
        tables there are when there is none of that name."""
        if not self.tables:
            raise KeyError(f"a {self.job} result has no table")
        if name is None:
            return next(iter(self.tables.values()))
        if name not in self.tables:
            raise KeyError(f"a {self.job} result has tables {', '.join(self.tables)}, not {name!r}")
        return self.tables[name]

    def plot(self, name: str | None = None):
        """A figure of the result (a matplotlib Figure): `name` one of `figures`, default the first.
        ValueError naming the figures there are when the result has none of that name."""
        if not self.figures or (name is not None and name not in self.figures):
            have = "figures " + ", ".join(self.figures) if self.figures else "no figure"
            raise ValueError(f"a {self.job} result has {have}" + (f", not {name!r}" if name else ""))
        return self.figures[name or next(iter(self.figures))]()

    @property
    def idata(self):
        """The posterior (ArviZ InferenceData) when the job sampled one, else None."""
        return getattr(self.value, "idata", None)

    def __post_init__(self) -> None:
        declared = declared_fields(type(self))
        missing = [n for n, f in declared.items() if not f.optional and n not in self.fields]
        reserved = [n for n in self.fields if n in RESERVED]
        if missing or reserved:
            raise ValueError(f"a {self.job} result ({type(self).__name__}) "
                             + (f"lacks its field(s) {', '.join(missing)}" if missing else
                                f"may not name a field {', '.join(reserved)}"))
        for name, declared_field in declared.items():  # each field's value of its declared type
            value = self.fields.get(name)
            if name in self.fields and not (value is None and declared_field.optional) \
                    and not isinstance(value, declared_field.kinds):
                raise TypeError(f"a {self.job} result's field {name!r} is declared {declared_field.declared}, got "
                                f"{type(value).__name__} {value!r}"[:300])

    def payload(self) -> dict:
        """The result as JSON-ready values: its fields at the top, every table as records under "tables" (so a
        field and a table of one name never overwrite each other), notes and diagnostics."""
        return {**self.fields, "tables": {n: t.to_dict("records") for n, t in self.tables.items()},
                "notes": list(self.notes), "diagnostics": self.diagnostics}

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(str(n))}</li>" for n in self.notes)
        shown = ""
        if self.tables:
            frame = self.table()
            shown = frame.head(ROWS_SHOWN).to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}")
            if len(frame) > ROWS_SHOWN:
                shown += f"<p>{len(frame) - ROWS_SHOWN} more rows: <code>.table()</code></p>"
        converged = self.diagnostics.get("converged")
        state = "" if converged is None else f" &middot; converged: {converged}"
        return (f"<div><strong>referee {html.escape(self.job)}</strong>{state}{shown}"
                + (f"<ul>{notes}</ul>" if notes else "") + "</div>")


def declared_fields(cls: type) -> dict[str, Field]:
    """The `Field`s a `Result` subclass declares (its own and its bases'), by name."""
    return {n: f for k in reversed(cls.__mro__) for n, f in vars(k).items() if isinstance(f, Field)}


# Each job's typed result: the fields it reports beside its tables (see the job's own docstring for what each is).

class IngestJobResult(Result):
    """`referee ingest`: counts of records read, accepted and set aside, and the reasons with one example each."""
    read = Field[int]()
    accepted = Field[int]()
    quarantined = Field[int]()
    by_reason = Field[dict]()
    by_runner = Field[list]()
    failed_files = Field[list]()
    store = Field[str]()
    reasons = Field[list]()


class WrittenJobResult(Result):
    """`referee simulate`: the files written."""
    written = Field[list]()


class RatingsJobResult(Result):
    """`referee ratings`: the method, the slicing (`by`), Davidson's tie parameter where fitted, and what the
    runner's own numbers say beside the ratings."""
    method = Field[str]()
    by = Field["str | None"](optional=True)
    ties = Field["dict | None"](optional=True)  # Davidson: nu, its se, the tie probability of equals, the observed rate
    runner_numbers = Field["list[str] | None"](optional=True)


class CompareJobResult(Result):
    """`referee compare A B`: A - B in Elo points with its interval (what it is, `interval`), P(A stronger) and
    the head-to-head record. (`compare --all` returns a plain Result with the `pairs` table.)"""
    difference = Field[float]()
    lower = Field[float]()
    upper = Field[float]()
    interval = Field[str]()
    p_better = Field[float]()
    p_value = Field[float]()
    wins = Field[int]()
    losses = Field[int]()
    ties = Field[int]()
    matches = Field[int]()


class CheckJobResult(Result):
    """`referee check`: how many claims were checked and how many were violated (the `violations` table)."""
    checked = Field[str]()  # what was read, in words
    violations = Field[int]()


class RunnerNumbersJobResult(Result):
    """`referee runner-numbers`: the runners whose own numbers stand beside referee's."""
    runners = Field[list]()


class LeaderboardJobResult(Result):
    """`referee leaderboard`: who could be first at the level, the simultaneous critical value, the sentences
    said, the runner's own numbers and their columns, the methods on the board, and the one-line summary."""
    could_be_first = Field[list]()
    level = Field[float]()
    critical = Field[dict]()  # component -> the simultaneous rank sets' critical value
    said = Field[list]()
    runner_numbers = Field[list]()
    runner_columns = Field[list]()
    methods = Field[list]()
    summary = Field[str]()


class ContestJobResult(Result):
    """`referee contest`: the finalists."""
    finalists = Field[list]()


class PowerJobResult(Result):
    """`referee plan --power`: the smallest difference (Elo points) the curve is drawn for."""
    delta = Field[float]()


class FitJobResult(Result):
    """`referee fit`: the model; the baseline (score models) or the effects, interaction and the columns read as
    task and item (outcome models)."""
    model = Field[str]()
    baseline = Field["str | None"](optional=True)
    effects = Field["str | None"](optional=True)
    interaction = Field["bool | None"](optional=True)
    task = Field["str | None"](optional=True)  # the columns read as task and item (outcome models)
    item = Field["str | None"](optional=True)


class PredictorsJobResult(Result):
    """`referee compare-predictors`: the predictors included."""
    included = Field[list]()


class CalibrateJobResult(Result):
    """`referee calibrate`: the model, the number of simulations and whether it passed."""
    model = Field[str]()
    sims = Field[int]()
    passed = Field[bool]()


class SocioJobResult(Result):
    """`referee socio`: the judges' agreement (None without judges); `determinants`, each construct's fitted
    weights."""
    agreement = Field["dict | None"](optional=True)

    @property
    def determinants(self) -> dict:
        """condition ('all games', 'with communication', ...) -> its `Determinants` (weights, AUC), as
        `socio_analysis` found them."""
        return self.value.determinants


class JudgeJobResult(Result):
    """`referee judge`: the rubric, and the ledger's counts (asked, calls, ok, malformed, failed, cached, tokens,
    cost), or the estimate on a dry run."""
    rubric = Field[str]()
    dry_run = Field["bool | None"](optional=True)
    items = Field["int | None"](optional=True)  # a dry run's estimate: items, cached, calls, tokens
    calls = Field[int]()
    cached = Field[int]()
    tokens_in_estimate = Field["int | None"](optional=True)
    tokens_out_estimate = Field["int | None"](optional=True)
    asked = Field["int | None"](optional=True)  # the ledger of a run: asked, ok, malformed, failed, tokens, cost
    ok = Field["int | None"](optional=True)
    malformed = Field["int | None"](optional=True)
    failed = Field["int | None"](optional=True)
    tokens_in = Field["int | None"](optional=True)
    tokens_out = Field["int | None"](optional=True)
    cost_usd = Field["float | None"](optional=True)


class AgreementJobResult(Result):
    """`referee judge-agreement`: the items rated by more than one judge."""
    items = Field[int]()


class AuditJobResult(Result):
    """`referee audit`: the verdict and the outcomes the score was judged against; `directions`, each outcome's
    direction as given or found."""
    verdict = Field[str]()
    outcomes = Field[list]()

    @property
    def directions(self) -> dict:
        """outcome -> its direction, as the audit used it (`AuditResult.directions`)."""
        return self.value.directions


class ReportJobResult(Result):
    """`referee report`: the report's index.html."""
    index = Field[str]()


class PaperJobResult(Result):
    """`referee paper`: the items made and not made, and the files written."""
    made = Field[int]()
    not_made = Field[int]()
    written = Field[list]()
