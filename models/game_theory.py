"""Game-theoretic evaluation of a population where "better" may not be one number: the meta-game of agent
against agent, Nash averaging (Balduzzi et al. 2018, "Re-evaluating evaluation"), alpha-Rank (Omidshafiei et
al. 2019) and the share of the game that is cyclic (the Hodge decomposition of Balduzzi et al. 2019, "Open-ended
learning in symmetric zero-sum games").

- `payoff_table(comparisons)`: agents x agents win rates P (ties count one half), counts, and the
  antisymmetric log-odds matrix A = logit(P) (win rates smoothed by half a win, (w + 1/2) / (n + 1), so that
  a pair one agent always won stays finite); a pair that never met is filled from Bradley-Terry's prediction
  and flagged, never read as an even match.
- `nash_average(A)`: the maximum-entropy Nash equilibrium p of the symmetric zero-sum game A (A p <= 0,
  the game's value being 0) and each agent's Nash-averaged skill, A p: its expected log-odds against the
  equilibrium. Copies of an agent share its mass and leave everyone's skill unchanged.
- `alpha_rank(M, alpha, m)`: the stationary distribution of the single-population response graph over
  agents, with payoffs M (win rates), ranking intensity `alpha` and population size `m` (OpenSpiel's
  defaults: alpha = 100, m = 50, its local selection model; `alpha_sweep` shows the distribution over a range
  of alpha). The multi-population form (asymmetric games) is not implemented.
- `cyclic_share(A)`: the share of A's squared norm in its cyclic part, A minus its best gradient
  (r_i - r_j with r = row means): 0 when one axis (Bradley-Terry) explains every pair, 1 for rock-paper-scissors;
  `cyclic_triads` counts the triads whose majority relation is a cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import linprog, minimize
from scipy.special import logsumexp


@dataclass
class PayoffTable:
    """A meta-game: `agents` (n), `wins` (n x n: P(row beats column), ties one half, 0.5 on the diagonal),
    `counts` (comparisons per pair), `filled` (pairs that never met, filled from Bradley-Terry) and the
    antisymmetric log-odds matrix `log_odds` (n x n)."""

    agents: list[str]
    wins: np.ndarray
    counts: np.ndarray
    filled: np.ndarray
    log_odds: np.ndarray
    notes: list[str] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        """One row per ordered pair: agent, opponent, win_rate, log_odds, comparisons, filled."""
        n = len(self.agents)
        i, j = np.where(~np.eye(n, dtype=bool))
        return pd.DataFrame({"agent": np.array(self.agents)[i], "opponent": np.array(self.agents)[j],
                             "win_rate": self.wins[i, j], "log_odds": self.log_odds[i, j],
                             "comparisons": self.counts[i, j], "filled": self.filled[i, j]})


def payoff_table(comparisons: pd.DataFrame, agents: list[str] | None = None) -> PayoffTable:
    """The agent x agent meta-game of a comparisons table (columns a, b, outcome: 1 a won, 0 b won, 0.5 tie).

    Pairs that never met are filled with Bradley-Terry's predicted win rate (fitted on all comparisons) and
    flagged in `filled`; the notes say how many. Raises ValueError when the comparison graph is not connected
    (rate each component apart: `components`)."""
    from referee.models.ratings.bradley_terry import disconnected_groups, fit_bt

    agents = sorted(set(comparisons["a"]) | set(comparisons["b"])) if agents is None else list(agents)
    won = _wins(comparisons, agents)
    counts = won + won.T
    if disconnected_groups(counts, agents):
        raise ValueError("the comparisons split into separate groups of agents that never met: a meta-game needs "
                         "one connected group (see components)")
    n = len(agents)
    filled = (counts == 0) & ~np.eye(n, dtype=bool)
    smoothed = (won + 0.5) / (counts + 1)
    notes = []
    if filled.any():
        strength = fit_bt(won, agents).theta
        predicted = 1 / (1 + np.exp(-(strength[:, None] - strength[None, :])))
        smoothed = np.where(filled, predicted, smoothed)
        notes.append(f"{int(filled.sum()) // 2} pair(s) never met: their win rates are Bradley-Terry's prediction "
                     "(flagged in the payoff table), not observed")
    wins = np.where(counts > 0, won / np.maximum(counts, 1), smoothed)
    np.fill_diagonal(wins, 0.5)
    np.fill_diagonal(smoothed, 0.5)
    log_odds = np.log(smoothed) - np.log1p(-smoothed)
    log_odds = (log_odds - log_odds.T) / 2  # exactly antisymmetric
    return PayoffTable(agents, wins, counts, filled, log_odds, notes)


def _wins(comparisons: pd.DataFrame, agents: list[str]) -> np.ndarray:
    """Bradley-Terry's pair counts (ties half a win each) of the comparisons among `agents`."""
    from referee.models.ratings.bradley_terry import pair_counts

    index = {a: k for k, a in enumerate(agents)}
    return pair_counts(comparisons["a"].map(index).to_numpy(), comparisons["b"].map(index).to_numpy(),
                       comparisons["outcome"].to_numpy(dtype=float), len(agents))


