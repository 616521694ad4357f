"""Game-theoretic rankings of a store's agents (`referee rank --method nash | alpha-rank`): the meta-game of
every pair's comparisons, Nash averaging or alpha-Rank on it, the cyclic share (how much of the game one axis
cannot hold), cyclic triads, and bootstrap intervals over matches. Each connected group of agents (agents
linked by having met) is solved apart. `task_ranking` plays the agent-vs-scenario game instead (`referee rank
--against scenarios`): agents against the scenarios' normalised scores."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.alpha_rank import alpha_sweep
from referee.models.game_theory import components, cyclic_share, cyclic_share_by_chance, payoff_table, strongest_cycles
from referee.models.ratings.bootstrap import MIN_MATCHES, game_weights
from referee.models.ratings.bradley_terry import add_rank
from referee.models.registry import GAME_METHODS, implementation
from referee.prepare.membership import is_in
from referee.run.ratings.rating_labels import information_note, reference_status, without_information


ALPHAS = (0.1, 1.0, 10.0, 100.0)  # the ranking intensities every alpha-Rank result is also shown at
CHANCE_DRAWS = 200  # one-axis games drawn for the cyclic share's chance range
MIN_CLUSTERS = 10  # matches a bootstrap needs before its intervals mean anything
MIN_PAIR_GAMES = 5  # comparisons a pair needs before its majority counts in a listed cycle


@dataclass
class GameRanking:
    """One game-theoretic ranking.

    - `table`: agent, rank, score, mass, lower, upper, component, matches, status. score = the Nash-averaged
      skill in log-odds, or the stationary mass for alpha-Rank; mass = the equilibrium or stationary
      probability; lower/upper = the score's 95 % bootstrap interval (none for a group below MIN_CLUSTERS
      matches, nor for an agent below `referee.models.ratings.bootstrap.MIN_MATCHES`); status by the one rule
      of `referee.run.ratings.rating_labels` (the same as in every rating table).
    - `not_ranked`: agent, matches, status of the agents set apart (fewer than `min_games` matches, or no
      information).
    - `payoffs`: one row per ordered pair (win rate, log-odds, comparisons, filled), or for the
      agent-vs-scenario game one row per (agent, scenario) cell (score, filled, matches).
    - `cyclic`: per component, the cyclic share and its bias-corrected bootstrap interval (`at_bound`: the
      estimate sits at or outside a bound, which is said, never hidden by widening), chance_lower/chance_upper (the 95 %
      range of the share in one-axis, Bradley-Terry, games with the same comparisons) and chance_p (the share
      of those at or above the observed one), the Nash support and the cyclic triads; empty for the
      agent-vs-scenario game.
    - `notes`; `tasks` (agent-vs-scenario only): scenario, score (its expected normalised score under the
      agents' equilibrium), mass, lower, upper; `sweep` (alpha-Rank only): component, alpha, agent, mass at
      each ranking intensity of ALPHAS and the one asked for; `cycles`: first, second, third, strength,
      weakest, component, every cyclic triad strongest first (`strongest_cycles`).
    """

    method: str
    table: pd.DataFrame
    payoffs: pd.DataFrame
    cyclic: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    not_ranked: pd.DataFrame | None = None
    tasks: pd.DataFrame | None = None
    sweep: pd.DataFrame | None = None
    cycles: pd.DataFrame | None = None


def _interval(draws: list, n: int, estimate=None) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % interval (lower, upper; each (n,), or scalars for n = 0) of bootstrap draws, NaN when fewer than
    20 draws were kept: with `estimate`, the bias-corrected percentile interval (Efron 1987's BC: the percentiles
    moved by z0 = Phi^-1(share of draws below the estimate), since a cyclic share's bootstrap is biased upward),
    else the plain percentile interval. Never widened to hold the estimate: where the estimate still lies at or
    outside a bound, `at_bound` says so and the caller says it."""
    from scipy.special import ndtr, ndtri  # the standard Normal's cdf and quantile

    if len(draws) < 20:
        return (np.nan, np.nan) if n == 0 else (np.full(n, np.nan), np.full(n, np.nan))
    values = np.asarray(draws, float)
    if estimate is None:
        lower, upper = np.percentile(values, [2.5, 97.5], axis=0)
        return lower, upper
    r = len(values)
    below = np.clip(np.mean(values < np.asarray(estimate, float), axis=0), 0.5 / r, 1 - 0.5 / r)
    z0 = ndtri(below)
    levels = ndtr(2 * z0 + ndtri(np.array([[0.025], [0.975]])))  # (2, n) or (2, 1)
    if n == 0:
        return tuple(float(np.quantile(values, q)) for q in levels[:, 0])
    lower = np.array([np.quantile(values[:, i], levels[0, i]) for i in range(values.shape[1])])
    upper = np.array([np.quantile(values[:, i], levels[1, i]) for i in range(values.shape[1])])
    return lower, upper


def at_bound(estimate, lower, upper) -> np.ndarray | bool:
    """True where an estimate sits at or outside its interval's bound (within 1e-9)."""
    estimate, lower, upper = (np.asarray(x, float) for x in (estimate, lower, upper))
    return (estimate <= lower + 1e-9) | (estimate >= upper - 1e-9)


def _solve(comparisons: pd.DataFrame, agents: list[str], method: str, alpha: float, m: int):
    game = payoff_table(comparisons, agents)
    return (game,) + implementation(GAME_METHODS[method].solve)(game, agents, alpha, m)


def game_ranking(comparisons: pd.DataFrame, method: str = "nash", alpha: float = 100.0, m: int = 50,
                 bootstrap: int = 0, min_games: float = MIN_MATCHES, seed: int = 0) -> GameRanking:
    """Rank the agents of a comparisons table (a, b, outcome, cluster) by Nash averaging or alpha-Rank.

    Parameters
    ----------
    method : 'nash' (score = Nash-averaged skill, log-odds against the maximum-entropy equilibrium) or
        'alpha-rank' (score = stationary mass at ranking intensity `alpha`, population `m`).
    bootstrap : resamples of the comparison clusters (matches) for 95 % intervals of the scores and of the
        cyclic share (0: none).
    min_games : agents in fewer matches are set apart (`not_ranked`), not put in the game: a mass from a
        handful of games is noise that moves every other agent's (1: every agent plays).

    Agents without information (`rating_labels.without_information`) are left out of the game (no score, rank
    or mass) and named in the notes.
    """
    if method not in GAME_METHODS:
        raise ValueError(f"method must be one of {list(GAME_METHODS)}, got {method!r}")
    rng = np.random.default_rng(seed)
    tables, payoffs, cyclic, notes, sweeps, cycles = [], [], [], [], [], []
    total = comparisons
    comparisons, uninformed = without_information(comparisons)
    notes.append(information_note(total, uninformed))
    status = reference_status(comparisons)
    few = list(status.index[status["matches"] < min_games])
    if few:
        comparisons = comparisons[~(is_in(comparisons["a"], few) | is_in(comparisons["b"], few))]
        notes.append(f"{len(few)} agent(s) in fewer than {min_games:g} matches set apart, not put in the game "
                     f"(`--min-games 1` plays them): {', '.join(few[:8])}{' ...' if len(few) > 8 else ''}")
    apart = pd.concat([status.loc[few, ["matches", "status"]].reset_index(),
                       pd.DataFrame({"agent": list(uninformed), "matches": np.nan, "status": list(uninformed.values())})],
                      ignore_index=True)
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
        clusters = part["cluster"].astype(str).to_numpy()
        ids = np.unique(clusters)
        if bootstrap and len(ids) < MIN_CLUSTERS:
            notes.append(f"group {k}: {len(ids)} match(es), fewer than {MIN_CLUSTERS}: resampling them says nothing "
                         "about the uncertainty, so no bootstrap intervals are given")
        elif bootstrap:
            codes = pd.factorize(clusters)[0]
            for _ in range(bootstrap):  # whole matches drawn with replacement, as every referee bootstrap
                take = np.repeat(np.arange(len(part)), game_weights(codes, codes, rng).astype(np.int64))
                try:
                    again, s, _, _ = _solve(part.iloc[take], agents, method, alpha, m)
                except ValueError:  # a resample where some agents never met: not the same game
                    continue
                draws.append(s)
                shares.append(cyclic_share(again.log_odds))
            if len(draws) < 0.9 * bootstrap:
                notes.append(f"group {k}: {bootstrap - len(draws)} of {bootstrap} resamples split the group into "
                             "agents that never met and were dropped from the intervals")
        lower, upper = _interval(draws, len(agents), np.asarray(score, float))
        tables.append(add_rank(pd.DataFrame({"agent": agents, "score": score, "mass": mass, "lower": lower,
                                             "upper": upper, "component": k}), by="score"))
        payoffs.append(game.frame().assign(component=k))
        if GAME_METHODS[method].sweeps:
            swept = alpha_sweep(game.wins, sorted(set(ALPHAS) | {alpha}), m)
            swept.columns = agents
            sweeps.append(swept.reset_index().melt(id_vars="alpha", var_name="agent", value_name="mass")
                          .assign(component=k)[["component", "alpha", "agent", "mass"]])
        interval = _interval(shares, 0, share)
        chance = cyclic_share_by_chance(game, CHANCE_DRAWS, seed)
        triads = strongest_cycles(game.wins, agents, game.log_odds, game.counts, MIN_PAIR_GAMES)
        cycles.append(triads.assign(component=k))
        cyclic.append({"component": k, "agents": len(agents), "cyclic_share": share, "lower": interval[0],
                       "upper": interval[1], "at_bound": bool(np.isfinite(interval[0])
                                                              and at_bound(share, interval[0], interval[1])), "chance_lower": float(np.percentile(chance, 2.5)),
                       "chance_upper": float(np.percentile(chance, 97.5)),
                       "chance_p": float(np.mean(chance >= share - 1e-12)), "support": ", ".join(support),
                       "cyclic_triads": len(triads),
                       "strongest_triads": "; ".join(" > ".join(t) for t in triads.head(5)[["first", "second", "third"]]
                                                                     .itertuples(index=False))})
    if not tables:
        raise ValueError("no two agents ever met: there is no game to solve")
    table = pd.concat(tables, ignore_index=True).sort_values(["component", "rank", "agent"])
    table = table.join(status[["matches", "status"]], on="agent")
    thin = table["matches"] < MIN_MATCHES
    if thin.any() and table.loc[thin, "lower"].notna().any():
        table.loc[thin, ["lower", "upper"]] = np.nan
        notes.append(f"no bootstrap interval for {int(thin.sum())} agent(s) in fewer than {MIN_MATCHES} matches: "
                     "resampling a handful of matches says nothing about their uncertainty")
    columns = ["agent", "rank", "score", "mass", "lower", "upper", "component", "matches", "status"]
    return GameRanking(method, table[columns].reset_index(drop=True), pd.concat(payoffs, ignore_index=True),
                       pd.DataFrame(cyclic), notes, not_ranked=apart, sweep=pd.concat(sweeps, ignore_index=True) if sweeps else None,
                       cycles=pd.concat(cycles, ignore_index=True))


def score_table(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The agents x scenarios table of mean normalised scores (`normalised_scores` rows: match_id, agent,
    scenario, score_norm) and a same-shaped table of how many matches each cell holds (0: never played).

    A missing cell is filled with the additive prediction scenario mean + agent effect (the agent's mean
    difference from the scenario means over the scenarios it played), clipped to [0, 1]; never read as the
    scenario's average."""
    grouped = scores.dropna(subset=["score_norm"]).groupby(["agent", "scenario"])
    cells = grouped["score_norm"].mean().unstack()
    matches = grouped["match_id"].nunique().unstack().reindex_like(cells).fillna(0).astype(int)
    means = cells.mean(axis=0)
    effect = (cells - means).mean(axis=1)
    filled = cells.fillna(pd.DataFrame(np.add.outer(effect.to_numpy(), means.to_numpy()), index=cells.index,
                                       columns=cells.columns).clip(0, 1))
    return filled, matches


def _task_solve(table: pd.DataFrame, method: str, alpha: float, m: int):
    return implementation(GAME_METHODS[method].task_solve)(table, alpha, m)


def task_ranking(scores: pd.DataFrame, method: str = "nash", alpha: float = 100.0, m: int = 50,
                 bootstrap: int = 0, seed: int = 0) -> GameRanking:
    """Rank agents by the agent-vs-scenario game (Balduzzi et al. 2018's agent-vs-task form) of normalised
    scores: one row per (match, agent) with columns match_id, agent, scenario, score_norm.

    method : 'nash' (score = Nash-averaged skill: the agent's expected normalised score against the scenarios'
        maximum-entropy equilibrium, which weighs the scenarios the strongest agents find hardest; mass = the
        agents' equilibrium) or 'alpha-rank' (two populations, agents
        with payoff S and scenarios with payoff -S; score = mass = the agents' marginal stationary mass).
    bootstrap : resamples of matches within each scenario for 95 % intervals (0: none).
    Returns a GameRanking with `tasks` (scenario, score, mass, lower, upper) and `payoffs` (agent, scenario,
    score: mean normalised score, filled, matches); its `cyclic` table is empty (the game is not symmetric)."""
    if method not in GAME_METHODS:
        raise ValueError(f"method must be one of {list(GAME_METHODS)}, got {method!r}")
    table, matches = score_table(scores)
    missing = matches == 0
    if table.shape[0] < 2 or table.shape[1] < 2:
        raise ValueError(f"the agent-vs-scenario game needs two agents and two scenarios with normalised scores; "
                         f"this store has {table.shape[0]} agent(s) and {table.shape[1]} scenario(s)")
    notes = []
    if missing.to_numpy().any():
        notes.append(f"{int(missing.to_numpy().sum())} (agent, scenario) cell(s) were never played: filled with the "
                     "scenario's mean plus the agent's mean difference from the scenario means (flagged in payoffs.csv), "
                     "not observed")
    skill, mass, task_score, task_mass = _task_solve(table, method, alpha, m)
    draws, task_draws = [], []
    if bootstrap:
        rng = np.random.default_rng(seed)
        by_scenario = [[g for _, g in part.groupby("match_id")] for _, part in scores.groupby("scenario")]
        for _ in range(bootstrap):
            again, _ = score_table(pd.concat([rows[k] for rows in by_scenario
                                              for k in rng.integers(len(rows), size=len(rows))]))
            again = again.reindex(index=table.index, columns=table.columns)
            if again.isna().to_numpy().any():
                continue
            found = _task_solve(again, method, alpha, m)
            draws.append(found[0])
            task_draws.append(found[2])
    lower, upper = _interval(draws, len(table.index), np.asarray(skill, float))
    ranked = add_rank(pd.DataFrame({"agent": table.index, "score": skill, "mass": mass, "lower": lower,
                                    "upper": upper, "component": 1}), by="score")
    t_lower, t_upper = _interval(task_draws, len(table.columns))
    tasks = pd.DataFrame({"scenario": table.columns, "score": task_score, "mass": task_mass, "lower": t_lower,
                          "upper": t_upper}).sort_values("mass", ascending=False, kind="stable")
    payoffs = pd.DataFrame({"score": table.stack(), "filled": missing.stack(), "matches": matches.stack()}
                           ).rename_axis(["agent", "scenario"]).reset_index()
    columns = ["agent", "rank", "score", "mass", "lower", "upper", "component"]
    return GameRanking(method, ranked.sort_values(["rank", "agent"])[columns].reset_index(drop=True), payoffs,
                       pd.DataFrame(), notes, tasks=tasks.reset_index(drop=True))
