"""Bayesian beta regressions of normalised scores (Concordia contest paper, section 5 and 9.4.2).

Data: one row per (match, agent) with `agent`, `scenario` and `score_norm` in [0, 1] (exact 0 and 1
allowed), plus the scenario-level design: tag indicators X (scenario x tag).

Likelihoods
-----------
- `ordered` (default; Kubinec 2022): with linear predictor eta and ordered cutpoints k1 < k2,
  P(y = 0) = 1 - sigmoid(eta - k1), P(y = 1) = sigmoid(eta - k2), and for 0 < y < 1 the density
  (sigmoid(eta - k1) - sigmoid(eta - k2)) Beta(y | sigmoid(eta) phi, (1 - sigmoid(eta)) phi).
- `squeeze` (Smithson & Verkuilen 2006, a sensitivity option): y' = (y (N - 1) + 1/2) / N, then
  Beta(y' | sigmoid(eta) phi, (1 - sigmoid(eta)) phi).

Models
------
- `tag-effects` (figure 3 right): eta = intercept [+ a_agent] [+ u_scenario]
  + sum_t (beta_t + b_agent,t) x_scenario,t, with b_agent ~ MVN(0, Sigma), Sigma = diag(s) R diag(s),
  R ~ LKJ(eta=2), s_t ~ HalfNormal(0.5), written non-centred: b = z L^T with z ~ Normal(0, 1) and L the
  Cholesky factor. a_agent = sigma_a e_agent and u_scenario = sigma_u e_scenario, also non-centred.
- `baseline-contrast` (figure 2): eta = alpha + gamma_agent + u_scenario with gamma of the baseline agent
  fixed at 0 and u_scenario = sigma_u e_scenario.

Priors (all overridable through `Priors`): intercept/alpha ~ Normal(0, 1.5); beta_t, gamma ~ Normal(0, 1);
sigma_a, sigma_u ~ HalfNormal(1); cutpoints ~ Normal((-2, 2), 2) ordered; phi ~ Gamma(2, 0.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from models.fit import FitResult, collect_notes, sample, summary_table

LIKELIHOODS = ("ordered", "squeeze")


@dataclass
class Priors:
    """Prior scales of the beta regressions (see the module docstring)."""

    intercept_sd: float = 1.5
    coef_sd: float = 1.0
    group_sd: float = 1.0
    slope_sd: float = 0.5
    lkj_eta: float = 2.0
    cutpoint_mu: tuple[float, float] = (-2.0, 2.0)
    cutpoint_sd: float = 2.0
    phi_alpha: float = 2.0
    phi_beta: float = 0.1


@dataclass
class ScoreFit(FitResult):
    """A fitted beta regression (the `models.fit.FitResult` contract): `model` is 'tag-effects' or
    'baseline-contrast', `idata` its posterior, `summary` every parameter's posterior summary
    (`models.fit.summary_table`), `diagnostics` and `notes` (identifiability, warnings raised while fitting).
    `table()` is `tag_table` or `contrast_table`."""

    summary: pd.DataFrame = field(default_factory=pd.DataFrame)

    def table(self) -> pd.DataFrame:
        """The model's headline table: tag coefficients (tag-effects) or contrasts (baseline-contrast)."""
        return tag_table(self) if self.model == "tag-effects" else contrast_table(self)


