"""Pairwise comparisons and ballots built from canonical tables: what every rating and voting method reads.

A comparisons table has one row per comparison: `a`, `b` (agents), `outcome` (1 = a scored higher, 0 =
b did, 0.5 = equal), `cluster` (the unit a bootstrap or a cross-validation fold resamples: the match, or
for Concordia the (scenario, repetition)), `game`, `kind` ('scenario', 'match' or 'parallel'),
`communication` and `time`. Three sources (COMPACT section 2.4, Concordia contest scoring):

- `scenario_comparisons`: one comparison set per (phase, scenario, repetition), joined on all three, never
  on file order: every pair of agents' focal scores in that set (strict greater-than wins; equal is a tie). Used
  only for runners whose matches are separate episodes of one (scenario, repetition), one per evaluated
  agent (a runner entry declares `separate_episodes`: Concordia's focal agents);
- `match_comparisons`: every pair of players of different agents within one match (every other runner,
  whether or not its matches name a scenario);
- `parallel_comparisons`: agents that played the same game type and size against identical opponents
  in separate matches, compared across those matches.

Scripted partners (a result of group `background`: Concordia's background population, clem's `programmatic`,
Kaggle's built-in bots) are a role, not a rated agent: they enter no comparison and no ballot unless asked
(`scripted=True`), and the comparisons' `attrs['scripted']` names the scripted agents seen (`scripted_agents`),
so that the rating status can tell an agent that only ever beat a scripted partner.

Test runs (Concordia's `exclude_from_elo_calculation`, see `referee.prepare.selection`) never enter a
comparison or a ballot; aborted matches neither; a forfeiting player loses to every other player of its match
(`referee.prepare.selection.with_outcomes`).

A ballots table has one row per (ballot, agent): `ballot`, `agent`, `score` (higher is better); it is
what the voting methods read.

`pair_count` says how many comparisons the tables imply before any is built; `comparisons_from_tables`
refuses to build more than a budget (`MAX_PAIRS`, or $REFEREE_MAX_PAIRS) and `win_counts` gives the
pooled win and tie counts in bounded memory, whatever the input, for the methods that need only those.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from referee.prepare.scores import agent_match_scores
from referee.prepare.selection import ordering_points, with_outcomes, without_excluded
from referee.prepare.membership import is_in
from referee.models.codes import positions

COLUMNS = ["a", "b", "outcome", "cluster", "game", "kind", "communication", "time"]
MAX_PAIRS = 5_000_000  # comparisons built in memory at most (about 0.5 GB with the work of building them)
BYTES_PER_PAIR = 100  # rough memory of one comparison row while it is built


class ComparisonBudgetError(ValueError):
    """The tables imply more comparisons than the memory budget allows; the message says how many and what
    to do instead."""


def separate_episode_runners() -> set[str]:
    """Runners whose matches are separate episodes of one (scenario, repetition), compared across matches."""
    from referee.io.loaders import RUNNERS

    return {name for name, runner in RUNNERS.items() if runner.separate_episodes}


def runs_by_scenario() -> set[str]:
    """Runners whose design repeats no episode (a runner entry's ewa_run = 'scenario': clem plays each experiment's
    instances once per model pair), so that evaluation without aggregation takes each scenario as one run;
    every other runner's run is the repetition (Concordia's repetition r of every scenario)."""
    from referee.io.loaders import RUNNERS

    return {name for name, runner in RUNNERS.items() if runner.ewa_run == "scenario"}


def _pooled(matches: pd.DataFrame) -> pd.Series:
    """Mask of matches compared across matches: a separate-episode runner's, with a scenario and a
    repetition (a missing key never makes a shared group: such a match is compared within itself)."""
    return (matches["runner"].isin(separate_episode_runners()) & matches["scenario"].notna()
            & matches["repetition"].notna())


def pooled_unit(frame: pd.DataFrame) -> pd.Series:
    """The comparison unit of pooled rows: '{scenario}:{repetition}', prefixed '{phase}/' when the row has a
    phase (repetition 0 of a scenario in the evaluation phase is not repetition 0 of its cross-play)."""
    unit = frame["scenario"].astype(str) + ":" + frame["repetition"].astype(str)
    if "phase" not in frame.columns:
        return unit
    phase = frame["phase"]
    return unit.where(phase.isna(), phase.astype(str) + "/" + unit)


def _pooled_scores(matches: pd.DataFrame, results: pd.DataFrame) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """(one score per (match, agent) of the pooled matches that have a scenario, or None where none is pooled; the
    other matches)."""
    pooled = matches[_pooled(matches)]
    if not len(pooled):
        return None, matches[~_pooled(matches)]
    scores = agent_match_scores(pooled, results[is_in(results["match_id"], pooled["match_id"])])
    return scores[scores["scenario"].notna()], matches[~_pooled(matches)]


def unit_matches(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Which match of each comparison unit is an agent's own: one row per (unit, agent) with its match_id. A
    pooled unit ('{scenario}:{repetition}', separate-episode runners: `pooled_unit`) holds one match per agent; any
    other unit is the match itself."""
    scores, other = _pooled_scores(matches, results)
    parts = []
    if scores is not None:
        parts.append(pd.DataFrame({"unit": pooled_unit(scores), "agent": scores["agent"],
                                   "match_id": scores["match_id"]}))
    if len(other):
        own = results[is_in(results["match_id"], other["match_id"])][["match_id", "agent"]].drop_duplicates()
        parts.append(pd.DataFrame({"unit": own["match_id"], "agent": own["agent"], "match_id": own["match_id"]}))
    if not parts:
        return pd.DataFrame(columns=["unit", "agent", "match_id"])
    return pd.concat(parts, ignore_index=True).drop_duplicates(["unit", "agent"]).astype(str)


