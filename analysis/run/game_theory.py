"""Game-theoretic rankings of a store's agents (`referee rank --method nash | alpha-rank`): the meta-game of
every pair's comparisons, Nash averaging or alpha-Rank on it, the cyclic share (how much of the game one axis
cannot hold), cyclic triads, and bootstrap intervals over matches. Each connected group of agents (agents
linked by having met) is solved apart."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.game_theory import (alpha_rank, components, cyclic_share, cyclic_triads, nash_average,
                                        payoff_table)
from referee.models.ratings.bradley_terry import add_rank
from referee.models.registry import GAME_METHODS


@dataclass
class GameRanking:
    """One game-theoretic ranking: `table` (agent, rank, score, mass, lower, upper, component: score = the
    Nash-averaged skill in log-odds, or the stationary mass for alpha-Rank; mass = the equilibrium or
    stationary probability; lower/upper = 95 % bootstrap interval of the score), `payoffs` (one row per ordered
    pair: win rate, log-odds, comparisons, filled), `cyclic` (per component: cyclic share, its interval, the
    Nash support, cyclic triads) and `notes`."""

    method: str
    table: pd.DataFrame
    payoffs: pd.DataFrame
    cyclic: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def _solve(comparisons: pd.DataFrame, agents: list[str], method: str, alpha: float, m: int):
    game = payoff_table(comparisons, agents)
    if method == "nash":
        found = nash_average(game.log_odds, agents)
        score, mass, support = found.skill, found.mass, found.support
    else:
        mass = alpha_rank(game.wins, alpha, m)
        score, support = mass, [a for a, p in zip(agents, mass) if p > 1e-4]
    return game, score, mass, support


def game_ranking(comparisons: pd.DataFrame, method: str = "nash", alpha: float = 100.0, m: int = 50,
                 bootstrap: int = 0, seed: int = 0) -> GameRanking:
    """Rank the agents of a comparisons table (a, b, outcome, cluster) by Nash averaging or alpha-Rank.

    Parameters
    ----------
    method : 'nash' (score = Nash-averaged skill, log-odds against the maximum-entropy equilibrium) or
        'alpha-rank' (score = stationary mass at ranking intensity `alpha`, population `m`).
    bootstrap : resamples of the comparison clusters (matches) for 95 % intervals of the scores and of the
        cyclic share (0: none).
    """
    if method not in GAME_METHODS:
        raise ValueError(f"method must be one of {GAME_METHODS}, got {method!r}")
    rng = np.random.default_rng(seed)
    tables, payoffs, cyclic, notes = [], [], [], []
    groups = components(comparisons)
    if len(groups) > 1:
        notes.append(f"the agents split into {len(groups)} groups that never met one another: each is ranked apart "
                     "(column component), and scores are comparable only within a group")
    for k, agents in enumerate(groups, start=1):
        part = comparisons[comparisons["a"].isin(agents)]
        if len(agents) < 2:
            continue
        game, score, mass, support = _solve(part, agents, method, alpha, m)
        notes += game.notes
        share = cyclic_share(game.log_odds)
        draws, shares = [], []
        if bootstrap:
            clusters = part["cluster"].astype(str).to_numpy()
            ids = np.unique(clusters)
            rows = {c: np.flatnonzero(clusters == c) for c in ids}
            for _ in range(bootstrap):
                take = np.concatenate([rows[c] for c in rng.choice(ids, len(ids))])
                try:
                    again, s, _, _ = _solve(part.iloc[take], agents, method, alpha, m)
                except ValueError:  # a resample where some agents never met: not the same game
                    continue
                draws.append(s)
                shares.append(cyclic_share(again.log_odds))
            if len(draws) < 0.9 * bootstrap:
                notes.append(f"group {k}: {bootstrap - len(draws)} of {bootstrap} resamples left some pair unmet "
                             "and were dropped from the intervals")
        lower, upper = (np.percentile(draws, [2.5, 97.5], axis=0) if len(draws) >= 20
                        else (np.full(len(agents), np.nan), np.full(len(agents), np.nan)))
        tables.append(add_rank(pd.DataFrame({"agent": agents, "score": score, "mass": mass, "lower": lower,
                                             "upper": upper, "component": k}), by="score"))
        payoffs.append(game.frame().assign(component=k))
        interval = np.percentile(shares, [2.5, 97.5]) if len(shares) >= 20 else (np.nan, np.nan)
        triads = cyclic_triads(game.wins, agents)
        cyclic.append({"component": k, "agents": len(agents), "cyclic_share": share, "lower": interval[0],
                       "upper": interval[1], "support": ", ".join(support), "cyclic_triads": len(triads),
                       "strongest_triads": "; ".join(" > ".join(t) for t in triads[:5])})
    if not tables:
        raise ValueError("no two agents ever met: there is no game to solve")
    table = pd.concat(tables, ignore_index=True).sort_values(["component", "rank", "agent"])
    columns = ["agent", "rank", "score", "mass", "lower", "upper", "component"]
    return GameRanking(method, table[columns].reset_index(drop=True), pd.concat(payoffs, ignore_index=True),
                       pd.DataFrame(cyclic), notes)
