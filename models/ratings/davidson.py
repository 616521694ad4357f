"""Bradley-Terry with ties as a model: Davidson (1970).

With strengths pi_i = exp(theta_i) and a tie parameter nu = exp(lambda) >= 0,

    P(i beats j) = pi_i / D,  P(tie) = nu sqrt(pi_i pi_j) / D,  D = pi_i + pi_j + nu sqrt(pi_i pi_j),

so two equal agents tie with probability nu / (2 + nu), and nu = 0 is Bradley-Terry without ties. Written in
s = theta_i - theta_j the log-likelihood of strict wins W and ties T (per unordered pair) is

    sum_{i != j} W_ij s_ij / 2 + sum_{i < j} [T_ij lambda - N_ij log(2 cosh(s_ij / 2) + nu)],  N = W + W' + T,

maximised here by L-BFGS with its analytic gradient (theta centred). Standard errors come from the observed
information (a finite-difference Hessian of the analytic gradient). Ratings are on the Elo scale
(`to_elo`). When the maximum-likelihood estimate does not exist (an agent that never lost or never won, ties
counting both ways), the fit warns and adds independent Normal(0, prior_sd^2) priors on theta, as `fit_bt`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.fit import FitResult, iterative_diagnostics
from referee.models.ratings.bradley_terry import (DEFAULT_PRIOR_SD, Z95, RatingWarning, centred_se, mle_exists, to_elo,
                                          wald_table)


@dataclass
class DavidsonFit(FitResult):
    """A fitted Davidson model: theta (n,) centred, se (n,), nu (the tie parameter) with its standard error,
    `tie_probability` = nu / (2 + nu) (two equal agents), `observed_tie_rate` (ties / comparisons)."""

    agents: list[str] = field(default_factory=list)
    theta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    se: np.ndarray = field(default_factory=lambda: np.zeros(0))
    nu: float = 0.0
    nu_se: float = float("nan")
    observed_tie_rate: float = 0.0
    method: str = "mle"
    prior_sd: float | None = None
    model: str = "bt-davidson"

    @property
    def tie_probability(self) -> float:
        """The probability that two agents of equal strength tie: nu / (2 + nu)."""
        return self.nu / (2.0 + self.nu)

    @property
    def ratings(self) -> np.ndarray:
        """Elo-scale ratings, mean 1500, shape (n,)."""
        return to_elo(self.theta)

    def table(self, z: float = Z95) -> pd.DataFrame:
        """agent, rating, lower, upper (Wald, Elo scale), rank."""
        return wald_table(self.agents, self.theta, self.se, z)


def _objective(x: np.ndarray, W: np.ndarray, T: np.ndarray, N: np.ndarray, prior_sd: float | None,
               pin: bool = True) -> tuple[float, np.ndarray]:
    """Negative log-likelihood (and gradient) at x = (theta (n,), lambda); T and N symmetric, full matrices.
    `pin` adds (sum theta)^2 / 2, which fixes the free constant without moving the optimum."""
    theta, lam = x[:-1], x[-1]
    nu = math.exp(lam)
    s = theta[:, None] - theta[None, :]
    c = 2.0 * np.cosh(s / 2.0) + nu
    upper = np.triu(np.ones_like(W, dtype=bool), 1)
    ll = (W * s).sum() / 2.0 + (T[upper] * lam).sum() - (N[upper] * np.log(c[upper])).sum()
    g_theta = (W.sum(axis=1) - W.sum(axis=0)) / 2.0 - (N * np.sinh(s / 2.0) / c).sum(axis=1)
    g_lam = T[upper].sum() - (N[upper] * nu / c[upper]).sum()
    centre = theta.sum() if pin else 0.0  # the likelihood is flat along theta + constant: pin the mean at 0
    ll -= centre**2 / 2.0
    g_theta = g_theta - centre
    if prior_sd is not None:
        ll -= (theta @ theta) / (2 * prior_sd**2)
        g_theta = g_theta - theta / prior_sd**2
    return -ll, -np.r_[g_theta, g_lam]


def fit_davidson(W: np.ndarray, T: np.ndarray, agents: list[str], prior_sd: float | None = None,
                 tol: float = 1e-10, max_iter: int = 2000) -> DavidsonFit:
    """Fit Davidson's model to strict-win counts W (n, n; W[i, j] = wins of i over j) and tie counts T (n, n,
    symmetric: T[i, j] = ties between i and j). Returns a DavidsonFit."""
    from scipy.optimize import minimize  # here, not at import: scipy.optimize costs 70 ms to load
    W, T = np.asarray(W, float), np.asarray(T, float)
    n = len(agents)
    np.fill_diagonal(W, 0.0)
    np.fill_diagonal(T, 0.0)
    N = W + W.T + T
    method = "mle" if prior_sd is None else "map"
    if prior_sd is None and not mle_exists(W + T / 2):
        warnings.warn("Davidson: the maximum-likelihood estimate does not exist (some agent never lost, or never "
                      f"won, counting ties both ways); using MAP with a Normal prior of sd {DEFAULT_PRIOR_SD:.3g} on "
                      "log-strength (400 Elo points)", RatingWarning, stacklevel=2)
        prior_sd, method = DEFAULT_PRIOR_SD, "map"
    ties, total = T[np.triu_indices(n, 1)].sum(), N[np.triu_indices(n, 1)].sum()
    lam0 = math.log(max(2 * ties / max(total - ties, 1.0), 1e-3))  # nu from the tie rate of equal agents
    found = minimize(_objective, np.r_[np.zeros(n), lam0], args=(W, T, N, prior_sd), jac=True, method="L-BFGS-B",
                     options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15})
    x = found.x
    step = 1e-5
    hess = np.empty((n + 1, n + 1))
    for k in range(n + 1):  # observed information by central differences of the analytic gradient
        e = np.zeros(n + 1)
        e[k] = step
        hess[k] = (_objective(x + e, W, T, N, prior_sd, pin=False)[1]
                   - _objective(x - e, W, T, N, prior_sd, pin=False)[1]) / (2 * step)
    cov = np.linalg.pinv((hess + hess.T) / 2, hermitian=True)  # the flat direction (theta + c) gets no variance
    theta = x[:-1] - x[:-1].mean()
    nu = math.exp(x[-1])
    converged = bool(found.success) or float(np.abs(found.jac).max()) < 1e-5
    return DavidsonFit(agents=list(agents), theta=theta, se=centred_se(cov[:-1, :-1]), nu=nu,
                       nu_se=nu * math.sqrt(max(cov[-1, -1], 0.0)), observed_tie_rate=float(ties / total) if total else 0.0,
                       method=method, prior_sd=prior_sd,
                       diagnostics=iterative_diagnostics(int(found.nit), max_iter, converged, "Davidson (L-BFGS)"))
