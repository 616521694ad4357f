"""Contextual Bradley-Terry: ratings controlled for covariates of each comparison, at arena scale.

For a comparison of player a (agent i) with player b (agent j) in one match,

    logit P(a scores above b) = theta_i - theta_j + beta . z,    z = x_a - x_b,

where x holds the players' covariates (seat or play order, role indicators, answer length ...) or z is a
property of the pair itself (Chatbot Arena's style feature, `referee.prepare.covariates.style_feature`).
A covariate the same for both players of a comparison cancels: it is a slice, not a covariate. A tie is an
outcome of 1/2 (half a win each way). theta is centred and reported on the Elo scale, beta in log-odds and
in Elo points (400 / ln 10 per unit). The same model without covariates gives the uncontrolled ratings, so
each agent's rank change says what controlling did, as Chatbot Arena's style control reports it.

The fit is the binomial GLM without intercept (theta of the first agent fixed at 0, then centred), by
Newton's method on its sufficient statistics: the agent block of the information is an n x n matrix summed
from the comparisons with `bincount`, the covariate blocks n x p and p x p, so a step costs O(m) and no
m x n design is ever formed (a million judgments of 100 models with 4 covariates: about a second).
Standard errors are cluster-robust by match (sandwich H^-1 (sum_c g_c g_c') H^-1 with statsmodels' small-
sample factor G/(G-1) (m-1)/(m-k)), since the comparisons of one match share its outcome. Where the plain
model's maximum-likelihood estimate does not exist (an agent never won or never lost), both fits add the
weak Normal(0, (400 Elo)^2) prior on theta, as `fit_bt` does, and say so.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from referee.models.fit import FitResult, collect_notes, iterative_diagnostics
from referee.models.ratings.bradley_terry import (DEFAULT_PRIOR_SD, ELO_SCALE, Z95, RatingWarning, add_rank,
                                                  centred_se, cluster_factor, mle_exists, pair_counts, to_elo,
                                                  wald_table, why_no_mle)
from referee.models.threads import blas_limit


@dataclass
class ContextualFit(FitResult):
    """Ratings controlled for covariates: `ratings` (agent, rating, lower, upper, rank, rating_uncontrolled,
    rank_uncontrolled, rank_change), `effects` (covariate, estimate, se, lower, upper in log-odds, and
    estimate_elo), `comparisons` fitted."""

    ratings: pd.DataFrame = field(default_factory=pd.DataFrame)
    effects: pd.DataFrame = field(default_factory=pd.DataFrame)
    comparisons: int = 0
    model: str = "contextual-bt"

    def table(self) -> pd.DataFrame:
        """The controlled rating table."""
        return self.ratings


@dataclass(frozen=True)
class Comparisons:
    """Integer-coded comparisons: agents a, b (m,) in [0, n), outcome y (m,) for a, covariate differences Z
    (m, p), cluster codes (m,) in [0, clusters)."""

    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    Z: np.ndarray
    cluster: np.ndarray
    n: int
    clusters: int


def code_pairs(pairs: pd.DataFrame, agents: list[str], covariates: list[str]) -> Comparisons:
    """Code a pairs table (match_id, a, b, outcome, NAME_a, NAME_b per covariate) among `agents`."""
    index = pd.Index(agents)
    Z = np.column_stack([pairs[f"{name}_a"].to_numpy(float) - pairs[f"{name}_b"].to_numpy(float)
                         for name in covariates]) if covariates else np.zeros((len(pairs), 0))
    codes, uniques = pd.factorize(pairs["match_id"])
    return Comparisons(a=index.get_indexer(pairs["a"]), b=index.get_indexer(pairs["b"]),
                       y=pairs["outcome"].to_numpy(float), Z=Z, cluster=codes, n=len(agents), clusters=len(uniques))


def _agent_sums(c: Comparisons, values: np.ndarray) -> np.ndarray:
    """A' v for the agent columns (+1 for a, -1 for b): shape (n,) for v (m,), (n, p) for v (m, p)."""
    if values.ndim == 1:
        return np.bincount(c.a, values, c.n) - np.bincount(c.b, values, c.n)
    return np.column_stack([_agent_sums(c, values[:, k]) for k in range(values.shape[1])]) if values.shape[1] \
        else np.zeros((c.n, 0))


