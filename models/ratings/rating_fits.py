"""Each rating method's fit, as `referee.models.registry.RATING_METHODS` names it: a scalar fit of integer-coded
comparisons (`Coded`, `referee.run.ratings.ratings.encode`) for a method fitted once per game when rated by game, a joint
fit (a `Point`) for one that models the games together, a fit of pooled win counts for a streamable one, a fit in
one cross-validation fold, and a sampled method's posterior.
Ratings on the Elo scale unless the method says otherwise (TrueSkill and OpenSkill: mu, sigma)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from referee.models.ratings.bradley_terry import DEFAULT_PRIOR_SD, fit_bt, pair_counts
from referee.models.ratings.bt_multidim import fit_bt_multidim
from referee.models.ratings.bt_per_game import fit_bt_per_game
from referee.models.ratings.davidson import fit_davidson
from referee.models.ratings.elo import fit_contest_elo, fit_online_elo
from referee.models.ratings.plackett_luce import fit_plackett_luce, rankings_from_comparisons
from referee.models.ratings.skill import fit_openskill, fit_trueskill


@dataclass
class Point:
    """One method's point fit on a comparisons table: its rating table, the fits made, and what the method
    reports beside the table (the joint `fit` and its `coded` comparisons, `ties`, `kendall_tau`)."""

    table: pd.DataFrame
    fits: list
    fit: Any = None
    coded: Any = None
    ties: dict | None = None
    kendall_tau: pd.DataFrame | None = None


def _prior(prior: bool) -> float | None:
    return DEFAULT_PRIOR_SD if prior else None


def _rankings(coded):
    return rankings_from_comparisons(coded.a, coded.b, coded.outcome, coded.cluster, len(coded.agents))


def elo(coded, prior: bool, k: float):
    """The 2024 contest's Elo: strict wins, ties left out."""
    return fit_contest_elo(coded.counts(ties="ignore"), coded.agents)


def bt(coded, prior: bool, k: float):
    """Bradley-Terry by maximum likelihood (MAP with `prior`), a tie as half a win each way."""
    return fit_bt(coded.counts(), coded.agents, prior_sd=_prior(prior))


def bt_davidson(coded, prior: bool, k: float):
    """Bradley-Terry with Davidson's tie parameter."""
    tie = coded.outcome == 0.5
    T = pair_counts(coded.a[tie], coded.b[tie], np.ones(int(tie.sum())), len(coded.agents), ties="ignore")
    return fit_davidson(coded.counts(ties="ignore"), T + T.T, coded.agents, prior_sd=_prior(prior))


def online_elo(coded, prior: bool, k: float):
    """Sequential Elo in time order with K factor `k`."""
    return fit_online_elo(coded.a, coded.b, coded.outcome, coded.agents, k=k)


def plackett_luce(coded, prior: bool, k: float):
    """Plackett-Luce on each match's full ranking (rebuilt from its comparisons)."""
    return fit_plackett_luce(_rankings(coded), coded.agents, prior_sd=_prior(prior))


def trueskill(coded, prior: bool, k: float):
    """The trueskill package fed each match's ranking in time order."""
    return fit_trueskill(_rankings(coded), coded.agents)


def openskill(coded, prior: bool, k: float):
    """The openskill package fed each match's ranking in time order."""
    return fit_openskill(_rankings(coded), coded.agents)


def bt_per_game(coded, by: str | None, prior: bool, dims: int, tau_elo: float | None, seed: int) -> Point:
    """Global ratings plus shrunk per-game deviations (the global table, or each game's with `by`), and each
    game's Kendall tau against the global ranking. By plain maximum likelihood (`tau_elo` None) a rating
    without a finite estimate (a cell the agent won or lost throughout; for the global rating, any of its
    cells) is NaN, not the optimiser's stopping point: a bootstrap replicate leaves it out."""
    fit = fit_bt_per_game(coded.game_counts(), coded.agents, coded.games, tau_elo=tau_elo, prior_sd=_prior(prior))
    present = np.zeros((len(coded.games), len(coded.agents)), bool)
    present[coded.game, coded.a] = True
    present[coded.game, coded.b] = True
    plain = tau_elo is None
    table = fit.game_table(finite=plain) if by else fit.global_table(finite=plain)
    return Point(table, [fit], fit=fit, kendall_tau=fit.kendall_tau(present))