def design(scores: pd.DataFrame, tags: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str], list[str]]:
    """Codes and the scenario-by-tag design.

    Parameters
    ----------
    scores : agent, scenario, score_norm (NaN rows are dropped).
    tags : canonical scenario_tags (scenario, tag).

    Returns
    -------
    (data with integer columns agent_idx and scenario_idx, agents, scenarios, tag names) and the design is
    `tag_matrix(scenarios, tags, tag_names)`. Raises ValueError, before any model is built, when no score is
    left, when every score is the same, or when tags are given for a single scenario.
    """
    data = scores.dropna(subset=["score_norm"]).reset_index(drop=True)
    if data.empty:
        raise ValueError("no normalised score to model (every score is missing)")
    if data["score_norm"].nunique() == 1:
        raise ValueError(f"every normalised score is {data['score_norm'].iloc[0]:g}: a beta regression has no "
                         "variation to explain (check the scenarios' bounds and that the agents' scores differ)")
    if data["scenario"].nunique() < 2 and not tags.empty:
        raise ValueError(f"the data hold one scenario ({data['scenario'].iloc[0]!r}): tag effects compare scenarios "
                         "with different demands, so they need at least two")
    agents = sorted(data["agent"].unique())
    scenarios = sorted(data["scenario"].unique())
    tag_names = sorted(tags.loc[tags["scenario"].isin(scenarios), "tag"].unique())
    data = data.assign(agent_idx=pd.Index(agents).get_indexer(data["agent"]),
                       scenario_idx=pd.Index(scenarios).get_indexer(data["scenario"]))
    return data, agents, scenarios, tag_names


def tag_matrix(scenarios: list[str], tags: pd.DataFrame, tag_names: list[str]) -> np.ndarray:
    """Binary design X (scenario, tag), shape (S, T)."""
    X = np.zeros((len(scenarios), len(tag_names)))
    for row in tags.itertuples():
        if row.scenario in scenarios and row.tag in tag_names:
            X[scenarios.index(row.scenario), tag_names.index(row.tag)] = 1.0
    return X


def aliased_tags(X: np.ndarray, tag_names: list[str]) -> tuple[list[int], dict[str, str]]:
    """Tags whose column is a linear combination of the intercept and other tags (as R's lm aliases them).

    Columns are taken greedily, the intercept first, then tags from most to least frequent, keeping each
    that raises the rank. Returns (indices of kept tags, {aliased tag: the combination it equals}).
    """
    S, T = X.shape
    order = sorted(range(T), key=lambda t: (-X[:, t].sum(), tag_names[t]))
    kept: list[int] = []
    basis = np.ones((S, 1))
    aliased = {}
    for t in order:
        trial = np.c_[basis, X[:, t]]
        if np.linalg.matrix_rank(trial) > np.linalg.matrix_rank(basis):
            kept.append(t)
            basis = trial
        else:
            coef, *_ = np.linalg.lstsq(basis, X[:, t], rcond=None)
            names = ["1"] + [tag_names[k] for k in kept]
            terms = [f"{c:+.2g} {n}" for c, n in zip(coef, names) if abs(c) > 1e-9]
            aliased[tag_names[t]] = " ".join(terms)
    return sorted(kept), aliased


def identifiability_notes(X: np.ndarray, tag_names: list[str], scenario_intercepts: bool, bounds: str | None
                          ) -> list[str]:
    """Plain-words warnings about what the scenario-level design cannot separate.

    Checks the rank of [1, X] (tags that always co-occur, or are sums of others, are confounded), whether
    scenario intercepts absorb every scenario-level tag effect, and whether observed-bound normalisation
    removed scenario-level main effects.
    """
    S, T = X.shape
    notes = []
    full = np.c_[np.ones(S), X]
    rank = np.linalg.matrix_rank(full)
    if rank < T + 1:
        # find tags whose columns are identical or linear combinations: report identical ones by name
        groups: dict[tuple, list[str]] = {}
        for t, name in enumerate(tag_names):
            groups.setdefault(tuple(X[:, t]), []).append(name)
        twins = [g for g in groups.values() if len(g) > 1]
        notes.append(
            f"The tag design has rank {rank} for {T} tags plus an intercept over {S} scenarios: {T + 1 - rank} "
            "direction(s) of tag effects are not identified by the data, only by the prior."
            + (f" Tags that always occur together: {twins}." if twins else ""))
    if S <= T + 1:
        notes.append(f"Only {S} scenarios for {T} scenario-level tags: tag effects are barely (or not) "
                     "separable from scenario differences.")
    if scenario_intercepts:
        notes.append("Scenario intercepts are in the model: every tag main effect is confounded with them, so "
                     "the tag coefficients are determined by the prior and the agent slopes, not the data.")
    if bounds == "observed":
        notes.append("Scores were normalised by each scenario's observed range: this removes scenario-level "
                     "differences, including the main effects of tags, from the data.")
    return notes