def _information(c: Comparisons, w: np.ndarray) -> np.ndarray:
    """X' diag(w) X over the full design [agents | covariates], shape (n + p, n + p)."""
    n = c.n
    ww = np.bincount(c.a * n + c.b, w, n * n).reshape(n, n)
    ww = ww + ww.T
    block = np.diag(ww.sum(axis=1)) - ww  # agent block: +w on both diagonals, -w off them
    cross = _agent_sums(c, w[:, None] * c.Z)
    inner = (c.Z * w[:, None]).T @ c.Z
    return np.block([[block, cross], [cross.T, inner]])


def _newton(c: Comparisons, p: int, precision: float, tol: float = 1e-9, max_iter: int = 100
            ) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """(coefficients (n - 1 + p,): theta_1.. theta_{n-1} then beta, with theta_0 = 0; information at the
    estimate (same order); iterations; converged) of the model on the first p covariates of `c`."""
    n = c.n
    Z = c.Z[:, :p]
    cz = Comparisons(c.a, c.b, c.y, Z, c.cluster, n, c.clusters)
    coef = np.zeros(n + p)  # full theta (n,) then beta; theta_0 stays 0
    keep = np.r_[np.arange(1, n), n + np.arange(p)]
    ridge = np.r_[np.full(n, precision), np.zeros(p)]

    def objective(x):
        eta = x[c.a] - x[c.b] + Z @ x[n:]
        return float((np.logaddexp(0.0, eta) - c.y * eta).sum() + 0.5 * (ridge * x**2).sum()), eta

    value, eta = objective(coef)
    converged, it = False, 0
    for it in range(1, max_iter + 1):
        prob = 1.0 / (1.0 + np.exp(-eta))
        resid = c.y - prob
        grad = np.r_[_agent_sums(cz, resid), Z.T @ resid] - ridge * coef
        info = _information(cz, prob * (1.0 - prob)) + np.diag(ridge)
        step = np.zeros(n + p)
        step[keep] = np.linalg.solve(info[np.ix_(keep, keep)], grad[keep])
        scale = 1.0
        while True:  # step-halving on the penalised deviance keeps every step downhill
            trial = coef + scale * step
            new_value, new_eta = objective(trial)
            if new_value <= value + 1e-12 * max(1.0, abs(value)) or scale < 1e-6:
                break
            scale /= 2.0
        coef, value, eta = trial, new_value, new_eta
        if np.abs(scale * step).max() < tol:
            converged = True
            break
    prob = 1.0 / (1.0 + np.exp(-eta))
    info = _information(cz, prob * (1.0 - prob)) + np.diag(ridge)
    return coef[keep], info[np.ix_(keep, keep)], it, converged


def _robust_cov(c: Comparisons, coef: np.ndarray, info: np.ndarray, p: int) -> np.ndarray:
    """The cluster-robust covariance (k, k) of `coef` (k = n - 1 + p): H^-1 M H^-1, M the outer products of
    the clusters' score sums, times statsmodels' factor G/(G-1) (m-1)/(m-k) (`bradley_terry.cluster_factor`)."""
    n, m = c.n, len(c.y)
    theta = np.r_[0.0, coef[: n - 1]]
    eta = theta[c.a] - theta[c.b] + c.Z[:, :p] @ coef[n - 1:]
    resid = c.y - 1.0 / (1.0 + np.exp(-eta))
    # score sums per cluster: the agent part as a sparse (clusters, n) matrix, the covariate part dense
    G = sparse.csr_matrix((np.r_[resid, -resid], (np.r_[c.cluster, c.cluster], np.r_[c.a, c.b])),
                          shape=(c.clusters, n))[:, 1:]
    Gz = np.column_stack([np.bincount(c.cluster, resid * c.Z[:, k], c.clusters) for k in range(p)]) if p \
        else np.zeros((c.clusters, 0))
    meat = np.block([[(G.T @ G).toarray(), np.asarray(G.T @ Gz)], [np.asarray(G.T @ Gz).T, Gz.T @ Gz]])
    bread = np.linalg.inv(info)
    return cluster_factor(c.clusters, m, len(coef)) * bread @ meat @ bread


