"""Confidence sets for ranks (Mogstad, Romano, Shaikh and Wilhelm, "Inference for Ranks with Applications to
Mobility across Neighbourhoods and Academic Achievement across Countries", Review of Economic Studies 2024):
which ranks each agent could hold, marginally or for every agent at once, and which agents could be first.

numpy, with the loops over draws and pairs compiled by numba (`rank_kernels`). Inputs: `estimate` (n,) the point
ratings (higher is better; any scale, e.g. Elo points) and `draws` (r, n) the same ratings' sampling distribution,
r times (Normal draws with the fit's covariance, or a cluster bootstrap; NaN where a replicate drew none of an
agent's matches). The pairwise differences' spread
comes from the draws: se_jk is the sd of draws_j - draws_k.

The sets come from one-sided tests of the ordered pairs (j, k), "j is above k", rejected when
d_jk / se_jk > c, where c is the `level` quantile over the draws of the largest studentised centred difference
(d*_jk - d_jk) / se_jk over a family of ordered pairs, refined step down (the paper's Algorithm 3.1 and 3.2):
the pairs rejected are taken out of the family, c is computed again over what is left, until no new pair is
rejected. Each step can only shrink c, so the sets narrow while the family-wise error stays at 1 - `level`.

- Simultaneous sets (`joint_lower`, `joint_upper`): the family is every ordered pair; k's set is
  [1 + #agents credibly above k, n - #agents credibly below k], and all n sets hold all n true ranks at once.
- Marginal sets (`lower`, `upper`): one agent's own family, the ordered pairs "j above k" and "k above j" for
  every k (Mogstad et al.'s marginal sets, as csranks computes them), refined step down; never wider than the
  simultaneous set. They cover at least at their nominal rate (conservatively: one agent's 2(n - 1) tests at once).
- No pair test contradicts a set: every critical value (simultaneous and marginal, at every step) is at least the
  pair's own two-sided value (`pair_critical`: 1.96 at 95 %), so a pair found apart by a set is separated by its
  own test; and where two agents' sets share no rank while their own test does not separate them (a chain of
  separations can place them apart), both sets are widened until they share one (`_agree_with_pairs`). Two
  agents' sets are apart only when their pair is separated at the same level.
- The set of the best (`best`, Mogstad et al.'s tau-best with tau = 1; Hsu's multiple comparisons with the best):
  agent j stays unless some k is credibly above it, tested on j's own family "k above j" for every k: j leaves
  when max_k d_kj / se_jk exceeds the `level` quantile over the draws of max_k (d*_kj - d_kj) / se_jk (never
  below the pair's own 1.96). The true best is left out only when one of its own n - 1 true nulls is rejected, so
  the set holds it with probability `level`, at the price of n - 1 one-sided comparisons rather than the joint
  family's n(n - 1): smaller than the agents whose simultaneous set starts at 1. `p_best` is each agent's
  p-value of "j is the best" (j could be first while p_best >= 1 - level).
- The joint family's adjusted p-values (`p_joint`, Romano and Wolf 2005's step-down max-t p-values: the pair is
  rejected by the step-down at level 1 - p_joint), the ones the tiers below tier 1 read.
- Open bounds: an agent that never lost (`open_above`) has no finite upper bound, so no agent is ever credibly
  above it and its sets start at 1; one that never won (`open_below`) is never credibly above any agent.

Tiers (`tiers`): tier 1 runs down the order of the estimates to the last agent that could be first (the set of the
best, its family); below it a new tier starts wherever every agent above has a simultaneous set entirely above every
agent below (the largest joint upper bound above < the smallest joint lower bound below) and the two neighbours'
own pair is rejected in the joint family (p_joint < 1 - level), so every boundary is one the neighbours' test in
the boundary's own family separates (`neighbour_tests`). `holm_adjusted` gives every pair's Holm-adjusted p-value
beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from referee.models import progress
from referee.models.ratings import rank_kernels

LEVEL = 0.95
DRAW_BLOCK = 512  # draws per call of the simultaneous family's kernel (a large board says its progress per block)
MANY_AGENTS = 100  # from this many agents the marginal sets take seconds, and their loop shows its progress
MANY_PAIRS = MANY_AGENTS * (MANY_AGENTS - 1) // 2  # likewise for the simultaneous step-down's pairs


@dataclass
class RankSets:
    """Rank sets of n agents (arrays in the input's order): marginal `lower`/`upper` (each agent's set holds its
    true rank with probability `level`), simultaneous `joint_lower`/`joint_upper` (all sets hold all true ranks
    at once with probability `level`), `best` (True: could be first; the set of such agents holds the true best
    with probability `level`: comparisons with the best, module doc) and `p_best` (n,) each agent's p-value of
    "it is the best", `tier` (1 = top: `tiers`), `p_holm` (n, n) the Holm-adjusted p-value of each pair's
    difference, `p_joint` (n, n) its step-down max-t p-value in the joint family (`joint_p_values`), `se` (n, n)
    the differences' standard errors, and the critical values used (`critical`: the first and last step of the
    simultaneous family, the largest marginal one)."""

    lower: np.ndarray
    upper: np.ndarray
    joint_lower: np.ndarray
    joint_upper: np.ndarray
    best: np.ndarray
    tier: np.ndarray
    critical: dict
    p_holm: np.ndarray
    se: np.ndarray
    p_best: np.ndarray | None = None
    p_joint: np.ndarray | None = None


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


class _PairMaxima:
    """The largest studentised centred difference of each draw over a family of ordered pairs that only shrinks
    (the step-down's), kept per draw with the pair that attained it, so that a step recomputes only the draws
    whose largest pair lost a direction (the rest keep their maximum: it is still in the family).

    The pairs are held once per unordered pair j < k: z = ((values_j - values_k) - d_jk) / se_jk reads "j above k",
    and -z, exactly, "k above j" (d and se are antisymmetric and symmetric), so each draw costs half the ordered
    pairs. `values_t` (n, r) float32, the draws transposed (`rank_kernels`): ratings of about 1,500 carry 1e-4 Elo
    points there, and the quantile needs three digits; half the bytes and time of float64."""

    def __init__(self, values_t: np.ndarray, d: np.ndarray, se: np.ndarray, family: np.ndarray):
        usable = family & np.isfinite(se)
        self.rows, self.cols = np.nonzero(np.triu(usable | usable.T, 1))
        self.family = usable
        self.values_t = values_t
        self.shift = d[self.rows, self.cols].astype(np.float32)
        self.inverse = (1.0 / se[self.rows, self.cols]).astype(np.float32)
        self.largest = np.full(values_t.shape[1], -np.inf)
        self.where = np.zeros(values_t.shape[1], np.int64)
        self.forward = self.backward = np.zeros(len(self.rows), bool)
        self.computed = False

    def quantile(self, rejected: np.ndarray, level: float) -> float:
        """The `level` quantile over the draws of the largest z over the family's ordered pairs not `rejected`
        ((n, n) bool), inf when no pair is left."""
        forward = self.family[self.rows, self.cols] & ~rejected[self.rows, self.cols]
        backward = self.family[self.cols, self.rows] & ~rejected[self.cols, self.rows]
        if not (forward.any() or backward.any()):
            return np.inf
        changed = (forward != self.forward) | (backward != self.backward)
        self.forward, self.backward = forward, backward
        todo = np.flatnonzero(changed[self.where]) if self.computed else np.arange(self.values_t.shape[1])
        self.computed = True
        starts = range(0, len(todo), DRAW_BLOCK)
        if len(self.rows) >= MANY_PAIRS:  # a large board's step takes seconds: never a silent wait
            starts = progress.track(starts, len(starts), f"simultaneous rank sets ({len(self.rows):,} pairs)",
                                    "draw block")
        for start in starts:
            picked = todo[start:start + DRAW_BLOCK]
            best, at = np.full(len(picked), -np.inf, np.float32), np.zeros(len(picked), np.int64)
            rank_kernels.pair_maxima(np.ascontiguousarray(self.values_t[:, picked]), self.rows, self.cols, self.shift,
                                     self.inverse, forward, backward, best, at)
            self.where[picked], self.largest[picked] = at, best
        largest = self.largest[np.isfinite(self.largest)]
        return float(np.quantile(largest, level)) if largest.size else np.inf


def _step_down(draws, d, se, family, allowed, level, floor: float = 0.0) -> tuple[np.ndarray, list[float]]:
    """The ordered pairs rejected ("row above column") by the step-down max-t procedure over `family`
    ((n, n) bool); `allowed` marks the pairs that may be rejected at all (open bounds); no step's critical value
    is below `floor`. Each step's critical value is the `level` quantile over the draws of the largest
    studentised centred difference ((d*_jk - d_jk) / se_jk) over the family's pairs not yet rejected
    (`_PairMaxima`). Returns (rejected, the critical value of each step)."""
    rejected = np.zeros_like(family)
    steps = []
    maxima = _PairMaxima(np.ascontiguousarray(draws.T, np.float32), d, se, family)
    with np.errstate(invalid="ignore"):
        t = np.where(np.isfinite(se), d / se, -np.inf)
    while True:
        c = max(maxima.quantile(rejected, level), floor)
        steps.append(c)
        new = family & ~rejected & allowed & (t > c)
        if not new.any():
            return rejected, steps
        rejected |= new


def _marginal(draws_t, estimate, se, j: int, allowed, level: float, floor: float):
    """Agent j's own family, step down (module doc): (k found above j (n,) bool, k found below j (n,) bool, the
    first step's critical value, j's p-value of "j is the best" (`_best_p`)). The studentised centred differences of
    j's pairs are computed once, (n, r), from the draws transposed (`draws_t`, (n, r)), read as "k above j" and,
    negated, "j above k"; each step takes the `level` quantile of each draw's maximum over the pairs not yet
    rejected, never below `floor`."""
    n = len(estimate)
    centred = np.empty(draws_t.shape, np.float32)
    rank_kernels.centred_column(draws_t, estimate, se[j], j, centred)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (estimate - estimate[j]) / se[j]
    t = np.nan_to_num(t, nan=-np.inf)
    usable = np.isfinite(se[j]) & (np.arange(n) != j)
    may_above, may_below = usable & allowed[:, j], usable & allowed[j, :]
    found_above, found_below = np.zeros(n, bool), np.zeros(n, bool)
    first = None
    best_p = _best_p(rank_kernels.row_maxima(centred, np.flatnonzero(may_above), np.zeros(0, np.int64)), t[may_above])
    while True:
        up, down = usable & ~found_above, usable & ~found_below
        largest = rank_kernels.row_maxima(centred, np.flatnonzero(up), np.flatnonzero(down))
        largest = largest[np.isfinite(largest)]
        c = max(float(np.quantile(largest, level)) if largest.size else np.inf, floor)
        first = c if first is None else first
        new_above, new_below = may_above & ~found_above & (t > c), may_below & ~found_below & (-t > c)
        if not (new_above.any() or new_below.any()):
            return found_above, found_below, first, best_p
        found_above |= new_above
        found_below |= new_below


def _best_p(largest: np.ndarray, t: np.ndarray) -> float:
    """The p-value of "j is the best" from j's comparisons with every k that may be found above it: `largest` (r,)
    each draw's largest (d*_kj - d_kj) / se_jk over those k (-inf where none), `t` (m,) the observed d_kj / se_jk.
    The share of draws whose largest centred statistic reaches the largest observed one, never below the largest
    pair's own two-sided p-value (the floor every critical value keeps, so that no agent leaves the set of the best
    unless one pair's own test separates it from an agent above). 1 where no agent may be found above j."""
    from scipy.special import ndtr

    if not t.size or not np.isfinite(t).any():
        return 1.0
    largest = largest[np.isfinite(largest)]
    observed = float(np.max(t))
    share = float(np.mean(largest >= observed)) if largest.size else 1.0
    return max(share, float(2 * ndtr(-abs(observed))) if observed > 0 else 1.0)


