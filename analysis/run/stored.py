"""The matches and results an analysis reads from a store: one runner's, in the chosen phases, meeting the
chosen conditions. Shared by the command line and the notebook API (`referee.api`)."""

from __future__ import annotations

import pandas as pd

from referee.prepare.comparisons import select_matches
from referee.prepare.selection import exclusion_note, outcome_note, select_phases
from referee.prepare.membership import is_in
from referee.io.store_reads import PROVENANCE


def one_runner(matches: pd.DataFrame, runner: str | None) -> pd.DataFrame:
    """The matches of `runner` (None: the store's only runner). ValueError naming the runners when the store
    holds several and none was chosen, when the runner has no match, or when the store is empty."""
    runners = sorted(matches["runner"].unique())
    if runner is None and len(runners) > 1:
        raise ValueError(f"the store holds matches of runners {runners}; choose one with --runner")
    if runner is not None:
        if runner not in runners:
            raise ValueError(f"no matches of runner {runner!r} in the store (runners: {runners})")
        matches = matches[matches["runner"] == runner]
    if matches.empty:
        raise ValueError("the store holds no matches; run `referee ingest` first")
    return matches


def selected_tables(store, runner: str | None = None, phase: list[str] | None = None,
                    where: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(matches, results, notes): `stored_tables`, and what of them ratings treat apart (test runs, forfeits,
    aborted matches), as notes."""
    matches, results = stored_tables(store, runner, phase, where)
    return matches, results, [n for n in (exclusion_note(matches), outcome_note(results)) if n]


def stored_tables(store, runner: str | None = None, phases: list[str] | None = None,
                  where: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(matches, results) of a store (`referee.io.store.Store`): the runner's matches in `phases` meeting every
    `where` condition ('column=value'), and their results."""
    matches = select_matches(select_phases(one_runner(store.matches(PROVENANCE), runner), phases), where or [])
    results = store.results(PROVENANCE)
    kept = is_in(results["match_id"], matches["match_id"])
    return matches, results if kept.all() else results[kept]  # (every row kept: no copy of a million rows)