def budget() -> int:
    """The comparison budget: $REFEREE_MAX_PAIRS if set, else MAX_PAIRS."""
    return int(os.environ.get("REFEREE_MAX_PAIRS", MAX_PAIRS))


def scripted_agents(results: pd.DataFrame) -> list[str]:
    """The agents that play as scripted partners (a result of group `background`), sorted."""
    if "group" not in results.columns:
        return []
    return sorted(results.loc[results["group"] == "background", "agent"].dropna().unique())


def with_scripted(results: pd.DataFrame, scripted: bool) -> pd.DataFrame:
    """The results comparisons read: without scripted partners' rows (group `background`), or, with
    `scripted`, with them counted as players like any other (group `focal`)."""
    if "group" not in results.columns:
        return results
    background = (results["group"] == "background").to_numpy(bool)
    if not background.any():
        return results
    if scripted:
        return results.assign(group=results["group"].where(~background, "focal"))
    return results[~background]


def _units(matches: pd.DataFrame, results: pd.DataFrame, scripted: bool = False) -> pd.DataFrame:
    """One row per (comparison unit, agent) with its score: the unit is the (scenario, repetition) for pooled
    matches and the match otherwise; columns unit, agent, score, game, communication, time, pooled. Test runs
    (`referee.prepare.selection.exclusions`) are left out, and scripted partners unless `scripted`
    (`with_scripted`)."""
    matches, results = with_outcomes(without_excluded(matches), results)
    results = with_scripted(results, scripted)
    scores, other = _pooled_scores(matches, results)
    parts = []
    if scores is not None:
        parts.append(pd.DataFrame({"unit": pooled_unit(scores),
                                   "agent": scores["agent"], "score": scores["score"], "game": scores["game"],
                                   "communication": scores["communication"], "time": None, "pooled": True}))
    if len(other):
        data = results[is_in(results["match_id"], other["match_id"])].merge(
            other[["match_id", "game", "communication", "started_at"]], on="match_id")
        score = ordering_points(data)
        parts.append(pd.DataFrame({"unit": data["match_id"], "agent": data["agent"], "score": score,
                                   "game": data["game"], "communication": data["communication"],
                                   "time": data["started_at"], "pooled": False}))
    if not parts:
        return pd.DataFrame(columns=["unit", "agent", "score", "game", "communication", "time", "pooled"])
    units = pd.concat(parts, ignore_index=True)
    return units[pd.notna(units["score"])]


