"""Plackett-Luce by maximum likelihood (or MAP) from full rankings, ties handled by Breslow's rule.

A ranking of a match is a list of tiers, best first; a tier holds the agents that tied. Plackett-Luce builds
the ranking stage by stage: the first tier is chosen from everyone, the next from those left, and so on;
with strengths exp(theta), an untied stage picks agent i from the remaining set R with probability
exp(theta_i) / sum_{j in R} exp(theta_j). A tier of d tied agents is Breslow's approximation (as in Cox
regression with tied times): each of its agents is chosen from the same remaining set, so the stage adds
sum_{i in tier} theta_i - d log sum_{j in R} exp(theta_j); this holds for a tied last tier too, while a last
tier of one agent adds nothing (it is chosen with probability 1). With two agents per match this is
Bradley-Terry where a win adds log P(winner) and a tie adds log P(a) + log P(b), one win each way.

Ratings are on the Elo scale (`referee.models.ratings.bradley_terry.to_elo`: mean 1500, 400 points per factor 10 of
strength). The MLE exists when every agent has won a stage against and lost a stage to the rest in a
strongly connected way (as for Bradley-Terry); otherwise the fit warns and uses MAP with independent
Normal(0, prior_sd^2) priors (default 400 Elo points), the same stated fallback as `fit_bt`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from referee.models.fit import iterative_diagnostics
from referee.models.ratings.bradley_terry import (DEFAULT_PRIOR_SD, RatingWarning, StrengthFit, centred_se,
                                          mle_exists)

Ranking = list[list[int]]  # tiers of agent indices, best first


@dataclass
class PLFit(StrengthFit):
    """A fitted Plackett-Luce model (`referee.models.ratings.bradley_terry.StrengthFit`); rankings : how many
    rankings (matches) were fitted."""

    rankings: int = 0
    model: str = "plackett-luce"


@dataclass
class Stages:
    """Every choice stage of every ranking: `remaining` (stages, n) 0/1 sparse, `chosen` (stages, n) 0/1
    sparse, `size` (stages,) the tier size d."""

    remaining: sparse.csr_matrix
    chosen: sparse.csr_matrix
    size: np.ndarray


def stages(rankings: list[Ranking], n: int) -> Stages:
    """The choice stages of `rankings` (each a list of tiers of agent indices, best first) over n agents."""
    rem_rows, rem_cols, ch_rows, ch_cols, sizes = [], [], [], [], []
    s = 0
    for ranking in rankings:
        left = [i for tier in ranking for i in tier]
        for tier in ranking if len(ranking[-1]) > 1 else ranking[:-1]:
            rem_rows += [s] * len(left)
            rem_cols += left
            ch_rows += [s] * len(tier)
            ch_cols += list(tier)
            sizes.append(len(tier))
            chosen = set(tier)
            left = [i for i in left if i not in chosen]
            s += 1
    ones = lambda k: np.ones(k)  # noqa: E731
    return Stages(sparse.csr_matrix((ones(len(rem_rows)), (rem_rows, rem_cols)), shape=(s, n)),
                  sparse.csr_matrix((ones(len(ch_rows)), (ch_rows, ch_cols)), shape=(s, n)),
                  np.asarray(sizes, float))


def loglik(theta: np.ndarray, st: Stages) -> float:
    """The log-likelihood of the stages at log-strengths theta (shape (n,))."""
    e = np.exp(theta - theta.max())
    total = st.remaining @ e
    return float((st.chosen @ theta).sum() - (st.size * (np.log(total) + theta.max())).sum())


def _grad_hess(theta: np.ndarray, st: Stages) -> tuple[np.ndarray, np.ndarray]:
    e = np.exp(theta - theta.max())
    total = st.remaining @ e
    p = st.remaining.multiply(e[None, :]).multiply(1.0 / total[:, None]).tocsr()  # stage choice probabilities
    weighted = p.multiply(st.size[:, None]).tocsr()
    grad = np.asarray(st.chosen.sum(axis=0)).ravel() - np.asarray(weighted.sum(axis=0)).ravel()
    hess = -(np.diag(np.asarray(weighted.sum(axis=0)).ravel()) - (p.T @ weighted).toarray())
    return grad, hess


def win_graph(rankings: list[Ranking], n: int) -> np.ndarray:
    """W (n, n): W[i, j] = 1 where i finished strictly above j in some ranking (for the MLE's existence)."""
    W = np.zeros((n, n))
    for ranking in rankings:
        above: list[int] = []
        for tier in ranking:
            for j in tier:
                W[above, j] = 1.0
            above += list(tier)
        for tier in ranking:
            if len(tier) > 1:  # a tie is evidence both ways
                for i in tier:
                    W[i, [j for j in tier if j != i]] = 1.0
    return W


def fit_plackett_luce(rankings: list[Ranking], agents: list[str], prior_sd: float | None = None,
                      tol: float = 1e-10, max_iter: int = 200) -> PLFit:
    """Fit Plackett-Luce to `rankings` (tiers of indices into `agents`, best first).

    prior_sd : None for the MLE (falling back, with a RatingWarning, to MAP with sd DEFAULT_PRIOR_SD when the
    MLE does not exist); a number for MAP with that Normal prior sd on theta (natural-log scale).
    Returns a PLFit (theta centred, standard errors from the observed information).
    """
    n = len(agents)
    if n < 2:
        raise ValueError("Plackett-Luce needs at least two agents")
    rankings = [r for r in rankings if sum(len(t) for t in r) >= 2]
    if not rankings:
        raise ValueError("no ranking holds two agents")
    st = stages(rankings, n)
    method = "mle" if prior_sd is None else "map"
    if prior_sd is None and not mle_exists(win_graph(rankings, n)):
        warnings.warn("Plackett-Luce: the maximum-likelihood estimate does not exist (some agent never finished "
                      "below, or never above, the others in a connected way); using MAP with a Normal prior of sd "
                      f"{DEFAULT_PRIOR_SD:.3g} on log-strength (400 Elo points)", RatingWarning, stacklevel=2)
        prior_sd, method = DEFAULT_PRIOR_SD, "map"
    theta = np.zeros(n)
    step = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        grad, hess = _grad_hess(theta, st)
        if prior_sd is not None:
            grad = grad - theta / prior_sd**2
            hess = hess - np.eye(n) / prior_sd**2
        # Newton on the centred subspace: the likelihood is flat along theta + c
        basis = np.eye(n)[:, 1:] - 1.0 / n if prior_sd is None else np.eye(n)
        delta = basis @ np.linalg.solve(basis.T @ (-hess) @ basis, basis.T @ grad)
        objective = lambda th: loglik(th, st) - (0.0 if prior_sd is None else (th @ th) / (2 * prior_sd**2))  # noqa: E731
        before = objective(theta)
        for _ in range(40):  # halve a step that would lower the (concave) objective
            if objective(theta + delta) >= before - 1e-12:
                break
            delta = delta / 2
        theta = theta + delta
        theta -= theta.mean()
        step = float(np.abs(delta).max())
        if step < tol:
            break
    _, hess = _grad_hess(theta, st)
    info = -hess + (np.eye(n) / prior_sd**2 if prior_sd is not None else 0.0)
    se = centred_se(np.linalg.pinv(info))
    converged = step < max(tol, 1e-6)
    return PLFit(agents=list(agents), theta=theta, se=se, method=method, prior_sd=prior_sd, rankings=len(rankings),
                 diagnostics=iterative_diagnostics(it, max_iter, converged, "Plackett-Luce (Newton)"))


def rankings_from_comparisons(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, cluster: np.ndarray,
                              n: int) -> list[Ranking]:
    """The ranking of each cluster (match) that its complete pairwise comparisons imply: agents ordered by
    wins + ties / 2 within the cluster, equal totals forming one tier. Inputs: agent codes a, b (< n),
    outcome 1 / 0 / 0.5 for a, the cluster of each comparison."""
    outcome = np.asarray(outcome, float)
    codes, _ = pd.factorize(np.asarray(cluster))  # clusters in order of first appearance
    key = np.r_[codes, codes].astype(np.int64) * n + np.r_[a, b]
    slots, slot = np.unique(key, return_inverse=True)
    points = np.bincount(slot, weights=np.r_[outcome, 1.0 - outcome], minlength=len(slots))
    which, agent = slots // n, slots % n
    order = np.lexsort((-points, which))
    which, agent, points = which[order], agent[order], points[order]
    out: list[Ranking] = [[] for _ in range(codes.max() + 1 if len(codes) else 0)]
    for k in range(len(which)):
        tiers = out[which[k]]
        if tiers and k > 0 and which[k - 1] == which[k] and points[k - 1] == points[k]:
            tiers[-1].append(int(agent[k]))
        else:
            tiers.append([int(agent[k])])
    return out
