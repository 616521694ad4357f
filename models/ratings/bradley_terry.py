"""Scalar Bradley-Terry by maximum likelihood (or MAP), from pair counts.

The model: P(i beats j) = 1 / (1 + exp(theta_j - theta_i)), on the Elo scale
rating = 1500 + (400 / ln 10) (theta - mean theta), so P(i beats j) = 1 / (1 + 10^((r_j - r_i)/400)).

The likelihood depends on the data only through the win counts per ordered pair, `W[i, j]` = wins of i
over j (a tie adds 1/2 to both W[i, j] and W[j, i] by default), so every fit here takes that matrix.
Newton's method on the centred log-strengths converges in a handful of steps. The MLE exists exactly
when the directed "has beaten" graph is strongly connected (Zermelo; Ford 1957); otherwise `fit_bt`
warns and falls back to MAP with independent Normal(0, prior_sd^2) priors on theta, the stated weak
prior (default sd = ln 10, i.e. 400 Elo points).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from referee.models.fit import FitResult, collect_notes, iterative_diagnostics

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per unit of natural-log strength
ELO_CENTRE = 1500.0
DEFAULT_PRIOR_SD = math.log(10.0)  # 400 Elo points
Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


class RatingWarning(UserWarning):
    """A rating fell back from its exact method (no MLE, NaN Elo) to a stated regularised estimate."""


@dataclass
class StrengthFit(FitResult):
    """A fitted model of one log-strength per agent (the `referee.models.fit.FitResult` contract), the base of
    Bradley-Terry and Plackett-Luce.

    agents : names, in the order of every array. theta : centred natural-log strengths, shape (n,).
    se : standard errors of theta from the observed information (NaN where not identified), shape (n,).
    method : 'mle' or 'map'; prior_sd : the prior sd of theta for MAP (None for MLE).
    """

    agents: list[str] = field(default_factory=list)
    theta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    se: np.ndarray = field(default_factory=lambda: np.zeros(0))
    method: str = "mle"
    prior_sd: float | None = None

    @property
    def ratings(self) -> np.ndarray:
        """Elo-scale ratings, mean 1500, shape (n,)."""
        return to_elo(self.theta)

    def table(self, z: float = Z95) -> pd.DataFrame:
        """agent, rating, lower, upper (Wald interval, Elo scale, 95% by default), rank (1 = best)."""
        return wald_table(self.agents, self.theta, self.se, z)


@dataclass
class BTFit(StrengthFit):
    """A fitted scalar Bradley-Terry model (`StrengthFit`); iterations : Newton steps taken (also in
    `diagnostics`)."""

    iterations: int = 0
    model: str = "bt"

    def win_probability(self) -> np.ndarray:
        """P(row agent beats column agent), shape (n, n)."""
        return win_probability(self.theta)


def to_elo(theta: np.ndarray) -> np.ndarray:
    """Natural-log strengths -> Elo ratings centred at 1500."""
    theta = np.asarray(theta, float)
    return ELO_CENTRE + ELO_SCALE * (theta - theta.mean(axis=-1, keepdims=True))


def wald_table(agents: list[str], theta: np.ndarray, se: np.ndarray, z: float = Z95) -> pd.DataFrame:
    """agent, rating, lower, upper, rank: log-strengths theta (n,) with standard errors se (n,) as Elo-scale
    ratings (`to_elo`) with Wald intervals rating -/+ z * se in Elo points (every maximum-likelihood fit's table)."""
    rating = to_elo(theta)
    half = z * ELO_SCALE * np.asarray(se)
    return add_rank(pd.DataFrame({"agent": list(agents), "rating": rating, "lower": rating - half,
                                  "upper": rating + half}))


def win_probability(theta: np.ndarray) -> np.ndarray:
    """P(i beats j) = sigmoid(theta_i - theta_j) for all pairs, shape (n, n)."""
    diff = np.asarray(theta)[:, None] - np.asarray(theta)[None, :]
    return 1.0 / (1.0 + np.exp(-diff))


def elo_win_probability(r_a, r_b) -> np.ndarray:
    """P(a beats b) = 1 / (1 + 10^((r_b - r_a) / 400)) for ratings on the Elo scale (points; arrays broadcast)."""
    return 1.0 / (1.0 + np.exp((np.asarray(r_b, float) - np.asarray(r_a, float)) / ELO_SCALE))


def add_rank(frame: pd.DataFrame, by: str = "rating", seed: int = 0) -> pd.DataFrame:
    """Add `rank` (1 = highest `by`): ratings equal to 1e-6 share a rank, competition-style (1, 2, 2, 4), so
    that identical evidence never reads as an order; an agent without a rating (NaN) gets no rank. `seed`
    is accepted for the callers' common signature; nothing is random."""
    values = pd.Series(np.round(frame[by].to_numpy(float), 6), index=frame.index)
    return frame.assign(rank=values.rank(method="min", ascending=False).astype("Int64"))


def pair_counts(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n: int, ties: str = "half",
                weights: np.ndarray | None = None) -> np.ndarray:
    """Win counts per ordered pair from integer-coded comparisons.

    Parameters
    ----------
    a, b : agent codes in [0, n), shape (m,).
    outcome : 1 (a won), 0 (b won) or 0.5 (tie), shape (m,).
    ties : 'half' (a tie is half a win for each) or 'ignore'.
    weights : optional weight per comparison (bootstrap multiplicities).

    Returns
    -------
    W, shape (n, n): W[i, j] = (weighted) wins of i over j.
    """
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    outcome = np.asarray(outcome, float)
    if ties == "ignore":
        keep = outcome != 0.5
        a, b, outcome = a[keep], b[keep], outcome[keep]
        weights = None if weights is None else np.asarray(weights)[keep]
    elif ties != "half":
        raise ValueError("ties must be 'half' or 'ignore'")
    w = np.ones(len(a)) if weights is None else np.asarray(weights, float)
    wins = np.bincount(a * n + b, weights=w * outcome, minlength=n * n)
    wins += np.bincount(b * n + a, weights=w * (1.0 - outcome), minlength=n * n)
    return wins.reshape(n, n)


def mle_exists(W: np.ndarray) -> bool:
    """True when every agent can be reached from every other along "has beaten" edges (strong connectivity)."""
    n = W.shape[0]
    if n < 2:
        return False
    graph = csr_matrix((W > 0).astype(np.int8))
    count, _ = connected_components(graph, directed=True, connection="strong")
    return count == 1


def _newton(W: np.ndarray, theta: np.ndarray, prior_sd: float | None, tol: float, max_iter: int
            ) -> tuple[np.ndarray, np.ndarray, int, bool]:
    n = W.shape[0]
    N = W + W.T
    wins = W.sum(axis=1)
    precision = 0.0 if prior_sd is None else 1.0 / prior_sd**2
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        P = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        grad = wins - (N * P).sum(axis=1) - precision * theta
        V = N * P * (1.0 - P)
        H = V - np.diag(V.sum(axis=1)) - precision * np.eye(n)  # Hessian of the log-posterior
        # fix the gauge (sum theta = 0) by bordering the Hessian: unneeded with a prior, harmless otherwise
        K = np.zeros((n + 1, n + 1))
        K[:n, :n] = H
        K[:n, n] = K[n, :n] = 1.0
        step = np.linalg.solve(K, np.r_[-grad, 0.0])[:n]
        scale = 1.0
        while np.abs(scale * step).max() > 5.0:  # damp wild first steps
            scale /= 2.0
        theta = theta + scale * step
        if np.abs(scale * step).max() < tol:
            converged = True
            break
    info = information(theta, N) + precision * np.eye(n)
    # with the gauge sum(theta) = 0 the MLE's covariance is the pseudo-inverse of the information; under a
    # prior the inverse also holds the variance of the common shift, which centred ratings do not have
    cov = np.linalg.inv(info) if prior_sd else np.linalg.pinv(info)
    return theta - theta.mean(), centred_se(cov), it, converged


def information(theta: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The Fisher information (n, n) about log-strengths `theta` (n,) of `counts[i, j]` comparisons between i and
    j (symmetric, any order: the mean of counts and its transpose is used)."""
    p = win_probability(theta)
    w = (counts + counts.T) / 2.0 * p * (1 - p)
    np.fill_diagonal(w, 0.0)
    return np.diag(w.sum(axis=1)) - w


def centred(cov: np.ndarray) -> np.ndarray:
    """The covariance (n, n) of centred log-strengths theta - mean(theta) from a covariance (n, n) of theta:
    P cov P with P = I - 11'/n."""
    cov = np.asarray(cov, float)
    out = cov - cov.mean(axis=0, keepdims=True)
    return out - out.mean(axis=1, keepdims=True)


def centred_se(cov: np.ndarray) -> np.ndarray:
    """Standard errors (n,) of centred log-strengths theta - mean(theta) from a covariance (n, n) of theta:
    the diagonal of P cov P with P = I - 11'/n. A MAP fit's inverse information also holds the variance of
    the common shift (the prior's alone); a rating centred at 1500 does not carry it."""
    return np.sqrt(np.clip(np.diag(centred(cov)), 0, None))


def robust_se(theta: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, cluster: np.ndarray,
              prior_sd: float | None = None) -> np.ndarray:
    """Cluster-robust (sandwich) standard errors (n,) of centred log-strengths `theta` (n,) fitted to the
    integer-coded comparisons a, b, outcome (m,) grouped in clusters (m,: any labels, e.g. the match):
    `robust_covariance` centred as `centred_se`."""
    return centred_se(robust_covariance(theta, a, b, outcome, cluster, prior_sd))


def robust_covariance(theta: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, cluster: np.ndarray,
                      prior_sd: float | None = None, bread: np.ndarray | None = None) -> np.ndarray:
    """The cluster-robust (sandwich) covariance (n, n) of log-strengths `theta` (n,) fitted to the integer-coded
    comparisons a, b, outcome (m,) grouped in clusters (m,), in natural-log units; a difference's variance
    theta_j - theta_k is the same under any centring.

    The pairs of one multiplayer match share its players' performances, so they are not independent and the
    model-based information overstates the evidence; V = H^+ (sum_c g_c g_c') H^+ with g_c the score of
    cluster c (Liang and Zeger 1986), times the finite-sample factor `cluster_factor` (the sandwich alone is
    biased low with few clusters; the contextual fit and statsmodels apply the same), centred as `centred_se`.
    With one comparison per cluster the result is close to the model-based one. `bread`: the inverse information
    (with the prior's precision), when the caller has it."""
    theta = np.asarray(theta, float)
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    n = len(theta)
    p = 1.0 / (1.0 + np.exp(theta[b] - theta[a]))
    resid = np.asarray(outcome, float) - p
    codes, _ = pd.factorize(pd.Series(cluster))
    G = csr_matrix((np.r_[resid, -resid], (np.r_[codes, codes], np.r_[a, b])), shape=(int(codes.max()) + 1, n))
    meat = (G.T @ G).toarray()
    if bread is None:
        bread = np.linalg.pinv(_information(theta, a, b, n, prior_sd), hermitian=True)
    return cluster_factor(G.shape[0], len(a), n - 1) * bread @ meat @ bread


def cluster_factor(clusters: int, comparisons: int, parameters: int) -> float:
    """The finite-sample factor G/(G-1) (m-1)/(m-k) of a cluster-robust covariance with G `clusters`, m
    `comparisons` and k free `parameters` (n - 1 log-strengths, plus any covariates): statsmodels' default for a
    clustered GLM and Stata's CR1. The sandwich's middle is a sum over clusters of estimated scores, which fall
    short of the true ones; with few clusters the bare sandwich is biased low (Cameron and Miller 2015, sec. VI)."""
    return clusters / max(clusters - 1, 1) * (comparisons - 1) / max(comparisons - parameters, 1)


def clustered(cluster: np.ndarray, agents: int) -> bool:
    """Whether the comparisons (their clusters, e.g. match ids) of `agents` rated agents take the cluster-robust
    covariance: some cluster holds several comparisons (the pairs of one multiplayer match), and there are more
    clusters than agents. The sandwich's middle is a sum of one outer product per cluster, so with G clusters
    its rank is at most G - 1 (the scores sum to zero at the fit): with no more clusters than agents some
    differences get a variance of zero, an interval of no width (one 6-player match: every interval a point).
    There the model-based covariance is taken, and the rating says so (`referee.run.ratings.ratings`)."""
    return cluster_reading(cluster, agents) == "robust"


def cluster_reading(cluster: np.ndarray, agents: int) -> str:
    """How the comparisons' covariance reads their clusters (`clustered`): 'independent' when no cluster holds
    two comparisons (nothing to cluster), 'too few' when some do but there are no more clusters than `agents`
    (the model-based covariance is taken, too narrow, and the rating says so), else 'robust'."""
    labels = pd.Series(cluster)
    if not labels.duplicated().any():
        return "independent"
    return "robust" if labels.nunique() > agents else "too few"


def bt_covariance(theta: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, cluster: np.ndarray,
                  prior_sd: float | None = None) -> np.ndarray:
    """The covariance (n, n) of log-strengths `theta` (natural-log units) behind every Bradley-Terry interval,
    rank set and pairwise test referee prints (`bt_covariance_floored` without the agents it floored)."""
    return bt_covariance_floored(theta, a, b, outcome, cluster, prior_sd)[0]


def bt_covariance_floored(theta: np.ndarray, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, cluster: np.ndarray,
                          prior_sd: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(covariance (n, n), floored (n,) bool): the cluster-robust `robust_covariance` where some cluster (match)
    holds several comparisons and there are more clusters than agents (`clustered`), each agent's variance floored
    at the model-based one (`floor_variances`: an agent whose every match ended alike carries no variation between
    its clusters, and the sandwich would give it the narrowest interval of all); else the model-based inverse
    information (with the prior's precision under MAP), the covariance `fit_bt`'s standard errors come from.
    `floored` marks the agents whose variance the floor raised. Centre it with `centred` for centred ratings."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    n = len(theta)
    info = _information(np.asarray(theta, float), a, b, n, prior_sd)
    model = np.linalg.inv(info) if prior_sd else np.linalg.pinv(info, hermitian=True)
    if clustered(cluster, len(theta)):
        return floor_variances(robust_covariance(theta, a, b, outcome, cluster, prior_sd, bread=model), model)
    return model, np.zeros(n, bool)


def _information(theta: np.ndarray, a: np.ndarray, b: np.ndarray, n: int, prior_sd: float | None) -> np.ndarray:
    """The Fisher information (n, n) of log-strengths `theta` over the comparisons a, b (each once), plus the
    prior's precision under MAP."""
    wins = pair_counts(a, b, np.ones(len(a)), n)  # each comparison once, as a win of a
    return information(theta, wins + wins.T) + (np.eye(n) / prior_sd**2 if prior_sd else 0.0)


def floor_variances(robust: np.ndarray, model: np.ndarray, tolerance: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """(covariance, floored): `robust` (n, n) plus a diagonal that raises every agent's centred variance
    (`centred`) to at least its centred variance under `model`, and which agents it raised. A diagonal added to a
    covariance keeps it positive semi-definite and only widens every difference's variance; its centred effect
    on agent i is d_i (1 - 2/n) + sum(d)/n^2, so the deficit is added again until none is left (a few rounds)."""
    target = np.diag(centred(model))
    out = np.array(robust, float)
    floored = np.zeros(len(target), bool)
    least = tolerance * max(float(target.max()), 1e-300)  # a deficit below this is rounding, not a floor
    for _ in range(100):
        deficit = np.clip(target - np.diag(centred(out)), 0, None)
        if not (deficit > least).any():
            break
        floored |= deficit > least
        out = out + np.diag(deficit)
    return out, floored


CHI2_95 = 3.841458820694124  # the chi-square(1) 95 % quantile: a likelihood-ratio interval's cut-off


def profile_bound(opponents: np.ndarray, counts: np.ndarray, side: str) -> float:
    """The finite end of the 95 % likelihood-ratio interval of one agent who never won (side 'upper') or never
    lost (side 'lower') its `counts` (k,) comparisons against opponents of log-strengths `opponents` (k,),
    the others held at their estimates. Its log-likelihood, sum counts * log(1 - sigmoid(t - opponent)) for a
    never-winner, rises to 0 as t falls without limit, so the interval is open below and ends where twice the
    log-likelihood drops by CHI2_95. Returns that log-strength (natural-log units, the opponents' scale)."""
    from scipy.optimize import brentq

    opponents, counts = np.asarray(opponents, float), np.asarray(counts, float)
    sign = 1.0 if side == "upper" else -1.0

    def drop(t: float) -> float:
        return float((counts * np.logaddexp(0.0, sign * (t - opponents))).sum()) - CHI2_95 / 2

    return brentq(drop, opponents.min() - 50.0, opponents.max() + 50.0)


def unbeaten_and_winless(W: np.ndarray, agents: list[str]) -> tuple[list[str], list[str]]:
    """(agents who never won a comparison, agents who never lost one) in the pair counts `W`."""
    never_win = [agents[i] for i in range(len(agents)) if W[i].sum() == 0]
    never_lose = [agents[i] for i in range(len(agents)) if W[:, i].sum() == 0]
    return never_win, never_lose


def disconnected_groups(W: np.ndarray, agents: list[str]) -> list[list[str]]:
    """The comparison graph's strongly connected components, largest first, when there are several (else
    []): agents of different components never beat each other in both directions, so their relative
    strength has no finite maximum-likelihood estimate."""
    from scipy.sparse.csgraph import connected_components

    n, labels = connected_components(np.asarray(W) > 0, directed=True, connection="strong")
    if n <= 1:
        return []
    groups = [[agents[i] for i in np.flatnonzero(labels == k)] for k in range(n)]
    return sorted(groups, key=len, reverse=True)


def why_no_mle(W: np.ndarray, agents: list[str]) -> str:
    """Which agents make the MLE undefined: those who never won, never lost, and the separate groups of the
    comparison graph (the smaller ones named)."""
    never_win, never_lose = unbeaten_and_winless(W, list(agents))
    text = f"never won: {_names(never_win)}; never lost: {_names(never_lose)}"
    groups = disconnected_groups(W, list(agents))
    if groups:
        small = [g for g in groups[1:] if not set(g) <= set(never_win) | set(never_lose)]
        text += f"; the comparison graph splits into {len(groups)} groups that never beat each other both ways"
        if small:
            text += " (besides the largest: " + "; ".join(_names(g, 5) for g in small[:5]) + \
                (" ..." if len(small) > 5 else "") + ")"
    return text


def _names(names: list[str], most: int = 10) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "") or "none"


def fit_bt(W: np.ndarray, agents: list[str], prior_sd: float | None = None, tol: float = 1e-10,
           max_iter: int = 100) -> BTFit:
    """Fit scalar Bradley-Terry to the pair-count matrix `W` (see `pair_counts`).

    Parameters
    ----------
    W : shape (n, n), W[i, j] = wins of i over j.
    agents : the n names.
    prior_sd : None for maximum likelihood; a number for MAP with Normal(0, prior_sd^2) on theta.
        When the MLE does not exist, a RatingWarning is issued and MAP with DEFAULT_PRIOR_SD is used.

    Returns
    -------
    BTFit with centred theta and standard errors.
    """
    W = np.asarray(W, float)
    method = "map" if prior_sd is not None else "mle"
    notes: list[str] = []
    with collect_notes(notes):
        if prior_sd is None and not mle_exists(W):
            warnings.warn(f"Bradley-Terry MLE does not exist ({why_no_mle(W, list(agents))}); used MAP with "
                          "independent Normal(0, (400 Elo)^2) priors on the ratings instead, which keeps those agents' "
                          "ratings finite and pulls them toward the mean", RatingWarning, stacklevel=3)
            prior_sd, method = DEFAULT_PRIOR_SD, "map"
        theta0 = np.zeros(W.shape[0])
        theta, se, it, converged = _newton(W, theta0, prior_sd, tol, max_iter)
        diagnostics = iterative_diagnostics(it, max_iter, converged, "Bradley-Terry Newton")
    return BTFit(agents=list(agents), theta=theta, se=se, method=method, prior_sd=prior_sd, iterations=it,
                 diagnostics=diagnostics, notes=notes)


def reference_se(W: np.ndarray) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(theta, se, prior_sd): theta and se (n,) of scalar Bradley-Terry on pair counts W (n, n): the MLE where it exists, else MAP
    under the default prior, without a warning: the reference fit behind the status labels that every rating
    table shares (`referee.run.ratings.rating_labels`), whose own rating fit says what it did."""
    W = np.asarray(W, float)
    prior = None if mle_exists(W) else DEFAULT_PRIOR_SD
    theta, se, _, _ = _newton(W, np.zeros(W.shape[0]), prior, 1e-10, 100)
    return theta, se, prior


def fit_bt_batch(Ws: np.ndarray, theta0: np.ndarray, prior_sd: float | None = None, tol: float = 1e-8,
                 max_iter: int = 50) -> np.ndarray:
    """Fit many count matrices at once (bootstrap replicates), Newton steps vectorised over the batch.

    Parameters
    ----------
    Ws : shape (r, n, n); theta0 : shape (n,) starting point (the full-data fit).
    prior_sd : as in `fit_bt` (None = MLE; replicates without an MLE drift and are best fitted with a prior).

    Returns
    -------
    theta, shape (r, n), centred.
    """
    r, n, _ = Ws.shape
    theta = np.tile(np.asarray(theta0, float), (r, 1))
    N = Ws + np.transpose(Ws, (0, 2, 1))
    wins = Ws.sum(axis=2)
    precision = 0.0 if prior_sd is None else 1.0 / prior_sd**2
    eye = np.eye(n)
    for _ in range(max_iter):
        P = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
        grad = wins - (N * P).sum(axis=2) - precision * theta
        V = N * P * (1.0 - P)
        # negative Hessian plus the gauge term (sum theta = 0) keeps it positive definite
        A = -V + V.sum(axis=2)[:, :, None] * eye + precision * eye + 1.0 / n
        step = np.linalg.solve(A, grad[:, :, None])[:, :, 0]
        step = np.clip(step, -5.0, 5.0)
        theta = theta + step
        theta -= theta.mean(axis=1, keepdims=True)
        if np.abs(step).max() < tol:
            break
    return theta
