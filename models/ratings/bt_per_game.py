"""Bradley-Terry with per-game deviations (COMPACT eq. 2): w_ik = mu_i + delta_ik.

mu_i is agent i's global rating and delta_ik its deviation in game k, shrunk towards 0 by independent
Normal(0, tau^2) priors (tau = 100 Elo points by default, overridable; none for the paper's plain MLE, with
the deviations summing to zero over games). The global ratings mu are
centred (sum 0) and otherwise unpenalised, as in scalar Bradley-Terry; where their MLE would not exist
(checked on the pooled counts) a Normal(0, (400 Elo)^2) prior is added, with a warning. Fitted by
L-BFGS on the exact log-posterior and its gradient; inputs are per-game pair counts W[k, i, j].
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.fit import FitResult, collect_notes, iterative_diagnostics, lbfgs_converged
from referee.models.ratings.bradley_terry import DEFAULT_PRIOR_SD, ELO_SCALE, RatingWarning, add_rank, mle_exists, to_elo
from referee.models.registry import DEFAULT_TAU_ELO  # (the registry's, for the command line)


@dataclass
class PerGameFit(FitResult):
    """Fitted per-game Bradley-Terry (the `referee.models.fit.FitResult` contract): agents, games, mu (n,),
    delta (K, n), both natural-log units; `table()` is the global table."""

    agents: list[str] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    mu: np.ndarray = field(default_factory=lambda: np.zeros(0))
    delta: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    tau: float = 0.0
    prior_sd: float | None = None
    model: str = "bt-per-game"
    wins: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (K, n) comparisons won (ties as halves)
    losses: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (K, n) comparisons lost
    unbounded: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), bool))  # (K, n): no finite estimate
    parts: np.ndarray = field(default_factory=lambda: np.zeros(0, int))  # (K,) strong components of each win graph

    @property
    def played(self) -> np.ndarray:
        """(K, n): the agent has a comparison in the game."""
        return (self.wins + self.losses) > 0

    @property
    def global_finite(self) -> np.ndarray:
        """(n,): the agent's global rating has a finite plain maximum-likelihood estimate: none of its cells is
        unbounded and it played every game (with deviations summing to zero, mu is the mean of the agent's
        per-game strengths, and an unplayed game's is free)."""
        if not self.unbounded.size:
            return np.ones(len(self.agents), bool)
        return ~self.unbounded.any(axis=0) & self.played.all(axis=0)

    def records(self) -> pd.DataFrame:
        """game, agent, wins, losses, finite, why: one row per cell the agent played. `finite` False: by plain
        maximum likelihood the cell has no finite rating, and `why` says which way: the agent won (or lost)
        every comparison there, or the game's win graph among its players splits into parts that never beat
        each other both ways (not strongly connected), so their relative strengths run off to infinity."""
        rows = [{"game": g, "agent": a, "wins": float(self.wins[k, i]), "losses": float(self.losses[k, i]),
                 "finite": not bool(self.unbounded[k, i]), "why": self._why(k, i)}
                for k, g in enumerate(self.games) for i, a in enumerate(self.agents) if self.played[k, i]]
        return pd.DataFrame(rows, columns=["game", "agent", "wins", "losses", "finite", "why"])

    def _why(self, k: int, i: int) -> str | None:
        if not self.unbounded.size or not self.unbounded[k, i]:
            return None
        if self.losses[k, i] == 0:
            return "won every comparison"
        if self.wins[k, i] == 0:
            return "lost every comparison"
        return f"the win graph splits in {int(self.parts[k])}"

    def table(self) -> pd.DataFrame:
        """The global ratings (`global_table`)."""
        return self.global_table()

    @property
    def theta(self) -> np.ndarray:
        """Per-game strengths mu + delta, shape (K, n)."""
        return self.mu[None, :] + self.delta

    def global_table(self, finite: bool = False) -> pd.DataFrame:
        """agent, rating (Elo scale from mu), lower, upper (NaN: use the bootstrap), rank. `finite`: an agent with
        a global rating without a finite estimate (`global_finite`) has none here (NaN) and no rank."""
        rating = to_elo(self.mu)
        if finite:
            rating = np.where(self.global_finite, rating, np.nan)
        frame = pd.DataFrame({"agent": self.agents, "rating": rating, "lower": np.nan, "upper": np.nan})
        return add_rank(frame)

    def game_table(self, finite: bool = False) -> pd.DataFrame:
        """game, agent, rating (Elo scale of mu + delta, centred per game), lower, upper, rank within game.
        `finite`: a cell without a finite estimate (`unbounded`) or never played has no rating (NaN) and no rank."""
        parts = []
        for k, game in enumerate(self.games):
            rating = to_elo(self.theta[k])
            if finite and self.unbounded.size:
                rating = np.where(self.unbounded[k] | ~self.played[k], np.nan, rating)
            frame = pd.DataFrame({"agent": self.agents, "rating": rating, "lower": np.nan, "upper": np.nan})
            parts.append(add_rank(frame).assign(game=game))
        return pd.concat(parts, ignore_index=True)[["game", "agent", "rating", "lower", "upper", "rank"]]

    def kendall_tau(self, present: np.ndarray | None = None) -> pd.DataFrame:
        """Kendall tau between each game's ranking (mu + delta) and the global one (mu).

        present : optional (K, n) mask of agents that played game k; others are left out of that game's tau, and
        by plain maximum likelihood so are cells and global ratings without a finite estimate (`global_table`).
        Returns columns game, kendall_tau (NaN with fewer than two agents left), agents (how many it ranks).
        """
        rows = []
        for k, game in enumerate(self.games):
            mask = np.ones(len(self.agents), bool) if present is None else present[k].copy()
            if self.unbounded.size and np.isinf(self.tau):  # plain ML: only cells and globals that exist rank
                mask &= ~self.unbounded[k] & self.global_finite
            from scipy.stats import kendalltau  # on first use: scipy.stats costs a second to load

            tau = kendalltau(self.mu[mask], self.theta[k][mask]).statistic if mask.sum() > 1 else np.nan
            rows.append({"game": game, "kendall_tau": tau, "agents": int(mask.sum())})
        return pd.DataFrame(rows)


def fit_bt_per_game(Wk: np.ndarray, agents: list[str], games: list[str], tau_elo: float | None = DEFAULT_TAU_ELO,
                    prior_sd: float | None = None, max_iter: int = 5000) -> PerGameFit:
    """Fit w_ik = mu_i + delta_ik to per-game pair counts.

    Parameters
    ----------
    Wk : shape (K, n, n); Wk[k, i, j] = wins of i over j in game k (ties as halves).
    agents, games : names for the n agents and K games.
    tau_elo : prior sd of the deviations, in Elo points; None for the paper's plain maximum likelihood, with
        each agent's deviations summing to zero over the games (mu is then its mean per-game rating). Without
        the prior a game in which an agent always wins (or always loses) has no finite estimate: the fit
        stops at its iteration cap and warns.
    prior_sd : prior sd of mu (natural-log units); None = flat unless the pooled MLE does not exist.
    max_iter : L-BFGS iteration cap; stopping there without convergence warns (ConvergenceWarning).

    Returns
    -------
    PerGameFit.
    """
    Wk = np.asarray(Wk, float)
    K, n, _ = Wk.shape
    notes: list[str] = []
    with collect_notes(notes):
        if prior_sd is None and not mle_exists(Wk.sum(axis=0)):
            warnings.warn("pooled Bradley-Terry MLE does not exist; the global ratings were given a Normal(0, "
                          "(400 Elo)^2) prior", RatingWarning, stacklevel=3)
            prior_sd = DEFAULT_PRIOR_SD
    from scipy.optimize import minimize  # here, not at import: scipy.optimize costs 70 ms to load
    tau = np.inf if tau_elo is None else tau_elo / ELO_SCALE
    Nk = Wk + np.transpose(Wk, (0, 2, 1))
    wins = Wk.sum(axis=2)
    prec_mu = 0.0 if prior_sd is None else 1.0 / prior_sd**2

    def objective(x):
        mu, delta = x[:n], x[n:].reshape(K, n)
        theta = mu[None, :] + delta
        diff = theta[:, :, None] - theta[:, None, :]
        log_p = -np.logaddexp(0.0, -diff)
        loglik = (Wk * log_p).sum()
        P = np.exp(log_p)
        g = wins - (Nk * P).sum(axis=2)
        logpost = loglik - 0.5 * (delta**2).sum() / tau**2 - 0.5 * prec_mu * (mu**2).sum()
        grad_mu = g.sum(axis=0) - prec_mu * mu
        grad_delta = g - delta / tau**2
        grad_mu -= grad_mu.mean()  # the gauge: mu is only defined up to a constant
        if tau_elo is None:
            grad_delta -= grad_delta.mean(axis=0, keepdims=True)  # deviations sum to zero over games
        return -logpost, -np.r_[grad_mu, grad_delta.ravel()]

    with collect_notes(notes):
        res = minimize(objective, np.zeros(n + K * n), jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iter, "ftol": 1e-14, "gtol": 1e-9})
        diagnostics = iterative_diagnostics(res.nit, max_iter, lbfgs_converged(res), "per-game Bradley-Terry L-BFGS")
    mu, delta = res.x[:n], res.x[n:].reshape(K, n)
    losses = Nk.sum(axis=2) - wins
    played = (wins + losses) > 0
    parts = np.array([game_parts(Wk[k], played[k]) for k in range(K)], int)
    # plain maximum likelihood: a game's strengths exist only when its win graph among its players is strongly
    # connected (Zermelo; Ford 1957); otherwise every played cell of the game runs off (an agent who won or lost
    # every comparison is the simplest such split)
    unbounded = played & (parts[:, None] > 1) if tau_elo is None else np.zeros_like(played)
    if unbounded.any():
        split = int((parts > 1).sum())
        with collect_notes(notes):
            warnings.warn(f"by plain maximum likelihood, {int(unbounded.sum())} of {int(played.sum())} agent-game "
                          f"cells have no finite rating ({split} of {K} games' win graphs split into parts that never "
                          "beat each other both ways): their numbers are where the optimiser stopped, not "
                          "estimates; read their win-loss records (`records()`)", RatingWarning, stacklevel=2)
        diagnostics = dict(diagnostics, converged=False, unbounded_cells=int(unbounded.sum()))
    return PerGameFit(agents=list(agents), games=list(games), mu=mu - mu.mean(), delta=delta, tau=tau,
                      prior_sd=prior_sd, diagnostics=diagnostics, notes=notes, wins=wins, losses=losses,
                      unbounded=unbounded, parts=parts)


def game_parts(W: np.ndarray, played: np.ndarray) -> int:
    """How many strongly connected parts the "has beaten" graph of one game's players falls into (1: the plain
    maximum-likelihood strengths of the game exist; an agent alone in a game counts as 2, nothing to compare).
    W (n, n) the game's win counts, played (n,) the agents with a comparison in it."""
    from scipy.sparse.csgraph import connected_components

    who = np.flatnonzero(played)
    if len(who) < 2:
        return 2
    count, _ = connected_components((W[np.ix_(who, who)] > 0).astype(np.int8), directed=True, connection="strong")
    return int(count)