def _thetas(params: np.ndarray, cov: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Centred theta (n,) and its standard errors (`bradley_terry.centred_se`) from the first n-1 coefficients
    (theta_0 = 0, so its row and column of the covariance are zero)."""
    full = np.r_[0.0, params[: n - 1]]
    padded = np.zeros((n, n))
    padded[1:, 1:] = cov[: n - 1, : n - 1]
    return full - full.mean(), centred_se(padded)


def fit_contextual_bt(pairs: pd.DataFrame, covariates: list[str], tol: float = 1e-9, max_iter: int = 100
                      ) -> ContextualFit:
    """Fit the contextual model to player pairs.

    pairs : one row per comparison: match_id, a, b (agents), outcome (1 / 0 / 0.5 for a), and for every
        covariate NAME the columns NAME_a and NAME_b (numbers; the model uses NAME_a - NAME_b).
    covariates : the covariate names (p of them).
    Returns a ContextualFit: ratings (Elo scale, Wald 95 % intervals cluster-robust by match), effects
    (log-odds and Elo points), diagnostics (converged, iterations of both fits) and notes (warnings of the
    fit, the prior where the MLE does not exist). A fit that does not converge in `max_iter` Newton steps
    warns and says converged False.
    """
    agents = sorted(set(pairs["a"].unique()) | set(pairs["b"].unique()))
    if len(agents) < 2:
        raise ValueError("a contextual Bradley-Terry needs comparisons of at least two agents")
    notes: list[str] = []
    n, p = len(agents), len(covariates)
    with collect_notes(notes), blas_limit(n + p):
        coded = code_pairs(pairs, agents, covariates)
        bad = ~np.isfinite(coded.Z).all(axis=1) if p else np.zeros(len(pairs), bool)
        if bad.any():
            raise ValueError(f"{int(bad.sum())} comparison(s) have a covariate that is not a finite number")
        W = pair_counts(coded.a, coded.b, coded.y, n)
        precision = 0.0
        if not mle_exists(W):
            warnings.warn(f"the Bradley-Terry MLE does not exist ({why_no_mle(W, agents)}); both fits add the weak "
                          "Normal(0, (400 Elo)^2) prior on the ratings", RatingWarning, stacklevel=2)
            precision = 1.0 / DEFAULT_PRIOR_SD**2
        try:
            coef, info, it_full, ok_full = _newton(coded, p, precision, tol, max_iter)
            coef0, _, it_plain, ok_plain = _newton(coded, 0, precision, tol, max_iter)
            cov = _robust_cov(coded, coef, info, p)
        except np.linalg.LinAlgError:
            constant = [name for k, name in enumerate(covariates) if np.ptp(coded.Z[:, k]) == 0] if p else []
            raise ValueError(
                f"the effect of {', '.join(covariates)} cannot be told apart from the agents' ratings in these "
                "matches (the information matrix is singular): "
                + (f"{', '.join(constant)} never differs between the two players of a comparison"
                   if constant else "its differences are collinear with the agents (e.g. each agent always in the "
                   "same seat or role)") + "; drop the covariate or rate without it") from None
        diagnostics = iterative_diagnostics(max(it_full, it_plain), max_iter, ok_full and ok_plain,
                                            "contextual Bradley-Terry Newton")
    theta, se = _thetas(coef, cov, n)
    theta0 = np.r_[0.0, coef0]
    table = wald_table(agents, theta, se)
    plain_table = add_rank(pd.DataFrame({"agent": agents, "rating": to_elo(theta0)}))
    table = table.assign(rating_uncontrolled=plain_table["rating"].to_numpy(),
                         rank_uncontrolled=plain_table["rank"].to_numpy())
    table["rank_change"] = (table["rank_uncontrolled"].astype(int) - table["rank"].astype(int)).astype(int)
    beta = coef[n - 1:]
    beta_se = np.sqrt(np.clip(np.diag(cov)[n - 1:], 0, None))
    effects = pd.DataFrame({"covariate": covariates, "estimate": beta, "se": beta_se,
                            "lower": beta - Z95 * beta_se, "upper": beta + Z95 * beta_se,
                            "estimate_elo": beta * ELO_SCALE})
    diagnostics.update(iterations_uncontrolled=it_plain, prior_sd=DEFAULT_PRIOR_SD if precision else None)
    return ContextualFit(ratings=table, effects=effects, comparisons=len(pairs), notes=notes, diagnostics=diagnostics)