def _pairs(frame: pd.DataFrame, group: list[str], kind: str) -> pd.DataFrame:
    """All within-group pairs (i < j, different agents) of a (group..., agent, score, ...) table, a the earlier
    row: the rows of each pair from a self-merge on the group, or, where every group is two rows (arena
    judgments), by position alone (same rows, same order, no merge)."""
    frame = frame.reset_index(drop=True)
    codes = pd.factorize(frame[group[0]])[0] if len(group) == 1 and len(frame) else None
    if codes is not None and (np.bincount(codes) == 2).all():
        order = np.lexsort((np.arange(len(codes)), codes))  # by group (in order of first row), then by row
        row_a, row_b = order[0::2], order[1::2]
    else:
        rows = frame[group].assign(_row=np.arange(len(frame)))
        pairs = rows.merge(rows, on=group, suffixes=("_a", "_b"))
        pairs = pairs[pairs["_row_a"] < pairs["_row_b"]]
        row_a, row_b = pairs["_row_a"].to_numpy(), pairs["_row_b"].to_numpy()
    agent = frame["agent"].to_numpy()
    keep = agent[row_a] != agent[row_b]
    row_a, row_b = row_a[keep], row_b[keep]
    left = frame.iloc[row_a].reset_index(drop=True)
    out = left.rename(columns={"agent": "a"}).assign(
        b=agent[row_b], outcome=outcome_of(left["score"].to_numpy(float), frame["score"].to_numpy(float)[row_b]),
        kind=kind)
    for col in COLUMNS:
        if col not in out.columns:
            out[col] = None
    return out[COLUMNS]


def outcome_of(score_a: np.ndarray, score_b: np.ndarray) -> np.ndarray:
    """The comparison's outcome for a, shape (m,): 1 where a scored higher, 0 where lower, 0.5 where equal."""
    return np.where(score_a > score_b, 1.0, np.where(score_a < score_b, 0.0, 0.5))


def scenario_comparisons(scores: pd.DataFrame) -> pd.DataFrame:
    """Comparisons between agents' scores in the same (scenario, repetition).

    Parameters
    ----------
    scores : one row per (match, agent) with `scenario`, `repetition`, `agent`, `score`, `game` (e.g.
        `referee.prepare.scores.agent_match_scores`); rows without a scenario are ignored. -inf compares as
        lowest; equal scores are ties.

    Returns
    -------
    A comparisons table (kind 'scenario', cluster `pooled_unit`: '{scenario}:{repetition}', after '{phase}/').
    """
    data = scores[scores["scenario"].notna()].copy()
    data["cluster"] = pooled_unit(data)
    data["time"] = None
    return _pairs(data[["cluster", "game", "communication", "time", "agent", "score"]], ["cluster"], "scenario")