def score_likelihood(name: str, y_obs: np.ndarray, eta, priors: Priors, likelihood: str, phi=None):
    """Add the likelihood of normalised scores `y_obs` given the logit-scale mean `eta` to the current model.

    `likelihood` is 'ordered' or 'squeeze' (module docstring); `phi` is the Beta precision (a tensor, one
    value or one per observation), created as `phi ~ Gamma(priors.phi_alpha, priors.phi_beta)` when None.
    """
    import pymc as pm
    import pytensor.tensor as pt

    if phi is None:
        phi = pm.Gamma("phi", alpha=priors.phi_alpha, beta=priors.phi_beta)
    mu = pm.math.invlogit(eta)
    if likelihood == "squeeze":
        n = len(y_obs)
        y = (y_obs * (n - 1) + 0.5) / n
        return pm.Beta(name, alpha=mu * phi, beta=(1 - mu) * phi, observed=y)
    cuts = pm.Normal("cutpoints", mu=np.array(priors.cutpoint_mu), sigma=priors.cutpoint_sd, shape=2,
                     transform=pm.distributions.transforms.ordered, initval=np.array(priors.cutpoint_mu))

    def logp(value, eta_, k1, k2, phi_):
        low = pt.log1p(-pm.math.invlogit(eta_ - k1))
        high = pt.log(pm.math.invlogit(eta_ - k2))
        middle_mass = pm.math.invlogit(eta_ - k1) - pm.math.invlogit(eta_ - k2)
        m = pm.math.invlogit(eta_)
        inner = pt.clip(value, 1e-12, 1 - 1e-12)
        beta_logp = pm.logp(pm.Beta.dist(alpha=m * phi_, beta=(1 - m) * phi_), inner)
        middle = pt.log(pt.clip(middle_mass, 1e-300, 1.0)) + beta_logp
        return pt.switch(pt.eq(value, 0), low, pt.switch(pt.eq(value, 1), high, middle))

    return pm.CustomDist(name, eta, cuts[0], cuts[1], phi, logp=logp, observed=y_obs)


def build_tag_effects(data: pd.DataFrame, agents: list[str], scenarios: list[str], tag_names: list[str],
                      X: np.ndarray, priors: Priors = Priors(), likelihood: str = "ordered",
                      agent_intercepts: bool = True, scenario_intercepts: bool = False, centred: bool = False):
    """The tag-effects PyMC model (module docstring). `centred=True` is the straightforward centred
    version (b ~ MvNormal(0, chol=L)) used as the benchmark's baseline."""
    import pymc as pm
    import pytensor.tensor as pt

    coords = {"agent": agents, "scenario": scenarios, "tag": tag_names, "tag_": tag_names, "obs": np.arange(len(data))}
    a_idx, s_idx = data["agent_idx"].to_numpy(), data["scenario_idx"].to_numpy()
    with pm.Model(coords=coords) as model:
        intercept = pm.Normal("intercept", 0.0, priors.intercept_sd)
        beta = pm.Normal("beta", 0.0, priors.coef_sd, dims="tag")
        chol, corr, sds = pm.LKJCholeskyCov("chol", n=len(tag_names), eta=priors.lkj_eta,
                                            sd_dist=pm.HalfNormal.dist(priors.slope_sd), compute_corr=True)
        pm.Deterministic("tag_corr", corr, dims=("tag", "tag_"))
        pm.Deterministic("slope_sd", sds, dims="tag")
        if centred:
            slope = pm.MvNormal("slope", mu=np.zeros(len(tag_names)), chol=chol, dims=("agent", "tag"))
        else:
            z = pm.Normal("z", 0.0, 1.0, dims=("agent", "tag"))
            slope = pm.Deterministic("slope", pt.dot(z, chol.T), dims=("agent", "tag"))
        eta = intercept + ((beta[None, :] + slope[a_idx]) * X[s_idx]).sum(axis=1)
        if agent_intercepts:
            sigma_a = pm.HalfNormal("sigma_agent", priors.group_sd)
            if centred:
                a = pm.Normal("agent_intercept", 0.0, sigma_a, dims="agent")
            else:
                a = pm.Deterministic("agent_intercept", sigma_a * pm.Normal("e_agent", 0.0, 1.0, dims="agent"),
                                     dims="agent")
            eta = eta + a[a_idx]
        if scenario_intercepts:
            sigma_u = pm.HalfNormal("sigma_scenario", priors.group_sd)
            u = pm.Deterministic("scenario_intercept", sigma_u * pm.Normal("e_scenario", 0.0, 1.0, dims="scenario"),
                                 dims="scenario")
            eta = eta + u[s_idx]
        score_likelihood("y", data["score_norm"].to_numpy(float), eta, priors, likelihood)
    return model


