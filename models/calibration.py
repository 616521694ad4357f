"""Simulation-based calibration (Talts et al. 2018, "Validating Bayesian inference algorithms with
simulation-based calibration") of every Bayesian model referee fits.

For a model and a fixed design (agents, scenarios, tags, pairings of its `FAMILIES` entry), one simulation
draws every parameter from the model's own prior (`pymc.draw` on the model itself; the ordered cutpoints by
rejection, as their ordered transform truncates the Normal prior), simulates data from the model's
likelihood at those values, fits the model to the data, and records, for each scalar element of the ranked
parameters, the rank of the true value among L thinned posterior draws and whether the 50 % and 94 % HDIs
hold it. If the sampler and the model are right, ranks are uniform on 0..L and the HDIs cover at their
nominal rates; `summarise` tests both per parameter group.

Families: 'bayes-bt' (`referee.models.ratings.bayes_bt`), 'tag-effects' and 'baseline-contrast'
(`referee.models.scores.beta_regression`), 'measurement-layout' (`referee.models.scores.measurement_layout`) and
'audit-regression' (`referee.models.validity.checks.build_assignment_regression`) and 'pass-fail'
(`referee.models.scores.outcome_glm`, the crossed model: 4 agents and more, 3 tasks of 6 items, 2 epochs).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats

from referee.models.fit import heard, sample

RANK_DRAWS = 99  # posterior draws each true value is ranked among (ranks 0..99: 100 equally likely values)
P_MIN = 0.001  # a rank histogram fails below this chi-square p-value
COVERAGE_SE = 3.0  # a coverage fails outside nominal +/- 3 binomial standard errors (per simulation)
BINS = 10


@dataclass(frozen=True)
class Family:
    """One model family's calibration: its design, model, prior draw's variables, and data simulator.

    design(rng, size) -> design dict; build(design, y) -> pymc.Model (y None: placeholder data); ranked: the
    variables whose elements are ranked; simulate(rng, design, truth) -> y; diagnosed: the variables the
    convergence diagnostics cover."""

    name: str
    design: Callable
    build: Callable
    ranked: tuple[str, ...]
    simulate: Callable
    diagnosed: tuple[str, ...]


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


# ---------------------------------------------------------------------------------------------- bayes-bt
def _bt_design(rng, size: int) -> dict:
    n = 4 + size
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    return {"agents": [f"agent_{i}" for i in range(n)], "pairs": pairs, "games": 30}  # 30 games per pair: all rich


def _bt_build(design: dict, y):
    from referee.models.ratings.bayes_bt import build_model

    if y is None:  # placeholder counts for the prior draw: every pair split evenly (the same games per agent)
        n = len(design["agents"])
        y = np.full((n, n), design["games"] / 2.0)
        np.fill_diagonal(y, 0.0)
    return build_model(y, design["agents"])


def _bt_simulate(rng, design: dict, truth: dict) -> np.ndarray:
    n, mu = len(design["agents"]), truth["mu"]
    W = np.zeros((n, n))
    for i, j in design["pairs"]:
        wins = rng.binomial(design["games"], _sigmoid(mu[i] - mu[j]))
        W[i, j], W[j, i] = wins, design["games"] - wins
    return W


# ---------------------------------------------------------------------------------------------- beta regressions
def _score_design(rng, size: int) -> dict:
    agents, scenarios, repetitions = 3 + size, 8, 2
    while True:  # tags of full rank with the intercept, each present in and absent from >= 3 scenarios
        X = (rng.random((scenarios, 2)) < 0.5).astype(float)
        if np.linalg.matrix_rank(np.c_[np.ones(scenarios), X]) == 3 and (np.minimum(X.sum(0), scenarios - X.sum(0)) >= 3).all():
            break
    cells = [(a, s) for a in range(agents) for s in range(scenarios) for _ in range(repetitions)]
    data = pd.DataFrame(cells, columns=["agent_idx", "scenario_idx"])
    return {"agents": [f"agent_{i}" for i in range(agents)], "scenarios": [f"s{i}" for i in range(scenarios)],
            "tags": ["t0", "t1"], "X": X, "data": data}


def _with_y(design: dict, y) -> pd.DataFrame:
    data = design["data"].copy()
    data["score_norm"] = 0.5 if y is None else y
    return data


def _tag_build(design: dict, y):
    from referee.models.scores.beta_regression import build_tag_effects

    return build_tag_effects(_with_y(design, y), design["agents"], design["scenarios"], design["tags"], design["X"])


def _tag_simulate(rng, design: dict, truth: dict) -> np.ndarray:
    from referee.models.scores.beta_regression import draw_ordered_beta

    a, s = design["data"]["agent_idx"].to_numpy(), design["data"]["scenario_idx"].to_numpy()
    X = design["X"][s]
    eta = (truth["intercept"] + X @ truth["beta"] + (truth["slope"][a] * X).sum(axis=1)
           + truth["agent_intercept"][a])
    return draw_ordered_beta(rng, eta, *truth["cutpoints"], truth["phi"])


def _contrast_build(design: dict, y):
    from referee.models.scores.beta_regression import build_baseline_contrast

    return build_baseline_contrast(_with_y(design, y), design["agents"], design["scenarios"], design["agents"][0])


def _contrast_simulate(rng, design: dict, truth: dict) -> np.ndarray:
    from referee.models.scores.beta_regression import draw_ordered_beta

    a, s = design["data"]["agent_idx"].to_numpy(), design["data"]["scenario_idx"].to_numpy()
    eta = truth["alpha"] + truth["gamma_all"][a] + truth["scenario_intercept"][s]
    return draw_ordered_beta(rng, eta, *truth["cutpoints"], truth["phi"])


# ---------------------------------------------------------------------------------------------- layout
def _layout_build(design: dict, y):
    from referee.models.scores.measurement_layout import build_layout

    data = _with_y(design, y)
    X_obs = design["X"][data["scenario_idx"].to_numpy()]
    return build_layout(data["agent_idx"].to_numpy(), X_obs, data["score_norm"].to_numpy(float), design["agents"],
                        design["tags"])


def _layout_simulate(rng, design: dict, truth: dict) -> np.ndarray:
    from referee.models.scores.beta_regression import draw_ordered_beta
    from referee.models.scores.measurement_layout import success_mean

    a, s = design["data"]["agent_idx"].to_numpy(), design["data"]["scenario_idx"].to_numpy()
    log_c = -np.logaddexp(0.0, -truth["theta"])  # log sigmoid
    mu = success_mean((log_c[a] * design["X"][s]).sum(axis=1), truth["base_chance"][a])
    return draw_ordered_beta(rng, np.log(mu) - np.log1p(-mu), *truth["cutpoints"], truth["sample_size"][a])


# ---------------------------------------------------------------------------------------------- audit regression
def _audit_design(rng, size: int) -> dict:
    n = 12 + 4 * size
    assign = np.arange(n) % 3
    return {"x": rng.normal(size=n), "dummies": np.eye(3)[assign][:, 1:]}


def _audit_build(design: dict, y):
    from referee.models.validity.checks import build_assignment_regression

    return build_assignment_regression(design["x"], design["dummies"], np.zeros(len(design["x"])) if y is None else y)


def _audit_simulate(rng, design: dict, truth: dict) -> np.ndarray:
    mean = truth["intercept"] + truth["slope"] * design["x"] + design["dummies"] @ truth["assignment"]
    return rng.normal(mean, truth["sigma"])


# ---------------------------------------------------------------------------------------------- pass-fail
def _outcome_design(rng, size: int) -> dict:
    rows = [(f"agent_{a}", f"task_{t}", str(i), e) for a in range(4 + size) for t in range(3) for i in range(6)
            for e in range(2)]
    return {"frame": pd.DataFrame(rows, columns=["agent", "task", "item", "epoch"])}


def _outcome_build(design: dict, y):
    from referee.models.scores.outcome_glm import EFFECTS, Priors, build_model, design as code

    frame = design["frame"]
    frame = frame.assign(y=np.arange(len(frame)) % 2 if y is None else y)  # placeholder: both outcomes
    return build_model(code(frame), EFFECTS["crossed"], False, False, Priors())


def _outcome_simulate(rng, design: dict, truth: dict) -> np.ndarray:
    from referee.models.scores.outcome_glm import design as code

    d = code(design["frame"].assign(y=0))
    eta = truth["mu"] + truth["agent_effect"][d.agent] + truth["task_effect"][d.task] + truth["item_effect"][d.item]
    return rng.binomial(1, _sigmoid(eta))


FAMILIES = {
    "bayes-bt": Family("bayes-bt", _bt_design, _bt_build, ("sigma", "mu"), _bt_simulate, ("sigma", "mu")),
    "tag-effects": Family("tag-effects", _score_design, _tag_build,
                          ("intercept", "beta", "slope_sd", "slope", "sigma_agent", "agent_intercept", "phi",
                           "cutpoints"), _tag_simulate,
                          ("intercept", "beta", "slope_sd", "slope", "sigma_agent", "phi", "cutpoints")),
    "baseline-contrast": Family("baseline-contrast", _score_design, _contrast_build,
                                ("alpha", "gamma", "sigma_scenario", "scenario_intercept", "phi", "cutpoints"),
                                _contrast_simulate, ("alpha", "gamma", "sigma_scenario", "phi", "cutpoints")),
    "measurement-layout": Family("measurement-layout", _score_design, _layout_build,
                                 ("demand_mean", "demand_spread", "capability", "base_chance", "sample_size",
                                  "cutpoints"), _layout_simulate,
                                 ("demand_mean", "demand_spread", "theta", "base_chance", "sample_size", "cutpoints")),
    "audit-regression": Family("audit-regression", _audit_design, _audit_build,
                               ("slope", "assignment", "intercept", "sigma"), _audit_simulate,
                               ("slope", "assignment", "intercept", "sigma")),
    "pass-fail": Family("pass-fail", _outcome_design, _outcome_build,
                        ("mu", "sigma_agent", "agent_effect", "sigma_task", "task_effect", "sigma_item", "item_effect"),
                        _outcome_simulate, ("mu", "sigma_agent", "agent_effect", "sigma_task", "task_effect",
                                            "sigma_item", "item_effect")),
}
EXTRA_TRUTH = {"tag-effects": ("gamma_all",), "baseline-contrast": ("gamma_all",), "measurement-layout": ("theta",)}


def prior_draw(model, names: list[str], seed: int) -> dict[str, np.ndarray]:
    """One joint draw of the named variables from the model's prior (`pymc.draw`), redrawn (next seed) until
    any `cutpoints` are ordered: the ordered transform restricts their Normal prior to k1 < k2."""
    import pymc as pm

    present = [n for n in names if n in model.named_vars]
    for attempt in range(1000):
        values = pm.draw([model[n] for n in present], random_seed=np.random.default_rng([seed, attempt]))
        truth = {n: np.asarray(v, float) for n, v in zip(present, values)}
        if "cutpoints" not in truth or truth["cutpoints"][0] < truth["cutpoints"][1]:
            return truth
    raise RuntimeError("no ordered cutpoints in 1000 prior draws")


def _hdi_holds(draws: np.ndarray, value: float, prob: float) -> bool:
    """Whether the `prob` highest-density interval of `draws` (`arviz.hdi`) holds `value`."""
    import arviz as az

    low, high = az.hdi(draws, hdi_prob=prob)
    return bool(low <= value <= high)


def simulate_and_rank(family: str, size: int, design_seed: int, seed: int, draws: int, tune: int, chains: int,
                      sampler: str = "auto") -> dict:
    """One calibration simulation (a sweep task): prior draw, simulated data, fit, ranks.

    family : a key of FAMILIES; size : the design's size (0 is the smallest); design_seed : the design's seed
    (the same in every simulation of a run); seed : this simulation's seed. draws, tune, chains, sampler : the fit.

    Returns {"ranks": DataFrame(group, element, rank, draws, in50, in94), "diagnostics": dict, "warnings":
    ['Category: first line' of each warning raised while fitting]}.
    """
    spec = FAMILIES[family]
    design = spec.design(np.random.default_rng(design_seed), size)
    truth = prior_draw(spec.build(design, None), list(spec.ranked) + list(EXTRA_TRUTH.get(family, ())), seed)
    y = spec.simulate(np.random.default_rng([seed, 1]), design, truth)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # one compiled structure serves every simulation of a family (their data are `pm.Data`)
        idata, diagnostics = sample(spec.build(design, y), list(spec.diagnosed), draws, tune, chains, seed, sampler,
                                    reuse=True)
    rows = []
    for group in spec.ranked:
        posterior = idata.posterior[group].to_numpy()  # (chain, draw, *shape)
        flat = posterior.reshape(posterior.shape[0] * posterior.shape[1], -1)
        keep = np.linspace(0, len(flat) - 1, min(RANK_DRAWS, len(flat))).round().astype(int)
        for element, value in enumerate(np.ravel(truth[group])):
            column = flat[:, element]
            rows.append({"group": group, "element": element, "rank": int((column[keep] < value).sum()),
                         "draws": len(keep), "in50": _hdi_holds(column, value, 0.5),
                         "in94": _hdi_holds(column, value, 0.94)})
    return {"ranks": pd.DataFrame(rows), "diagnostics": diagnostics,
            "warnings": [f"{w.category.__name__}: {str(w.message).splitlines()[0]}" for w in heard(caught)]}


def summarise(ranks: pd.DataFrame, sims: int) -> pd.DataFrame:
    """Per parameter group: ranks (how many), chi-square p-value of the rank histogram's uniformity over BINS
    bins (`rank / (draws + 1)`), coverage of the 50 % and 94 % HDIs, and `passed` (p >= P_MIN and both
    coverages within COVERAGE_SE binomial standard errors of nominal). `ranks` has one row per (sim, group,
    element); `sims` counts the simulations.

    A simulation's elements are not independent (its agents' effects share its draw of their sd), so the
    evidence is counted per simulation: the coverages' standard errors by `sims`, and the chi-square statistic
    divided by the elements per simulation (a design effect of k for k elements that move together, Rao and
    Scott's first-order correction; exact when they are copies, conservative when they are independent)."""
    rows = []
    for group, part in ranks.groupby("group", sort=False):
        fraction = part["rank"] / (part["draws"] + 1)
        counts = np.histogram(fraction, bins=BINS, range=(0, 1))[0]
        per_sim = max(len(part) / sims, 1.0)
        p = float(stats.chi2.sf(stats.chisquare(counts).statistic / per_sim, BINS - 1)) if len(part) >= BINS \
            else np.nan
        cover50, cover94 = float(part["in50"].mean()), float(part["in94"].mean())
        ok50 = abs(cover50 - 0.5) <= COVERAGE_SE * np.sqrt(0.25 / sims)
        ok94 = abs(cover94 - 0.94) <= COVERAGE_SE * np.sqrt(0.94 * 0.06 / sims)
        rows.append({"group": group, "ranks": len(part), "p_uniform": p, "coverage_50": cover50, "coverage_94": cover94,
                     "passed": bool((np.isnan(p) or p >= P_MIN) and ok50 and ok94)})
    return pd.DataFrame(rows)


def expected_band(n: int, bins: int = BINS, level: float = 0.99) -> tuple[float, float]:
    """The central `level` interval of one bin's count when `n` uniform ranks fall into `bins` bins
    (Binomial(n, 1 / bins)): the band a rank histogram's bars should stay inside."""
    lo, hi = stats.binom.interval(level, n, 1.0 / bins)
    return float(lo), float(hi)