def joint_p_values(draws, d, se, allowed) -> np.ndarray:
    """The joint family's step-down max-t adjusted p-values (Romano and Wolf 2005, the p-value form of
    `_step_down`): (n, n), entry [j, k] for the unordered pair, symmetric, 1 on the diagonal and where no direction
    may be rejected. `draws` (r, n) ratings, `d` (n, n) the estimates' differences (row minus column), `se` (n, n)
    their standard errors (NaN: unusable), `allowed` (n, n) bool: "row above column" may be rejected at all.

    The ordered pairs that may be rejected (allowed, d / se > 0) are sorted by t = d / se, largest first; the s-th
    gets P_s = the share of draws in which the largest centred statistic over itself, the pairs below it and every
    pair that can never be rejected reaches t_s, and its adjusted p is the running maximum of P_1..P_s, never below
    its own two-sided p-value (the floor of 1.96 every step keeps). A pair is rejected by the step-down at level
    alpha exactly when its adjusted p is below alpha (up to the quantile's interpolation)."""
    from scipy.special import ndtr

    n = len(d)
    out = np.ones((n, n))
    usable = np.isfinite(se) & ~np.eye(n, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(usable, d / se, -np.inf)
    candidate = usable & allowed & (t > 0)
    rows, cols = np.nonzero(candidate)
    if not len(rows):
        return out
    order = np.argsort(-t[rows, cols], kind="stable")
    rows, cols = rows[order], cols[order]
    observed = t[rows, cols]
    rest_rows, rest_cols = np.nonzero(usable & ~candidate)
    hits, kept = rank_kernels.suffix_hits(np.ascontiguousarray(draws.T, np.float32), rows, cols,
                                          d[rows, cols].astype(np.float32), se[rows, cols].astype(np.float32),
                                          rest_rows, rest_cols,
                                          d[rest_rows, rest_cols].astype(np.float32),
                                          se[rest_rows, rest_cols].astype(np.float32), observed)
    adjusted = np.maximum.accumulate(hits / max(kept, 1)) if kept else np.ones(len(rows))
    adjusted = np.minimum(1.0, np.maximum(adjusted, 2 * ndtr(-observed)))
    out[rows, cols] = adjusted
    out[cols, rows] = adjusted
    return out


def alpha(level: float = LEVEL) -> float:
    """The tests' size at confidence `level` (0.05 at 0.95), rounded so that a p-value of 0.05 reads alike wherever
    it is compared (1 - 0.95 is 0.050000000000000044 in floating point)."""
    return round(1.0 - level, 12)


def pair_critical(level: float = LEVEL) -> float:
    """The two-sided critical value of one pair's own test at `level` (1.96 at 0.95): no rank set separates two
    agents at less."""
    from scipy.special import ndtri

    return float(ndtri(1 - (1 - level) / 2))


def _agree_with_pairs(lower, upper, estimate, separated) -> tuple[np.ndarray, np.ndarray]:
    """Sets (`lower`, `upper`, (n,) ranks) widened until two agents' sets share no rank only where `separated`
    ((n, n) bool: the pair's own test separates them) holds: for j above k by estimate with upper_j < lower_k and
    the pair not separated, upper_j rises to lower_k and lower_k falls to upper_j, repeated until nothing moves
    (each step only widens, so it ends)."""
    lower, upper = lower.copy(), upper.copy()
    above = estimate[:, None] >= estimate[None, :]
    np.fill_diagonal(above, False)
    while True:
        apart = above & (upper[:, None] < lower[None, :]) & ~(separated | separated.T)
        if not apart.any():
            return lower, upper
        j, k = np.nonzero(apart)
        new_upper, new_lower = upper.copy(), lower.copy()
        np.maximum.at(new_upper, j, lower[k])
        np.minimum.at(new_lower, k, upper[j])
        lower, upper = new_lower, new_upper


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
                        np.ones((n, n)), np.full((n, n), np.nan), np.ones(n), np.ones((n, n)))
    above_open = np.zeros(n, bool) if open_above is None else np.asarray(open_above, bool)
    below_open = np.zeros(n, bool) if open_below is None else np.asarray(open_below, bool)
    d = estimate[:, None] - estimate[None, :]
    se = _se(draws) if se is None else np.where(np.asarray(se, float) > 0, np.asarray(se, float), np.nan)
    off = ~np.eye(n, dtype=bool)
    # j may be found above k unless k never lost (open above) or j never won (open below)
    allowed = off & ~above_open[None, :] & ~below_open[:, None]
    floor = pair_critical(level)
    # the simultaneous family's kernels read the draws transposed in float32: made once here, a view of it handed
    # to `_step_down` and `joint_p_values`, which then copy nothing
    values_t = np.ascontiguousarray(draws.T, np.float32)
    joint, steps = _step_down(values_t.T, d, se, off, allowed, level, floor)
    joint_lower, joint_upper = 1 + joint.sum(axis=0), n - joint.sum(axis=1)
    lower, upper, marginal, p_best = np.empty(n, int), np.empty(n, int), [], np.ones(n)
    draws_t = np.ascontiguousarray(draws.T)
    for j in progress.track(range(n), n, "marginal rank sets", "agent", least=MANY_AGENTS):
        above, below, first, p_best[j] = _marginal(draws_t, estimate, se, j, allowed, level, floor)
        marginal.append(first)
        # within the simultaneous set: a marginal set never claims less than the joint one
        lower[j] = max(1 + above.sum(), joint_lower[j])
        upper[j] = min(n - below.sum(), joint_upper[j])
    with np.errstate(invalid="ignore", divide="ignore"):
        separated = allowed & (np.where(np.isfinite(se), np.abs(d) / se, 0.0) > floor) & (d > 0)
    lower, upper = _agree_with_pairs(lower, upper, estimate, separated)
    joint_lower, joint_upper = _agree_with_pairs(np.minimum(joint_lower, lower), np.maximum(joint_upper, upper),
                                                 estimate, separated)
    best = p_best >= alpha(level)
    adjusted = holm_adjusted(d, se)
    p_joint = joint_p_values(values_t.T, d, se, allowed)
    return RankSets(lower, upper, joint_lower, joint_upper, best,
                    tiers(estimate, joint_lower, joint_upper, p_best, p_joint, level),
                    {"simultaneous": steps[0], "simultaneous_last_step": steps[-1],
                     "marginal_max": float(np.max(marginal))}, adjusted, se, p_best, p_joint)


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


