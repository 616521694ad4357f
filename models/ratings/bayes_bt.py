"""Bayesian Bradley-Terry in PyMC: the scalar model and the per-game model, returning InferenceData.

Scalar: mu_i ~ Normal(0, sigma), sigma ~ HalfNormal(1) (natural-log units). How mu_i is written follows how
much the data say about agent i. Agents in at least `RICH` comparisons are centred and sum to zero
(ZeroSumNormal(sigma), whose elements have variance sigma^2 (n - 1) / n): their likelihood pins them, while a
non-centred mu_i = sigma z_i ties each to sigma along a ridge, and a free common shift (which Bradley-Terry
cannot see) makes every mu_i move together; at contest scale, 26 agents in 11,700 comparisons, those two
gave 216-230 effective draws of 5,000. Agents in fewer comparisons are non-centred (mu_i = sigma z_i,
z_i ~ Normal(0, 1)), which avoids the funnel between sigma and a weakly informed mu_i.

Per-game: theta_ik = mu_i + delta_ik with mu_i as above, tau ~ HalfNormal(0.5) and delta_k ~ ZeroSumNormal(tau)
over the agents of each game k: a game's deviations shifted together change no comparison, so that direction
is left out, and they are centred because each game's comparisons inform them (non-centred, the contest-scale
fit had 1,981 effective draws where this one has 3,943; with two games and 5 agents, 23 against 110).
The likelihood is that of Bradley-Terry on pair counts, sum_ij W[i, j] log sigmoid(theta_i - theta_j)
(ties as half wins), added as a potential. Deterministic `rating` (dims agent[, game]) is on the Elo
scale, centred at 1500, so its posterior mean and HDI are directly reportable.
"""

from __future__ import annotations

from dataclasses import dataclass

import arviz as az
import numpy as np
import pandas as pd

from referee.models.fit import CHAINS, DRAWS, TUNE, FitResult, collect_notes, sample

from referee.models.ratings.bradley_terry import ELO_CENTRE, ELO_SCALE, add_rank


# comparisons (wins, losses and ties, counted once each) from which an agent's strength is centred
RICH = 50


def _pairs(W: np.ndarray):
    i, j = np.nonzero(W)
    return i, j, W[i, j]


# the step size's target acceptance: at nutpie's default 0.8 five agents' scalar fit (3,000 comparisons,
# tests/test_bayes_bt.py) left one divergent transition in half of six seeds, 0.9 in one; 0.95 in none
TARGET_ACCEPT = 0.95


def build_model(W: np.ndarray, agents: list[str], Wk: np.ndarray | None = None, games: list[str] | None = None):
    """The PyMC model: scalar when `Wk` is None, else per-game with counts Wk (K, n, n)."""
    import pymc as pm
    import pytensor.tensor as pt

    W = np.asarray(W, float)
    rich = (W.sum(axis=0) + W.sum(axis=1)) >= RICH
    coords = {"agent": list(agents), "rich_agent": [a for a, r in zip(agents, rich) if r],
              "sparse_agent": [a for a, r in zip(agents, rich) if not r]}
    if Wk is not None:
        coords["game"] = list(games)
    with pm.Model(coords=coords) as model:
        # every data-dependent array is a `pm.Data` (which agents are rich, who beat whom how often), so that one
        # compiled structure serves any comparisons of the same kind (`referee.models.compiled_structure`)
        sigma = pm.HalfNormal("sigma", 1.0)
        mu = pt.zeros(model.dim_lengths["agent"])  # the agents' count is data too, not a constant of the graph
        if rich.any():
            rich_index = pm.Data("rich_index", np.flatnonzero(rich).astype(np.int64))
            mu = pt.set_subtensor(mu[rich_index], pm.ZeroSumNormal("mu_rich", sigma, dims="rich_agent"))
        if not rich.all():
            sparse_index = pm.Data("sparse_index", np.flatnonzero(~rich).astype(np.int64))
            z = pm.Normal("z", 0.0, 1.0, dims="sparse_agent")
            mu = pt.set_subtensor(mu[sparse_index], sigma * z)
        mu = pm.Deterministic("mu", mu, dims="agent")
        if Wk is None:
            i, j, w = (pm.Data(name, values) for name, values in
                       zip(("winner", "loser", "wins"), _pairs(np.asarray(W, float))))
            pm.Potential("loglik", pt.sum(w * pt.log(pt.sigmoid(mu[i] - mu[j]))))
            pm.Deterministic("rating", ELO_CENTRE + ELO_SCALE * (mu - pt.mean(mu)), dims="agent")
        else:
            tau = pm.HalfNormal("tau", 0.5)
            # sums to zero over each game's agents and over the games of each agent: the rating is then the agents'
            # average over games, and nothing trades it against the deviations (summed over agents only, a ridge
            # the two games' data could not pin: 4-16 divergent transitions per fit, issue 53)
            delta = pm.ZeroSumNormal("delta", tau, dims=("game", "agent"), n_zerosum_axes=2)
            theta = mu[None, :] + delta
            k, i, j = np.nonzero(Wk)
            w = pm.Data("wins", np.asarray(Wk, float)[k, i, j])
            k, i, j = (pm.Data(name, values.astype(np.int64)) for name, values in
                       zip(("game_index", "winner", "loser"), (k, i, j)))
            pm.Potential("loglik", pt.sum(w * pt.log(pt.sigmoid(theta[k, i] - theta[k, j]))))
            pm.Deterministic("rating", ELO_CENTRE + ELO_SCALE * (mu - pt.mean(mu)), dims="agent")
            pm.Deterministic("game_rating", ELO_CENTRE + ELO_SCALE * (theta - pt.mean(theta, axis=1, keepdims=True)),
                             dims=("game", "agent"))
    return model


