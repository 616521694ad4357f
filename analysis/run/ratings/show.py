"""`referee show`: the games behind the numbers on a terminal. A match's trace in order (round, actor, type, target,
text, value, status, reason) with its result, or, with `--agent`, an agent's most surprising matches under the
board's ratings (`referee.run.ratings.games`). `referee.trace(store, match)` returns the same trace as a table."""

from __future__ import annotations

import pandas as pd

from referee.result import Result


def show(store, match: str | None = None, agent: str | None = None, runner: str | None = None,
         phase: list[str] | None = None, limit: int = 10) -> Result:
    """A match's trace (`match`: its id; main table `trace`, then `result`) or an agent's `limit` most surprising
    matches (`agent`; main table `matches`: match, opponents, won, lost, tied, expected wins, surprise in bits,
    upset). ValueError naming the id when the store holds no such match or agent, or when neither or both are
    given."""
    from referee.io.traces import match_ids, traces

    if (match is None) == (agent is None):
        raise ValueError("name a match (referee show MATCH) or an agent (referee show --agent NAME), not both")
    if match is not None:
        found = traces(store, [match]).get(str(match))
        if found is None:
            from referee.models.registry import suggest

            raise ValueError(f"no match {match!r} in the store{suggest(str(match), match_ids(store))}")
        where = ", ".join(f"{k} {found.match[k]}" for k in ("runner", "game", "scenario", "phase")
                          if found.match.get(k) is not None and str(found.match[k]) not in ("", "nan", "None"))
        lines = [f"match {match} ({where}): {len(found.events):,} event(s) in order, then its result",
                 found.results.dropna(axis=1, how="all").to_string(index=False, na_rep="—")
                 if len(found.results) else "no result stored"]
        return Result("show", {"trace": found.events, "result": found.results}, [], lines=lines,
                      fields={"match": str(match)})
    return _agent(store, agent, runner, phase, limit)


def _agent(store, agent: str, runner: str | None, phase: list[str] | None, limit: int) -> Result:
    from referee.models.registry import suggest
    from referee.run.ratings.board import infer_board
    from referee.prepare.comparisons import comparisons_and_agents
    from referee.run.ratings.games import match_surprise, pair_records, record_by_opponent
    from referee.run.stored import selected_tables

    matches, results, _ = selected_tables(store, runner, phase, None)
    comparisons, agents = comparisons_and_agents(matches, results)  # as the leaderboard reads them
    known = sorted(set(comparisons["a"]) | set(comparisons["b"]))
    if agent not in known:
        raise ValueError(f"agent {agent!r} has no comparison in the store's scope{suggest(agent, known)}")
    board = infer_board(comparisons, agents)  # the leaderboard's inference: its ratings
    ratings = board.table.dropna(subset=["rating"]).set_index("agent")["rating"].astype(float)
    if agent not in ratings.index:
        raise ValueError(f"agent {agent!r} has no rating on the board ({board.table.set_index('agent').at[agent, 'status']})")
    found = match_surprise(comparisons, ratings)
    mine = found[found["agent"] == agent].drop(columns="agent").head(limit).reset_index(drop=True)
    mine = mine.assign(expected=mine["expected"].round(3), surprise=mine["surprise"].round(3))
    lines = [f"{agent}: its {len(mine)} most surprising of {int((found['agent'] == agent).sum())} match(es) under the "
             "board's ratings (surprise: -log2 P(result), summed over its comparisons in the match); "
             "`referee show MATCH` prints one's trace"]
    record = record_by_opponent(pair_records(comparisons), agent)
    return Result("show", {"matches": mine, "record": record}, [], lines=lines,
                  fields={"agent": agent})


def trace(store, match: str) -> pd.DataFrame:
    """A match's events in order (seq, round, stage, actor, type, target, text, value, status, reason), as
    `referee show MATCH` prints them; ValueError naming the id when the store holds no such match."""
    return show(store, match=match).table()