def bt_md(coded, by: str | None, prior: bool, dims: int, tau_elo: float | None, seed: int) -> Point:
    """Multidimensional Bradley-Terry with `dims` dimensions."""
    fit = fit_bt_multidim(coded.game_counts(), coded.agents, coded.games, dims=dims, seed=seed)
    return Point(fit.game_table() if by else fit.table(), [fit], fit=fit)


def elo_counts(wins: np.ndarray, ties: np.ndarray, names: list[str], prior: bool):
    """The contest's Elo from pooled strict wins."""
    return fit_contest_elo(wins, names)


def bt_counts(wins: np.ndarray, ties: np.ndarray, names: list[str], prior: bool):
    """Bradley-Terry from pooled wins, a tie as half a win each way."""
    return fit_bt(wins + 0.5 * ties, names, prior_sd=_prior(prior))


def davidson_ties(fit) -> dict | None:
    """Davidson's tie parameter of a fit that has one (nu, its se, the tie probability of two equal agents and
    the observed tie rate), else None."""
    if not hasattr(fit, "nu"):
        return None
    return {"nu": fit.nu, "nu_se": fit.nu_se, "tie_probability_equal": fit.tie_probability,
            "observed_tie_rate": fit.observed_tie_rate}


# each method's fit in one cross-validation fold (`Method.fold`, `referee.run.ratings.ratings_cv`): fills
# `strengths` (games x agents) from the fold's coded training comparisons, NaN where the fit has no estimate (a
# strength by plain maximum likelihood that runs off: never scored as if it were one), and says whether the fit
# added a prior because the maximum-likelihood estimate does not exist on the fold
def bt_fold(strengths, coded, agents, game_index, dims, seed, tau_elo) -> bool:
    """bt in a fold: one strength per agent in every game (falls back to MAP itself where no MLE exists: True)."""
    fit = fit_bt(coded.counts(), agents)
    strengths[:] = fit.theta
    return fit.prior_sd is not None


def per_game_fold(strengths, coded, agents, game_index, dims, seed, tau_elo) -> bool:
    """bt-per-game in a fold: the global strength, and the game's own in the games trained on (True: the
    global strengths were given a prior, their maximum-likelihood estimate not existing on the fold). By plain
    maximum likelihood (`tau_elo` None) an agent's global strength without a finite estimate
    (`PerGameFit.global_finite`) and a cell without one (`unbounded`) are NaN."""
    fit = fit_bt_per_game(coded.game_counts(), agents, coded.games, tau_elo=tau_elo)
    plain = tau_elo is None
    strengths[:] = np.where(fit.global_finite, fit.mu, np.nan) if plain else fit.mu
    strengths[game_index] = np.where(fit.unbounded, np.nan, fit.theta) if plain else fit.theta
    return fit.prior_sd is not None


def md_fold(strengths, coded, agents, game_index, dims, seed, tau_elo) -> bool:
    """bt-md in a fold: each game's strengths with `dims` dimensions. Always True: equation 3 is fitted with a
    ridge penalty (`fit_bt_multidim`'s `lam`, a Normal prior on every weight), so every fold it scores is a
    penalised fit, counted in `folds_with_prior`. Where `dims` reaches the fold's games, equation 3 is the per-game
    model, and a cell whose per-game maximum-likelihood estimate does not exist (`fit_bt_per_game`'s `unbounded`,
    checked apart) is NaN under the plain protocol (`tau_elo` None), as the per-game row's: never scored as if it
    were an estimate."""
    fit = fit_bt_multidim(coded.game_counts(), agents, coded.games, dims=dims, seed=seed, restarts=2)
    strengths[game_index] = fit.strengths
    if tau_elo is None and dims >= len(coded.games):
        unbounded = fit_bt_per_game(coded.game_counts(), agents, coded.games, tau_elo=None).unbounded
        strengths[game_index] = np.where(unbounded, np.nan, strengths[game_index])
    return True


def bayes_bt(coded, by: bool, draws: int, tune: int, chains: int, seed: int, sampler: str):
    """bayes-bt (`RATING_METHODS`, a sampled method): the PyMC Bradley-Terry model of coded comparisons (per game
    with `by`), its posterior kept (`.idata`)."""
    from referee.models.ratings.bayes_bt import fit_bayes_bt

    if by:
        return fit_bayes_bt(coded.counts(), coded.agents, coded.game_counts(), coded.games, draws=draws, tune=tune,
                            chains=chains, seed=seed, sampler=sampler)
    return fit_bayes_bt(coded.counts(), coded.agents, draws=draws, tune=tune, chains=chains, seed=seed,
                        sampler=sampler)
