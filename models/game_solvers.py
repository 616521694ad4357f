"""The game-theoretic methods' solvers, as `referee.models.registry.GAME_METHODS` names them: of the agents'
meta-game (`solve`: a payoff table with `log_odds` and `wins`, the agents, alpha-Rank's intensity `alpha` and
population `m` -> (score per agent, mass per agent, the agents in the support)) and of the agent-vs-scenario game
(`task_solve`: agents x scenarios normalised scores -> (agent score, agent mass, scenario score, scenario mass)).
"""

from __future__ import annotations

import pandas as pd

from referee.models.alpha_rank import alpha_rank, alpha_rank_populations
from referee.models.game_theory import agent_task_nash, nash_average


def nash_solve(game, agents: list[str], alpha: float, m: int):
    """Nash averaging (`GAME_METHODS['nash']`): (skill in log-odds, equilibrium mass, support)."""
    found = nash_average(game.log_odds, agents)
    return found.skill, found.mass, found.support


def alpha_rank_solve(game, agents: list[str], alpha: float, m: int):
    """alpha-Rank (`GAME_METHODS['alpha-rank']`): (stationary mass as the score, the mass, agents above 1e-4)."""
    mass = alpha_rank(game.wins, alpha, m)
    return mass, mass, [a for a, p in zip(agents, mass) if p > 1e-4]


def nash_task_solve(table: pd.DataFrame, alpha: float, m: int):
    """The agent-vs-scenario game by Nash averaging: (agent skill, agent mass, scenario score, scenario mass)."""
    found = agent_task_nash(table.to_numpy(dtype=float), list(table.index), list(table.columns))
    return found.skill, found.agent_mass, found.task_score, found.task_mass


def alpha_rank_task_solve(table: pd.DataFrame, alpha: float, m: int):
    """The agent-vs-scenario game by two-population alpha-Rank: the agents' and the scenarios' marginal masses."""
    s = table.to_numpy(dtype=float)
    _, (agent_mass, task_mass) = alpha_rank_populations([s, -s], alpha, m)
    return agent_mass, agent_mass, task_mass, task_mass