def components(comparisons: pd.DataFrame) -> list[list[str]]:
    """The connected groups of agents of a comparisons table (agents linked when they met), largest first."""
    from referee.models.ratings.bradley_terry import disconnected_groups

    agents = sorted(set(comparisons["a"]) | set(comparisons["b"]))
    won = _wins(comparisons, agents)
    return disconnected_groups(won + won.T, agents) or [agents]


@dataclass
class NashAverage:
    """The maximum-entropy Nash equilibrium `mass` (n, sums to 1) of a symmetric zero-sum game and each agent's
    Nash-averaged `skill` (n: its expected payoff against the equilibrium; 0 on the support, below 0 off it)."""

    agents: list[str]
    mass: np.ndarray
    skill: np.ndarray
    support: list[str]

    def table(self) -> pd.DataFrame:
        """agent, rank (1 best by skill; ties share), score (the skill), mass, in rank order."""
        from referee.models.ratings.bradley_terry import add_rank

        frame = add_rank(pd.DataFrame({"agent": self.agents, "score": self.skill, "mass": self.mass}), by="score")
        return frame.sort_values(["rank", "agent"])[["agent", "rank", "score", "mass"]].reset_index(drop=True)


def nash_average(log_odds: np.ndarray, agents: list[str] | None = None, tol: float = 1e-9) -> NashAverage:
    """Nash averaging of an antisymmetric payoff matrix (n x n; e.g. `PayoffTable.log_odds`).

    The equilibria of a symmetric zero-sum game form a polytope {p in the simplex: A p <= 0}; the one of
    maximum entropy is unique and treats copies of an agent alike (Balduzzi et al. 2018). Found by a linear
    program (any equilibrium) and then entropy maximisation over the polytope (SLSQP); raises RuntimeError
    when the solver fails."""
    a = np.asarray(log_odds, dtype=float)
    n = len(a)
    agents = list(agents) if agents is not None else [str(k) for k in range(n)]
    if n == 1:
        return NashAverage(agents, np.ones(1), np.zeros(1), agents)
    lp = linprog(np.zeros(n), A_ub=a, b_ub=np.zeros(n), A_eq=np.ones((1, n)), b_eq=[1.0], bounds=[(0, 1)] * n,
                 method="highs")
    if not lp.success:
        raise RuntimeError(f"Nash averaging: the linear program found no equilibrium ({lp.message})")
    start = np.clip(0.999 * lp.x + 0.001 / n, 1e-12, 1)
    slack = max(tol, float(np.max(a @ lp.x)))

    def neg_entropy(p):
        q = np.clip(p, 1e-300, None)
        return float(np.sum(q * np.log(q)))

    def grad(p):
        return np.log(np.clip(p, 1e-300, None)) + 1

    best = minimize(neg_entropy, start, jac=grad, method="SLSQP", bounds=[(0, 1)] * n,
                    constraints=[{"type": "eq", "fun": lambda p: np.sum(p) - 1, "jac": lambda p: np.ones(n)},
                                 {"type": "ineq", "fun": lambda p: slack - a @ p, "jac": lambda p: -a}],
                    options={"maxiter": 500, "ftol": 1e-12})
    p = best.x if best.success and np.max(a @ best.x) <= slack + 1e-6 else lp.x
    p = np.clip(p, 0, None)
    p /= p.sum()
    skill = a @ p
    support = [ag for ag, m in zip(agents, p) if m > 1e-4]
    return NashAverage(agents, p, skill, support)


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
    values, vectors = np.linalg.eig(chain.T)
    stationary = np.abs(np.real(vectors[:, np.argmin(np.abs(values - 1))]))
    return stationary / stationary.sum()


def alpha_sweep(payoffs: np.ndarray, alphas=(0.1, 1, 10, 100), m: int = 50) -> pd.DataFrame:
    """The stationary distribution at each ranking intensity: one row per alpha, one column per agent index."""
    return pd.DataFrame([alpha_rank(payoffs, a, m) for a in alphas], index=pd.Index(alphas, name="alpha"))


def cyclic_share(log_odds: np.ndarray) -> float:
    """The share of the antisymmetric matrix's squared norm in its cyclic part (Hodge decomposition on the
    complete graph: A = grad(r) + cyclic, r = row means): 0 for a pure ranking, 1 for rock-paper-scissors."""
    a = np.asarray(log_odds, dtype=float)
    total = float(np.sum(a ** 2))
    if total == 0:
        return 0.0
    r = a.mean(axis=1)
    cyclic = a - (r[:, None] - r[None, :])
    return float(np.sum(cyclic ** 2) / total)


def cyclic_triads(wins: np.ndarray, agents: list[str]) -> list[tuple[str, str, str]]:
    """Triads (x, y, z) where x beats y, y beats z and z beats x by majority (win rate above one half)."""
    beats = np.asarray(wins) > 0.5
    n = len(agents)
    found = []
    for x in range(n):
        for y in range(x + 1, n):
            for z in range(y + 1, n):
                if beats[x, y] and beats[y, z] and beats[z, x]:
                    found.append((agents[x], agents[y], agents[z]))
                elif beats[y, x] and beats[z, y] and beats[x, z]:
                    found.append((agents[x], agents[z], agents[y]))
    return found
