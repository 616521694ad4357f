"""Paired comparison of two agents, and of every pair: how likely A is stronger than B, by how much, and
their head-to-head record, from one rating method's cluster bootstrap (Miller 2024, "Adding error bars to
evals": resample the unit the data cluster in, and compare paired).

Every replicate of the bootstrap (`referee.run.ratings.rate`) rates both agents on the same resampled
matches, so the difference is paired: its percentile interval and P(A > B) (the share of replicates in which
A's rating is higher, ties counted half) come from the same draws. A replicate that drew none of one agent's
matches has no difference and is left out, counted. Where every replicate gives the same difference (all
ties, one-sided records) the bootstrap cannot move it and no interval is given, saying so.

`compare_all` gives every pair, with a two-sided bootstrap p-value (twice the smaller tail share) and, for
agents adjacent in the ranking, Holm's step-down adjustment over those adjacent pairs (`separable` at 5 %).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.run.ratings import RatingResult, rate
from referee.prepare.membership import agents_in
from referee.run.rating_labels import ESTABLISHED


def pair_records(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Every pair's record in one pass: indexed by (first, second) with first < second, the first's wins,
    losses and ties against the second and the matches (clusters) they met in."""
    a, b = comparisons["a"].to_numpy(), comparisons["b"].to_numpy()
    swap = a > b
    score = comparisons["outcome"].to_numpy(float)
    frame = pd.DataFrame({"first": np.where(swap, b, a), "second": np.where(swap, a, b),
                          "score": np.where(swap, 1.0 - score, score), "cluster": comparisons["cluster"].to_numpy()})
    grouped = frame.groupby(["first", "second"])
    return pd.DataFrame({"wins": grouped["score"].agg(lambda v: int((v == 1.0).sum())),
                         "losses": grouped["score"].agg(lambda v: int((v == 0.0).sum())),
                         "ties": grouped["score"].agg(lambda v: int((v == 0.5).sum())),
                         "met_in": grouped["cluster"].nunique()})


def head_to_head(records: pd.DataFrame, a: str, b: str) -> dict:
    """A's record against B from `pair_records`: wins, losses, ties and the matches they met in (zeros when
    they never met)."""
    key, flip = ((a, b), False) if a < b else ((b, a), True)
    if key not in records.index:
        return {"wins": 0, "losses": 0, "ties": 0, "met_in": 0}
    row = records.loc[key]
    wins, losses = (int(row["losses"]), int(row["wins"])) if flip else (int(row["wins"]), int(row["losses"]))
    return {"wins": wins, "losses": losses, "ties": int(row["ties"]), "met_in": int(row["met_in"])}


def _consistent(out: dict, table: pd.DataFrame, a: str, b: str) -> dict:
    """`out` (a paired difference) made consistent with the two agents' own rows of the rating table: where
    either agent is not established (few matches, never won or never lost, a wide interval: the agents whose
    rating interval is widened or open beyond the bootstrap's), the difference's interval is widened to hold every
    difference the two intervals allow, [lower_a - upper_b, upper_a - lower_b] (open where either is), and
    `interval` says why."""
    rows = table.loc[[a, b]]
    if (rows["status"] == ESTABLISHED).all() or not np.isfinite(out["difference"]):
        return out
    low = float(rows.at[a, "lower"] - rows.at[b, "upper"])
    high = float(rows.at[a, "upper"] - rows.at[b, "lower"])
    lower = low if np.isnan(out["lower"]) else min(out["lower"], low)
    upper = high if np.isnan(out["upper"]) else max(out["upper"], high)
    why = "; ".join(f"{x}: {rows.at[x, 'status']}" for x in (a, b) if rows.at[x, "status"] != ESTABLISHED)
    return dict(out, lower=lower, upper=upper,
                interval=f"widened to the two agents' own intervals ({why}): the paired bootstrap cannot be read "
                         "alone here")


def _paired(result: RatingResult, a: str, b: str) -> dict:
    agents = list(result.bootstrap.agents)
    d = result.bootstrap.ratings[:, agents.index(a)] - result.bootstrap.ratings[:, agents.index(b)]
    used = d[np.isfinite(d)]
    table = result.table().set_index("agent")
    out = {"difference": float(table.loc[a, "rating"] - table.loc[b, "rating"]), "replicates": int(used.size),
           "replicates_left_out": int(d.size - used.size)}
    if used.size == 0:
        return dict(out, p_better=np.nan, lower=np.nan, upper=np.nan, p_value=np.nan,
                    interval="none: no replicate drew both agents")
    p = float((used > 0).mean() + 0.5 * (used == 0).mean())  # ties counted half
    out["p_better"], out["p_value"] = p, min(1.0, 2.0 * min(p, 1.0 - p))
    if np.ptp(used) < 1e-9:
        return _consistent(dict(out, lower=np.nan, upper=np.nan, interval="none: the bootstrap could not move the "
                                "difference (every replicate alike)"), table, a, b)
    lower, upper = np.percentile(used, [2.5, 97.5])
    found = dict(out, lower=float(lower), upper=float(upper), interval="bootstrap percentile 95 %, paired")
    if not lower <= found["difference"] <= upper:  # the estimate outside its own percentile interval: the hull
        found.update(lower=min(lower, found["difference"]), upper=max(upper, found["difference"]),
                     interval="bootstrap percentile 95 %, paired, extended to hold the estimate")
    return _consistent(found, table, a, b)


