"""Elo ratings: the 2024 Concordia contest's computation, and sequential (online) Elo.

`contest_elo(W)` reproduces the contest's `calculate_ratings.py` / `scoring/elo.py` (as documented in
`../shared/data/concordia/contest-scenarios.md`): Bradley-Terry strengths by Newman's (2023) iteration,
starting at 1, 50 sweeps updating in place

    pi_i <- sum_{j != i} W[i,j] pi_j / (pi_i + pi_j)  /  sum_{j != i} W[j,i] / (pi_i + pi_j),

dividing all by their geometric mean after each sweep, then Elo = round(400 log10 pi - mean + 1500).
W counts strict wins only (ties count for neither). Where that computation gives NaN or infinity (an
agent with no wins or no losses, a disconnected comparison graph), `contest_elo` warns and returns the
MAP Bradley-Terry estimate with the stated weak prior (`referee.models.ratings.bradley_terry.DEFAULT_PRIOR_SD`) instead.

`online_elo(a, b, outcome, k)` updates ratings one comparison at a time, in the order given.

`fit_contest_elo` and `fit_online_elo` wrap both in the `referee.models.fit.FitResult` contract (`EloFit`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.fit import FitResult, collect_notes
from referee.models.ratings.bradley_terry import (
    DEFAULT_PRIOR_SD,
    RatingWarning,
    add_rank,
    fit_bt,
    mle_exists,
    why_no_mle,
)


@dataclass
class EloFit(FitResult):
    """Elo ratings (the `referee.models.fit.FitResult` contract): agents and their ratings, shape (n,).
    `table()`: agent, rating, lower, upper (NaN: Elo has no interval; use the bootstrap), rank."""

    agents: list[str] = field(default_factory=list)
    ratings: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def table(self) -> pd.DataFrame:
        """agent, rating, lower, upper, rank (1 = best)."""
        return add_rank(pd.DataFrame({"agent": self.agents, "rating": self.ratings, "lower": np.nan,
                                      "upper": np.nan}))


def newman_strengths(W: np.ndarray, sweeps: int = 50) -> np.ndarray:
    """Newman's iteration exactly as the contest ran it; may contain 0, inf or NaN. Shape (n,)."""
    W = np.asarray(W, float)
    n = W.shape[0]
    pi = np.ones(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(sweeps):
            for i in range(n):
                others = np.arange(n) != i
                denom = pi[i] + pi[others]
                pi[i] = (W[i, others] * pi[others] / denom).sum() / (W[others, i] / denom).sum()
            pi = pi / np.exp(np.mean(np.log(pi)))
    return pi


def _contest_elo(W: np.ndarray, agents: list[str] | None) -> tuple[np.ndarray, bool]:
    """(rounded ratings, whether the contest's own computation was defined) for `contest_elo`."""
    W = np.asarray(W, float)
    if W.shape[0] < 2:
        raise ValueError("Elo needs at least two agents")
    pi = newman_strengths(W)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pi = 400.0 * np.log10(pi)
        elo = log_pi - log_pi.mean() + 1500.0
    if np.all(np.isfinite(elo)) and mle_exists(W):
        return np.round(elo), True
    names = agents or [str(i) for i in range(W.shape[0])]
    warnings.warn(f"the contest's Elo is undefined here ({why_no_mle(W, list(names))}); used MAP Bradley-Terry "
                  "with independent Normal(0, (400 Elo)^2) priors instead of NaN", RatingWarning, stacklevel=3)
    return np.round(fit_bt(W, names, prior_sd=DEFAULT_PRIOR_SD).ratings), False


def contest_elo(W: np.ndarray, agents: list[str] | None = None) -> np.ndarray:
    """Elo ratings (rounded to whole points) from a strict win-loss matrix, as the contest computed them.

    Parameters
    ----------
    W : shape (n, n), W[i, j] = number of comparisons i won strictly against j; n >= 2.
    agents : names, used in the warning.

    Returns
    -------
    Integer-valued float ratings, shape (n,), centred near 1500. When the contest's computation is
    undefined, a RatingWarning and the MAP Bradley-Terry ratings (weak Normal prior), rounded.
    """
    return _contest_elo(W, agents)[0]


def fit_contest_elo(W: np.ndarray, agents: list[str]) -> EloFit:
    """`contest_elo` as an EloFit: ratings, notes (the fallback's warning, if any), diagnostics."""
    notes: list[str] = []
    with collect_notes(notes):
        ratings, exact = _contest_elo(W, agents)
    return EloFit(model="elo", agents=list(agents), ratings=ratings, notes=notes,
                  diagnostics={"converged": True, "method": "newman" if exact else "map-fallback", "sweeps": 50})


def fit_online_elo(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, agents: list[str], k: float = 32.0,
                   initial: float = 1500.0) -> EloFit:
    """`online_elo` as an EloFit (one pass in the order given; no iteration to converge)."""
    if not np.isfinite(k) or k <= 0:
        raise ValueError(f"the K factor must be a positive number, got {k}")
    ratings = online_elo(a, b, outcome, len(agents), k=k, initial=initial)
    return EloFit(model="online-elo", agents=list(agents), ratings=ratings,
                  diagnostics={"converged": True, "comparisons": int(len(a)), "k": float(k)})


def online_elo(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n: int, k: float = 32.0,
               initial: float = 1500.0) -> np.ndarray:
    """Sequential Elo: for each comparison in order, r_a += k (s - E), r_b -= k (s - E).

    Parameters
    ----------
    a, b : agent codes in [0, n), shape (m,), in time order.
    outcome : s = 1 (a won), 0 (b won), 0.5 (tie), shape (m,).
    k : the K factor (Elo points per unit surprise); initial : every agent's starting rating.

    Returns
    -------
    Final ratings, shape (n,).
    """
    r = np.full(n, float(initial))
    for i, j, s in zip(np.asarray(a), np.asarray(b), np.asarray(outcome, float)):
        expected = 1.0 / (1.0 + 10.0 ** ((r[j] - r[i]) / 400.0))
        delta = k * (s - expected)
        r[i] += delta
        r[j] -= delta
    return r