def tier_bounds(joint_lower, joint_upper) -> tuple[np.ndarray, np.ndarray]:
    """For agents in the order of their estimates (best first) with simultaneous sets [`joint_lower`,
    `joint_upper`]: (the largest upper bound among the agents down to each, the smallest lower bound from each
    on), (n,) each. A tier starts at agent i (i >= 1) where the first at i - 1 is smaller than the second at i."""
    highest_above = np.maximum.accumulate(np.asarray(joint_upper))
    lowest_below = np.minimum.accumulate(np.asarray(joint_lower)[::-1])[::-1]
    return highest_above, lowest_below


def neighbour_tests(estimate, joint_lower, joint_upper, p_best, p_joint, level: float = LEVEL) -> dict:
    """The test of each pair of neighbours down the order of `estimate` (n,), in the family its tier boundary
    reads (module doc), as arrays of n - 1 for the boundaries between sorted positions i - 1 and i: `order` (n,)
    the sort (best first), `family` ('best' down to the first agent below the set of the best: "it and every
    agent below are not the best", p the largest `p_best` from it on; 'joint' below: the two neighbours' joint
    family p-value `p_joint`), `p`, `separable` (p < 1 - level), `highest_above` / `lowest_below` (`tier_bounds`)
    and `new_tier` (a boundary: at the end of the set of the best, or, below it, where the joint sets part and
    the neighbours are separable). No boundary sits beside a test that is not separable."""
    order = np.argsort(-np.asarray(estimate, float), kind="stable")
    n = len(order)
    highest_above, lowest_below = tier_bounds(np.asarray(joint_lower)[order], np.asarray(joint_upper)[order])
    best_from = np.maximum.accumulate(np.asarray(p_best, float)[order][::-1])[::-1]  # largest p_best from i on
    kept = np.asarray(p_best, float)[order] >= alpha(level)
    last_best = int(np.flatnonzero(kept).max()) if kept.any() else 0
    step = np.arange(1, n)
    in_best = step <= last_best + 1
    p = np.where(in_best, best_from[step], np.asarray(p_joint, float)[order[step - 1], order[step]])
    separable = p < alpha(level)
    parted = highest_above[step - 1] < lowest_below[step]
    new_tier = np.where(in_best, separable, parted & separable)
    return {"order": order, "family": np.where(in_best, "best", "joint"), "p": p, "separable": separable,
            "highest_above": highest_above[:-1], "lowest_below": lowest_below[1:], "new_tier": new_tier}


def tiers(estimate, joint_lower, joint_upper, p_best, p_joint, level: float = LEVEL) -> np.ndarray:
    """Tier numbers (1 = top) of the agents of `estimate` (n,), in the input's order: a new tier starts at each
    boundary of `neighbour_tests` (the end of the set of the best, then wherever the joint sets part and the
    neighbours' joint-family test separates them)."""
    found = neighbour_tests(estimate, joint_lower, joint_upper, p_best, p_joint, level)
    order = found["order"]
    out = np.empty(len(order), int)
    out[order] = 1 + np.cumsum(np.concatenate([[False], found["new_tier"]]))
    return out
