"""Pairwise comparisons and ballots built from canonical tables: what every rating and voting method reads.

A comparisons table has one row per comparison: `a`, `b` (agents), `outcome` (1 = a scored higher, 0 =
b did, 0.5 = equal), `cluster` (the unit a bootstrap or a cross-validation fold resamples: the match, or
for Concordia the (scenario, repetition)), `game`, `kind` ('scenario', 'match' or 'parallel'),
`communication` and `time`. Three sources (COMPACT section 2.4, Concordia contest scoring):

- `scenario_comparisons`: one comparison set per (scenario, repetition), joined on both, never on file
  order: every pair of agents' focal scores in that set (strict greater-than wins; equal is a tie);
- `match_comparisons`: every pair of players of different agents within one match;
- `parallel_comparisons`: agents that played the same game type and size against identical opponents
  in separate matches, compared across those matches.

A ballots table has one row per (ballot, agent): `ballot`, `agent`, `score` (higher is better); it is
what the voting methods read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.prepare.scores import agent_match_scores

COLUMNS = ["a", "b", "outcome", "cluster", "game", "kind", "communication", "time"]


def _pairs(frame: pd.DataFrame, group: list[str], kind: str) -> pd.DataFrame:
    """All within-group pairs (i < j, different agents) of a (group..., agent, score, ...) table."""
    frame = frame.reset_index(drop=True).assign(_row=lambda d: np.arange(len(d)))
    left = frame.rename(columns={"agent": "a", "score": "score_a", "_row": "row_a"})
    right = frame[group + ["agent", "score", "_row"]].rename(columns={"agent": "b", "score": "score_b", "_row": "row_b"})
    pairs = left.merge(right, on=group)
    pairs = pairs[(pairs["row_a"] < pairs["row_b"]) & (pairs["a"] != pairs["b"])]
    outcome = np.where(pairs["score_a"] > pairs["score_b"], 1.0, np.where(pairs["score_a"] < pairs["score_b"], 0.0, 0.5))
    out = pairs.assign(outcome=outcome, kind=kind)
    for col in COLUMNS:
        if col not in out.columns:
            out[col] = None
    return out[COLUMNS].reset_index(drop=True)


def scenario_comparisons(scores: pd.DataFrame) -> pd.DataFrame:
    """Comparisons between agents' scores in the same (scenario, repetition).

    Parameters
    ----------
    scores : one row per (match, agent) with `scenario`, `repetition`, `agent`, `score`, `game` (e.g.
        `analysis.prepare.scores.agent_match_scores`); rows without a scenario are ignored. -inf compares as
        lowest; equal scores are ties.

    Returns
    -------
    A comparisons table (kind 'scenario', cluster '{scenario}:{repetition}').
    """
    data = scores[scores["scenario"].notna()].copy()
    data["cluster"] = data["scenario"].astype(str) + ":" + data["repetition"].astype(str)
    data["time"] = None
    return _pairs(data[["cluster", "game", "communication", "time", "agent", "score"]], ["cluster"], "scenario")


def match_comparisons(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Comparisons between every two players of different agents in the same match.

    Uses `score` where the match records one for everyone, else `rank` (lower is better).
    Returns a comparisons table (kind 'match', cluster = match_id, time = started_at).
    """
    data = results.merge(matches[["match_id", "game", "communication", "started_at"]], on="match_id")
    has_score = data.groupby("match_id")["score"].transform(lambda s: s.notna().all())
    data["score"] = np.where(has_score, pd.to_numeric(data["score"]), -pd.to_numeric(data["rank"]))
    data = data[data["score"].notna()].rename(columns={"match_id": "cluster", "started_at": "time"})
    return _pairs(data[["cluster", "game", "communication", "time", "agent", "score"]], ["cluster"], "match")


def parallel_comparisons(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """COMPACT's parallel games: agent X in match 1 against agent Y in match 2, when both matches are the
    same game and size and X's opponents in match 1 are, as a multiset of agents, Y's in match 2.

    Returns a comparisons table (kind 'parallel', cluster '{match 1}|{match 2}').
    """
    data = results[results["score"].notna()].merge(matches[["match_id", "game", "n_players", "communication"]],
                                                   on="match_id")
    lineup = data.groupby("match_id")["agent"].apply(lambda s: sorted(s))
    data["opponents"] = [
        "\x1f".join(_without(lineup[m], a)) for m, a in zip(data["match_id"], data["agent"])
    ]
    key = ["game", "n_players", "opponents"]
    left = data.rename(columns={"agent": "a", "score": "score_a", "match_id": "match_a"})
    right = data[key + ["agent", "score", "match_id"]].rename(columns={"agent": "b", "score": "score_b", "match_id": "match_b"})
    pairs = left.merge(right, on=key)
    pairs = pairs[(pairs["match_a"] < pairs["match_b"]) & (pairs["a"] != pairs["b"])]
    outcome = np.where(pairs["score_a"] > pairs["score_b"], 1.0, np.where(pairs["score_a"] < pairs["score_b"], 0.0, 0.5))
    out = pairs.assign(outcome=outcome, kind="parallel", cluster=pairs["match_a"] + "|" + pairs["match_b"], time=None)
    return out[COLUMNS].reset_index(drop=True)


def _without(agents: list[str], agent: str) -> list[str]:
    rest = list(agents)
    rest.remove(agent)
    return rest


def comparisons_from_tables(matches: pd.DataFrame, results: pd.DataFrame, parallel: bool = False) -> pd.DataFrame:
    """All comparisons a store's tables imply: scenario comparisons for matches with a scenario, match
    comparisons for the rest, plus parallel-game comparisons when `parallel` is true."""
    scenario_matches = matches[matches["scenario"].notna()]
    other = matches[matches["scenario"].isna()]
    parts = []
    if len(scenario_matches):
        parts.append(scenario_comparisons(agent_match_scores(scenario_matches, results)))
    if len(other):
        other_results = results[results["match_id"].isin(other["match_id"])]
        parts.append(match_comparisons(other, other_results))
        if parallel:
            parts.append(parallel_comparisons(other, other_results))
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(parts, ignore_index=True)


def ballots_from_tables(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """One ballot per (scenario, repetition) ranking agents by focal score, or per match (agents' mean score;
    negated rank when scores are missing). Returns columns ballot, agent, score, repetition."""
    scores = agent_match_scores(matches, results)
    missing = scores["score"].isna()
    if missing.any():
        ranks = results.groupby(["match_id", "agent"])["rank"].mean().rename("_rank").reset_index()
        scores = scores.merge(ranks, on=["match_id", "agent"], how="left")
        scores.loc[missing, "score"] = -scores.loc[missing, "_rank"]
    has_scenario = scores["scenario"].notna()
    scores["ballot"] = np.where(has_scenario, scores["scenario"].astype(str) + ":" + scores["repetition"].astype(str),
                                scores["match_id"])
    ballots = scores.groupby(["ballot", "agent"], as_index=False).agg(score=("score", "mean"),
                                                                      repetition=("repetition", "first"))
    return ballots
