"""Game-theoretic evaluation of a population where "better" may not be one number: the meta-game of agent
against agent (and of agent against scenario), Nash averaging (Balduzzi et al. 2018, "Re-evaluating
evaluation") and the share of the game that is cyclic (the Hodge decomposition of Balduzzi et al. 2019,
"Open-ended learning in symmetric zero-sum games"). alpha-Rank lives in `referee.models.alpha_rank`.

- `payoff_table(comparisons)`: agents x agents win rates P (ties count one half), counts, and the
  antisymmetric log-odds matrix A = logit(P) (win rates smoothed by half a win, (w + 1/2) / (n + 1), so that
  a pair one agent always won stays finite); a pair that never met is filled from Bradley-Terry's prediction
  and flagged, never read as an even match.
- `nash_average(A)`: the maximum-entropy Nash equilibrium p of the symmetric zero-sum game A (A p <= 0,
  the game's value being 0) and each agent's Nash-averaged skill, A p: its expected log-odds against the
  equilibrium. Copies of an agent share its mass and leave everyone's skill unchanged.
- `agent_task_nash(S)`: the agent-vs-task game of Balduzzi et al. on an agents x scenarios score table: the
  agent player picks an agent, the task player a scenario, the agent player wins S; both maximum-entropy
  equilibria, each agent's skill against the scenario equilibrium and each scenario's score against the
  agent equilibrium. Copies of a scenario share its mass and leave the agents' skills unchanged.
- `cyclic_share(A)`: the share of A's squared norm in its cyclic part, A minus its best gradient
  (r_i - r_j with r = row means): 0 when one axis (Bradley-Terry) explains every pair, 1 for rock-paper-scissors;
  `strongest_cycles` lists the triads whose majority relation is a cycle, strongest first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import linprog, minimize
from scipy.special import expit


@dataclass
class PayoffTable:
    """A meta-game: `agents` (n), `wins` (n x n: P(row beats column), ties one half, 0.5 on the diagonal),
    `counts` (comparisons per pair), `filled` (pairs that never met, filled from Bradley-Terry) and the
    antisymmetric log-odds matrix `log_odds` (n x n); `strength` (n): Bradley-Terry's strengths (log-odds
    units) of the same comparisons, which fill the pairs that never met."""

    agents: list[str]
    wins: np.ndarray
    counts: np.ndarray
    filled: np.ndarray
    log_odds: np.ndarray
    notes: list[str] = field(default_factory=list)
    strength: np.ndarray | None = None

    def frame(self) -> pd.DataFrame:
        """One row per ordered pair: agent, opponent, win_rate, log_odds, comparisons, filled."""
        n = len(self.agents)
        i, j = np.where(~np.eye(n, dtype=bool))
        return pd.DataFrame({"agent": np.array(self.agents)[i], "opponent": np.array(self.agents)[j],
                             "win_rate": self.wins[i, j], "log_odds": self.log_odds[i, j],
                             "comparisons": self.counts[i, j], "filled": self.filled[i, j]})


def payoff_table(comparisons: pd.DataFrame, agents: list[str] | None = None) -> PayoffTable:
    """The agent x agent meta-game of a comparisons table (columns a, b, outcome: 1 a won, 0 b won, 0.5 tie).

    Pairs that never met are filled with Bradley-Terry's predicted win rate (fitted on all comparisons, MAP
    with the default Normal(0, (400 Elo)^2) prior so that it exists whoever never lost) and
    flagged in `filled`; the notes say how many. Raises ValueError when the comparison graph is not connected
    (rate each component apart: `components`)."""
    from referee.models.ratings.bradley_terry import DEFAULT_PRIOR_SD, disconnected_groups, fit_bt

    agents = sorted(set(comparisons["a"].unique()) | set(comparisons["b"].unique())) if agents is None else list(agents)
    won = _wins(comparisons, agents)
    counts = won + won.T
    if disconnected_groups(counts, agents):
        raise ValueError("the comparisons split into separate groups of agents that never met: a meta-game needs "
                         "one connected group (see components)")
    n = len(agents)
    filled = (counts == 0) & ~np.eye(n, dtype=bool)
    strength = fit_bt(won, agents, prior_sd=DEFAULT_PRIOR_SD).theta  # MAP: exists whatever the wins
    notes = []
    if filled.any():
        notes.append(f"{int(filled.sum()) // 2} pair(s) never met: their win rates are Bradley-Terry's prediction "
                     "(flagged in the payoff table), not observed")
    smoothed = _smoothed(won, counts, strength)
    wins = np.where(counts > 0, won / np.maximum(counts, 1), smoothed)
    np.fill_diagonal(wins, 0.5)
    return PayoffTable(agents, wins, counts, filled, _antisymmetric_log_odds(smoothed), notes, strength)


def _bt_win(strength: np.ndarray) -> np.ndarray:
    """Bradley-Terry's P(row beats column) for strengths (n,) in log-odds units: an n x n matrix."""
    return expit(strength[:, None] - strength[None, :])


