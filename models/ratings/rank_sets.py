"""Confidence sets for ranks (Mogstad, Romano, Shaikh and Wilhelm, "Inference for Ranks with Applications to
Mobility across Neighbourhoods and Academic Achievement across Countries", Review of Economic Studies 2024):
which ranks each agent could hold, marginally or for every agent at once, and which agents could be first.

Pure numpy. Inputs: `estimate` (n,) the point ratings (higher is better; any scale, e.g. Elo points) and
`draws` (r, n) the same ratings' sampling distribution, r times (Normal draws with the fit's covariance, or a
cluster bootstrap; NaN where a replicate drew none of an agent's matches). The pairwise differences' spread
comes from the draws: se_jk is the sd of draws_j - draws_k.

The sets come from one-sided tests of the ordered pairs (j, k), "j is above k", rejected when
d_jk / se_jk > c, where c is the `level` quantile over the draws of the largest studentised centred difference
(d*_jk - d_jk) / se_jk over a family of ordered pairs, refined step down (the paper's Algorithm 3.1 and 3.2):
the pairs rejected are taken out of the family, c is computed again over what is left, until no new pair is
rejected. Each step can only shrink c, so the sets narrow while the family-wise error stays at 1 - `level`.

- Simultaneous sets (`joint_lower`, `joint_upper`): the family is every ordered pair; k's set is
  [1 + #agents credibly above k, n - #agents credibly below k], and all n sets hold all n true ranks at once.
- Marginal sets (`lower`, `upper`): one agent's own pairs, at the critical value calibrated on the draws with
  the estimates as the truth (`_marginal_critical`: the smallest c whose sets, recomputed draw by draw, hold
  the agent's rank in a `level` share of draws), so that each set covers near its nominal rate rather than at
  the least-favourable single-step rate (0.999 and more); never wider than the simultaneous set.
- The set of the best (`best`): every agent that no other is credibly above by the simultaneous family, i.e. its
  simultaneous set starts at 1 (a family over every ordered pair "k above j").
- Open bounds: an agent that never lost (`open_above`) has no finite upper bound, so no agent is ever credibly
  above it and its sets start at 1; one that never won (`open_below`) is never credibly above any agent.

Tiers (`tiers`): paired two-sided tests of every pair's difference (z = d_jk / se_jk) with Holm's step-down
correction over all n(n - 1)/2 pairs (`holm_adjusted`). Down the order of the estimates a new tier starts
between two neighbours only where Holm's test separates every agent above the boundary from every agent below
it (so every boundary has its neighbours' p_holm <= 1 - `level`), and never above an agent that could be first:
tier 1 holds the whole set of the best.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
CHUNK = 256  # draws per block of the (draws, n, n) differences: memory ~ CHUNK n^2 x 8 bytes


@dataclass
class RankSets:
    """Rank sets of n agents (arrays in the input's order): marginal `lower`/`upper` (each agent's set holds its
    true rank with probability `level`), simultaneous `joint_lower`/`joint_upper` (all sets hold all true ranks
    at once with probability `level`), `best` (True: could be first; the set of such agents holds the true best
    with probability `level`), `tier` (1 = top: `tiers` on Holm-corrected paired tests), `p_holm` (n, n) the
    Holm-adjusted p-value of each pair's difference, `se` (n, n) the differences' standard errors, and the
    critical values used (`critical`: the first and last step of the simultaneous family, the largest
    marginal one)."""

    lower: np.ndarray
    upper: np.ndarray
    joint_lower: np.ndarray
    joint_upper: np.ndarray
    best: np.ndarray
    tier: np.ndarray
    critical: dict
    p_holm: np.ndarray
    se: np.ndarray


def _se(draws: np.ndarray) -> np.ndarray:
    """(n, n) sd of the draws' pairwise differences; NaN where it is 0 or undefined."""
    n = draws.shape[1]
    se = np.full((n, n), np.nan)
    if len(draws) < 2:
        return se
    for j in range(n):
        with np.errstate(invalid="ignore", divide="ignore"):
            se[j] = np.nanstd(draws[:, [j]] - draws, axis=0, ddof=1)
    return np.where(se > 0, se, np.nan)


