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

Rows that share their mean (an agent's repetitions of a scenario) form a cell, whose likelihood is computed from
five sums of its rows (`referee.models.scores.score_cells`): the same value as the sum of the rows' densities, at the
cost of one evaluation per cell.

Models
------
- `tag-effects` (figure 3 right): eta = intercept [+ a_agent] [+ u_scenario] + sum_t beta_t x_scenario,t
  + sum_{t in slope tags} b_agent,t x_scenario,t, with b_agent ~ MVN(0, Sigma), Sigma = diag(s) R diag(s),
  R ~ LKJ(eta=2), written non-centred: b = z L^T with z ~ Normal(0, 1) and L the Cholesky factor.
  a_agent = sigma_a e_agent and u_scenario = sigma_u e_scenario, also non-centred.
- `baseline-contrast` (figure 2): eta = alpha + gamma_agent + u_scenario with gamma of the baseline agent
  fixed at 0 and u ~ ZeroSumNormal(sigma_u) over the scenarios (alpha is the baseline's mean over them).

Which tags get agent slopes (`structure`)
-----------------------------------------
The contest paper gives every tag an agent-specific slope ('paper'). An agent's slope on a tag is learnt
from the cells of the scenarios that carry the tag, against the cells that do not; a tag carried by one or
two of the 12 contest scenarios (social networks, hidden information, division of labour, convention
following) gives each agent one or two cells on one side, which the agent's cell-level noise explains just
as well. The slope's scale s_t is then a funnel the data cannot resolve: in the paper's structure at contest
scale, s_t of those tags mixed at 75-235 effective draws of 2,000 and R-hat up to 1.037 (issue 15). The
default 'identified' structure keeps agent slopes only on tags present in at least 3 scenarios *and*
absent from at least 3 (`MIN_SLOPE_SCENARIOS`); the other tags keep their population coefficient beta_t,
and an agent's own deviation on them goes to its residual. Both structures have the same population
coefficients beta_t; the paper's adds agent slopes the design cannot inform, whose scales are then mostly
prior (under nutpie at contest scale its tail ESS stayed at 283). `fit_tag_effects` names the tags of each
kind in its notes.

Priors (all overridable through `Priors`), on the logit scale of the mean score:
- intercept/alpha ~ Normal(0, 1.5): a mean score anywhere from 5% to 95% with room to spare.
- beta_t, gamma ~ Normal(0, 1): a tag or agent shifts the mean by at most about 2 logits (roughly 25 to 75
  percentage points at mid-scale), the largest effects the contest reports being 10-20 points.
- slope scales s_t ~ Gamma(2, 4): mean 0.5, mode 0.25, 95% in (0.06, 1.2). Agents' slopes differ by a
  fraction of a logit to about one; the density is zero at s_t = 0, a boundary-avoiding prior (Chung et al.
  2013) that keeps the sampler out of the neck of the funnel where s_t -> 0. With the HalfNormal(0.5) it
  replaces, the worst slope scale at contest scale had 512 effective draws of 5,000; with it, 882. When
  agents truly share a slope the posterior of s_t stays near 0.1-0.2 and the slopes shrink to zero.
- LKJ(2) on the slope correlations: mild shrinkage towards independence.
- sigma_a, sigma_u ~ HalfNormal(1): agents and scenarios differ by up to about 2 logits.
- cutpoints ~ Normal((-2, 2), 2), ordered: exact 0s and 1s are rare-to-common; phi ~ Gamma(2, 0.1): a Beta
  precision of a few to a few dozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from referee.models.fit import CHAINS, DRAWS, TUNE, FitResult, collect_notes, sample, summary_table
from referee.models.registry import TAG_DRAWS, TAG_TUNE
from referee.models.scores.score_cells import LIKELIHOODS, ScoreCells, score_cells, score_likelihood

STRUCTURES = ("identified", "paper")
# agent slopes need the tag in (and out of) this many scenarios; see `slope_tags`
MIN_SLOPE_SCENARIOS = 3
# tag effects tune for 500 steps and draw 2,500. At contest scale 300 tuning steps gave slightly more
# effective draws (947 against 759 of 5,000, seeds 0 and 1), but on the bundled 8-agent sample 300 left one
# chain badly adapted (seed 0: tail ESS 143, R-hat 1.010) where 500 converged (tail ESS 1,403, R-hat 1.004)
# in the same 35 s. At target acceptance 0.98 (below) 1,500 draws left the bundled sample's tail ESS at 306 of
# the 400 required (seed 0, AMD EPYC); 2,500 gave 810 (R-hat 1.002, no divergence) in 51 s of sampling
# (the values: TAG_TUNE, TAG_DRAWS in referee.models.registry, where `referee fit --help` reads them)
# the step size's target acceptance of the tag-effects fit: with few agents (6, 16 scenarios) the agent slopes'
# scales and correlations leave a narrow neck, where nutpie's default 0.8 diverged 2-21 times in every one of
# six seeds (low-rank adaptation: 4-18) and 0.9 once in five of six; 0.95 gave none in six, sampling 1.5x longer,
# on one CPU but one divergence on both test seeds on another (AMD EPYC, issue 65); 0.98 gave none on either
TAG_TARGET_ACCEPT = 0.98


@dataclass
class Priors:
    """Prior scales of the beta regressions (see the module docstring)."""

    intercept_sd: float = 1.5
    coef_sd: float = 1.0
    group_sd: float = 1.0
    slope_sd_alpha: float = 2.0
    slope_sd_beta: float = 4.0
    lkj_eta: float = 2.0
    cutpoint_mu: tuple[float, float] = (-2.0, 2.0)
    cutpoint_sd: float = 2.0
    phi_alpha: float = 2.0
    phi_beta: float = 0.1


@dataclass
class ScoreFit(FitResult):
    """A fitted beta regression (the `referee.models.fit.FitResult` contract): `model` is 'tag-effects' or
    'baseline-contrast', `idata` its posterior, `summary` every parameter's posterior summary
    (`referee.models.fit.summary_table`), `diagnostics` and `notes` (identifiability, warnings raised while fitting).
    `table()` is `tag_table` or `contrast_table`."""

    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    effects: pd.DataFrame = field(default_factory=pd.DataFrame)  # tag-effects: `tag_marginal_effects`
    headline: Any = None  # the function giving its headline table from the fit (`tag_table`, `contrast_table`)

    def table(self) -> pd.DataFrame:
        """The model's headline table: tag coefficients (tag-effects) or contrasts (baseline-contrast)."""
        return self.headline(self)


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


def aliased_tags(X: np.ndarray, tag_names: list[str], intercept: bool = True) -> tuple[list[int], dict[str, str]]:
    """Columns of X (S, T) that are a linear combination of the others (as R's lm aliases them).

    Columns are taken greedily, the intercept first (when `intercept`), then columns from most to least
    frequent (ties by name), keeping each that raises the rank. Returns (indices of kept columns, sorted;
    {aliased name: the combination it equals, e.g. '+1 1 -1 negotiation'}).
    """
    S, T = X.shape
    order = sorted(range(T), key=lambda t: (-X[:, t].sum(), tag_names[t]))
    kept: list[int] = []
    basis = np.ones((S, 1)) if intercept else np.zeros((S, 0))
    aliased = {}
    for t in order:
        trial = np.c_[basis, X[:, t]]
        if np.linalg.matrix_rank(trial) > np.linalg.matrix_rank(basis):
            kept.append(t)
            basis = trial
        else:
            coef, *_ = np.linalg.lstsq(basis, X[:, t], rcond=None)
            names = (["1"] if intercept else []) + [tag_names[k] for k in kept]
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


def draw_ordered_beta(rng: np.random.Generator, eta: np.ndarray, k1: float, k2: float, phi) -> np.ndarray:
    """Scores drawn from the ordered-beta likelihood (module docstring) at logit-means `eta` (n,), cutpoints
    k1 < k2 and precision `phi` (a scalar or (n,)): 0 with probability 1 - sigmoid(eta - k1), 1 with
    probability sigmoid(eta - k2), else Beta(sigmoid(eta) phi, (1 - sigmoid(eta)) phi). Returns y, shape (n,)."""
    eta = np.asarray(eta, float)
    phi = np.broadcast_to(np.asarray(phi, float), eta.shape)
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    p0, p1 = 1.0 - sig(eta - k1), sig(eta - k2)
    u = rng.uniform(size=eta.shape)
    mean = sig(eta)
    middle = np.clip(rng.beta(np.maximum(mean * phi, 1e-6), np.maximum((1 - mean) * phi, 1e-6)), 1e-9, 1 - 1e-9)
    return np.where(u < p0, 0.0, np.where(u < p0 + p1, 1.0, middle))


def slope_tags(X: np.ndarray, tag_names: list[str], structure: str = "identified",
               min_scenarios: int = MIN_SLOPE_SCENARIOS) -> list[str]:
    """The tags that get agent-specific slopes, in `tag_names` order.

    structure 'paper' : every tag (the contest paper's model). 'identified' : the tags present in at least
    `min_scenarios` scenarios *and* absent from at least `min_scenarios` (X is the (S, T) design). Below that,
    an agent's slope on the tag is informed by one or two scenario cells, which its scenario-level noise
    explains as well, so the slope's scale is a funnel the data cannot resolve (the reason is in the module
    docstring).
    """
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}")
    if structure == "paper":
        return list(tag_names)
    present = X.sum(axis=0)
    absent = X.shape[0] - present
    return [t for t, p, a in zip(tag_names, present, absent) if min(p, a) >= min_scenarios]


def build_tag_effects(data: pd.DataFrame, agents: list[str], scenarios: list[str], tag_names: list[str],
                      X: np.ndarray, priors: Priors = Priors(), likelihood: str = "ordered",
                      agent_intercepts: bool = True, scenario_intercepts: bool = False, centred: bool = False,
                      slopes: list[str] | None = None):
    """The tag-effects PyMC model (module docstring) for the (S, T) design X of `tag_names`.

    slopes : the tags with agent-specific slopes (default: every tag, the paper's model); the others have
    a population coefficient only. `centred=True` is the straightforward centred version
    (b ~ MvNormal(0, chol=L), a ~ Normal(0, sigma)) used as a benchmark baseline.
    """
    import pymc as pm
    import pytensor.tensor as pt

    slopes = list(tag_names) if slopes is None else list(slopes)
    cols = [tag_names.index(t) for t in slopes]
    coords = {"agent": agents, "scenario": scenarios, "tag": tag_names, "slope_tag": slopes, "slope_tag_": slopes}
    cells, agent_of, scenario_of = _agent_scenario_cells(data, likelihood)
    with pm.Model(coords=coords) as model:
        # the data as `pm.Data` (each cell's agent, scenario and tags, and its scores' sums): the structure serves
        # any data of its shape
        a_idx = pm.Data("agent_index", agent_of)
        s_idx = pm.Data("scenario_index", scenario_of)
        rows = pm.Data("row_tags", np.asarray(X, float)[scenario_of])
        intercept = pm.Normal("intercept", 0.0, priors.intercept_sd)
        beta = pm.Normal("beta", 0.0, priors.coef_sd, dims="tag")
        eta = intercept + pt.dot(rows, beta)
        if len(slopes) == 1:
            sd = pm.Gamma("slope_sd", priors.slope_sd_alpha, priors.slope_sd_beta, dims="slope_tag")
            chol = pt.diag(sd)
        elif slopes:
            chol, corr, sds = pm.LKJCholeskyCov("chol", n=len(slopes), eta=priors.lkj_eta,
                                                sd_dist=pm.Gamma.dist(priors.slope_sd_alpha, priors.slope_sd_beta), compute_corr=True)
            pm.Deterministic("tag_corr", corr, dims=("slope_tag", "slope_tag_"))
            pm.Deterministic("slope_sd", sds, dims="slope_tag")
        if slopes:
            if centred:
                slope = pm.MvNormal("slope", mu=np.zeros(len(slopes)), chol=chol, dims=("agent", "slope_tag"))
            else:
                z = pm.Normal("z", 0.0, 1.0, dims=("agent", "slope_tag"))
                # z L^T as a sum of products: a dot with the transposed factor is a non-contiguous array in
                # nutpie's numba code, which numba warns of on every compile
                slope = pm.Deterministic("slope", (z[:, None, :] * chol[None, :, :]).sum(axis=-1),
                                         dims=("agent", "slope_tag"))
            eta = eta + (slope[a_idx] * rows[:, cols]).sum(axis=1)
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
        score_likelihood("y", cells, eta, priors, likelihood)
    return model


def _agent_scenario_cells(data: pd.DataFrame, likelihood: str) -> tuple[ScoreCells, np.ndarray, np.ndarray]:
    """(the scores of `data` (agent_idx, scenario_idx, score_norm) in cells of one agent and scenario, each cell's
    agent index, its scenario index): every row of a cell has the same mean in the beta regressions."""
    keys = data[["agent_idx", "scenario_idx"]].to_numpy().astype(np.int64)
    cells = score_cells(keys, data["score_norm"].to_numpy(float), likelihood)
    return cells, keys[cells.first, 0], keys[cells.first, 1]


def build_baseline_contrast(data: pd.DataFrame, agents: list[str], scenarios: list[str], baseline: str,
                            priors: Priors = Priors(), likelihood: str = "ordered"):
    """The baseline-contrast PyMC model: eta = alpha + gamma_agent + u_scenario, gamma_baseline = 0."""
    import pymc as pm
    import pytensor.tensor as pt

    if baseline not in agents:
        raise ValueError(f"baseline agent {baseline!r} is not among the agents {agents}")
    others = [a for a in agents if a != baseline]
    coords = {"agent": agents, "contrast": others, "scenario": scenarios}
    cells, agent_of, scenario_of = _agent_scenario_cells(data, likelihood)
    with pm.Model(coords=coords) as model:
        a_idx = pm.Data("agent_index", agent_of)
        s_idx = pm.Data("scenario_index", scenario_of)
        position = pm.Data("contrast_position",
                           np.array([others.index(a) if a != baseline else -1 for a in agents], np.int64))
        alpha = pm.Normal("alpha", 0.0, priors.intercept_sd)
        gamma_free = pm.Normal("gamma", 0.0, priors.coef_sd, dims="contrast")
        gamma_all = pt.concatenate([gamma_free, pt.zeros(1)])[position]
        pm.Deterministic("gamma_all", gamma_all, dims="agent")
        sigma_u = pm.HalfNormal("sigma_scenario", priors.group_sd)
        # centred, and summing to zero: each scenario's many cells inform its intercept, and a shift of them
        # all together is alpha's. At contest scale with the low-rank mass matrix of `fit_baseline_contrast`,
        # the non-centred Normal form diverged 3-11 times per fit; this one does not, at min ESS 8,000-9,300
        u = pm.ZeroSumNormal("scenario_intercept", sigma_u, dims="scenario")
        eta = alpha + gamma_all[a_idx] + u[s_idx]
        score_likelihood("y", cells, eta, priors, likelihood)
    return model


def fit_tag_effects(scores: pd.DataFrame, tags: pd.DataFrame, draws: int = TAG_DRAWS, tune: int = TAG_TUNE,
                    chains: int = CHAINS, seed: int = 0, sampler: str = "auto", likelihood: str = "ordered",
                    priors: Priors = Priors(), agent_intercepts: bool = True, scenario_intercepts: bool = False,
                    structure: str = "identified", min_slope_scenarios: int = MIN_SLOPE_SCENARIOS) -> ScoreFit:
    """Fit the tag-effects model; summary covers intercept, beta (94% HDI), slopes, slope sds, phi.

    Parameters
    ----------
    scores : agent, scenario, score_norm in [0, 1] (one row per match and agent); tags : scenario, tag.
    draws, tune, chains, seed, sampler : for `referee.models.fit.sample` (the defaults meet R-hat <= 1.01 and ESS >= 400
        at contest scale, issue 15). likelihood : 'ordered' or 'squeeze'. priors : `Priors`.
    structure : 'identified' (default: agent slopes only on tags present in and absent from at least
        `min_slope_scenarios` scenarios) or 'paper' (agent slopes on every tag, as the contest paper).

    Returns
    -------
    ScoreFit: `table()` is the tag coefficients. `notes` says in plain words what the design cannot
    identify, which tags got agent slopes and which stayed at the population level (and how that differs
    from the paper's model), and posterior correlations above 0.8 between tag coefficients.
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
    slopes = slope_tags(X, tag_names, structure, min_slope_scenarios)
    notes.append(structure_note(X, tag_names, slopes, structure, min_slope_scenarios))
    model = build_tag_effects(data, agents, scenarios, tag_names, X, priors, likelihood, agent_intercepts,
                              scenario_intercepts, slopes=slopes)
    var_names = (["intercept", "beta", "phi"] + (["slope", "slope_sd"] if slopes else [])
                 + (["agent_intercept"] if agent_intercepts else []))
    with collect_notes(notes):
        idata, diagnostics = sample(model, var_names, draws, tune, chains, seed, sampler,
                                    target_accept=TAG_TARGET_ACCEPT, reuse=True)
    beta = idata.posterior["beta"].stack(s=("chain", "draw")).values
    corr = np.corrcoef(beta) if beta.shape[0] > 1 else np.ones((1, 1))
    strong = [(tag_names[i], tag_names[j], round(float(corr[i, j]), 2)) for i in range(len(tag_names))
              for j in range(i + 1, len(tag_names)) if abs(corr[i, j]) > 0.8]
    if strong:
        notes.append(f"Posterior correlations above 0.8 between tag coefficients (not separately estimable): {strong}.")
    summary = summary_table(idata, ["intercept", "beta"] + (["slope_sd", "slope"] if slopes else []) + ["phi"]
                            + (["agent_intercept"] if agent_intercepts else []), hdi_prob=0.94)
    effects = tag_marginal_effects(idata, data, X, tag_names, slopes)
    return ScoreFit(model="tag-effects", headline=tag_table, idata=idata, summary=summary, diagnostics=diagnostics, notes=notes,
                    effects=effects)


def expected_score(eta: np.ndarray, cutpoints: np.ndarray | None = None) -> np.ndarray:
    """The expected normalised score E[y | eta] on the response scale [0, 1], elementwise.

    Ordered beta (cutpoints k1 < k2 on the logit scale, broadcast against eta): P(y = 1) + P(0 < y < 1) x mean
    of the Beta part = sigmoid(eta - k2) + (sigmoid(eta - k1) - sigmoid(eta - k2)) sigmoid(eta). Without
    cutpoints (the squeeze likelihood): sigmoid(eta).
    """
    from scipy.special import expit

    if cutpoints is None:
        return expit(eta)
    k1, k2 = cutpoints
    top = expit(eta - k2)
    return top + (expit(eta - k1) - top) * expit(eta)


def tag_marginal_effects(idata, data: pd.DataFrame, X: np.ndarray, tag_names: list[str], slopes: list[str],
                         hdi_prob: float = 0.94) -> pd.DataFrame:
    """Average marginal effect of each tag on the expected normalised score, in percentage points.

    For every posterior draw and every observed (agent, scenario) cell, weighted by its matches, the expected
    score (`expected_score`) with the tag switched on minus with it switched off, everything else (intercept,
    other tags, the agent's intercept and slopes, scenario intercepts) as fitted; averaged over the cells. This
    is "the average agent's expected performance" of the contest paper's figure 3 (right), which reports
    effects of -10 to -20 points.

    idata : the tag-effects posterior; data : `design`'s coded rows (agent_idx, scenario_idx); X : the (S, T)
    design of `tag_names`; slopes : the tags with agent slopes. Returns tag, ame_pp (posterior mean), ame_low,
    ame_high (HDI at `hdi_prob`), one row per tag.
    """
    import arviz as az

    post = idata.posterior.stack(sample=("chain", "draw"))
    cells = data.groupby(["agent_idx", "scenario_idx"]).size().reset_index(name="weight")
    a_idx, s_idx = cells["agent_idx"].to_numpy(), cells["scenario_idx"].to_numpy()
    weight = cells["weight"].to_numpy(float) / cells["weight"].sum()
    Xc = X[s_idx]  # (cells, T)
    beta = post["beta"].transpose("tag", "sample").values  # (T, draws)
    eta = post["intercept"].values[None, :] + Xc @ beta  # (cells, draws)
    slope = post["slope"].transpose("agent", "slope_tag", "sample").values if slopes else None  # (A, K, draws)
    for k, tag in enumerate(slopes):
        eta = eta + slope[a_idx, k, :] * Xc[:, tag_names.index(tag), None]
    for name, index in (("agent_intercept", a_idx), ("scenario_intercept", s_idx)):
        if name in post:
            eta = eta + post[name].transpose(..., "sample").values[index]
    cutpoints = post["cutpoints"].transpose(..., "sample").values[:, None, :] if "cutpoints" in post else None
    rows = []
    for t, tag in enumerate(tag_names):
        # the tag's whole effect in each cell: its coefficient plus the agent's slope on it, (cells, draws)
        contribution = beta[t][None, :] + (slope[a_idx, slopes.index(tag), :] if tag in slopes else 0.0)
        off = eta - Xc[:, t, None] * contribution
        change = expected_score(off + contribution, cutpoints) - expected_score(off, cutpoints)
        ame = 100.0 * (weight[:, None] * change).sum(axis=0)  # (draws,)
        low, high = az.hdi(ame, hdi_prob=hdi_prob)
        rows.append({"tag": tag, "ame_pp": float(ame.mean()), "ame_low": float(low), "ame_high": float(high)})
    return pd.DataFrame(rows)


def structure_note(X: np.ndarray, tag_names: list[str], slopes: list[str], structure: str, min_scenarios: int) -> str:
    """One sentence for the notes: which tags have agent slopes, which stay at the population level, and why."""
    counts = dict(zip(tag_names, X.sum(axis=0).astype(int)))
    if structure == "paper":
        return ("Model structure 'paper': agent-specific slopes on every tag (the contest paper's model), including "
                f"tags seen in few scenarios ({counts}); their slope scales are mostly prior and mix slowly.")
    population = [f"{t} ({counts[t]} of {X.shape[0]})" for t in tag_names if t not in slopes]
    text = (f"Model structure 'identified': agent-specific slopes only on tags present in and absent from at least "
            f"{min_scenarios} scenarios each: {slopes or 'none'}.")
    if population:
        text += (" Tags left at the population level (one coefficient for all agents; an agent's own deviation on "
                 f"them is part of its residual): {', '.join(population)}. The paper's model (structure='paper') "
                 "also gives these tags agent slopes, whose scales the design leaves to the prior.")
    return text


def fit_baseline_contrast(scores: pd.DataFrame, baseline: str, draws: int = DRAWS, tune: int = TUNE,
                          chains: int = CHAINS,
                          seed: int = 0, sampler: str = "auto", likelihood: str = "ordered",
                          priors: Priors = Priors()) -> ScoreFit:
    """Fit the baseline-contrast model; summary of gamma (log-odds difference from the baseline) with 95% HDIs."""
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}")
    data, agents, scenarios, _ = design(scores, pd.DataFrame(columns=["scenario", "tag"]))
    model = build_baseline_contrast(data, agents, scenarios, baseline, priors, likelihood)
    notes = [f"baseline agent: {baseline}"]
    with collect_notes(notes):
        # alpha moves with every contrast (each is measured against the baseline's level): one strongly
        # correlated direction, which nutpie's low-rank mass matrix learns (min ESS 535 -> 9,309 of 5,000)
        idata, diagnostics = sample(model, ["alpha", "gamma", "sigma_scenario", "phi"], draws, tune, chains, seed,
                                    sampler, low_rank=True, reuse=True)
    summary = summary_table(idata, ["alpha", "gamma", "sigma_scenario", "phi"], hdi_prob=0.95)
    return ScoreFit(model="baseline-contrast", headline=contrast_table, idata=idata, summary=summary, diagnostics=diagnostics, notes=notes)


def contrast_table(fit: ScoreFit) -> pd.DataFrame:
    """agent, mean, hdi_low, hdi_high (95%), verdict ('credibly above', 'credibly below', 'not distinguishable')."""
    rows = fit.summary[fit.summary["parameter"].str.startswith("gamma[")].copy()
    rows["agent"] = rows["parameter"].str.slice(6, -1)
    rows["verdict"] = np.where(rows["hdi_low"] > 0, "credibly above",
                               np.where(rows["hdi_high"] < 0, "credibly below", "not distinguishable"))
    return rows[["agent", "mean", "hdi_low", "hdi_high", "verdict"]].sort_values("mean", ascending=False).reset_index(drop=True)


def tag_table(fit: ScoreFit) -> pd.DataFrame:
    """tag, mean, hdi_low, hdi_high (94% HDI) of the tag coefficients beta on the log-odds scale, beside
    ame_pp, ame_low, ame_high: the average marginal effect on the expected normalised score in percentage
    points with its 94% HDI (`tag_marginal_effects`); sorted by mean."""
    rows = fit.summary[fit.summary["parameter"].str.startswith("beta[")].copy()
    rows["tag"] = rows["parameter"].str.slice(5, -1)
    table = rows[["tag", "mean", "hdi_low", "hdi_high"]]
    if len(fit.effects):
        table = table.merge(fit.effects, on="tag", how="left")
    return table.sort_values("mean").reset_index(drop=True)