def _smoothed(won: np.ndarray, counts: np.ndarray, strength: np.ndarray) -> np.ndarray:
    """Win rates smoothed by half a win, (w + 1/2) / (n + 1); pairs that never met take Bradley-Terry's
    prediction from `strength`; one half on the diagonal."""
    smoothed = np.where(counts > 0, (won + 0.5) / (counts + 1), _bt_win(strength))
    np.fill_diagonal(smoothed, 0.5)
    return smoothed


def _antisymmetric_log_odds(smoothed: np.ndarray) -> np.ndarray:
    log_odds = np.log(smoothed) - np.log1p(-smoothed)
    return (log_odds - log_odds.T) / 2  # exactly antisymmetric


def cyclic_share_by_chance(game: PayoffTable, draws: int = 200, seed: int = 0) -> np.ndarray:
    """The cyclic shares (draws,) of games that have no cycle at all, drawn with the same comparisons: each
    pair's wins ~ Binomial(its comparisons, Bradley-Terry's win probability from `game.strength`), pairs that
    never met filled as in `payoff_table`. The spread is how cyclic noise alone makes a one-axis game look:
    an observed share inside it is no evidence of cycles."""
    rng = np.random.default_rng(seed)
    counts = np.rint(np.triu(game.counts, 1)).astype(int)
    p = _bt_win(game.strength)
    shares = np.empty(draws)
    for k in range(draws):
        upper = rng.binomial(counts, p)
        won = upper + (counts - upper).T
        shares[k] = cyclic_share(_antisymmetric_log_odds(_smoothed(won, game.counts, game.strength)))
    return shares


def _wins(comparisons: pd.DataFrame, agents: list[str]) -> np.ndarray:
    """Bradley-Terry's pair counts (ties half a win each) of the comparisons among `agents`."""
    from referee.models.codes import positions
    from referee.models.ratings.bradley_terry import pair_counts

    a, b = positions(comparisons["a"], agents), positions(comparisons["b"], agents)
    among = (a >= 0) & (b >= 0)  # a comparison with an agent outside `agents` is not among them
    return pair_counts(a[among], b[among], comparisons["outcome"].to_numpy(dtype=float)[among], len(agents))


def components(comparisons: pd.DataFrame) -> list[list[str]]:
    """The connected groups of agents of a comparisons table (agents linked when they met), largest first."""
    from referee.models.ratings.bradley_terry import disconnected_groups

    agents = sorted(set(comparisons["a"].unique()) | set(comparisons["b"].unique()))
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


def _max_entropy(a: np.ndarray, y0: np.ndarray, bound: float) -> np.ndarray:
    """The maximum-entropy y in the simplex with a y <= bound (SLSQP from the feasible y0); y0 when SLSQP fails."""
    m = a.shape[1]
    start = np.clip(0.999 * y0 / max(y0.sum(), 1e-300) + 0.001 / m, 1e-12, 1)

    def neg_entropy(p):
        q = np.clip(p, 1e-300, None)
        return float(np.sum(q * np.log(q)))

    def grad(p):
        return np.log(np.clip(p, 1e-300, None)) + 1

    best = minimize(neg_entropy, start, jac=grad, method="SLSQP", bounds=[(0, 1)] * m,
                    constraints=[{"type": "eq", "fun": lambda p: np.sum(p) - 1, "jac": lambda p: np.ones(m)},
                                 {"type": "ineq", "fun": lambda p: bound - a @ p, "jac": lambda p: -a}],
                    options={"maxiter": 500, "ftol": 1e-12})
    return best.x if best.success and np.max(a @ best.x) <= bound + 1e-6 else y0


def _minimiser(payoffs: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, float]:
    """The maximum-entropy optimal strategy y (m, sums to 1) of the column player, who pays `payoffs`
    (n x m) to the row player, and the game's value v = max_i (payoffs y)_i.

    A linear program finds the value and one optimal y; the optimal strategies form the polytope
    {y in the simplex: payoffs y <= v}, and entropy is maximised over it (SLSQP) among the column player's
    best replies to the row player's optimal strategy (the program's dual), which picks the unique one that
    treats copies of a strategy alike. Falls back to the linear program's y when SLSQP fails."""
    a = np.asarray(payoffs, dtype=float)
    n, m = a.shape
    if m == 1:
        return np.ones(1), float(a[:, 0].max())
    # variables (y, w): minimise w subject to a y - w <= 0, sum y = 1, y >= 0
    lp = linprog(np.r_[np.zeros(m), 1.0], A_ub=np.c_[a, -np.ones(n)], b_ub=np.zeros(n),
                 A_eq=np.r_[np.ones(m), 0.0][None, :], b_eq=[1.0], bounds=[(0, 1)] * m + [(None, None)],
                 method="highs")
    if not lp.success:
        raise RuntimeError(f"Nash averaging: the linear program found no equilibrium ({lp.message})")
    y0, value = lp.x[:m], float(lp.x[m])
    bound = value + max(tol, float(np.max(a @ y0)) - value)
    # every optimal y lives on the column player's best replies to the row player's optimal x (the LP's dual):
    # entropy is maximised over those strategies only, often a handful of the m
    x = np.abs(lp.ineqlin.marginals) if lp.ineqlin is not None else np.ones(n)
    x = x / x.sum() if x.sum() > 0 else np.full(n, 1 / n)
    candidates = np.flatnonzero(x @ a <= value + 1e-7 * max(1.0, float(np.abs(a).max())))
    if not len(candidates) or y0[np.setdiff1d(np.arange(m), candidates)].sum() > 1e-6:
        candidates = np.arange(m)  # the dual did not single them out: keep every strategy
    y = np.zeros(m)
    if len(candidates) == 1:
        y[candidates] = 1.0
    else:
        y[candidates] = _max_entropy(a[:, candidates], y0[candidates], bound)
    y = np.where(y < 1e-9, 0.0, y)  # the solver's tolerance, not mass
    return y / y.sum(), value


