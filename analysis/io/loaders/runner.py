"""What a runner declares: one `Runner` entry per loader module (its module constant `RUNNER`), listed once in
`referee.io.loaders.RUNNERS`. Everything referee knows of a runner beyond the bytes its loader reads is a field
of its entry, read where it is used (`RUNNERS[name].seats`); nothing else names a runner.

A runner must declare its name, `sniff` (path, head, sample -> the share of evidence that fits it, 0-1,
`detect.py`), `load` (path, content sha256, LoadOptions -> LoadResult) and `fields` (what each kind of record it
reads may carry, as `referee formats` lists them); its format page is `data/formats/<page>.md`. Everything else is
optional, with the default that holds for a runner which plays its agents against each other in one match.

`Headline` is a runner's own headline number (shown beside referee's ratings by
`referee.run.ratings.runner_numbers`): computed from its tables by `compute`, or, where the runner reports a
rating, by fitting the rating method `rating` (`referee.models.registry.RATING_METHODS`) to its comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import pandas as pd

MATCH_UNIT = ("the match: every two players of different agents in it (scripted partners, group `background`, "
              "are not rated)")


@dataclass(frozen=True)
class Tables:
    """The canonical tables a runner's numbers are computed from (measures may be empty where unused)."""

    matches: pd.DataFrame
    results: pd.DataFrame
    measures: pd.DataFrame

    def of(self, runner: str) -> "Tables":
        """The tables of runner `runner`'s matches only."""
        matches = self.matches[self.matches["runner"] == runner]
        inside = {t: frame[frame["match_id"].isin(matches["match_id"])] if "match_id" in frame.columns else frame
                  for t, frame in (("results", self.results), ("measures", self.measures))}
        return Tables(matches, inside["results"], inside["measures"])


HEADLINE_COLUMNS = ["agent", "unit", "task", "metric", "value", "stderr", "stated", "stated_stderr", "headline", "note"]


def headline_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with exactly HEADLINE_COLUMNS, in order (a column it lacks is NaN): what a `compute` returns."""
    missing = {c: float("nan") for c in HEADLINE_COLUMNS if c not in frame.columns}
    return frame.assign(**missing)[HEADLINE_COLUMNS]


def only_unit(agent: str, units: list[str]) -> str | None:
    """The unit whose numbers are the agent's own: its one unit, or none when it has several."""
    return units[0] if len(units) == 1 else None


@dataclass(frozen=True)
class Headline:
    """A runner's own headline: its name, why referee's rating may order the agents otherwise (`differs`),
    `columns` (metric as computed -> the numeric column it is printed in, named as the runner names it; the first
    is the headline), and how it is computed: `compute` (this runner's Tables -> one row per (agent, unit,
    metric): agent, unit, metric, value, stderr, stated, stated_stderr, headline, task, note), or `rating`, a
    rating method fitted to the runner's comparisons of kind `comparisons`, named `name` in unit `unit`.
    `stderr`: the column of the headline's standard error where the runner prints one; `own_unit`: which of an
    agent's units holds its own numbers; `measures`: whether `compute` reads the measures table; `needs`: what
    of the stored logs the number is computed from, said when none of the matches carries it."""

    name: str
    differs: str
    columns: dict[str, str]
    compute: Callable[[Tables], pd.DataFrame] | None = None
    rating: str | None = None
    comparisons: str = "scenario"
    unit: str = ""
    measures: bool = False
    stderr: str | None = None
    own_unit: Callable[[str, list[str]], str | None] = only_unit
    needs: str = "the runner's own scores"


@dataclass(frozen=True)
class Runner:
    """One runner as referee knows it (see the module docstring).

    name : the runner's name (`matches.runner`, `--runner NAME`, `referee formats NAME`).
    sniff, load : detection and reading (module docstring); fields : record kind -> the fields it may carry.
    page : its format page's file name under data/formats (default `<name>.md`).
    identity : path -> what besides its bytes names a file as a record (clem's episode folder), or None.
    companions : folder -> the files beside its logs it reads or leaves out (not logs of their own).
    fallback : detection tries it after every specific runner that fits (the table runner).
    default_catalogue : the scenario catalogue its files are read against when none is given.
    score_option : `ingest --score` chooses which of its scores is the score.
    excluded_when : flag -> the matches the flag marks, left out of ratings by default (`--include FLAG`).
    separate_episodes : its agents play the same instance in separate episodes, compared across them.
    comparison_unit : what one comparison is, in words (MATCH_UNIT unless separate_episodes).
    seats : it numbers each player by its seat (turn order), a covariate (`referee.prepare.covariates`).
    ewa_run : what one EwA run is ('repetition', or 'scenario' when its repetitions are instances).
    socio_cognitive : its predictions, actions and judge ratings are what `referee socio` reads by default.
    season_audit : each match is a season the report audits with the EVAL 01 formula.
    actors, event_types : the runner's own roles (a game master) and event types, never a player's.
    outcome_directions : outcome measure -> 'higher' or 'lower' is better (what the audit reads).
    headline : its own headline number, if it prints one.
    columns : the canonical columns `--map` / `--mapping` can name for it (the table and arena runners).
    home : the name of the file beside it from which a file holding no match of its own takes its match (clem's
        scores.json belongs to the interactions.json in its folder): where that match was stored from another
        folder, the file is a copy's and is set aside as a duplicate (`referee.io.set_aside.set_aside_strays`).
    """

    name: str
    sniff: Callable[..., float]
    load: Callable[..., Any]
    fields: Mapping[str, list[str]]
    page: str = ""
    identity: Callable[[Path], str | None] | None = None
    companions: Callable[[Path], Iterable[Path]] | None = None
    home: str | None = None
    fallback: bool = False
    default_catalogue: Callable[[], Any] | None = None
    score_option: bool = False
    excluded_when: Mapping[str, str] = field(default_factory=dict)
    separate_episodes: bool = False
    comparison_unit: str = MATCH_UNIT
    seats: bool = False
    ewa_run: str = "repetition"
    socio_cognitive: bool = False
    season_audit: bool = False
    actors: tuple[str, ...] = ()
    event_types: tuple[str, ...] = ()
    outcome_directions: Mapping[str, str] = field(default_factory=dict)
    headline: Headline | None = None
    columns: tuple[str, ...] = ()  # the canonical columns `--map CANONICAL=COLUMN` can name (table, arena)

    def __post_init__(self) -> None:
        if not self.page:
            object.__setattr__(self, "page", f"{self.name}.md")
        if self.ewa_run not in ("repetition", "scenario"):
            raise ValueError(f"runner {self.name}: ewa_run is 'repetition' or 'scenario', not {self.ewa_run!r}")
        if self.separate_episodes == (self.comparison_unit == MATCH_UNIT):
            raise ValueError(f"runner {self.name}: a runner of separate episodes says what one comparison is "
                             "(comparison_unit), and only such a runner")