def build_baseline_contrast(data: pd.DataFrame, agents: list[str], scenarios: list[str], baseline: str,
                            priors: Priors = Priors(), likelihood: str = "ordered"):
    """The baseline-contrast PyMC model: eta = alpha + gamma_agent + u_scenario, gamma_baseline = 0."""
    import pymc as pm
    import pytensor.tensor as pt

    if baseline not in agents:
        raise ValueError(f"baseline agent {baseline!r} is not among the agents {agents}")
    others = [a for a in agents if a != baseline]
    coords = {"agent": agents, "contrast": others, "scenario": scenarios}
    a_idx, s_idx = data["agent_idx"].to_numpy(), data["scenario_idx"].to_numpy()
    position = np.array([others.index(a) if a != baseline else -1 for a in agents])
    with pm.Model(coords=coords) as model:
        alpha = pm.Normal("alpha", 0.0, priors.intercept_sd)
        gamma_free = pm.Normal("gamma", 0.0, priors.coef_sd, dims="contrast")
        gamma_all = pt.concatenate([gamma_free, pt.zeros(1)])[position]
        pm.Deterministic("gamma_all", gamma_all, dims="agent")
        sigma_u = pm.HalfNormal("sigma_scenario", priors.group_sd)
        u = pm.Deterministic("scenario_intercept", sigma_u * pm.Normal("e_scenario", 0.0, 1.0, dims="scenario"),
                             dims="scenario")
        eta = alpha + gamma_all[a_idx] + u[s_idx]
        score_likelihood("y", data["score_norm"].to_numpy(float), eta, priors, likelihood)
    return model


