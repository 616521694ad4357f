"""Paired comparison of two agents, and of every pair: how likely A is stronger than B, by how much, and
their head-to-head record, from one rating method's cluster bootstrap (Miller 2024, "Adding error bars to
evals": resample the unit the data cluster in, and compare paired).

Bradley-Terry (the default) reads the board (`referee.run.ratings.board`): the same inference, the same se and the same
Holm-adjusted tests as the leaderboard's, whose rank sets are apart only where these tests separate a pair, so
`compare` cannot disagree with the board.

Another method uses its own paired bootstrap: every replicate rates both agents on the same resampled
matches, so the difference is paired, and its percentile interval, P(A > B) (ties counted half) and the
two-sided p (twice the smaller tail) come from the same replicates. A replicate that drew none of one agent's
matches is left out, counted. Where every replicate gives the same difference the bootstrap cannot move it
and no interval or probability is given, saying so. No interval is ever widened.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.ratings.rank_sets import LEVEL, alpha
from referee.models.registry import RATING_METHODS
from referee.run.ratings.ratings import RatingResult, rate
from referee.prepare.membership import agents_in
from referee.run.ratings.games import pair_lookup, pair_records, record_of


def _from_draws(result: RatingResult, a: str, b: str) -> dict:
    """a - b from a method's own paired bootstrap: P(better) (share of replicates with a above, ties half), p
    (twice the smaller tail) and the percentile interval (inverted CDF), all from the same replicates, so that
    an interval holding 0 never sits beside P outside [0.025, 0.975]; never widened. A replicate without either
    agent is left out, counted."""
    agents = list(result.bootstrap.agents)
    d = result.bootstrap.ratings[:, agents.index(a)] - result.bootstrap.ratings[:, agents.index(b)]
    used = d[np.isfinite(d)]
    table = result.table().set_index("agent")
    out = {"difference": float(table.loc[a, "rating"] - table.loc[b, "rating"]), "replicates": int(used.size),
           "replicates_left_out": int(d.size - used.size), "se": float(np.std(used, ddof=1)) if used.size > 1
           else np.nan}
    if used.size == 0:
        return dict(out, p_better=np.nan, lower=np.nan, upper=np.nan, p_value=np.nan,
                    interval="none: no replicate drew both agents")
    p = float((used > 0).mean() + 0.5 * (used == 0).mean())  # ties counted half
    out["p_better"], out["p_value"] = p, min(1.0, 2.0 * min(p, 1.0 - p))
    if np.ptp(used) < 1e-9:
        return dict(out, lower=np.nan, upper=np.nan, p_better=np.nan, p_value=np.nan,
                    interval="none: the bootstrap could not move the difference (every replicate alike)")
    lower, upper = np.quantile(used, [0.025, 0.975], method="inverted_cdf")
    what = "bootstrap percentile 95 %, paired"
    if not lower <= out["difference"] <= upper:
        what += "; the estimate lies outside it (a skewed bootstrap)"
    return dict(out, lower=float(lower), upper=float(upper), interval=what)


def _check(a: str, b: str, comparisons: pd.DataFrame) -> None:
    known = set(agents_in(comparisons))
    for agent in (a, b):
        if agent not in known:
            from referee.models.registry import suggest

            raise ValueError(f"agent {agent!r} has no comparison in the store{suggest(agent, sorted(known))}")
    if a == b:
        raise ValueError("compare two different agents")


def compare(comparisons: pd.DataFrame, a: str, b: str, method: str = "bt", bootstrap: int | None = None,
            seed: int = 0, unit: str = "match", board=None) -> dict:
    """P(a is stronger than b), the rating difference a - b (Elo points) with its 95 % interval, and their
    head-to-head record.

    comparisons : a comparisons table (`referee.prepare.comparisons`; a `resample` column sets the cluster the
    bootstrap draws); method : 'bt' reads the board (`referee.run.ratings.board.Board.pair`: the same inference as the
    leaderboard's sets and tiers; `board` when the caller has it, else inferred with `bootstrap` replicates or
    the fit's covariance); any other method of `referee.run.ratings.ratings.METHODS` on the Elo scale, its own paired
    bootstrap (`bootstrap` replicates, default 1000). unit : the resample unit, reported.
    Returns a dict: agent_a, agent_b, method, resample, p_better, difference, se, lower, upper, p_value,
    interval, replicates, replicates_left_out, p_holm, p_joint, rank_set_a, rank_set_b, own_test_separates,
    board_separates, marginal_sets_apart, same_tier (bt: the board's, `Board.pair`), matches (matches the two met in), wins,
    losses, ties (a's record against b), matches_a, matches_b, status_a, status_b. ValueError when either agent
    has no comparison or no chain of matches links them."""
    _check(a, b, comparisons)
    if RATING_METHODS[method].board:
        from referee.run.ratings.board import infer_board

        board = board if board is not None else infer_board(comparisons, bootstrap=bootstrap or 0, seed=seed)
        table = board.table.set_index("agent")
        found = board.pair(a, b)
        found.update(replicates=int(bootstrap or 0), replicates_left_out=0)
    else:
        result = rate(comparisons, method, bootstrap=bootstrap or DEFAULT_BOOTSTRAP, seed=seed)
        table = result.table().set_index("agent")
        if "component" in table.columns and table.loc[a, "component"] != table.loc[b, "component"]:
            raise ValueError(f"{a} and {b} are in different components of the comparison graph: no chain of "
                             "matches links them, so their ratings cannot be compared")
        found = _from_draws(result, a, b)
        found.update(p_holm=np.nan, p_joint=np.nan, rank_set_a=None, rank_set_b=None,
                     own_test_separates=bool(found["p_value"] < alpha()), board_separates=False,
                     marginal_sets_apart=False, same_tier=False)
    pair = comparisons[comparisons["a"].isin([a, b]) & comparisons["b"].isin([a, b])]
    record = record_of(pair_lookup(pair_records(pair)), a, b)
    return {"agent_a": a, "agent_b": b, "method": method, "resample": unit, **found,
            "matches": record.pop("met_in"), **record,
            "matches_a": int(table.loc[a, "matches"]), "matches_b": int(table.loc[b, "matches"]),
            "status_a": table.loc[a, "status"], "status_b": table.loc[b, "status"]}


DEFAULT_BOOTSTRAP = 1000  # a method's own paired bootstrap (every method but bt, which reads the board)


def compare_all(comparisons: pd.DataFrame, method: str = "bt", bootstrap: int | None = None, seed: int = 0,
                unit: str = "match", board=None) -> pd.DataFrame:
    """Every pair of rated agents (a rated above b, within a component), one row each as `compare` gives, plus
    `adjacent` (b is a's neighbour down the ranking), `family`, `p_family` and `separable`.

    For bt the pairs and their p-values are the board's; `adjacent` pairs are the board's ranked neighbours (a
    provisional agent is never threaded between them), each read as the board's own neighbour test
    (`board.tier_tests`: family 'best' down to the end of the set of the best, 'joint' below), so a tier boundary
    never sits beside a pair marked not separable; every other pair of ranked agents reads the joint family
    (p_joint), and a pair with a provisional agent has no family and is not separable. For another method the
    adjacent pairs are neighbours by rating and the family is Holm's over them (its own bootstrap). Sorted by a's
    rating, then b's."""
    from referee.models.ratings.rank_sets import holm

    if RATING_METHODS[method].board:
        from referee.run.ratings.board import infer_board

        board = board if board is not None else infer_board(comparisons, bootstrap=bootstrap or 0, seed=seed)
        table, pair = board.table, board.pair
    else:
        result = rate(comparisons, method, bootstrap=bootstrap or DEFAULT_BOOTSTRAP, seed=seed)
        table = result.table()
        pair = lambda a, b: dict(_from_draws(result, a, b), p_holm=np.nan, p_joint=np.nan)  # noqa: E731
    table = table[table["rating"].notna()].sort_values("rating", ascending=False).reset_index(drop=True)
    component = (table["component"] if "component" in table.columns else pd.Series(1, index=table.index)).to_numpy()
    records = pair_lookup(pair_records(comparisons))
    rows = []
    for i in range(len(table)):
        later = [j for j in range(i + 1, len(table)) if component[j] == component[i]]
        for j in later:
            a, b = table.at[i, "agent"], table.at[j, "agent"]
            record = record_of(records, a, b)
            rows.append({"agent_a": a, "agent_b": b, **pair(a, b), "matches": record.pop("met_in"), **record,
                         "adjacent": j == later[0]})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    if RATING_METHODS[method].board:
        tests = board.tier_tests.set_index(["agent", "next"])
        key = pd.MultiIndex.from_frame(out[["agent_a", "agent_b"]])
        out["adjacent"] = key.isin(tests.index)
        ranked = out["p_joint"].notna()
        out["family"] = np.where(ranked, "joint", None)
        out["p_family"] = out["p_joint"]
        neighbours = tests.reindex(key)
        held = out["adjacent"].to_numpy()
        out.loc[held, "family"] = neighbours.loc[held, "family"].to_numpy()
        out.loc[held, "p_family"] = neighbours.loc[held, "p"].to_numpy(float)
    else:
        out["family"], out["p_family"] = None, np.nan
        adjacent = out["adjacent"] & out["p_value"].notna()
        if adjacent.any():
            out.loc[adjacent, "p_holm"] = holm(out.loc[adjacent, "p_value"].to_numpy(float))
            out.loc[adjacent, ["family", "p_family"]] = ["holm", np.nan]
            out.loc[adjacent, "p_family"] = out.loc[adjacent, "p_holm"]
    out["separable"] = out["p_family"].astype(float) < alpha(board.level if RATING_METHODS[method].board else LEVEL)
    return out.assign(method=method, resample=unit)