def match_comparisons(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Comparisons between every two players of different agents in the same match.

    Uses `score` where the match records one for everyone, else `rank` (lower is better).
    Returns a comparisons table (kind 'match', cluster = match_id, time = started_at).
    """
    data = results.merge(matches[["match_id", "game", "communication", "started_at"]], on="match_id")
    data["score"] = ordering_points(data)
    data = data[data["score"].notna()].rename(columns={"match_id": "cluster", "started_at": "time"})
    return _pairs(data[["cluster", "game", "communication", "time", "agent", "score"]], ["cluster"], "match")


def parallel_comparisons(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """COMPACT's parallel games: agent X in match 1 against agent Y in match 2, when both matches are the
    same game, size, framing (`variant`) and communication condition and X's opponents in match 1 are, as a
    multiset of agents, Y's in match 2.

    Returns a comparisons table (kind 'parallel', cluster '{match 1}|{match 2}').
    """
    return _parallel_pairs(_parallel_keys(matches, results))


PARALLEL_KEY = ["game", "n_players", "variant", "communication", "opponents"]


def _parallel_pairs(data: pd.DataFrame) -> pd.DataFrame:
    """Parallel-game comparisons from `_parallel_keys`' table."""
    left = data.rename(columns={"agent": "a", "score": "score_a", "match_id": "match_a"})
    right = data[PARALLEL_KEY + ["agent", "score", "match_id"]].rename(
        columns={"agent": "b", "score": "score_b", "match_id": "match_b"})
    pairs = left.merge(right, on=PARALLEL_KEY)
    pairs = pairs[(pairs["match_a"] < pairs["match_b"]) & (pairs["a"] != pairs["b"])]
    outcome = outcome_of(pairs["score_a"].to_numpy(float), pairs["score_b"].to_numpy(float))
    out = pairs.assign(outcome=outcome, kind="parallel", cluster=pairs["match_a"] + "|" + pairs["match_b"], time=None)
    out["communication"] = out["communication"].where(out["communication"] != "\x00none", None)
    return out[COLUMNS].reset_index(drop=True)


def select_matches(matches: pd.DataFrame, where: list[str]) -> pd.DataFrame:
    """The matches meeting every condition 'column=value' (e.g. 'communication=true', 'variant=pirates'),
    compared as text, case-insensitively (so true/True/TRUE all match a boolean True).

    Raises ValueError naming the columns when a condition's column is not a match column or it is not of the
    form column=value, and naming the values present when no match is left.
    """
    out = matches
    for condition in where:
        column, sep, value = condition.partition("=")
        column = column.strip()
        if not sep or column not in matches.columns:
            raise ValueError(f"--where {condition!r}: expected COLUMN=VALUE with a match column among "
                             f"{sorted(matches.columns)}")
        text = out[column].astype(str).str.lower()
        chosen = out[text == value.strip().lower()]
        if chosen.empty:
            raise ValueError(f"--where {condition!r} leaves no match; values of {column}: "
                             f"{sorted(matches[column].astype(str).unique())[:20]}")
        out = chosen
    return out


RESAMPLE_UNITS = ("match", "scenario", "prompt", "seed")


def with_resample(comparisons: pd.DataFrame, matches: pd.DataFrame, unit: str) -> tuple[pd.DataFrame, str | None]:
    """The comparisons with a `resample` column naming the cluster a bootstrap draws, and a note (or None).

    unit : 'match' (the comparison unit itself: the match, Concordia's (scenario, repetition); the default),
    'scenario' (the match's scenario), 'seed' (its repetition) or 'prompt' (its game: where the arena runner
    keeps a judgment's prompt or category). A comparison whose match lacks the chosen field keeps its match as
    its own cluster, and the note counts them. Pooled Concordia units ('phase/scenario:repetition') and
    parallel comparisons ('match 1|match 2', by the first) are read from their cluster.
    """
    if unit not in RESAMPLE_UNITS:
        raise ValueError(f"--resample takes one of {RESAMPLE_UNITS}, got {unit!r}")
    if unit == "match":
        return comparisons, None
    column = {"scenario": "scenario", "seed": "repetition", "prompt": "game"}[unit]
    cluster = comparisons["cluster"].astype(str)
    first = cluster.str.split("|", n=1).str[0]
    lookup = matches.set_index("match_id")[column] if column in matches.columns else pd.Series(dtype=object)
    value = first.map(lookup)
    pooled = (comparisons["kind"] == "scenario").to_numpy()
    if pooled.any():  # a pooled unit is '{phase/}scenario:repetition'
        bare = first[pooled].str.rsplit("/", n=1).str[-1]
        value[pooled] = (bare.str.rsplit(":", n=1).str[0] if unit == "scenario" else
                         bare.str.rsplit(":", n=1).str[-1] if unit == "seed" else comparisons.loc[pooled, "game"])
    missing = value.isna()
    out = comparisons.assign(resample=np.where(missing, "match:" + first, f"{unit}:" + value.astype(str)))
    units = out["resample"].nunique()
    note = (f"the bootstrap resamples {unit}s ({units} clusters instead of {cluster.nunique()} matches)"
            + (f"; {int(missing.sum())} comparison(s) whose match names no {unit} are their match's own cluster"
               if missing.any() else ""))
    return out, note


def comparison_games(comparisons: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The game(s) each comparison was played in, two string arrays of shape (n,): a parallel comparison's two
    matches (from its cluster 'match 1|match 2'), every other comparison's cluster twice. Resampling and
    cross-validation work on these games, so that one game's outcome is never on both sides of a split.
    Where the comparisons carry a `resample` column (`with_resample`), it is the game, both times."""
    if "resample" in comparisons.columns:
        unit = comparisons["resample"].astype(str).to_numpy()
        return unit, unit.copy()
    cluster = comparisons["cluster"].astype(str).to_numpy()
    first, second = cluster.copy(), cluster.copy()
    parallel = (comparisons["kind"] == "parallel").to_numpy()
    if parallel.any():
        parts = pd.Series(cluster[parallel]).str.split("|", n=1, expand=True)
        if parts.shape[1] == 2:
            first[parallel], second[parallel] = parts[0].to_numpy(), parts[1].fillna(parts[0]).to_numpy()
    return first, second


def _group_pairs(sizes: np.ndarray) -> int:
    """Pairs within groups of the given sizes: sum of k(k-1)/2."""
    sizes = np.asarray(sizes, np.int64)
    return int((sizes * (sizes - 1) // 2).sum())


def _parallel_keys(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Scored results with their match's game, size, framing and communication, and `opponents`: the sorted
    other agents of the match (the key parallel games are matched on; a missing framing or communication
    matches only another missing one)."""
    data = results[results["score"].notna()].merge(
        matches[["match_id", "game", "n_players", "variant", "communication"]], on="match_id")
    data["variant"] = data["variant"].astype(object).where(data["variant"].notna(), "\x00none")
    data["communication"] = data["communication"].astype(object).where(data["communication"].notna(), "\x00none")
    lineup = data.groupby("match_id")["agent"].apply(lambda v: sorted(v))
    data["opponents"] = ["\x1f".join(_without(lineup[m], a)) for m, a in zip(data["match_id"], data["agent"])]
    return data


def _without(agents: list[str], agent: str) -> list[str]:
    rest = list(agents)
    rest.remove(agent)
    return rest


def comparable_agents(matches: pd.DataFrame, results: pd.DataFrame, scripted: bool = False) -> list[str]:
    """The agents whose results enter comparisons (focal agents for separate-episode runners, every agent with
    a score or rank otherwise; scripted partners only with `scripted`), sorted: those a rating table should
    list, rated or not."""
    return sorted(_units(matches, results, scripted)["agent"].unique())


def pair_count(matches: pd.DataFrame, results: pd.DataFrame, parallel: bool = False) -> int:
    """How many comparison rows `comparisons_from_tables` would build (an upper bound: pairs of one agent
    with itself are counted), computed from group sizes without building any."""
    return _count(_units(matches, results), _parallel_input(matches, results) if parallel else None)


def _parallel_input(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame | None:
    """`_parallel_keys` of the matches compared within themselves, or None when there are none."""
    other = matches[~_pooled(matches)]
    return _parallel_keys(other, results[is_in(results["match_id"], other["match_id"])]) if len(other) else None


def _count(units: pd.DataFrame, parallel: pd.DataFrame | None) -> int:
    total = _group_pairs(units.groupby("unit").size())
    if parallel is not None:
        total += _group_pairs(parallel.groupby(PARALLEL_KEY, dropna=False).size())
    return total


def comparisons_from_tables(matches: pd.DataFrame, results: pd.DataFrame, parallel: bool = False,
                            max_pairs: int | None = None, scripted: bool = False) -> pd.DataFrame:
    """All comparisons a store's tables imply: across matches of one (scenario, repetition) for runners that
    declare separate-episode matches (Concordia), within each match for every other runner (whatever its
    scenario column holds), plus parallel-game comparisons when `parallel` is true.

    Raises ComparisonBudgetError, before building anything, when `pair_count` exceeds `max_pairs` (default
    `budget()`): the message gives the count and the memory it would take, and points to `win_counts`.
    Scripted partners are compared only with `scripted`; `attrs['scripted']` names them either way.
    """
    return comparisons_and_agents(matches, results, parallel, max_pairs, scripted)[0]


def comparisons_and_agents(matches: pd.DataFrame, results: pd.DataFrame, parallel: bool = False,
                           max_pairs: int | None = None, scripted: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """(`comparisons_from_tables`, `comparable_agents`) of the same tables from one pass over them (the two
    read the same per-unit scores; at arena scale each pass is seconds). Raises ComparisonBudgetError as
    `comparisons_from_tables` does."""
    limit = budget() if max_pairs is None else max_pairs
    units = _units(matches, results, scripted)
    agents = sorted(units["agent"].unique())
    keys = _parallel_input(matches, with_scripted(results, scripted)) if parallel else None
    n = _count(units, keys)
    if n > limit:
        raise ComparisonBudgetError(
            f"these matches imply {n:,} pairwise comparisons (about {n * BYTES_PER_PAIR / 1e9:.1f} GB to build), "
            f"over the budget of {limit:,} (REFEREE_MAX_PAIRS). Bradley-Terry and Elo without a bootstrap need "
            "only win counts, which referee streams in bounded memory (`referee ratings --method bt` or `elo`, "
            "`referee.prepare.comparisons.win_counts`); for other methods select fewer matches (--runner) or "
            "raise REFEREE_MAX_PAIRS if the memory is there")
    parts = []
    for pooled, kind in ((True, "scenario"), (False, "match")):
        chosen = units[units["pooled"] == pooled]
        if len(chosen):
            parts.append(_pairs(chosen.rename(columns={"unit": "cluster"})
                                [["cluster", "game", "communication", "time", "agent", "score"]], ["cluster"], kind))
    if keys is not None:
        parts.append(_parallel_pairs(keys))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    out.attrs["scripted"] = scripted_agents(results)
    return out, agents


def win_counts(matches: pd.DataFrame, results: pd.DataFrame, agents: list[str] | None = None,
               block: int = 1 << 20, scripted: bool = False) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Pooled strict-win and tie counts of the comparisons the tables imply, in bounded memory.

    Units (matches, or pooled (scenario, repetition)) are taken a block of about `block` pairs at a time;
    a unit larger than that is compared in row blocks. Returns (agents, W, T): W[i, j] = comparisons agent i
    won against j, T[i, j] = T[j, i] = ties between them (same definitions as `comparisons_from_tables`;
    pairs of one agent with itself are not comparisons; scripted partners only with `scripted`).
    """
    units = _units(matches, results, scripted)
    agents = sorted(units["agent"].unique()) if agents is None else list(agents)
    n = len(agents)
    W, T = np.zeros((n, n)), np.zeros((n, n))
    codes = positions(units["agent"], agents)
    order = np.argsort(units["unit"].to_numpy().astype(str), kind="stable")
    unit_sorted = units["unit"].to_numpy().astype(str)[order]
    code, score = codes[order], units["score"].to_numpy(float)[order]
    starts = np.flatnonzero(np.r_[True, unit_sorted[1:] != unit_sorted[:-1]])
    ends = np.r_[starts[1:], len(unit_sorted)]
    for lo, hi in zip(starts, ends):
        c, v = code[lo:hi], score[lo:hi]
        rows = max(1, block // max(hi - lo, 1))
        for r0 in range(0, hi - lo, rows):
            ci, vi = c[r0:r0 + rows, None], v[r0:r0 + rows, None]
            later = np.arange(r0, min(r0 + rows, hi - lo))[:, None] < np.arange(hi - lo)[None, :]  # each pair once
            valid = later & (ci != c[None, :])
            win, loss, tie = valid & (vi > v), valid & (vi < v), valid & (vi == v)
            ai, bj = np.broadcast_to(ci, valid.shape), np.broadcast_to(c[None, :], valid.shape)
            np.add.at(W, (ai[win], bj[win]), 1.0)
            np.add.at(W, (bj[loss], ai[loss]), 1.0)
            np.add.at(T, (ai[tie], bj[tie]), 1.0)
            np.add.at(T, (bj[tie], ai[tie]), 1.0)
    return agents, W, T


def ballots_from_tables(matches: pd.DataFrame, results: pd.DataFrame, scripted: bool = False) -> pd.DataFrame:
    """One ballot per (scenario, repetition) ranking agents by focal score for separate-episode runners
    (Concordia; within its phase), else one per match (agents' mean score; negated rank when scores are
    missing). Test runs are left out, and scripted partners unless `scripted`. Returns columns ballot, agent,
    score, repetition (the ballot's run for evaluation without aggregation: its repetition, within its phase, or
    its scenario for a runner that repeats nothing, `runs_by_scenario`)."""
    matches, results = with_outcomes(without_excluded(matches), results)
    results = with_scripted(results, scripted)
    scores = agent_match_scores(matches, results)
    missing = scores["score"].isna()
    if missing.any():
        ranks = results.groupby(["match_id", "agent"])["rank"].mean().rename("_rank").reset_index()
        scores = scores.merge(ranks, on=["match_id", "agent"], how="left")
        scores.loc[missing, "score"] = -scores.loc[missing, "_rank"]
    pooled = scores["runner"].isin(separate_episode_runners()) & scores["scenario"].notna() & scores["repetition"].notna()
    scores["ballot"] = np.where(pooled, pooled_unit(scores), scores["match_id"])
    # EwA's run: the repetition within its phase, or the scenario where the runner repeats nothing (`runs_by_scenario`)
    run = scores["repetition"].astype(object).where(~scores["runner"].isin(runs_by_scenario()),
                                                    scores["scenario"].astype(object))
    scores["repetition"] = run.where(scores["phase"].isna() | run.isna(), scores["phase"].astype(str) + "/" + run.astype(str))
    ballots = scores.groupby(["ballot", "agent"], as_index=False).agg(score=("score", "mean"),
                                                                      repetition=("repetition", "first"))
    return ballots


def no_comparisons_reason(matches: pd.DataFrame, results: pd.DataFrame) -> str:
    """Why the tables give no comparison, in one sentence a user can act on: no rated match; or one agent
    only; or, for separate-episode runners (Concordia's focal agents, Inspect's models), no (scenario,
    repetition) that two agents both played."""
    if matches.empty or results.empty:
        return "no comparisons to rate: the store holds no match with results"
    agents = sorted(results["agent"].dropna().unique())
    pooled = matches[_pooled(matches)]
    if len(pooled):  # the agents compared across episodes: each match's focal agents (`agent_match_scores`)
        names = sorted(agent_match_scores(pooled, results[is_in(results["match_id"], pooled["match_id"])])["agent"]
                       .dropna().unique())
        if len(names) < 2:
            return (f"no comparisons to rate: {', '.join(pooled['runner'].unique())} compares the agents that play "
                    f"the same (scenario, repetition) in separate episodes, and the store holds one such agent "
                    f"({', '.join(names) or 'none'}); ingest other agents' results of the same scenarios")
        return ("no comparisons to rate: no (scenario, repetition) was played by two of the agents "
                f"{names[:5]}{' ...' if len(names) > 5 else ''}")
    if len(agents) < 2:
        return f"no comparisons to rate: the store's matches have one agent only ({', '.join(agents) or 'none'})"
    return "no comparisons to rate: no match has players of two different agents with a result"


def require_comparisons(comparisons: pd.DataFrame, matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """`comparisons`, or ValueError saying why the tables give none (`no_comparisons_reason`): what the command
    line and the notebook API both raise before a rating is attempted."""
    if len(comparisons) == 0:
        raise ValueError(no_comparisons_reason(matches, results))
    return comparisons