def _quantile_of_max(draws: np.ndarray, d: np.ndarray, se: np.ndarray, family: np.ndarray, level: float) -> float:
    """The `level` quantile over the draws of max over the ordered pairs of `family` ((n, n) bool) of
    ((draws_j - draws_k) - d_jk) / se_jk (inf when no pair of the family has a finite value)."""
    family = family & np.isfinite(se)
    if not family.any():
        return np.inf
    rows, cols = np.nonzero(family)
    centre, scale = d[rows, cols], se[rows, cols]
    largest = np.empty(len(draws))
    for start in range(0, len(draws), CHUNK):
        block = draws[start:start + CHUNK]
        z = ((block[:, rows] - block[:, cols]) - centre) / scale
        largest[start:start + CHUNK] = np.max(np.where(np.isfinite(z), z, -np.inf), axis=1)
    largest = largest[np.isfinite(largest)]
    return float(np.quantile(largest, level)) if largest.size else np.inf


def _step_down(draws, d, se, family, allowed, level) -> tuple[np.ndarray, list[float]]:
    """The ordered pairs rejected ("row above column") by the step-down max-t procedure over `family`
    ((n, n) bool); `allowed` marks the pairs that may be rejected at all (open bounds). Returns (rejected,
    the critical value of each step)."""
    rejected = np.zeros_like(family)
    steps = []
    with np.errstate(invalid="ignore"):
        t = np.where(np.isfinite(se), d / se, -np.inf)
    while True:
        c = _quantile_of_max(draws, d, se, family & ~rejected, level)
        steps.append(c)
        new = family & ~rejected & allowed & (t > c)
        if not new.any():
            return rejected, steps
        rejected |= new


def _marginal_critical(draws, se, j: int, rank: int, allowed, level: float) -> float:
    """The critical value of agent j's marginal set, calibrated on the draws with the estimates as the truth: the
    `level` quantile over draws of the smallest c at which the set computed from that draw, [1 + #{k: (x_k -
    x_j) / se > c}, n - #{k: (x_j - x_k) / se > c}], holds j's rank `rank` among the estimates. So the set covers
    at close to its nominal rate where the single-step (least-favourable) value of Mogstad et al. covers at
    0.999 and more."""
    n = draws.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (draws - draws[:, [j]]) / se[j][None, :]  # (r, n): k above j in that draw, studentised
    up = np.where(allowed[:, j][None, :] & np.isfinite(t), t, -np.inf)
    down = np.where(allowed[j, :][None, :] & np.isfinite(t), -t, -np.inf)
    # the set holds the rank when at most rank - 1 agents are found above and at most n - rank below: c must
    # reach the rank-th largest of `up` and the (n - rank + 1)-th largest of `down`
    need = np.full(len(draws), -np.inf)
    if rank <= n - 1:
        need = np.fmax(need, -np.partition(-up, rank - 1, axis=1)[:, rank - 1])
    if n - rank + 1 <= n - 1:
        need = np.fmax(need, -np.partition(-down, n - rank, axis=1)[:, n - rank])
    need = need[~np.isnan(need)]
    return float(max(np.quantile(need, level), 0.0)) if need.size else np.inf