@dataclass
class BayesBTFit(FitResult):
    """A sampled Bayesian BT model (the `referee.models.fit.FitResult` contract); `table()` is `rating_table` of
    `rating` (scalar) or `game_rating` (per game), 94% HDIs."""

    var: str = "rating"
    model: str = "bayes-bt"

    def table(self) -> pd.DataFrame:
        """agent (and game), rating, lower, upper (94% HDI), rank, r_hat."""
        return rating_table(self.idata, self.var)


def fit_bayes_bt(W: np.ndarray, agents: list[str], Wk: np.ndarray | None = None, games: list[str] | None = None,
                 draws: int = DRAWS, tune: int = TUNE, chains: int = CHAINS, seed: int = 0, sampler: str = "auto"
                 ) -> BayesBTFit:
    """Sample the scalar (or, with `Wk`, per-game) Bayesian BT model through `referee.models.fit.sample`.

    sampler : 'auto', 'pymc' or 'nutpie'. Returns a BayesBTFit whose idata posterior holds `rating` (agent)
    and, per game, `game_rating` (game, agent) on the Elo scale; diagnostics cover sigma, mu (and tau, delta).
    """
    model = build_model(W, agents, Wk, games)
    var_names = ["sigma", "mu"] + (["tau", "delta"] if Wk is not None else [])
    notes: list[str] = []
    with collect_notes(notes):
        idata, diagnostics = sample(model, var_names, draws, tune, chains, seed, sampler, target_accept=TARGET_ACCEPT,
                                    reuse=True)
    return BayesBTFit(idata=idata, diagnostics=diagnostics, notes=notes,
                      var="game_rating" if Wk is not None else "rating")


def rating_table(idata: az.InferenceData, var: str = "rating", hdi_prob: float = 0.94) -> pd.DataFrame:
    """agent (and game), rating (posterior mean), lower, upper (HDI), rank, r_hat, from InferenceData."""
    post = idata.posterior[var]
    mean = post.mean(("chain", "draw"))
    hdi = az.hdi(idata, var_names=[var], hdi_prob=hdi_prob)[var]
    rhat = az.rhat(idata, var_names=[var])[var]
    frame = pd.DataFrame({
        "rating": mean.to_series(),
        "lower": hdi.sel(hdi="lower").to_series(),
        "upper": hdi.sel(hdi="higher").to_series(),
        "r_hat": rhat.to_series(),
    }).reset_index()
    if "game" in frame.columns:
        return pd.concat([add_rank(g.reset_index(drop=True)) for _, g in frame.groupby("game", sort=False)],
                         ignore_index=True)[["game", "agent", "rating", "lower", "upper", "rank", "r_hat"]]
    return add_rank(frame)[["agent", "rating", "lower", "upper", "rank", "r_hat"]]
