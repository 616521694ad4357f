"""Maximal lotteries (Fishburn 1984) and iterative maximal lotteries (Lanctot et al. 2023).

The maximal lottery is the optimal mixed strategy of the symmetric zero-sum game whose payoff matrix is
the margin matrix: a distribution p over agents with p^T M >= 0 in every column, found by linear
programming (scipy's HiGHS). IML takes the lottery's support (probability > `tolerance`) as one level,
removes it, and solves again on the rest; agents among whom no ballot expresses a preference form one
level together; an agent's score is the number of levels below its own plus its probability within its
level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.voting.profile import PreferenceProfile

TOLERANCE = 1e-6


def maximal_lottery(margins: np.ndarray) -> np.ndarray:
    """The maximal lottery of margin matrix `margins` (n, n): maximise v s.t. M^T p >= v, sum p = 1, p >= 0."""
    from scipy.optimize import linprog  # here, not at import: scipy.optimize costs 70 ms to load
    n = margins.shape[0]
    if n == 1:
        return np.ones(1)
    c = np.r_[np.zeros(n), -1.0]  # minimise -v
    A_ub = np.c_[-margins.T, np.ones(n)]  # v - (M^T p)_j <= 0
    A_eq = np.r_[np.ones(n), 0.0][None, :]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(n), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    if not res.success:
        raise RuntimeError(f"maximal lottery LP failed: {res.message}")
    p = np.clip(res.x[:n], 0.0, None)
    return p / p.sum()


def run_maximal_lottery(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """Score = the agent's probability in the maximal lottery (below `TOLERANCE`: exactly 0, so that every
    agent outside the lottery's support shares the rank after it). Returns agent, score, rank, ballots,
    support (True for agents the lottery gives a positive probability)."""
    p = maximal_lottery(profile.margins)
    p = np.where(p > TOLERANCE, p, 0.0)
    return profile.outcome(p / p.sum(), seed).assign(support=p > 0)


def iml_levels(margins: np.ndarray, tolerance: float = TOLERANCE) -> list[tuple[list[int], np.ndarray]]:
    """IML levels from the top: [(agent indices, their probabilities), ...]."""
    remaining = list(range(margins.shape[0]))
    levels = []
    while remaining:
        sub = margins[np.ix_(remaining, remaining)]
        if not np.any(sub):  # no preferences left: every lottery is maximal, so none is singled out
            levels.append((remaining, np.full(len(remaining), 1.0 / len(remaining))))
            break
        p = maximal_lottery(sub)
        support = [k for k in range(len(remaining)) if p[k] > tolerance] or [int(np.argmax(p))]
        levels.append(([remaining[k] for k in support], p[support]))
        remaining = [r for k, r in enumerate(remaining) if k not in support]
    return levels


def run_iml(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """Iterative maximal lotteries: score = levels below + probability within the level."""
    levels = iml_levels(profile.margins)
    scores = np.zeros(len(profile.agents))
    for depth, (members, probs) in enumerate(levels):
        scores[members] = (len(levels) - 1 - depth) + probs
    return profile.outcome(scores, seed)
