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
    - `cyclic`: per component, the cyclic share, its bootstrap interval (lower, upper; `holding_interval`: it holds
      the estimate and has width, or is none) and `interval` (what it is, or why none), chance_lower/chance_upper (the 95 %
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
    """The 95 % interval (lower, upper; each (n,), or scalars for n = 0) of bootstrap draws ((r,) or (r, n)), NaN
    when fewer than 20 draws were kept: with `estimate`, `holding_interval` per column, else the plain percentile
    interval."""
    if len(draws) < 20:
        return (np.nan, np.nan) if n == 0 else (np.full(n, np.nan), np.full(n, np.nan))
    values = np.asarray(draws, float)
    if estimate is None:
        lower, upper = np.percentile(values, [2.5, 97.5], axis=0)
        return lower, upper
    if n == 0:
        return holding_interval(values, float(estimate))[:2]
    found = [holding_interval(values[:, i], float(e)) for i, e in enumerate(np.asarray(estimate, float))]
    return np.array([f[0] for f in found]), np.array([f[1] for f in found])


BC_USABLE = 0.025  # Efron's bias correction needs draws on both sides of the estimate: at least this share each


def holding_interval(draws: np.ndarray, estimate: float, bounds: tuple[float, float] = (-np.inf, np.inf)
                     ) -> tuple[float, float, str]:
    """A 95 % bootstrap interval of one statistic that holds its own estimate and has width, or none, with what
    it is: (lower, upper, how). `draws` (r,) the resamples' values, `estimate` the statistic on the data, `bounds`
    the statistic's range (the cyclic share's is [0, 1]).

    Where at least 2.5 % of the draws fall on each side of the estimate, Efron's (1987) bias-corrected percentile
    interval (the percentiles moved by z0 = Phi^-1(share of draws below the estimate)). Where fewer do (a cyclic
    share's resamples nearly all lie above it: resampling adds noise, and noise is cyclic), z0 is past what the
    draws can resolve and BC collapses onto the draws' edge (0.41-0.41 beside 0.39): the basic bootstrap interval
    (2 estimate - q97.5, 2 estimate - q2.5), which moves against the resamples' bias, widened to the estimate
    where the bias carries it past, and said. No width (every draw alike and equal to the estimate): none."""
    from scipy.special import ndtr, ndtri  # the standard Normal's cdf and quantile

    values = np.asarray(draws, float)
    values = values[np.isfinite(values)]
    if len(values) < 20 or not np.isfinite(estimate):
        return np.nan, np.nan, "none: fewer than 20 usable resamples"
    if np.ptp(values) < 1e-12 and abs(values[0] - estimate) < 1e-12:
        return np.nan, np.nan, "none: every resample gave the estimate itself"
    below, above = np.mean(values < estimate), np.mean(values > estimate)
    if min(below, above) >= BC_USABLE:
        z0 = ndtri(np.clip(below + 0.5 * np.mean(values == estimate), 0.5 / len(values), 1 - 0.5 / len(values)))
        levels = ndtr(2 * z0 + ndtri(np.array([0.025, 0.975])))
        lower, upper = (float(np.quantile(values, q)) for q in levels)
        how = "95 % bias-corrected bootstrap"
    else:
        q_low, q_high = np.quantile(values, [0.025, 0.975])
        lower, upper = 2 * estimate - q_high, 2 * estimate - q_low
        side = "above" if above > below else "below"
        how = f"95 % basic bootstrap, {max(above, below):.0%} of resamples {side} the estimate"
    lower, upper = max(lower, bounds[0]), min(upper, bounds[1])
    if not lower <= estimate <= upper:
        lower, upper = min(lower, estimate), max(upper, estimate)
        how += ", widened to it"
    if upper - lower < 1e-12:
        return np.nan, np.nan, "none: the resamples leave the interval no width"
    return float(lower), float(upper), how


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
        interval = holding_interval(np.asarray(shares, float), share, (0.0, 1.0)) if len(shares) else (
            np.nan, np.nan, "none: no bootstrap asked" if not bootstrap else "none: no usable resample")
        chance = cyclic_share_by_chance(game, CHANCE_DRAWS, seed)
        triads = strongest_cycles(game.wins, agents, game.log_odds, game.counts, MIN_PAIR_GAMES)
        cycles.append(triads.assign(component=k))
        cyclic.append({"component": k, "agents": len(agents), "cyclic_share": share, "lower": interval[0],
                       "upper": interval[1], "interval": interval[2],
                       "chance_lower": float(np.percentile(chance, 2.5)),
                       "chance_upper": float(np.percentile(chance, 97.5)),
                       "chance_p": float(np.mean(chance >= share - 1e-12)), "support": ", ".join(support),
                       "cyclic_triads": len(triads),
                       "strongest_triads": "; ".join(" > ".join(t) for t in triads.head(5)[["first", "second", "third"]]
                                                                     .itertuples(index=False))})
    if not tables and few:
        raise ValueError(f"no game to solve: {len(few)} agent(s) are in fewer than {min_games:g} matches and were set "
                         "apart, leaving no two that met (`--min-games 1` plays every agent)")
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
