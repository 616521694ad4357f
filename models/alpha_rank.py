"""alpha-Rank (Omidshafiei et al. 2019, "alpha-Rank: Multi-Agent Evaluation by Evolution"): the stationary
distribution of an evolutionary Markov chain over strategies (one population, a symmetric game) or over
strategy profiles (one population per player role, an asymmetric game), as OpenSpiel's `alpharank.compute`.

- `alpha_rank(M, alpha, m)`: one population; M[i, j] is what i gets against j (a win rate).
- `alpha_rank_populations(tables, alpha, m)`: K populations; tables[k] (n_1 x ... x n_K) is what population
  k's member gets in each profile; returns the stationary distribution over profiles and its marginal per
  population (agents x scenarios: population 1 the agents, population 2 the scenarios, payoff -score).
- `alpha_sweep`: the single-population distribution over a range of ranking intensities.

Defaults are OpenSpiel's: ranking intensity alpha = 100, population size m = 50, the local selection model.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import logsumexp


def _log_abs_expm1(z: float) -> float:
    """log |e^z - 1| without overflow (z != 0)."""
    if z > 30:
        return z
    return math.log1p(-math.exp(z)) if z < -30 else math.log(abs(math.expm1(z)))


def fixation(u: float, m: int) -> float:
    """The probability that one mutant with relative fitness advantage u takes over a population of m:
    (1 - e^-u) / (1 - e^-mu), and 1/m when u is 0."""
    if abs(u) < 1e-14:
        return 1.0 / m
    return math.exp(_log_abs_expm1(-u) - _log_abs_expm1(-m * u))


def _stationary(chain: np.ndarray, unique: bool = False) -> np.ndarray:
    """The stationary distribution of a row-stochastic matrix: its left eigenvector of eigenvalue 1. With
    `unique`, a chain with more than one (eigenvalues within 1e-10 of 1, OpenSpiel's test) raises ValueError."""
    values, vectors = np.linalg.eig(chain.T)
    if unique and (found := int(np.sum(np.abs(values - 1) < 1e-10))) > 1:
        raise ValueError(f"alpha-Rank: the Markov chain has {found} separate absorbing sets of profiles at this "
                         "ranking intensity, so no single stationary distribution; lower alpha")
    stationary = np.abs(np.real(vectors[:, np.argmin(np.abs(values - 1))]))
    return stationary / stationary.sum()


def alpha_rank(payoffs: np.ndarray, alpha: float = 100.0, m: int = 50, local: bool = True) -> np.ndarray:
    """alpha-Rank's stationary distribution (n, sums to 1) for a single population with payoff matrix `payoffs`
    (n x n: payoffs[i, j] = what i gets against j, e.g. a win rate), as OpenSpiel's `alpharank.compute` with its
    defaults (alpha = 100, m = 50, the local selection model).

    A mutant r in a population of m playing s fixes with probability rho(r, s): with the local selection model
    (fitness against the current opponent only) rho = (1 - e^-u) / (1 - e^-mu), u = alpha (M[r,s] - M[s,r]);
    without it, rho = 1 / (1 + sum_{l=1}^{m-1} prod_{k=1}^{l} exp(-alpha (f_r(k) - f_s(k)))) with k mutants,
    f_r(k) = ((k-1) M[r,r] + (m-k) M[r,s]) / (m-1), f_s(k) = ((m-k-1) M[s,s] + k M[s,r]) / (m-1). The Markov chain
    moves from s to r with probability rho / (n-1) (Omidshafiei et al. 2019); its stationary distribution is
    returned."""
    mtx = np.asarray(payoffs, dtype=float)
    n = len(mtx)
    if n == 1:
        return np.ones(1)
    k = np.arange(1, m)
    chain = np.zeros((n, n))
    for s in range(n):
        for r in range(n):
            if r == s:
                continue
            if local:
                rho = fixation(alpha * (mtx[r, s] - mtx[s, r]), m)
            else:
                fr = ((k - 1) * mtx[r, r] + (m - k) * mtx[r, s]) / (m - 1)
                fs = ((m - k - 1) * mtx[s, s] + k * mtx[s, r]) / (m - 1)
                # 1 / (1 + sum_l exp(E_l)) = exp(-log(1 + sum_l exp(E_l))), stable for any E
                rho = math.exp(-np.logaddexp(0.0, logsumexp(np.cumsum(-alpha * (fr - fs)))))
            chain[s, r] = rho / (n - 1)
        chain[s, s] = 1.0 - chain[s].sum()
    return _stationary(chain)


def alpha_rank_populations(tables: list[np.ndarray], alpha: float = 100.0, m: int = 50
                           ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Multi-population alpha-Rank (an asymmetric game with K player roles, each its own population).

    Parameters
    ----------
    tables : K arrays of one shape (n_1, ..., n_K); tables[k][profile] is the payoff of population k's member
        when population j plays strategy profile[j].
    alpha, m : ranking intensity and population size (OpenSpiel's defaults).

    Returns
    -------
    (pi, marginals): pi has shape (n_1, ..., n_K), the stationary distribution over strategy profiles (sums to
    1); marginals[k] (n_k) is pi summed over the other populations. One population at a time takes a mutant
    strategy, which fixes with probability (1 - e^-u) / (1 - e^-mu), u = alpha (its payoff in the new profile
    minus in the current one); each of the sum_k (n_k - 1) moves is proposed with equal probability.
    """
    tables = [np.asarray(t, dtype=float) for t in tables]
    shape = tables[0].shape
    if len(tables) != len(shape) or any(t.shape != shape for t in tables):
        raise ValueError(f"multi-population alpha-Rank needs one table per population, each of shape "
                         f"(n_1, ..., n_K); got {len(tables)} table(s) of shapes {[t.shape for t in tables]}")
    eta = 1.0 / sum(n - 1 for n in shape)
    chain = np.zeros((int(np.prod(shape)), int(np.prod(shape))))
    for i, s in enumerate(np.ndindex(shape)):  # row-major: profile i is np.unravel_index(i, shape)
        for k, n_k in enumerate(shape):
            for r_k in range(n_k):
                if r_k == s[k]:
                    continue
                r = s[:k] + (r_k,) + s[k + 1:]
                chain[i, np.ravel_multi_index(r, shape)] = eta * fixation(alpha * (tables[k][r] - tables[k][s]), m)
        chain[i, i] = 1.0 - chain[i].sum()
    pi = _stationary(chain, unique=True).reshape(shape)
    marginals = [pi.sum(axis=tuple(j for j in range(len(shape)) if j != k)) for k in range(len(shape))]
    return pi, marginals


def alpha_sweep(payoffs: np.ndarray, alphas=(0.1, 1, 10, 100), m: int = 50) -> pd.DataFrame:
    """The stationary distribution at each ranking intensity: one row per alpha, one column per agent index."""
    return pd.DataFrame([alpha_rank(payoffs, a, m) for a in alphas], index=pd.Index(alphas, name="alpha"))
