"""Which comparisons to run next: selection rules for Bradley-Terry, from the current estimate.

Every rule scores candidate pairs (i, j) of agents from the current log-strengths theta (n,) and the
covariance C (n, n) of their estimate (the inverse of the Fisher information plus a weak ridge, on the centred
scale). One comparison of i and j adds p (1 - p) d d' to the information (d = e_i - e_j, p = P(i beats j)),
so by Sherman-Morrison it lowers the variance of any contrast c' theta by

    gain_c(i, j) = p (1 - p) (c' C d)^2 / (1 + p (1 - p) d' C d).

- `c-optimal` (the targets): the summed gain over the contrasts the target still needs, as
  `referee.run.ratings.plan.contrasts` builds them: pairs whose order is not yet settled at the stated confidence
  (weighted by their share of the expected misordered pairs), agents whose interval is wider than the stated
  width (c = e_i), or pairs straddling the top-k boundary (Chaloner & Verdinelli 1995 for c- and
  A-optimality; the targets are referee's).
- `a-optimal`: every agent's variance (c = e_i for all i): the trace of C.
- `d-optimal`: the log-determinant of the information, gain log(1 + p (1 - p) d' C d).
- `arena`: Chatbot Arena's interval-reduction weights (Chiang et al. 2024, section 5: sample pair (a, b) with
  probability proportional to sqrt(v_ab / n_ab) - sqrt(v_ab / (n_ab + 1)), v_ab the outcome variance, here
  p (1 - p), n_ab the comparisons so far, +1 for pairs never compared), drawn at random.
- `active`: nonparametric active ranking (Heckel, Shah, Ramchandran & Wainwright 2019, Annals of Statistics):
  each agent's Borda score (its share of wins against the field) has a confidence interval of half-width
  sqrt(log(4 n / delta) / (2 m_i)) after m_i comparisons; agents whose interval still overlaps a
  neighbour's are active, and each active agent is compared with a uniformly drawn other agent.
- `uniform`: a uniformly drawn pair.

The greedy rules (c-, A-, D-optimal) pick one comparison at a time and update C by the rank-one formula, so
a plan of N comparisons spreads over pairs. `select` returns the chosen pairs in order with their expected
gain.
"""

from __future__ import annotations

import math

import numpy as np

from referee.models.ratings.bradley_terry import centred, information, win_probability
from referee.models.registry import PLAN_RULES as RULES, implementation

RIDGE = 1.0 / math.log(10.0) ** 2  # a weak Normal(0, (400 Elo)^2) prior on theta keeps C finite


