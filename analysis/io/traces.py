"""What happened in a match, as the store holds it: its events in order and its results (`referee show`, the report's
match pages, `referee.trace`). Read by match id, so a page of a 20,000-episode store reads its own rows only."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

TRACE_COLUMNS = ["seq", "round", "stage", "actor", "type", "target", "text", "value", "status", "reason"]
RESULT_COLUMNS = ["player", "agent", "score", "rank", "outcome", "team", "role"]
MATCH_COLUMNS = ["match_id", "runner", "game", "scenario", "phase", "n_players", "started_at"]


@dataclass
class Trace:
    """One match: `match` (its row: runner, game, scenario, ...), `events` (TRACE_COLUMNS, in the order the runner
    wrote them: seq), `results` (RESULT_COLUMNS, best first)."""

    match: dict
    events: pd.DataFrame
    results: pd.DataFrame


def traces(store, match_ids) -> dict[str, Trace]:
    """The `Trace` of each of `match_ids` the store holds (missing ids are left out), by match id."""
    ids = sorted({str(m) for m in match_ids})
    if not ids:
        return {}
    where = "WHERE match_id IN (SELECT unnest(?::VARCHAR[]))"
    matches = store.query(f"SELECT {', '.join(MATCH_COLUMNS)} FROM matches {where}", [ids])
    events = store.query(f"SELECT match_id, {', '.join(TRACE_COLUMNS)} FROM events {where} ORDER BY match_id, seq",
                         [ids])
    results = store.query(f"SELECT match_id, {', '.join(RESULT_COLUMNS)} FROM results {where} "
                          "ORDER BY match_id, rank NULLS LAST, score DESC NULLS LAST, player", [ids])
    by_events = dict(tuple(events.groupby("match_id", sort=False)))
    by_results = dict(tuple(results.groupby("match_id", sort=False)))
    empty_events, empty_results = events.iloc[:0], results.iloc[:0]
    return {row["match_id"]: Trace(row, by_events.get(row["match_id"], empty_events)[TRACE_COLUMNS].reset_index(drop=True),
                                   by_results.get(row["match_id"], empty_results)[RESULT_COLUMNS].reset_index(drop=True))
            for row in matches.to_dict("records")}


def match_ids(store) -> list[str]:
    """Every match id the store holds, sorted (for a 'did you mean' on a misspelt one)."""
    return sorted(store.query("SELECT match_id FROM matches")["match_id"].astype(str))

