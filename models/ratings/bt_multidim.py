"""Multidimensional Bradley-Terry (COMPACT eq. 3): logit P(i beats j in game k) = (w_i - w_j) . g_k.

Agents have vectors w_i in R^D and games vectors g_k in R^D. Fitted by L-BFGS on the log-likelihood of
per-game pair counts with a small ridge penalty lambda/2 (|W|^2 + |G|^2), from several seeded random
starts (the problem is not convex), keeping the best.

Invariances, and how referee fixes them. The likelihood only sees the n x K matrix M = W_c G^T, where
W_c is W with its column means removed: (1) adding the same vector to every w_i changes nothing, (2) any
invertible A gives (W A, G A^-T) with the same M, including rotations, scalings and sign flips. referee
reports the balanced SVD form: with M = U S V^T (singular values descending), W = U_D S_D^(1/2) and
G = V_D S_D^(1/2), and each dimension's sign chosen so that the games' loadings sum to a positive number.
This form is unique whenever the D singular values are distinct. Per-game strengths s_k = W g_k are
invariant and are what ratings and predictions use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.fit import FitResult, collect_notes, iterative_diagnostics, lbfgs_converged
from referee.models.ratings.bradley_terry import add_rank, to_elo


@dataclass
class MultiDimFit(FitResult):
    """Fitted multidimensional BT in canonical form (the `referee.models.fit.FitResult` contract): W (n, D),
    G (K, D), their names, and the log-likelihood."""

    agents: list[str] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    W: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    G: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    loglik: float = float("nan")
    model: str = "bt-md"

    @property
    def strengths(self) -> np.ndarray:
        """Per-game strengths s[k, i] = w_i . g_k (natural-log units), shape (K, n)."""
        return self.G @ self.W.T

    def game_table(self) -> pd.DataFrame:
        """game, agent, rating (Elo scale within the game), lower, upper (NaN), rank."""
        parts = [add_rank(pd.DataFrame({"agent": self.agents, "rating": to_elo(s), "lower": np.nan,
                                        "upper": np.nan})).assign(game=g) for g, s in zip(self.games, self.strengths)]
        return pd.concat(parts, ignore_index=True)[["game", "agent", "rating", "lower", "upper", "rank"]]

    def table(self) -> pd.DataFrame:
        """agent, rating (the mean over games of the per-game Elo ratings), lower, upper, rank, dim_1..dim_D."""
        frame = pd.DataFrame({"agent": self.agents, "rating": to_elo(self.strengths).mean(axis=0),
                              "lower": np.nan, "upper": np.nan})
        frame = add_rank(frame)
        for d in range(self.W.shape[1]):
            frame[f"dim_{d + 1}"] = self.W[:, d]
        return frame


def canonical(W: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The balanced-SVD canonical form of (W, G) described in the module docstring."""
    D = W.shape[1]
    M = (W - W.mean(axis=0)) @ G.T
    U, S, Vt = np.linalg.svd(M, full_matrices=False)
    root = np.sqrt(S[:D])
    Wc, Gc = U[:, :D] * root, Vt[:D].T * root
    signs = np.where(Gc.sum(axis=0) < 0, -1.0, 1.0)
    return Wc * signs, Gc * signs


def _negloglik(x, Wk, Nk, wins, n, K, D, lam):
    W, G = x[: n * D].reshape(n, D), x[n * D:].reshape(K, D)
    s = G @ W.T  # (K, n)
    diff = s[:, :, None] - s[:, None, :]
    log_p = -np.logaddexp(0.0, -diff)
    loglik = (Wk * log_p).sum()
    r = wins - (Nk * np.exp(log_p)).sum(axis=2)  # d loglik / d s, (K, n)
    grad_W = r.T @ G - lam * W
    grad_G = r @ W - lam * G
    value = loglik - 0.5 * lam * ((W**2).sum() + (G**2).sum())
    return -value, -np.r_[grad_W.ravel(), grad_G.ravel()]


def fit_bt_multidim(Wk: np.ndarray, agents: list[str], games: list[str], dims: int, lam: float = 0.01,
                    restarts: int = 3, seed: int = 0, max_iter: int = 5000) -> MultiDimFit:
    """Fit D-dimensional BT to per-game pair counts Wk (K, n, n) from `restarts` seeded starts, L-BFGS capped
    at `max_iter` iterations; returns the canonical MultiDimFit (ConvergenceWarning when the best start did
    not converge)."""
    from scipy.optimize import minimize  # here, not at import: scipy.optimize costs 70 ms to load
    if not 1 <= dims <= 7:
        raise ValueError("dims must be between 1 and 7")
    Wk = np.asarray(Wk, float)
    K, n, _ = Wk.shape
    Nk = Wk + np.transpose(Wk, (0, 2, 1))
    wins = Wk.sum(axis=2)
    rng = np.random.default_rng(seed)
    best = None
    notes: list[str] = []
    with collect_notes(notes):
        for _ in range(restarts):
            x0 = rng.normal(0, 0.1, n * dims + K * dims)
            res = minimize(_negloglik, x0, args=(Wk, Nk, wins, n, K, dims, lam), jac=True, method="L-BFGS-B",
                           options={"maxiter": max_iter, "ftol": 1e-12, "gtol": 1e-8})
            if best is None or res.fun < best.fun:
                best = res
        diagnostics = iterative_diagnostics(best.nit, max_iter, lbfgs_converged(best),
                                            f"{dims}-dimensional Bradley-Terry L-BFGS (best of {restarts} starts)")
    W, G = best.x[: n * dims].reshape(n, dims), best.x[n * dims:].reshape(K, dims)
    W, G = canonical(W, G)
    s = G @ W.T
    loglik = float((Wk * -np.logaddexp(0.0, -(s[:, :, None] - s[:, None, :]))).sum())
    return MultiDimFit(agents=list(agents), games=list(games), W=W, G=G, loglik=loglik, diagnostics=diagnostics,
                       notes=notes)
