"""Hierarchical models of per-sample outcomes: pass/fail (Bernoulli, fitted as binomial counts per cell) and graded
scores (ordered logistic), with crossed effects of agent, task and item.

Data: one row per scored sample (`referee.prepare.outcomes.sample_outcomes`): `agent`, `task` (a scenario's game,
Inspect's task), `item` (the instance the agent answered, nested in its task), `y` (0/1, or a grade's level
index 0..K-1) and `sample` (its name in the store, for Pareto-k warnings).

Models (`EFFECTS`, the ladder `referee fit --compare` climbs):
- `agent`:       logit p = mu + a_agent
- `agent+task`:  logit p = mu + a_agent + b_task
- `crossed`:     logit p = mu + a_agent + b_task + c_item          (the default)
- `interaction` (on request): + d_agent,task for every observed (agent, task) pair.
For graded scores the same linear predictor (without mu) enters an ordered logistic with K - 1 cutpoints.

Coding: a_agent ~ ZeroSumNormal(sigma_agent) and b_task ~ ZeroSumNormal(sigma_task), centred where there are
CENTRED_LEVELS agents (tasks) or more and the data's information about the median one (its samples times
p (1 - p) at the overall rate) reaches CENTRED_INFORMATION, else non-centred (sigma times a standard zero-sum
normal); a fit that diverges is refitted once with the other coding, and the notes say which stands;
c_item = sigma_item z_item and d = sigma_pair z_pair (non-centred: an item has a few samples). Zero-sum coding does not depend on level order: mu is the logit of the average agent on the average
task, a_agent an agent's deviation from the average agent.

Priors (`Priors`, stated in every fit's notes and `priors` table): mu ~ Normal(0, 1.5); every sigma ~
HalfNormal(1); cutpoints ~ Normal(evenly spread over -2..2, 2), ordered. The prior predictive check in the notes
gives the range these put an agent's accuracy in.

HiBayES (UK AISI, 1.0.0, `src/hibayes/model/models.py`), for users moving over: its default
`two_level_group_binomial` is logit p = group effect, the group effects drawn around an overall mean with
HalfNormal(0.5) on the overall scale and HalfNormal(0.1) on the groups' (binomial counts per group);
`simplified_group_binomial_exponential` puts an Exponential(1) on the groups' scale; `three_level_group_binomial`
nests subgroups in groups and subsubgroups in subgroups (a hierarchy, not crossed effects); its
`ordered_logistic_model` has fixed effects only (Normal(0, 1), sum-to-zero effect coding) and cutpoints from a
Normal(-4, 0.2) first one plus LogNormal gaps. referee's `agent` model is the two-level one with the agent as the
group; `agent+task` and `crossed` add task and item effects crossed, not nested, each with its own
HalfNormal(1) scale; `graded` is an ordered logistic whose agent (task, item) effects are partially pooled;
with zero-sum coding and the identification checks below.

Identification (`identification`): with task effects, an agent's effect is told apart from its tasks' only
through other agents on the same tasks; agents (and tasks) outside the largest connected group of the
agent-task graph are `identified: no, prior only` (an agent alone on its task: its effect and the task's split
by the priors alone). Items answered by one agent only are counted in the notes.
"""

from __future__ import annotations

import warnings

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.fit import CHAINS, FitResult, collect_notes, sample, summary_table
from referee.models.registry import OUTCOME_DRAWS, OUTCOME_EFFECTS, OUTCOME_TUNE
from referee.models.scores.outcome_cells import effect_blocks, pass_fail_cells, pass_fail_density
from referee.models.scores.outcome_refits import converged_fit
from referee.models.scores.ordered_logistic import ordered_logistic_logp

EFFECTS = dict(zip(OUTCOME_EFFECTS, (("agent",), ("agent", "task"), ("agent", "task", "item"))))
LADDER = tuple(EFFECTS)  # the models `--compare` fits, simplest first
LIKELIHOODS = ("pass-fail", "graded")
# per chain, with nutpie's low-rank mass matrix: at 1,000 draws the largest R-hat over the crossed model's ~360
# parameters (issue 52's design) ran 1.005-1.009, too near the 1.01 limit; 2,000 halve its noise. 1,000 tuning
# steps (HiBayES's default): at 500 the crossed fit on the real Inspect logs stopped at tail ESS 249 on
# sigma_item (issue 72)
# (the values: OUTCOME_DRAWS, OUTCOME_TUNE in referee.models.registry, where `referee fit --help` reads them)
# the step size's target acceptance (nutpie's default is 0.8): six agents' graded fit (tests/test_outcome_models.py)
# left 1-4 divergent transitions in 7 of 10 seeds at 0.9, none at 0.95; two agents' pass-fail fit on the bundled
# Inspect sample 2 at 0.8. With 1,000 tuning steps the graded fit left one divergence in 1 of 6 seeds at 0.95 and
# none at 0.98 (the ordered logistic's cutpoints against its effects: a harder geometry); pass-fail at 0.95
# converged in 20 of 20 seeds of benchmarks/outcome_models.py with no divergence
TARGET_ACCEPT = 0.95
GRADED_TARGET_ACCEPT = 0.98
HDI = 0.94
NOT_IDENTIFIED = "no, prior only"