def fit_tag_effects(scores: pd.DataFrame, tags: pd.DataFrame, draws: int = 1000, tune: int = 1000, chains: int = 2,
                    seed: int = 0, sampler: str = "auto", likelihood: str = "ordered", priors: Priors = Priors(),
                    agent_intercepts: bool = True, scenario_intercepts: bool = False) -> ScoreFit:
    """Fit the tag-effects model; summary covers intercept, beta (94% HDI), slopes, slope sds, correlations.

    `notes` says in plain words what the design cannot identify (and posterior correlations above 0.8
    between tag coefficients), so that confident-looking numbers are read with that in mind.
    """
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}")
    data, agents, scenarios, tag_names = design(scores, tags)
    X = tag_matrix(scenarios, tags, tag_names)
    bounds = scores["bounds"].iloc[0] if "bounds" in scores.columns and scores["bounds"].nunique() == 1 else None
    notes = identifiability_notes(X, tag_names, scenario_intercepts, bounds)
    kept, aliased = aliased_tags(X, tag_names)
    if aliased:
        notes.append("Aliased tags left out of the model (their effect cannot be told apart from the intercept and "
                     "the kept tags; read each kept tag's coefficient as shared with the tags aliased to it): "
                     + "; ".join(f"{t} = {combo}" for t, combo in aliased.items()) + ".")
    tag_names = [tag_names[k] for k in kept]
    X = X[:, kept]
    model = build_tag_effects(data, agents, scenarios, tag_names, X, priors, likelihood, agent_intercepts,
                              scenario_intercepts)
    var_names = ["intercept", "beta", "slope", "slope_sd", "phi"] + (["agent_intercept"] if agent_intercepts else [])
    with collect_notes(notes):
        idata, diagnostics = sample(model, var_names, draws, tune, chains, seed, sampler)
    beta = idata.posterior["beta"].stack(s=("chain", "draw")).values
    corr = np.corrcoef(beta) if beta.shape[0] > 1 else np.ones((1, 1))
    strong = [(tag_names[i], tag_names[j], round(float(corr[i, j]), 2)) for i in range(len(tag_names))
              for j in range(i + 1, len(tag_names)) if abs(corr[i, j]) > 0.8]
    if strong:
        notes.append(f"Posterior correlations above 0.8 between tag coefficients (not separately estimable): {strong}.")
    summary = summary_table(idata, ["intercept", "beta", "slope_sd", "slope", "phi"]
                            + (["agent_intercept"] if agent_intercepts else []), hdi_prob=0.94)
    return ScoreFit(model="tag-effects", idata=idata, summary=summary, diagnostics=diagnostics, notes=notes)


def fit_baseline_contrast(scores: pd.DataFrame, baseline: str, draws: int = 1000, tune: int = 1000, chains: int = 2,
                          seed: int = 0, sampler: str = "auto", likelihood: str = "ordered",
                          priors: Priors = Priors()) -> ScoreFit:
    """Fit the baseline-contrast model; summary of gamma (log-odds difference from the baseline) with 95% HDIs."""
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}")
    data, agents, scenarios, _ = design(scores, pd.DataFrame(columns=["scenario", "tag"]))
    model = build_baseline_contrast(data, agents, scenarios, baseline, priors, likelihood)
    notes = [f"baseline agent: {baseline}"]
    with collect_notes(notes):
        idata, diagnostics = sample(model, ["alpha", "gamma", "sigma_scenario", "phi"], draws, tune, chains, seed,
                                    sampler)
    summary = summary_table(idata, ["alpha", "gamma", "sigma_scenario", "phi"], hdi_prob=0.95)
    return ScoreFit(model="baseline-contrast", idata=idata, summary=summary, diagnostics=diagnostics, notes=notes)


def contrast_table(fit: ScoreFit) -> pd.DataFrame:
    """agent, mean, hdi_low, hdi_high (95%), verdict ('credibly above', 'credibly below', 'not distinguishable')."""
    rows = fit.summary[fit.summary["parameter"].str.startswith("gamma[")].copy()
    rows["agent"] = rows["parameter"].str.slice(6, -1)
    rows["verdict"] = np.where(rows["hdi_low"] > 0, "credibly above",
                               np.where(rows["hdi_high"] < 0, "credibly below", "not distinguishable"))
    return rows[["agent", "mean", "hdi_low", "hdi_high", "verdict"]].sort_values("mean", ascending=False).reset_index(drop=True)


def tag_table(fit: ScoreFit) -> pd.DataFrame:
    """tag, mean, hdi_low, hdi_high (94%) of the tag coefficients beta, sorted by mean."""
    rows = fit.summary[fit.summary["parameter"].str.startswith("beta[")].copy()
    rows["tag"] = rows["parameter"].str.slice(5, -1)
    return rows[["tag", "mean", "hdi_low", "hdi_high"]].sort_values("mean").reset_index(drop=True)