def nash_average(log_odds: np.ndarray, agents: list[str] | None = None, tol: float = 1e-9) -> NashAverage:
    """Nash averaging of an antisymmetric payoff matrix (n x n; e.g. `PayoffTable.log_odds`).

    The equilibria of a symmetric zero-sum game form a polytope {p in the simplex: A p <= 0}; the one of
    maximum entropy is unique and treats copies of an agent alike (Balduzzi et al. 2018). Found by a linear
    program (any equilibrium) and then entropy maximisation over the polytope (SLSQP); raises RuntimeError
    when the solver fails."""
    a = np.asarray(log_odds, dtype=float)
    agents = list(agents) if agents is not None else [str(k) for k in range(len(a))]
    p, _ = _minimiser(a, tol)
    skill = np.where(np.abs(a @ p) < 1e-7, 0.0, a @ p)  # the solver's tolerance, not a skill
    return NashAverage(agents, p, skill, [ag for ag, m in zip(agents, p) if m > 1e-4])


@dataclass
class AgentTaskNash:
    """The agent-vs-task game's maximum-entropy equilibrium: `agent_mass` (n) and `task_mass` (t), both summing
    to 1; `skill` (n): each agent's expected score against the task equilibrium, S q; `task_score` (t): each
    task's expected score under the agent equilibrium, p' S (low = hard for the strongest agents); `value`:
    the game's value p' S q, in the units of S."""

    agents: list[str]
    tasks: list[str]
    agent_mass: np.ndarray
    task_mass: np.ndarray
    skill: np.ndarray
    task_score: np.ndarray
    value: float


def agent_task_nash(scores: np.ndarray, agents: list[str], tasks: list[str], tol: float = 1e-9) -> AgentTaskNash:
    """Nash averaging of an agents x tasks score table S (n x t, e.g. mean normalised score of each agent on
    each scenario; no missing cells: fill or drop them first).

    The agent player picks a distribution p over agents and the task player one, q, over tasks; the agent
    player receives p' S q. Each player's maximum-entropy optimal strategy is found as in `nash_average`.
    An agent's Nash-averaged skill S q is its score on the tasks that the equilibrium keeps (the ones that find
    out the strongest agents); tasks that every agent solves alike get little mass."""
    s = np.asarray(scores, dtype=float)
    if s.shape != (len(agents), len(tasks)) or not np.isfinite(s).all():
        raise ValueError(f"agent_task_nash needs a finite {len(agents)} x {len(tasks)} score table "
                         f"(agents x tasks), got shape {s.shape}"
                         + ("" if np.isfinite(s).all() else " with missing cells"))
    q, value = _minimiser(s, tol)
    p, _ = _minimiser(-s.T, tol)
    return AgentTaskNash(list(agents), list(tasks), p, q, s @ q, p @ s, value)


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


def strongest_cycles(wins: np.ndarray, agents: list[str], log_odds: np.ndarray | None = None,
                     counts: np.ndarray | None = None, min_count: int = 1) -> pd.DataFrame:
    """Every cyclic triad as a row (first, second, third: first beats second beats third beats first, by
    majority), its `strength` (the log-odds summed around the cycle, A[x,y] + A[y,z] + A[z,x]; NaN without
    `log_odds`) and `weakest` (the smallest of its three win rates); strongest first. With `counts` (n, n: the
    comparisons of each pair), only pairs that met at least `min_count` times count as beating: a cycle is never
    built on a pair that never met or on a handful of games."""
    p = np.asarray(wins, dtype=float)
    a = None if log_odds is None else np.asarray(log_odds, dtype=float)
    beats = p > 0.5
    if counts is not None:
        beats &= np.asarray(counts) >= min_count
    n = len(agents)
    rows = []
    for x in range(n):
        for y in range(x + 1, n):
            for z in range(y + 1, n):
                if beats[x, y] and beats[y, z] and beats[z, x]:
                    cycle = (x, y, z)
                elif beats[y, x] and beats[z, y] and beats[x, z]:
                    cycle = (x, z, y)
                else:
                    continue
                i, j, k = cycle
                rows.append((agents[i], agents[j], agents[k],
                             np.nan if a is None else a[i, j] + a[j, k] + a[k, i], min(p[i, j], p[j, k], p[k, i])))
    frame = pd.DataFrame(rows, columns=["first", "second", "third", "strength", "weakest"])
    return frame.sort_values(["strength", "weakest"], ascending=False, kind="stable").reset_index(drop=True)
