"""Confidence sets for ranks (Mogstad, Romano, Shaikh and Wilhelm, "Inference for Ranks with Applications to
Mobility across Neighbourhoods and Academic Achievement across Countries", Review of Economic Studies 2024):
which ranks each agent could hold, marginally or for every agent at once, and which agents could be first.

Pure numpy. Inputs: `estimate` (n,) the point ratings (higher is better; any scale, e.g. Elo points) and
`draws` (r, n) the same ratings re-estimated r times (a cluster bootstrap; NaN where a replicate drew none of an
agent's matches). The pairwise differences' sampling spread comes from the draws: se_jk is the sd of
draws_j - draws_k, and the critical value c the 1 - `level` quantile over replicates of the largest studentised
centred difference max |(d*_jk - d_jk)| / se_jk over the pairs of the family (one agent's pairs: marginal; every
pair: simultaneous). Agent k is credibly above j when d_kj - c se_jk > 0; j's rank set is
[1 + #credibly above, n - #credibly below]. The confidence set of the best is every agent no other is credibly
above at the simultaneous c, i.e. every agent whose simultaneous set starts at 1: its family (k above j, over
every j and k) is every ordered pair, whose one-sided maximum is the two-sided maximum over pairs.

Tiers (`tiers`, `holm_separated`): paired tests of every pair's difference (z = d_jk / se_jk, two-sided Normal
p-values) with Holm's step-down correction over all n(n - 1)/2 pairs, so that the family-wise error of calling
any two agents of different tiers apart is at most 1 - `level`; a new tier starts at the first agent the current
tier's first agent is separated from.

Single-step (not the stepdown refinement of the paper, which can only narrow the sets): the coverage is at
least the nominal level whenever the bootstrap approximates the differences' joint distribution, which
`benchmarks/rank_sets.py` checks by simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.95


@dataclass
class RankSets:
    """Rank sets of n agents (arrays in the input's order): marginal `lower`/`upper` (each agent's set holds its
    true rank with probability `level`), simultaneous `joint_lower`/`joint_upper` (all sets hold all true ranks
    at once with probability `level`), `best` (True: could be first; the set of such agents holds the true best
    with probability `level`), `tier` (1 = top: `tiers` on Holm-corrected paired tests), `p_holm` (n, n) the
    Holm-adjusted p-value of each pair's difference, and the critical values used."""

    lower: np.ndarray
    upper: np.ndarray
    joint_lower: np.ndarray
    joint_upper: np.ndarray
    best: np.ndarray
    tier: np.ndarray
    critical: dict
    p_holm: np.ndarray


def _differences(estimate: np.ndarray, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(d (n, n) with d[j, k] = estimate_j - estimate_k, se (n, n) of the draws' differences, z (r, n, n) the
    studentised centred differences of the draws; NaN where a replicate lacks either agent or se is 0)."""
    d = estimate[:, None] - estimate[None, :]
    star = draws[:, :, None] - draws[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.nanstd(star, axis=0, ddof=1) if len(draws) > 1 else np.full_like(d, np.nan)
        se = np.where(se > 0, se, np.nan)
        z = (star - d[None]) / se[None]
    return d, se, z


def _quantile_of_max(values: np.ndarray, level: float) -> float:
    """The `level` quantile over replicates (axis 0) of each replicate's largest finite value (inf when none)."""
    flat = values.reshape(len(values), -1)
    finite = np.isfinite(flat)
    largest = np.where(finite, flat, -np.inf).max(axis=1)
    largest = largest[np.isfinite(largest)]
    return float(np.quantile(largest, level)) if largest.size else np.inf


def rank_sets(estimate, draws, level: float = LEVEL) -> RankSets:
    """Marginal and simultaneous confidence sets for the ranks of `estimate` (n,; rank 1 = highest) and the
    confidence set of the best, from `draws` (r, n) at confidence `level` (module doc). Agents whose every
    difference is unresolved (no se) get the widest set, 1..n."""
    estimate = np.asarray(estimate, float)
    draws = np.asarray(draws, float)
    n = len(estimate)
    if n == 0:
        empty = np.zeros(0, int)
        return RankSets(empty, empty, empty, empty, np.zeros(0, bool), empty, {}, np.ones((0, 0)))
    if draws.ndim != 2 or draws.shape[1] != n:
        raise ValueError(f"draws must be (replicates, {n}), got {draws.shape}")
    d, se, z = _differences(estimate, draws)
    off = ~np.eye(n, dtype=bool)
    absolute = np.abs(z)
    marginal = np.array([_quantile_of_max(absolute[:, j, :][:, off[j]], level) for j in range(n)])
    joint = _quantile_of_max(np.where(off[None], absolute, np.nan), level)

    def bounds(c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lower, upper, below): rank bounds at critical value(s) c, and below[j, k] when k is credibly below j."""
        c = np.broadcast_to(np.asarray(c, float), (n,))[:, None]
        with np.errstate(invalid="ignore"):
            above = np.nan_to_num(-d - c * se > 0).astype(bool)  # above[j, k]: k credibly above j
            below = np.nan_to_num(d - c * se > 0).astype(bool)
        return 1 + above.sum(axis=1), n - below.sum(axis=1), below

    lower, upper, _ = bounds(marginal)
    joint_lower, joint_upper, _ = bounds(joint)
    adjusted = holm_adjusted(d, se)
    separated = (adjusted <= 1 - level) & (d > 0)
    return RankSets(lower, upper, joint_lower, joint_upper, joint_lower == 1, tiers(estimate, separated),
                    {"marginal_max": float(np.max(marginal)), "simultaneous": joint}, adjusted)


def holm_adjusted(d: np.ndarray, se: np.ndarray) -> np.ndarray:
    """Holm-adjusted two-sided p-values (n, n), symmetric, 1 on the diagonal and where se is missing, of the
    paired tests d_jk / se_jk = 0 over the n(n - 1)/2 unordered pairs (Holm 1979, by statsmodels'
    `multipletests`, as `referee.run.compare` adjusts its pairs)."""
    from scipy.stats import norm
    from statsmodels.stats.multitest import multipletests

    n = len(d)
    out = np.ones((n, n))
    upper = np.triu_indices(n, 1)
    if not len(upper[0]):
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = 2 * norm.sf(np.abs(d[upper] / se[upper]))
    adjusted = multipletests(np.where(np.isfinite(raw), raw, 1.0), method="holm")[1]
    out[upper] = adjusted
    out.T[upper] = adjusted
    return out


def tiers(estimate, separated) -> np.ndarray:
    """Tier numbers (1 = top) down the order of `estimate` (n,): a new tier starts at the first agent the current
    tier's first agent is credibly above (`separated` (n, n): separated[j, k] when j is above k by the
    Holm-corrected paired tests), so agents of one tier cannot be told apart from its first at a family-wise 95 %, and a
    tier does not depend on agents outside the compared set; returned in the input's order."""
    estimate = np.asarray(estimate, float)
    order = np.argsort(-estimate, kind="stable")
    out = np.zeros(len(estimate), int)
    tier, head = 0, None
    for i in order:
        if head is None or separated[head, i]:
            tier, head = tier + 1, i
        out[i] = tier
    return out
