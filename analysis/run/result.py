"""The one result contract of every job (`referee.run.job_table.JOBS`): what `referee.<job>(...)` returns in a
notebook and what `referee <job>` writes and prints.

A `Result` holds named tables (the first is the main one, `table()`), figures drawn on demand (`plot(name)`, a
matplotlib Figure, never shown), notes, diagnostics, named fields (typed values the job reports beside its tables:
a verdict, the finalists, a method; read as attributes, `result.verdict`), and `value`, the typed object the job
computed (a `FitResult`, a `RatingResult`, a `GameRanking`, ...; posteriors as `value.idata`). A field or an
attribute of `value` is read as an attribute of the result itself: `audit.verdict`, `fit.idata`.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

ROWS_SHOWN = 30  # rows of a table a notebook displays


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

    def __getattr__(self, name: str):
        if name.startswith("_") or name in ("fields", "value"):
            raise AttributeError(name)
        if name in self.fields:
            return self.fields[name]
        if self.value is not None and hasattr(self.value, name):
            return getattr(self.value, name)
        raise AttributeError(f"a {self.job} result has no {name!r}: fields {sorted(self.fields)}, tables "
                             f"{list(self.tables)} (`.table(name)`)")

    def payload(self) -> dict:
        """The result as JSON-ready values: its fields, every table as records, notes and diagnostics."""
        return {**self.fields, **{n: t.to_dict("records") for n, t in self.tables.items()}, "notes": list(self.notes),
                "diagnostics": self.diagnostics}

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
