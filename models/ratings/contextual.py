"""Contextual Bradley-Terry: ratings controlled for player-level covariates of each comparison.

For a comparison of player a (agent i) with player b (agent j) in one match,

    logit P(a scores above b) = theta_i - theta_j + beta . (x_a - x_b),

where x holds the players' covariates (seat or play order, role indicators, answer length ...). Match-level
covariates (communication on/off, scenario tags) are the same for both players of a within-match
comparison and cancel: they are slices, not covariates. A tie is an outcome of 1/2 (half a win each way). The fit is a
binomial GLM without intercept (statsmodels), with standard errors clustered by match (the comparisons of
one match share its outcome); theta is centred and reported on the Elo scale, beta in log-odds and in Elo
points (400 / ln 10 per unit). The same model without covariates gives the uncontrolled ratings, so each
agent's rank change says what controlling did, as Chatbot Arena's style control reports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import statsmodels.api as sm

from referee.models.fit import FitResult, collect_notes
from referee.models.ratings.bradley_terry import ELO_SCALE, Z95, add_rank, to_elo, wald_table


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


def _design(pairs: pd.DataFrame, agents: list[str], covariates: list[str]) -> tuple[np.ndarray, np.ndarray,
                                                                                     np.ndarray]:
    """(X, y, groups): agent columns +1 / -1 (the first agent dropped: theta_0 = 0) and covariate differences;
    y the outcome, a tie 0.5 (a binomial proportion: the same score equations as half a win each way)."""
    index = pd.Index(agents)
    n = len(pairs)
    X = np.zeros((n, len(agents) - 1 + len(covariates)))
    ia, ib = index.get_indexer(pairs["a"]), index.get_indexer(pairs["b"])
    rows = np.arange(n)
    X[rows[ia > 0], ia[ia > 0] - 1] += 1.0
    X[rows[ib > 0], ib[ib > 0] - 1] -= 1.0
    for k, name in enumerate(covariates):
        X[:, len(agents) - 1 + k] = pairs[f"{name}_a"].to_numpy(float) - pairs[f"{name}_b"].to_numpy(float)
    return X, pairs["outcome"].to_numpy(float), pairs["match_id"].to_numpy()


def _fit(X: np.ndarray, y: np.ndarray, groups: np.ndarray):
    codes, _ = pd.factorize(groups)
    return sm.GLM(y, X, family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": codes})


def _thetas(params: np.ndarray, cov: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Centred theta (n,) and its standard errors from the first n-1 coefficients (theta_0 = 0)."""
    full = np.r_[0.0, params[: n - 1]]
    centre = np.eye(n) - 1.0 / n
    lift = np.vstack([np.zeros(n - 1), np.eye(n - 1)])  # theta = lift @ coefficients
    cov_theta = centre @ lift @ cov[: n - 1, : n - 1] @ lift.T @ centre.T
    return centre @ full, np.sqrt(np.clip(np.diag(cov_theta), 0, None))


def fit_contextual_bt(pairs: pd.DataFrame, covariates: list[str]) -> ContextualFit:
    """Fit the contextual model to player pairs.

    pairs : one row per within-match comparison: match_id, a, b (agents), outcome (1 / 0 / 0.5 for a), and
        for every covariate NAME the columns NAME_a and NAME_b (numbers).
    covariates : the covariate names. Returns a ContextualFit; warnings of the GLM reach the result's notes.
    """
    agents = sorted(set(pairs["a"].unique()) | set(pairs["b"].unique()))
    if len(agents) < 2:
        raise ValueError("a contextual Bradley-Terry needs comparisons of at least two agents")
    notes: list[str] = []
    with collect_notes(notes):
        X, y, g = _design(pairs, agents, covariates)
        full = _fit(X, y, g)
        plain = _fit(X[:, : len(agents) - 1], y, g)
    n = len(agents)
    theta, se = _thetas(np.asarray(full.params), np.asarray(full.cov_params()), n)
    theta0, _ = _thetas(np.asarray(plain.params), np.asarray(plain.cov_params()), n)
    table = wald_table(agents, theta, se)
    plain_table = add_rank(pd.DataFrame({"agent": agents, "rating": to_elo(theta0)}))
    table = table.assign(rating_uncontrolled=plain_table["rating"].to_numpy(),
                         rank_uncontrolled=plain_table["rank"].to_numpy())
    table["rank_change"] = (table["rank_uncontrolled"].astype(int) - table["rank"].astype(int)).astype(int)
    beta = np.asarray(full.params)[n - 1:]
    beta_se = np.asarray(full.bse)[n - 1:]
    effects = pd.DataFrame({"covariate": covariates, "estimate": beta, "se": beta_se,
                            "lower": beta - Z95 * beta_se, "upper": beta + Z95 * beta_se,
                            "estimate_elo": beta * ELO_SCALE})
    converged = bool(full.converged and plain.converged)
    return ContextualFit(ratings=table, effects=effects, comparisons=len(pairs), notes=notes,
                         diagnostics={"converged": converged, "iterations": int(getattr(full, "nit", 0) or 0)})