@dataclass(frozen=True)
class Priors:
    """Prior scales on the logit scale (see the module docstring)."""

    intercept_sd: float = 1.5
    group_sd: float = 1.0
    cutpoint_sd: float = 2.0

    def table(self, effects: tuple[str, ...], graded: bool, interaction: bool) -> pd.DataFrame:
        """One row per parameter group: parameter, prior."""
        rows = [] if graded else [("mu", f"Normal(0, {self.intercept_sd})")]
        rows += [(f"sigma_{e}", f"HalfNormal({self.group_sd})") for e in effects]
        rows += [("sigma_pair", f"HalfNormal({self.group_sd})")] if interaction else []
        rows += [("cutpoints", f"Normal(evenly -2..2, {self.cutpoint_sd}), ordered")] if graded else []
        rows += [(f"{e} effects", "ZeroSumNormal(sigma)" if e in ("agent", "task") else "Normal(0, sigma)")
                 for e in effects]
        return pd.DataFrame(rows, columns=["parameter", "prior"])


@dataclass
class Design:
    """Integer codes of a tidy outcome table: `agents`, `tasks`, `items` (level names), per-sample index arrays
    `agent`, `task`, `item`, `pair` (the observed (agent, task) pair), `y`, and `levels` (graded: the K level
    values in order; pass-fail: (0, 1))."""

    agents: list
    tasks: list
    items: list
    pairs: list
    agent: np.ndarray
    task: np.ndarray
    item: np.ndarray
    pair: np.ndarray
    y: np.ndarray
    levels: tuple
    samples: list


def design(frame: pd.DataFrame) -> Design:
    """`frame` (agent, task, item, y, [sample]) coded; y of a graded table is mapped to its level index."""
    levels = tuple(sorted(frame["y"].unique()))
    codes = {c: pd.Categorical(frame[c].astype(str)) for c in ("agent", "task")}
    item = pd.Categorical(frame["task"].astype(str) + "\x1f" + frame["item"].astype(str))
    pair = pd.Categorical(frame["agent"].astype(str) + "\x1f" + frame["task"].astype(str))
    y = np.searchsorted(np.array(levels), frame["y"].to_numpy())
    samples = frame["sample"].astype(str).tolist() if "sample" in frame else [str(i) for i in range(len(frame))]
    return Design(list(codes["agent"].categories), list(codes["task"].categories),
                  [c.split("\x1f", 1)[1] for c in item.categories], list(pair.categories),
                  codes["agent"].codes.astype(int), codes["task"].codes.astype(int), item.codes.astype(int),
                  pair.codes.astype(int), y.astype(int), levels, samples)


