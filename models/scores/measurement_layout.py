"""Measurement Layouts (Burden et al. 2023): agents' latent capabilities from the demands of the tasks.

Each agent a has a capability c_ad in [0, 1] for each demand d. Performance is non-compensatory: for a
binary demand present in the task the success factor is c_ad (absent: 1), so the probability of success
is the product of the present demands' capabilities; a guess floor ("base chance") b_a mixes in:

    mu_as = b_a + (1 - b_a) * prod_d c_ad ^ x_sd

and the normalised score follows the ordered-beta likelihood of `referee.models.scores.beta_regression` with logit-mean
logit(mu_as) and the agent's concentration nu_a ("sample size") as Beta precision, so exact 0 and 1 are
allowed. (For a graded demand level x in the design the factor would be sigmoid(theta - x); the demands
used here are binary.)

Priors (stated, overridable through `LayoutPriors`): capability c_ad = sigmoid(theta_ad) with
theta_ad = m_d + s_d z_ad, m_d ~ Normal(1, 1.5), s_d ~ HalfNormal(1) (a demand's capabilities are pooled across
agents); b_a ~ Beta(1, 4); nu_a ~ Gamma(2, 0.1). The deviations z_.d of one demand are zero-sum normal over the
agents (independent unit normals conditioned on summing to zero, each of variance (A - 1) / A), so m_d is
exactly the agents' mean theta_.d: with independent z the data fix every theta_ad and leave m_d to trade off
against all A deviations at once, a direction NUTS crawled along (issue 53's sweep: R-hat above 1.01 on the
persuasion demand's mean in 2 of 6 seeds). The demands' levels still trade off against each other where they
are only seen together in scenarios, so the layout samples with nutpie's low-rank mass matrix
(`referee.models.registry.LAYOUT_LOW_RANK`).

Demands, as the contest paper chose them: the tags whose presence correlates negatively with score (each
marks added difficulty), an indicator per substrate, and a visitor (vs resident) indicator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd

from referee.models.fit import CHAINS, LAYOUT_DRAWS, LAYOUT_TUNE, FitResult, collect_notes, sample, summary_table
from referee.models.registry import LAYOUT_LOW_RANK, LAYOUT_TARGET_ACCEPT
from referee.models.scores.beta_regression import Priors, aliased_tags
from referee.models.scores.score_cells import score_cells, score_likelihood


DIAGNOSED = ["capability", "base_chance", "sample_size", "demand_mean"]  # the variables convergence is judged on


def success_mean(log_success, base):
    """The layout's Beta mean mu = b + (1 - b) prod_d c_d ^ x_d from log_success = sum_d x_d log c_d and the base
    chance b (numpy arrays, broadcast), clipped to (1e-9, 1 - 1e-9) as the model clips it."""
    return np.clip(base + (1 - base) * np.exp(log_success), 1e-9, 1 - 1e-9)


@dataclass
class LayoutPriors:
    """Prior parameters of the Measurement Layout (module docstring)."""

    capability_mean_mu: float = 1.0
    capability_mean_sd: float = 1.5
    capability_spread_sd: float = 1.0
    base_alpha: float = 1.0
    base_beta: float = 4.0
    nu_alpha: float = 2.0
    nu_beta: float = 0.1


@dataclass
class LayoutFit(FitResult):
    """A fitted layout (the `referee.models.fit.FitResult` contract): InferenceData, summary, diagnostics, notes,
    and the agents and demands it was fitted with. `table()` is `capabilities()`."""

    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    agents: list[str] = field(default_factory=list)
    demands: list[str] = field(default_factory=list)
    model: str = "measurement-layout"
    columns: list[int] = field(default_factory=list)  # the input column each fitted demand reads

    def table(self) -> pd.DataFrame:
        """agent, demand, mean, hdi_low, hdi_high of the capabilities (94% HDI)."""
        return self.capabilities()

    def capabilities(self, hdi_prob: float = 0.94) -> pd.DataFrame:
        """agent, demand, mean, hdi_low, hdi_high of the capabilities c_ad."""
        post = self.idata.posterior["capability"]
        hdi = az.hdi(self.idata, var_names=["capability"], hdi_prob=hdi_prob)["capability"]
        frame = pd.DataFrame({"mean": post.mean(("chain", "draw")).to_series(),
                              "hdi_low": hdi.sel(hdi="lower").to_series(),
                              "hdi_high": hdi.sel(hdi="higher").to_series()}).reset_index()
        return frame[["agent", "demand", "mean", "hdi_low", "hdi_high"]]

    def parameters(self, name: str, hdi_prob: float = 0.94) -> pd.DataFrame:
        """agent, mean, hdi_low, hdi_high of a per-agent parameter ('base_chance' or 'sample_size')."""
        post = self.idata.posterior[name]
        hdi = az.hdi(self.idata, var_names=[name], hdi_prob=hdi_prob)[name]
        return pd.DataFrame({"agent": self.agents, "mean": post.mean(("chain", "draw")).values,
                             "hdi_low": hdi.sel(hdi="lower").values, "hdi_high": hdi.sel(hdi="higher").values})

    def predict(self, agents: list[str], X: np.ndarray) -> np.ndarray:
        """Posterior predictive mean score for cells (agent, demand vector), shape (m,).

        Under the ordered-beta likelihood E[y] = P(y = 1) + P(0 < y < 1) mu; averaged over the posterior.
        Agents never seen in training are predicted from the population of capabilities (m_d). X has the
        demands the fit was given (before identical ones were merged), shape (m, D_input).
        """
        X = np.asarray(X, float)[:, self.columns] if self.columns else np.asarray(X, float)
        post = self.idata.posterior
        theta = post["theta"].stack(s=("chain", "draw")).transpose("s", "agent", "demand").values  # (S, A, D)
        m = post["demand_mean"].stack(s=("chain", "draw")).transpose("s", "demand").values  # (S, D)
        base = post["base_chance"].stack(s=("chain", "draw")).transpose("s", "agent").values
        cuts = post["cutpoints"].stack(s=("chain", "draw")).transpose("s", "cutpoints_dim_0").values
        index = {a: i for i, a in enumerate(self.agents)}
        out = np.empty(len(agents))
        for k, (agent, x) in enumerate(zip(agents, np.asarray(X, float))):
            if agent in index:
                th, b = theta[:, index[agent]], base[:, index[agent]]
            else:
                th, b = m, base.mean(axis=1)
            log_c = -np.logaddexp(0.0, -th)  # log sigmoid
            mu = success_mean(log_c @ x, b)
            eta = np.log(mu) - np.log1p(-mu)
            s = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
            p1 = s(eta - cuts[:, 1])
            p_mid = s(eta - cuts[:, 0]) - p1
            out[k] = float(np.mean(p1 + p_mid * mu))
        return out


def build_layout(agent_idx: np.ndarray, X_obs: np.ndarray, y: np.ndarray, agents: list[str], demands: list[str],
                 priors: LayoutPriors = LayoutPriors()):
    """The PyMC Measurement Layout for observations (agent index, demand row X_obs, score y)."""
    import pymc as pm
    import pytensor.tensor as pt

    coords = {"agent": agents, "demand": demands}
    # the rows of one agent and one row of demands share their mean and precision: one cell (`score_cells`)
    agent_idx, X_obs = np.asarray(agent_idx, np.int64), np.asarray(X_obs, float)
    cells = score_cells(np.column_stack([agent_idx, X_obs]), y, "ordered")
    with pm.Model(coords=coords) as model:
        # the data as `pm.Data`: one compiled structure serves every fold and fit (`fit_layout`'s reuse)
        agent_idx = pm.Data("agent_index", agent_idx[cells.first])
        X_obs = pm.Data("demand_matrix", X_obs[cells.first])
        m = pm.Normal("demand_mean", priors.capability_mean_mu, priors.capability_mean_sd, dims="demand")
        s = pm.HalfNormal("demand_spread", priors.capability_spread_sd, dims="demand")
        # zero-sum over the agents: demand_mean alone carries each demand's level (see the module docstring)
        z = pm.ZeroSumNormal("z", 1.0, dims=("demand", "agent"))
        theta = pm.Deterministic("theta", m[None, :] + s[None, :] * z.T, dims=("agent", "demand"))
        pm.Deterministic("capability", pm.math.invlogit(theta), dims=("agent", "demand"))
        base = pm.Beta("base_chance", priors.base_alpha, priors.base_beta, dims="agent")
        nu = pm.Gamma("sample_size", priors.nu_alpha, priors.nu_beta, dims="agent")
        log_c = -pt.softplus(-theta)
        log_success = (log_c[agent_idx] * X_obs).sum(axis=1)
        mu = base[agent_idx] + (1 - base[agent_idx]) * pt.exp(log_success)
        mu = pt.clip(mu, 1e-9, 1 - 1e-9)
        score_likelihood("y", cells, pt.log(mu) - pt.log1p(-mu), Priors(), "ordered", phi=nu[agent_idx])
    return model


def merge_identical_demands(X: np.ndarray, demands: list[str]) -> tuple[list[int], list[str]]:
    """Demands whose columns are identical (always present together) fitted as one demand.

    In a product of capabilities only c_1 c_2 of two such demands is identified; fitting both leaves a ridge
    the sampler crawls along (at contest scale, 'hidden information' and 'substrate: haggling_multi_item'
    mixed at 115 effective draws of 4,000). X : (rows, D) in {0, 1}. Returns (the first column of each group,
    in input order; the fitted demand names, 'a + b' for a merged group).
    """
    groups: dict[bytes, list[int]] = {}
    for i in range(X.shape[1]):
        groups.setdefault(np.ascontiguousarray(X[:, i]).tobytes(), []).append(i)
    firsts = sorted(g[0] for g in groups.values())
    names = {g[0]: " + ".join(demands[i] for i in g) for g in groups.values()}
    return firsts, [names[i] for i in firsts]


def fit_layout(agents_obs: pd.Series, X_obs: np.ndarray, y: np.ndarray, demands: list[str], draws: int = LAYOUT_DRAWS,
               tune: int = LAYOUT_TUNE, chains: int = CHAINS, seed: int = 0, sampler: str = "auto",
               priors: LayoutPriors = LayoutPriors()) -> LayoutFit:
    """Fit the layout to observations.

    agents_obs : agent name per row (n,); X_obs : demand matrix (n, D) in {0, 1}; y : scores in [0, 1] (n,);
    demands : the D demand names. Demands that are always present together are fitted as one ('a + b',
    see `merge_identical_demands`), and a demand whose column is a linear combination of the others'
    (`referee.models.scores.beta_regression.aliased_tags` without intercept) is left out; the notes name both. draws, tune, chains, seed, sampler : for
    `referee.models.fit.sample` (the defaults converge at contest scale). Returns a LayoutFit whose capabilities
    table has one row per agent and fitted demand.
    """
    agents = sorted(pd.unique(agents_obs))
    agent_idx = pd.Index(agents).get_indexer(agents_obs)
    X = np.asarray(X_obs, float)
    notes: list[str] = []
    unused = [d for i, d in enumerate(demands) if not X[:, i].any()]
    if unused:
        notes.append(f"Demands that no observation exercises (their capabilities are the prior alone): {unused}.")
    columns, fitted = merge_identical_demands(X, list(demands))
    merged = [name for name in fitted if " + " in name]
    if merged:
        notes.append("Demands always present together, fitted as one demand (only the product of their "
                     f"capabilities is identified): {merged}.")
    kept, aliased = aliased_tags(X[:, columns], fitted, intercept=False)
    if aliased:
        notes.append("Demands left out because their presence is a sum or difference of other demands' (in a "
                     "product of capabilities, theirs would trade off against those along a ridge the data "
                     "cannot resolve): " + "; ".join(f"{d} = {combo}" for d, combo in aliased.items())
                     + ". Their effect is carried by the demands they combine.")
    columns, fitted = [columns[k] for k in kept], [fitted[k] for k in kept]
    model = build_layout(agent_idx, X[:, columns], np.asarray(y, float), agents, fitted, priors)
    with collect_notes(notes):
        idata, diagnostics = sample(model, DIAGNOSED, draws, tune, chains, seed, sampler,
                                    target_accept=LAYOUT_TARGET_ACCEPT, low_rank=LAYOUT_LOW_RANK, reuse=True)
    summary = summary_table(idata, DIAGNOSED)
    return LayoutFit(idata=idata, summary=summary, diagnostics=diagnostics, agents=agents, demands=fitted,
                     notes=notes, columns=columns)