def compare(comparisons: pd.DataFrame, a: str, b: str, method: str = "bt", bootstrap: int = 1000, seed: int = 0,
            unit: str = "match") -> dict:
    """P(a is stronger than b), the rating difference a - b (Elo points) with its 95 % paired bootstrap interval,
    and their head-to-head record.

    comparisons : a comparisons table (`referee.prepare.comparisons`; a `resample` column sets the cluster the
    bootstrap draws); method : a rating method of `referee.run.ratings.METHODS` on the Elo scale;
    unit : the name of the resample unit, reported. Returns a dict: agent_a, agent_b, method, resample,
    p_better, difference, lower, upper, p_value, interval, replicates, replicates_left_out, matches (matches
    the two met in), wins, losses, ties (a's record against b), matches_a, matches_b, status_a, status_b.
    ValueError when either agent has no comparison."""
    known = set(agents_in(comparisons))
    for agent in (a, b):
        if agent not in known:
            from referee.models.registry import suggest

            raise ValueError(f"agent {agent!r} has no comparison in the store{suggest(agent, sorted(known))}")
    if a == b:
        raise ValueError("compare two different agents")
    result = rate(comparisons, method, bootstrap=bootstrap, seed=seed)
    table = result.table().set_index("agent")
    if "component" in table.columns and table.loc[a, "component"] != table.loc[b, "component"]:
        raise ValueError(f"{a} and {b} are in different components of the comparison graph: no chain of matches "
                         "links them, so their ratings cannot be compared")
    pair = comparisons[comparisons["a"].isin([a, b]) & comparisons["b"].isin([a, b])]
    record = head_to_head(pair_records(pair), a, b)
    return {"agent_a": a, "agent_b": b, "method": method, "resample": unit, **_paired(result, a, b),
            "matches": record.pop("met_in"), **record,
            "matches_a": int(table.loc[a, "matches"]), "matches_b": int(table.loc[b, "matches"]),
            "status_a": table.loc[a, "status"], "status_b": table.loc[b, "status"]}


def compare_all(comparisons: pd.DataFrame, method: str = "bt", bootstrap: int = 1000, seed: int = 0,
                unit: str = "match") -> pd.DataFrame:
    """Every pair of rated agents (a ranked above b), one row each as `compare` gives, plus `adjacent` (b is the
    next agent down the ranking, within a component), `p_holm` (Holm's adjustment over the adjacent pairs)
    and `separable` (p_holm < 0.05 and a difference interval that excludes 0). Returns the table sorted by a's rank, then b's."""
    from statsmodels.stats.multitest import multipletests

    result = rate(comparisons, method, bootstrap=bootstrap, seed=seed)
    table = result.table()
    table = table[table["rating"].notna()].sort_values("rating", ascending=False).reset_index(drop=True)
    component = (table["component"] if "component" in table.columns else pd.Series(1, index=table.index)).to_numpy()
    records = pair_records(comparisons)
    rows = []
    for i in range(len(table)):
        later = [j for j in range(i + 1, len(table)) if component[j] == component[i]]
        for j in later:  # the first of them is the next agent down the ranking within the component
            a, b = table.at[i, "agent"], table.at[j, "agent"]
            record = head_to_head(records, a, b)
            rows.append({"agent_a": a, "agent_b": b, **_paired(result, a, b), "matches": record.pop("met_in"),
                         **record, "adjacent": j == later[0]})
    out = pd.DataFrame(rows)
    out["p_holm"] = np.nan
    adjacent = out["adjacent"] & out["p_value"].notna()
    if adjacent.any():
        out.loc[adjacent, "p_holm"] = multipletests(out.loc[adjacent, "p_value"], method="holm")[1]
    # separable: Holm's test, and a difference interval (widened where the agents' own intervals are) that
    # excludes 0, so that a pair is never separated against the two agents' rows
    out["separable"] = (out["p_holm"] < 0.05) & ((out["lower"] > 0) | (out["upper"] < 0))
    return out.assign(method=method, resample=unit)