def identification(d: Design, effects: tuple[str, ...]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Which effects the data can tell apart: ({'agent': agent, identified, why; 'task': ...}, notes).

    With task effects, an agent is identified only when its connected group of the agent-task graph holds
    another agent, and that group is the one of most samples among such groups; every other agent and task is
    `no, prior only` (a design where no two agents share a task flags every agent); without task effects every
    agent is identified. Items answered by one agent only are
    counted in the notes (their effect is that agent's result on them)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    notes: list[str] = []
    found = {"agent": pd.DataFrame({"agent": d.agents, "identified": "yes", "why": ""}),
             "task": pd.DataFrame({"task": d.tasks, "identified": "yes", "why": ""})}
    if "task" in effects:
        n_agents = len(d.agents)  # the graph's nodes: the agents, then the tasks
        size = n_agents + len(d.tasks)
        graph = coo_matrix((np.ones(len(d.agent)), (d.agent, n_agents + d.task)), shape=(size, size))
        _, group = connected_components(graph, directed=False)
        agents_in_group = np.bincount(group[:n_agents], minlength=group.max() + 1)
        shared = agents_in_group >= 2  # a group whose tasks another agent also answered
        samples = np.bincount(group[d.agent], minlength=group.max() + 1)
        main = int(np.argmax(np.where(shared, samples, -1))) if shared.any() else -1  # most samples, >= 2 agents
        for kind, codes, others, other_names in (("agent", d.agent, d.task, d.tasks),
                                                 ("task", d.task, d.agent, d.agents)):
            offset = 0 if kind == "agent" else n_agents
            for k in np.flatnonzero(group[offset:offset + len(getattr(d, kind + "s"))] != main):
                partners = ", ".join(other_names[j] for j in np.unique(others[codes == k]))
                if kind == "agent":
                    mates = [d.agents[j] for j in np.flatnonzero(group[:n_agents] == group[k]) if j != k]
                    why = (f"shares {partners} only with {', '.join(mates)}, on no task of the other agents: compared "
                           "with them alone; against the rest its effect and the tasks' are split by the priors alone"
                           if mates else f"alone on {partners}: its effect and the task's are split by the priors "
                           "alone")
                else:
                    why = (f"answered only by {partners}, who answered no task of the other agents: split from the "
                           "agents' effects by the priors alone")
                found[kind].loc[k, ["identified", "why"]] = [NOT_IDENTIFIED, why]
        lost = found["agent"]["identified"].ne("yes")
        if lost.any():
            notes.append(f"{lost.sum()} agent(s) cannot be compared with the main group of agents (those linked by "
                         "shared tasks with the most samples): no agent of that group answered their tasks (their "
                         "rows say 'identified: no, prior only' and whom they share tasks with; they are not "
                         "findings): " + ", ".join(found["agent"].loc[lost, "agent"]) + ".")
    if "item" in effects:
        answered = pd.Series(d.agent).groupby(d.item).nunique()
        if (answered == 1).any():
            notes.append(f"{int((answered == 1).sum())} of {len(answered)} item(s) were answered by one agent only: "
                         "their effect is that agent's result on them, not the item's difficulty.")
    separated(d, found["agent"], notes)
    return found, notes


ONE_SIDED = "one side only, the other the prior's"


def separated(d: Design, agents: pd.DataFrame, notes: list[str]) -> None:
    """Flag, in `agents` (in place), each agent whose every outcome is at the top level (or every one at the
    bottom): complete separation, so the likelihood bounds its effect on one side only and the prior alone sets
    the other (its interval and p say more about the prior than about the agent); named in `notes`."""
    top = len(d.levels) - 1
    for k in range(len(d.agents)):
        y = d.y[d.agent == k]
        if not len(y) or agents.loc[k, "identified"] != "yes" or not (y.min() == top or y.max() == 0):
            continue
        side = "a pass (the top grade)" if y.min() == top else "a fail (the bottom grade)"
        agents.loc[k, ["identified", "why"]] = [ONE_SIDED, f"every one of its {len(y)} outcomes is {side}: the data "
                                                f"bound its effect on one side only"]
    flagged = agents.loc[agents["identified"] == ONE_SIDED, "agent"].tolist()
    if flagged:
        notes.append(f"{len(flagged)} agent(s) passed (or failed) every sample: their effect is bounded by the data "
                     "on one side only, the prior sets the other (complete separation; their rows say so): "
                     + ", ".join(flagged) + ".")


def build_model(d: Design, effects: tuple[str, ...], interaction: bool, graded: bool, priors: Priors,
                coding: dict[str, bool] | None = None):
    """The PyMC model (see the module docstring). Pass-fail is fitted as binomial counts of the samples sharing
    (agent, item): the same posterior as one Bernoulli per sample, at a fraction of the cost. Every array read
    from the data (indices, counts, outcomes, the cutpoints' prior means) is a `pm.Data` and every level set a
    coordinate, so the model's graph is the same for any data of one structure and its compiled form is reused
    (`referee.models.compiled.sample_reused`)."""
    import pymc as pm

    coding = codings(d, effects) if coding is None else coding
    coords = {"agent": d.agents, "task": d.tasks, "item": list(range(len(d.items))), "pair": d.pairs}
    if graded:
        coords["cutpoint"] = list(range(len(d.levels) - 1))
    with pm.Model(coords=coords) as model:
        if graded:
            cut_means = pm.Data("cutpoint_prior_mean", np.linspace(-2, 2, len(d.levels) - 1), dims="cutpoint")
            cuts = pm.Normal("cutpoints", mu=cut_means, sigma=priors.cutpoint_sd, dims="cutpoint",
                             transform=pm.distributions.transforms.ordered)
            eta = 0.0
            codes = {"agent": d.agent, "task": d.task, "item": d.item, "pair": d.pair}
        else:
            cells = pass_fail_cells(d)
            eta = pm.Normal("mu", 0.0, priors.intercept_sd)
            codes = cells
        for e, kind, _ in effect_blocks(d, effects, interaction, coding):
            index = pm.Data(f"{e}_index", codes[e].astype(np.int64))
            sigma = pm.HalfNormal(f"sigma_{e}", priors.group_sd)
            if kind == "centred":
                effect = pm.ZeroSumNormal(f"{e}_effect", sigma=sigma, dims=e)
            elif kind == "zero-sum":
                effect = pm.Deterministic(f"{e}_effect", sigma * pm.ZeroSumNormal(f"z_{e}", sigma=1.0, dims=e),
                                          dims=e)
            else:
                z = pm.Normal(f"z_{e}", 0.0, 1.0, dims=e)
                effect = pm.Deterministic(f"{e}_effect", sigma * z, dims=e)
            eta = eta + effect[index]
        if graded:
            grade = pm.Data("grade", d.y.astype(np.int64))  # PyMC's OrderedLogistic, as a leaner graph
            pm.CustomDist("y", eta, cuts, logp=ordered_logistic_logp, dtype="int64", observed=grade)
        else:
            pm.Binomial("y", n=pm.Data("trials", cells["trials"]), logit_p=eta,
                        observed=pm.Data("passes", cells["passes"]))
    return model


CENTRED_INFORMATION = 25.0  # Fisher information per level (median) from which an effect is coded centred: a level's
# likelihood then has sd 1 / 5 on the logit scale, narrow beside any group scale the data support. At 30 samples a
# level by count alone (about 7.5 at a pass rate of one half) an 8 x 10 x 5 design coded both effects centred and
# diverged in 3 of 5 seeds (issue 85); the information rule codes it non-centred
CENTRED_LEVELS = 8  # and from this many levels (fewer leave their scale loose, a funnel even with rich data: six
# agents coded centred diverged in 7 of 10 seeds of the graded test, non-centred in 6, with 0.95 in none)


def information(codes: np.ndarray, y: np.ndarray, levels: int) -> float:
    """The data's information about one level's effect, the median over the levels: its samples times the
    outcome's variance on the logit scale at the overall rate (p (1 - p) for pass/fail; for a grade, the same at
    the share above the middle grade)."""
    top = max(levels - 1, 1)
    rate = float(np.clip(np.mean(y >= (top + 1) / 2 if levels > 2 else y), 1e-3, 1 - 1e-3))
    return float(np.median(np.bincount(codes))) * rate * (1 - rate)


def centred(codes: np.ndarray, y: np.ndarray, levels: int) -> bool:
    """Whether effects over the levels in `codes` (one per sample, outcomes `y` of `levels` grades) are coded
    centred: when there are CENTRED_LEVELS levels or more and the data's `information` per level reaches
    CENTRED_INFORMATION, the data pin each effect and its scale, and a centred coding mixes best; otherwise the
    effects and their scale form a funnel, which the non-centred coding (sigma times a standard zero-sum normal)
    removes."""
    return len(np.bincount(codes)) >= CENTRED_LEVELS and information(codes, y, levels) >= CENTRED_INFORMATION


def codings(d: Design, effects: tuple[str, ...]) -> dict[str, bool]:
    """{effect: coded centred} of the agent and task effects in `effects`, by `centred`."""
    return {e: centred(getattr(d, e), d.y, len(d.levels)) for e in ("agent", "task") if e in effects}


def _draws(idata, name: str) -> np.ndarray | None:
    """A posterior variable's draws as (chain, draw, ...) floats, None when the model has none."""
    return idata.posterior[name].to_numpy() if name in idata.posterior else None


def linear_predictor(idata, d: Design, effects: tuple[str, ...], interaction: bool, chain: int) -> np.ndarray:
    """eta of one chain per draw and sample: (draw, sample), float64."""
    mu = _draws(idata, "mu")
    eta = np.zeros((idata.posterior.sizes["draw"], len(d.y))) + (mu[chain][:, None] if mu is not None else 0.0)
    for e in effects + (("pair",) if interaction else ()):
        drawn = _draws(idata, f"{e}_effect")
        if drawn is not None:  # an effect over one level (one task) is not modelled: it is 0
            eta += drawn[chain][:, getattr(d, e)]
    return eta


def pointwise_loglik(idata, d: Design, effects: tuple[str, ...], interaction: bool, graded: bool) -> np.ndarray:
    """Each sample's log-likelihood per draw (chain, draw, sample), float32, computed a chain at a time: one
    Bernoulli per sample (never per aggregated cell), or the ordered logistic's probability of the sample's
    grade."""
    from scipy.special import expit, log_expit

    post = idata.posterior
    out = np.empty((post.sizes["chain"], post.sizes["draw"], len(d.y)), np.float32)
    cuts = _draws(idata, "cutpoints") if graded else None  # (chain, draw, K - 1)
    for chain in range(post.sizes["chain"]):
        eta = linear_predictor(idata, d, effects, interaction, chain)
        if not graded:
            out[chain] = np.where(d.y == 1, log_expit(eta), log_expit(-eta))
            continue
        edges = np.concatenate([np.full((len(eta), 1), -np.inf), cuts[chain], np.full((len(eta), 1), np.inf)], 1)
        lower, upper = edges[:, d.y], edges[:, d.y + 1]  # the grade's cutpoints below and above
        out[chain] = np.log(np.clip(expit(eta - lower) - expit(eta - upper), 1e-300, None))
    return out


@dataclass
class OutcomeFit(FitResult):
    """A fitted outcome model (the `referee.models.fit.FitResult` contract): `idata` the posterior with the
    per-sample `log_likelihood` group, `summary` every parameter's posterior summary, `agents` and `tasks` the
    effects on the logit and the probability scale with their identification, `priors` the priors as fitted,
    `effects`, `interaction`, `graded`, `levels`. `table()` is `agents`."""

    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    agents: pd.DataFrame = field(default_factory=pd.DataFrame)
    tasks: pd.DataFrame = field(default_factory=pd.DataFrame)
    priors: pd.DataFrame = field(default_factory=pd.DataFrame)
    effects: tuple = ()
    interaction: bool = False
    graded: bool = False
    levels: tuple = ()
    design: Design | None = None

    def table(self) -> pd.DataFrame:
        """The agents: agent, n, raw, effect, hdi_low, hdi_high (logit deviation from the average agent), p,
        p_low, p_high (the probability of a pass, or the expected grade as a fraction of the top, for the agent
        on the average task and item), identified, why."""
        return self.agents

    @property
    def scale(self) -> str:
        """What `p` measures, for captions and axes: the expected grade (as a fraction of the top grade) or the
        probability of a pass."""
        return "expected grade (fraction of the top)" if self.graded else "probability of a pass"


def fit_outcomes(frame: pd.DataFrame, effects: str = "crossed", interaction: bool = False,
                 likelihood: str | None = None, draws: int = OUTCOME_DRAWS, tune: int = OUTCOME_TUNE,
                 chains: int = CHAINS, seed: int = 0, sampler: str = "auto", priors: Priors = Priors()
                 ) -> OutcomeFit:
    """Fit one model of the ladder to per-sample outcomes.

    Parameters
    ----------
    frame : agent, task, item, y (0/1 for pass-fail; a grade's value for graded), optional sample (its name).
    effects : one of EFFECTS ('agent', 'agent+task', 'crossed'); interaction : add agent x task effects.
    likelihood : 'pass-fail' or 'graded' (default: pass-fail when every y is 0 or 1).
    draws, tune, chains, seed, sampler : for `referee.models.fit.sample` (nutpie by default).

    Returns
    -------
    OutcomeFit; raises ValueError before any compile or draw when the data cannot support the model.
    """
    check_outcomes(frame, effects, likelihood)
    graded = (likelihood or ("pass-fail" if set(frame["y"].unique()) <= {0, 1} else "graded")) == "graded"
    names = EFFECTS[effects]
    d = design(frame)
    modelled = tuple(e for e in names if len(getattr(d, e + "s")) > 1)  # one task (or agent): its effect is 0
    found, notes = identification(d, names)
    notes.insert(0, prior_predictive(priors, modelled, interaction, graded, seed))
    coding = codings(d, names)

    def attempt(chosen: dict, n: int = draws) -> _Attempt:  # one fit under a coding, n draws a chain
        return _sample_coded(d, names, interaction, graded, priors, chosen, modelled, n, tune, chains, seed, sampler)

    fit, coding = converged_fit(attempt, coding, modelled, draws, extend=draws >= OUTCOME_DRAWS)
    notes += fit.notes
    for w in fit.warned:  # only the fit that stands speaks to the caller
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    idata, diagnostics, var_names = fit.idata, fit.diagnostics, fit.var_names
    diagnostics["coding"] = {e: "centred" if c else "non-centred" for e, c in coding.items()}
    loglik = pointwise_loglik(idata, d, names, interaction, graded)
    import xarray as xr

    idata.add_groups({"log_likelihood": xr.Dataset({"y": (("chain", "draw", "sample"), loglik)},
                                                   coords={"chain": idata.posterior["chain"],
                                                           "draw": idata.posterior["draw"],
                                                           "sample": d.samples})})
    summary = summary_table(idata, var_names, hdi_prob=HDI)
    agents = _effect_table(idata, d, "agent", graded).merge(found["agent"], on="agent")
    tasks = _effect_table(idata, d, "task", graded).merge(found["task"], on="task") if "task" in names \
        else pd.DataFrame()
    return OutcomeFit(model="graded" if graded else "pass-fail", diagnostics=diagnostics, notes=notes, idata=idata,
                      summary=summary, agents=agents, tasks=tasks,
                      priors=priors.table(modelled, graded, interaction), effects=names, interaction=interaction,
                      graded=graded, levels=d.levels, design=d)


def check_outcomes(frame: pd.DataFrame, effects: str, likelihood: str | None) -> None:
    """ValueError, before any compile or draw, when `frame` cannot support the model: an unknown ladder step or
    likelihood, no samples, one agent only, y that is not 0/1 under pass-fail, or a graded y with one level."""
    if effects not in EFFECTS:
        raise ValueError(f"effects must be one of {list(EFFECTS)}, got {effects!r}")
    if likelihood is not None and likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {list(LIKELIHOODS)}, got {likelihood!r}")
    if frame.empty:
        raise ValueError("no scored sample to model")
    if frame["agent"].nunique() < 2:
        raise ValueError(f"one agent only ({frame['agent'].iloc[0]!r}): agent effects need two or more")
    values = set(frame["y"].unique())
    if likelihood == "pass-fail" and not values <= {0, 1}:
        raise ValueError(f"pass-fail needs every outcome 0 or 1; these scores take {len(values)} values "
                         f"(e.g. {', '.join(f'{float(v):g}' for v in sorted(values)[:4])}): fit them as graded")
    if len(values) < 2:
        raise ValueError(f"every sample has the same outcome ({next(iter(values))}): nothing to model")


def _graded_values(d: Design) -> np.ndarray:
    """Each level's value as a fraction of the top level (pass-fail: 0 and 1)."""
    return np.array(d.levels, float) / (max(d.levels) or 1)


def _probability(eta: np.ndarray, idata, d: Design, graded: bool) -> np.ndarray:
    """The probability of a pass (mu added), or the expected grade as a fraction of the top level, at linear
    predictor `eta` (draws, n) without mu."""
    from scipy.special import expit

    if not graded:
        return expit(eta + _draws(idata, "mu").reshape(-1, 1))
    cuts = _draws(idata, "cutpoints").reshape(-1, len(d.levels) - 1)
    above = expit(eta[:, :, None] - cuts[:, None, :])  # P(y > k) for each cutpoint k
    values = _graded_values(d)
    return values[0] + (above * np.diff(values)[None, None, :]).sum(-1)


def _intervals(draws: np.ndarray) -> np.ndarray:
    """The HDI_PROB highest-density interval of each column of `draws` (draws, n): (n, 2)."""
    import arviz as az

    return az.hdi(draws[None], hdi_prob=HDI)


def _effect_table(idata, d: Design, kind: str, graded: bool) -> pd.DataFrame:
    """One row per agent (or task): n, raw (mean outcome as a fraction of the top level), effect with its HDI,
    and p with its HDI at the average of the other effects (items and interaction at 0)."""
    names = getattr(d, kind + "s")
    codes = getattr(d, kind)
    drawn = _draws(idata, f"{kind}_effect")  # None: one level, not modelled, its effect 0 by construction
    size = idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"]
    draws = np.zeros((size, len(names))) if drawn is None else drawn.reshape(-1, len(names))
    prob = _probability(draws, idata, d, graded)
    n = np.bincount(codes, minlength=len(names))
    raw = np.bincount(codes, _graded_values(d)[d.y], minlength=len(names)) / n
    hdi, p_hdi = _intervals(draws), _intervals(prob)
    return pd.DataFrame({kind: names, "n": n, "raw": raw, "effect": draws.mean(0), "hdi_low": hdi[:, 0],
                         "hdi_high": hdi[:, 1], "p": prob.mean(0), "p_low": p_hdi[:, 0], "p_high": p_hdi[:, 1]})


@dataclass
class _Attempt:
    """One fit under one coding, with its notes and the warnings it raised (held until it is known to stand)."""

    idata: object
    diagnostics: dict
    var_names: list
    notes: list
    warned: list


def _sample_coded(d: Design, names: tuple[str, ...], interaction: bool, graded: bool, priors: Priors,
                  coding: dict[str, bool], modelled: tuple[str, ...], draws: int, tune: int, chains: int, seed: int,
                  sampler: str) -> _Attempt:
    """The model with the agent and task effects coded as `coding` says, sampled; warnings recorded, not raised."""
    model = build_model(d, names, interaction, graded, priors, coding)
    density = None if graded else pass_fail_density(d, names, interaction, priors, coding)  # sampled without a compile
    var_names = [v for v in ["mu", "cutpoints"] + [f"sigma_{e}" for e in modelled] + [f"{e}_effect" for e in modelled]
                 + (["sigma_pair", "pair_effect"] if interaction else []) if v in model.named_vars]
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        with collect_notes(notes):
            idata, diagnostics = sample(model, var_names, draws, tune, chains, seed, sampler, low_rank=True,
                                        target_accept=GRADED_TARGET_ACCEPT if graded else TARGET_ACCEPT, reuse=True,
                                        density=density)
    return _Attempt(idata, diagnostics, var_names, notes, list(warned))


def prior_predictive(priors: Priors, effects: tuple[str, ...], interaction: bool, graded: bool, seed: int,
                     n: int = 4000) -> str:
    """The prior predictive check as a sentence: the 5-95 % range the priors give an agent's accuracy on an
    average task (drawn in numpy from the priors themselves), and how often they put it below 1 % or above 99 %."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    mu = rng.normal(0, priors.intercept_sd, n) if not graded else rng.normal(0, priors.cutpoint_sd, n)
    agent = np.abs(rng.normal(0, priors.group_sd, n)) * rng.normal(size=n)
    p = expit(mu + agent)
    low, high = np.quantile(p, [0.05, 0.95])
    extreme = float(((p < 0.01) | (p > 0.99)).mean())
    return (f"Priors ({', '.join(f'{r.parameter} ~ {r.prior}' for r in priors.table(effects, graded, interaction).itertuples())}): "
            f"the prior predictive puts an agent's {'expected grade' if graded else 'accuracy'} on an average task "
            f"between {low:.2f} and {high:.2f} in 90 % of draws ({extreme:.0%} below 0.01 or above 0.99).")


def compare_ladder(fits: dict[str, OutcomeFit]) -> tuple[pd.DataFrame, list[str]]:
    """PSIS-LOO and WAIC of each fit, per sample, compared (ArviZ): one row per (criterion, model) with rank,
    elpd, p (effective parameters), elpd_diff, dse (its standard error), weight, warning; and notes naming
    the preferred model and each sample whose Pareto k exceeds 0.7. Each criterion is computed once per fit."""
    import warnings

    import arviz as az

    tables, notes = [], []
    unreliable: dict[str, int] = {}  # model -> samples whose Pareto k exceeds 0.7
    for criterion, compute in (("loo", az.loo), ("waic", az.waic)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found = {name: compute(f.idata, pointwise=True) for name, f in fits.items()}
            table = az.compare(found, ic=criterion, scale="log")
        table = table.rename(columns={f"elpd_{criterion}": "elpd", f"p_{criterion}": "p"}).reset_index(names="model")
        table.insert(0, "criterion", criterion)
        tables.append(table[["criterion", "model", "rank", "elpd", "p", "elpd_diff", "se", "dse", "weight",
                             "warning"]])
        if criterion == "waic" and any("posterior variance of the log predictive" in str(w.message) for w in caught):
            notes.append("WAIC: the posterior variance of some samples' log predictive density exceeds 0.4 "
                         "(ArviZ); read PSIS-LOO first.")
        if criterion == "loo":
            for name, loo in found.items():
                high = np.flatnonzero(loo.pareto_k.to_numpy() > 0.7)
                if len(high):
                    unreliable[name] = len(high)
                    shown = [fits[name].design.samples[i] for i in high[:10]]
                    notes.append(f"{name}: {len(high)} sample(s) with Pareto k above 0.7 (PSIS-LOO unreliable for "
                                 "them): " + ", ".join(shown) + (" ..." if len(high) > 10 else "") + ".")
    table = pd.concat(tables, ignore_index=True)
    best = table.loc[(table["criterion"] == "loo") & (table["rank"] == 0), "model"].iloc[0]
    runner_up = table[(table["criterion"] == "loo") & (table["rank"] == 1)]
    if len(runner_up):
        diff, dse = float(runner_up["elpd_diff"].iloc[0]), float(runner_up["dse"].iloc[0])
        behind = f"{runner_up['model'].iloc[0]} is {diff:.1f} elpd behind (standard error {dse:.1f})"
        if unreliable:  # PSIS-LOO's own diagnostic says its estimate cannot be trusted: no verdict from it
            notes.insert(0, f"PSIS-LOO ranks {best} first ({behind}) but gives no verdict: "
                         + ", ".join(f"{n} sample(s) of {m}" for m, n in unreliable.items())
                         + " have Pareto k above 0.7, where its estimate is unreliable; compare by K-fold "
                         "cross-validation (refitting without each fold) before choosing.")
        else:
            verdict = "clearly" if diff > 2 * dse else "not clearly (within two standard errors)"
            notes.insert(0, f"PSIS-LOO prefers {best}, {verdict}: {behind}.")
    return table, notes


def cell_table(fit: OutcomeFit) -> pd.DataFrame:
    """Accuracy per agent and task, raw beside pooled: agent, task, n, raw (mean outcome as a fraction of the
    top level), accuracy, accuracy_low, accuracy_high (the model's partially pooled accuracy over the task's items,
    each item with its posterior effect, 94 % HDI: comparable with raw), p_average_item and its HDI (the same at
    an average item, item effect 0: more extreme than the accuracy over items; the task effect is 0 where the
    model has none), identified."""
    d = fit.design
    cells = pd.DataFrame({"a": d.agent, "t": d.task, "p": d.pair, "v": _graded_values(d)[d.y]})
    cells = cells.groupby(["a", "t", "p"])["v"].agg(n="size", raw="mean").reset_index()
    a, t = cells["a"].to_numpy(), cells["t"].to_numpy()
    eta = _draws(fit.idata, "agent_effect").reshape(-1, len(d.agents))[:, a]
    if (task := _draws(fit.idata, "task_effect")) is not None:  # None with one task: no task effect, 0
        eta = eta + task.reshape(-1, len(d.tasks))[:, t]
    if fit.interaction:
        eta = eta + _draws(fit.idata, "pair_effect").reshape(-1, len(d.pairs))[:, cells["p"].to_numpy()]
    prob = _probability(eta, fit.idata, d, fit.graded)
    marginal = _over_items(eta, fit, t)
    hdi, over = _intervals(prob), _intervals(marginal)
    identified = fit.agents["identified"].to_numpy()  # in the design's agent order
    return pd.DataFrame({"agent": np.array(d.agents)[a], "task": np.array(d.tasks)[t], "n": cells["n"],
                         "raw": cells["raw"], "accuracy": marginal.mean(0), "accuracy_low": over[:, 0],
                         "accuracy_high": over[:, 1], "p_average_item": prob.mean(0), "p_average_item_low": hdi[:, 0],
                         "p_average_item_high": hdi[:, 1], "identified": identified[a]})


def _over_items(eta: np.ndarray, fit: OutcomeFit, tasks: np.ndarray) -> np.ndarray:
    """Per draw and cell, the probability of a pass (or the expected grade) averaged over the items of the cell's
    task, each item with its own posterior effect: the accuracy a reader quotes beside the raw rate (at an
    average item, item effect 0, the logistic makes it more extreme). Without item effects it is that value.
    eta (draws, cells) without the item effect; `tasks` each cell's task code."""
    d = fit.design
    items = _draws(fit.idata, "item_effect") if "item" in fit.effects else None
    if items is None:
        return _probability(eta, fit.idata, d, fit.graded)
    items = items.reshape(-1, len(d.items))
    out = np.empty_like(eta)
    for task in np.unique(tasks):
        of_task = np.unique(d.item[d.task == task])
        for j in np.flatnonzero(tasks == task):
            out[:, j] = _probability(eta[:, [j]] + items[:, of_task], fit.idata, d, fit.graded).mean(1)
    return out