def covariance(theta: np.ndarray, counts: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """Covariance (n, n) of the centred log-strengths: the inverse of information + ridge, centred."""
    return centred(np.linalg.inv(information(theta, counts) + ridge * np.eye(len(theta))))


def contrast_gains(theta: np.ndarray, C: np.ndarray, contrasts: np.ndarray) -> np.ndarray:
    """gain[i, j]: the summed variance reduction of `contrasts` (m, n) from one comparison of i and j."""
    p = win_probability(theta)
    v = p * (1 - p)
    CD = contrasts @ C  # (m, n): c' C e_k
    S = CD.T @ CD  # sum over contrasts of (c' C e_i)(c' C e_j): then sum_c (c' C (e_i - e_j))^2 = S_ii + S_jj - 2 S_ij
    squared = np.diag(S)[:, None] + np.diag(S)[None, :] - 2 * S
    dCd = np.diag(C)[:, None] + np.diag(C)[None, :] - 2 * C
    return v * squared / (1 + v * dCd)


def d_gains(theta: np.ndarray, C: np.ndarray) -> np.ndarray:
    """gain[i, j] = log(1 + p (1 - p) d' C d): the log-determinant increase of the information."""
    p = win_probability(theta)
    dCd = np.diag(C)[:, None] + np.diag(C)[None, :] - 2 * C
    return np.log1p(p * (1 - p) * np.clip(dCd, 0, None))


def update(C: np.ndarray, theta: np.ndarray, i: int, j: int) -> np.ndarray:
    """C after one more comparison of i and j (Sherman-Morrison)."""
    p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
    v = p * (1 - p)
    Cd = C[:, i] - C[:, j]
    return C - v * np.outer(Cd, Cd) / (1 + v * (Cd[i] - Cd[j]))


def arena_weights(theta: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Chatbot Arena's interval-reduction weight of every pair (upper triangle; 0 elsewhere)."""
    p = win_probability(theta)
    v = p * (1 - p)
    n_ab = counts + counts.T + 1.0  # a pair never compared counts as one
    w = np.sqrt(v / n_ab) - np.sqrt(v / (n_ab + 1))
    return np.triu(w, 1)


def borda_active(wins: np.ndarray, counts: np.ndarray, delta: float = 0.05) -> np.ndarray:
    """Active agents (bool, (n,)) of Heckel et al.'s rule: Borda-score intervals overlapping a neighbour's.
    wins[i, j] : i's wins over j (ties half); counts[i, j] : comparisons of i and j (symmetric)."""
    n = len(wins)
    m = counts.sum(axis=1)
    score = np.where(m > 0, wins.sum(axis=1) / np.maximum(m, 1), 0.5)
    half = np.where(m > 0, np.sqrt(np.log(4 * n / delta) / (2 * np.maximum(m, 1))), np.inf)
    order = np.argsort(-score)
    active = np.zeros(n, bool)
    for k in range(n):
        i = order[k]
        for nb in (order[k - 1] if k > 0 else None, order[k + 1] if k + 1 < n else None):
            if nb is not None and score[i] - half[i] < score[nb] + half[nb] and score[nb] - half[nb] < score[i] + half[i]:
                active[i] = True
    return active


def select(rule: str, theta: np.ndarray, counts: np.ndarray, budget: int, rng: np.random.Generator,
           contrasts: np.ndarray | None = None, wins: np.ndarray | None = None,
           allowed: np.ndarray | None = None) -> list[tuple[int, int, float]]:
    """Choose `budget` comparisons by `rule` (RULES): a list of (i, j, expected gain) in order.

    theta : current centred log-strengths (n,); counts : comparisons so far (n, n); contrasts : (m, n) for
    c-optimal (default: every agent, i.e. A-optimal); wins : win counts for `active`; allowed : (n, n) bool of
    pairs that may be chosen (default every pair of two different agents). The gain is the variance reduction
    (log-strength units squared) of the rule's target, the log-determinant increase for d-optimal, and the
    pair's weight for arena; 0 for uniform and active.
    """
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; rules: {RULES}")
    n = len(theta)
    allow = np.ones((n, n), bool) if allowed is None else allowed.copy()
    np.fill_diagonal(allow, False)
    allow = np.triu(allow | allow.T, 1)
    pairs = np.argwhere(allow)
    if not len(pairs):
        raise ValueError("no pair of two different agents may be chosen")
    return implementation(RULES[rule].select)(theta, counts, budget, rng, allow, pairs, contrasts, wins)


def uniform_pairs(theta, counts, budget, rng, allow, pairs, contrasts, wins) -> list[tuple[int, int, float]]:
    """`uniform`: pairs drawn uniformly from the allowed ones."""
    picks = rng.integers(len(pairs), size=budget)
    return [(int(pairs[k, 0]), int(pairs[k, 1]), 0.0) for k in picks]


def arena_pairs(theta, counts, budget, rng, allow, pairs, contrasts, wins) -> list[tuple[int, int, float]]:
    """`arena`: pairs drawn with Chatbot Arena's sampling weights (`arena_weights`)."""
    w = arena_weights(theta, counts)[allow]
    w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1.0 / len(w))
    picks = rng.choice(len(pairs), size=budget, p=w)
    return [(int(pairs[k, 0]), int(pairs[k, 1]), float(w[k])) for k in picks]


def active_pairs(theta, counts, budget, rng, allow, pairs, contrasts, wins) -> list[tuple[int, int, float]]:
    """`active`: each agent whose Borda interval overlaps a neighbour's (`borda_active`) against a random one."""
    n = len(theta)
    active = borda_active(wins if wins is not None else counts / 2.0, counts + counts.T)
    chosen = np.flatnonzero(active) if active.any() else np.arange(n)
    out = []
    for k in range(budget):
        i = int(chosen[k % len(chosen)])
        others = np.flatnonzero(allow[i] | allow[:, i])
        if not len(others):
            continue
        j = int(rng.choice(others))
        out.append((min(i, j), max(i, j), 0.0))
    return out


def _greedy(theta, counts, budget, allow, gain) -> list[tuple[int, int, float]]:
    """`budget` pairs, each the allowed one of largest `gain(C)` under the covariance C updated after each."""
    C = covariance(theta, counts)
    out = []
    for _ in range(budget):
        gains = np.where(allow, gain(C), -np.inf)
        i, j = np.unravel_index(int(np.argmax(gains)), gains.shape)
        out.append((int(i), int(j), float(gains[i, j])))
        C = update(C, theta, int(i), int(j))
    return out


def c_optimal_pairs(theta, counts, budget, rng, allow, pairs, contrasts, wins) -> list[tuple[int, int, float]]:
    """`c-optimal`: the largest variance reduction of the contrasts (default every agent: A-optimal)."""
    targets = np.eye(len(theta)) if contrasts is None else contrasts
    return _greedy(theta, counts, budget, allow, lambda C: contrast_gains(theta, C, targets))


def a_optimal_pairs(theta, counts, budget, rng, allow, pairs, contrasts, wins) -> list[tuple[int, int, float]]:
    """`a-optimal`: the largest reduction of every rating's variance."""
    return _greedy(theta, counts, budget, allow, lambda C: contrast_gains(theta, C, np.eye(len(theta))))


def d_optimal_pairs(theta, counts, budget, rng, allow, pairs, contrasts, wins) -> list[tuple[int, int, float]]:
    """`d-optimal`: the largest log-determinant increase of the information."""
    return _greedy(theta, counts, budget, allow, lambda C: d_gains(theta, C))