def rank_sets(estimate, draws, level: float = LEVEL, open_above=None, open_below=None, se=None) -> RankSets:
    """Marginal and simultaneous confidence sets for the ranks of `estimate` (n,; rank 1 = highest) and the
    confidence set of the best, from `draws` (r, n) at confidence `level`, refined step down (module doc).
    `open_above` / `open_below` (n, bool): agents that never lost / never won, whose interval is open on that
    side. `se` (n, n): the differences' standard errors where the caller has them in closed form (else the sd
    of the draws' differences). Agents whose every difference is unresolved (no se) get the widest set, 1..n."""
    estimate = np.asarray(estimate, float)
    draws = np.asarray(draws, float)
    n = len(estimate)
    if draws.ndim != 2 or draws.shape[1] != n:
        raise ValueError(f"draws must be (replicates, {n}), got {draws.shape}")
    if n <= 1:  # one agent holds rank 1 for certain; nothing to test
        one = np.ones(n, int)
        return RankSets(one, one, one, one, np.ones(n, bool), one, {"simultaneous": np.nan, "marginal_max": np.nan},
                        np.ones((n, n)), np.full((n, n), np.nan))
    above_open = np.zeros(n, bool) if open_above is None else np.asarray(open_above, bool)
    below_open = np.zeros(n, bool) if open_below is None else np.asarray(open_below, bool)
    d = estimate[:, None] - estimate[None, :]
    se = _se(draws) if se is None else np.where(np.asarray(se, float) > 0, np.asarray(se, float), np.nan)
    off = ~np.eye(n, dtype=bool)
    # j may be found above k unless k never lost (open above) or j never won (open below)
    allowed = off & ~above_open[None, :] & ~below_open[:, None]
    joint, steps = _step_down(draws, d, se, off, allowed, level)
    joint_lower, joint_upper = 1 + joint.sum(axis=0), n - joint.sum(axis=1)
    lower, upper, marginal = np.empty(n, int), np.empty(n, int), []
    order_rank = 1 + (estimate[None, :] > estimate[:, None]).sum(axis=1)
    for j in range(n):
        c = _marginal_critical(draws, se, j, order_rank[j], allowed, level)
        marginal.append(c)
        with np.errstate(invalid="ignore"):
            t = d / se  # t[k, j] > c: k credibly above j
        found_above = allowed[:, j] & (np.nan_to_num(t[:, j], nan=-np.inf) > c)
        found_below = allowed[j, :] & (np.nan_to_num(t[j, :], nan=-np.inf) > c)
        # within the simultaneous set: a marginal set never claims less than the joint one
        lower[j] = max(1 + found_above.sum(), joint_lower[j])
        upper[j] = min(n - found_below.sum(), joint_upper[j])
    best = joint_lower == 1
    adjusted = holm_adjusted(d, se)
    separated = (adjusted <= 1 - level) & (d > 0) & allowed
    return RankSets(lower, upper, joint_lower, joint_upper, best, tiers(estimate, separated, best),
                    {"simultaneous": steps[0], "simultaneous_last_step": steps[-1],
                     "marginal_max": float(np.max(marginal))}, adjusted, se)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values of raw p-values `p` (m,): sorted ascending, the i-th (from 1)
    becomes max over j <= i of min(1, (m - j + 1) p_(j)). Vectorised here because statsmodels' `multipletests`
    (the same numbers, checked in the tests) runs a full garbage collection on every call, seconds in a long
    process."""
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def holm_adjusted(d: np.ndarray, se: np.ndarray) -> np.ndarray:
    """Holm-adjusted two-sided p-values (n, n), symmetric, 1 on the diagonal and where se is missing, of the
    paired tests d_jk / se_jk = 0 over the n(n - 1)/2 unordered pairs (`holm`)."""
    from scipy.special import ndtr

    n = len(d)
    out = np.ones((n, n))
    upper = np.triu_indices(n, 1)
    if not len(upper[0]):
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = 2 * ndtr(-np.abs(d[upper] / se[upper]))
    adjusted = holm(np.where(np.isfinite(raw), raw, 1.0))
    out[upper] = adjusted
    out.T[upper] = adjusted
    return out


def tiers(estimate, separated, best=None) -> np.ndarray:
    """Tier numbers (1 = top) down the order of `estimate` (n,): a new tier starts between two neighbours only
    where every agent above is separated from every agent below (`separated` (n, n): separated[j, k] when j is
    above k by the Holm-corrected paired tests), and not above the last agent of `best` (n, bool: could be
    first), so that tier 1 holds every agent that could be first; returned in the input's order."""
    estimate = np.asarray(estimate, float)
    order = np.argsort(-estimate, kind="stable")
    inside = np.asarray(separated, bool)[np.ix_(order, order)]
    n = len(order)
    last_best = int(np.flatnonzero(np.asarray(best, bool)[order]).max()) if best is not None and np.any(best) else -1
    out = np.zeros(n, int)
    tier = 1
    for i in range(n):
        if i > 0 and i > last_best and inside[:i, i:].all():
            tier += 1
        out[order[i]] = tier
    return out
