"""Every shipped Bayesian model at contest scale, on its own simulator: the inputs of the convergence
standard (`referee.models.fit.diagnose`: R-hat <= 1.01, bulk and tail ESS >= 400, no divergence).

The scales are those of the papers' data: the 2024 contest's 12 scenarios with 26 agents and 3 repetitions
(the beta regressions, the Measurement Layout and the Bayesian Bradley-Terry fitted to the scenario
comparisons: 11,700 of them), and an EVAL 01 season of 12 agents (the audit's regression). Each model is
fitted exactly as the command line fits it, with the defaults it ships with unless `sampling` overrides
them. Used by tests/test_convergence.py and benchmarks/beta_regression.py.
"""

from __future__ import annotations

import tempfile
import time
from functools import partial
from pathlib import Path

import pandas as pd

from referee.io.catalogue import CONTEST_2024, load_catalogue
from referee.simulators.concordia import cells_frame, simulate_concordia

MODELS = ("tag effects", "tag effects (paper)", "baseline contrast", "measurement layout", "bayes-bt",
          "bayes-bt per game", "audit regression", "pass-fail", "graded")
AGENTS, REPETITIONS = 26, 3


def contest_scores(seed: int = 0, model: str = "additive") -> pd.DataFrame:
    """Simulated normalised scores at contest scale: agent, scenario, repetition, score_norm, game.

    26 agents x the 12 contest scenarios x 3 repetitions = 936 rows, drawn by
    `referee.simulators.concordia.simulate_concordia` (model 'additive' or 'layout') with `seed`.
    """
    catalogue = load_catalogue(CONTEST_2024)
    sim = simulate_concordia(catalogue, n_agents=AGENTS, repetitions=REPETITIONS, seed=seed, model=model)
    cells = cells_frame(sim.truth).rename(columns={"y": "score_norm"})
    return cells.assign(game=cells["scenario"].map(catalogue.scenarios.set_index("scenario")["game"]))


def fit_at_contest_scale(model: str, seed: int = 0, **sampling) -> dict:
    """Fit one of `MODELS` at contest scale and time the fit.

    sampling : draws, tune, chains, sampler (default: the model's own defaults). Returns the fit's
    diagnostics (`referee.models.fit.diagnose`) plus `seconds` (wall time of the fit: building and compiling the
    model, sampling, summarising; not simulating its data) and `model`; raises ValueError for an unknown model.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    data_of, fit = _FITS[model]
    data = data_of(seed)
    start = time.perf_counter()
    diagnostics = fit(data, seed, sampling)
    return dict(diagnostics, seconds=time.perf_counter() - start, model=model)


def _scores(seed: int) -> dict:
    return {"scores": contest_scores(seed), "tags": load_catalogue(CONTEST_2024).tags}


def _tag_effects(data: dict, seed: int, sampling: dict, structure: str = "identified") -> dict:
    from referee.models.scores.beta_regression import fit_tag_effects

    return fit_tag_effects(data["scores"], data["tags"], seed=seed, structure=structure, **sampling).diagnostics


def _contrast(data: dict, seed: int, sampling: dict) -> dict:
    from referee.models.scores.beta_regression import fit_baseline_contrast

    return fit_baseline_contrast(data["scores"], "rational_agent", seed=seed, **sampling).diagnostics


def _layout_data(seed: int) -> dict:
    from referee.run.scores.predictive import demand_matrix

    catalogue = load_catalogue(CONTEST_2024)
    scores = contest_scores(seed, model="layout")
    demands = demand_matrix(scores, catalogue.scenarios, catalogue.tags)
    return {"scores": scores, "demands": demands}


def _layout(data: dict, seed: int, sampling: dict) -> dict:
    from referee.models.scores.measurement_layout import fit_layout

    scores, demands = data["scores"], data["demands"]
    X = demands.reindex(scores["scenario"]).to_numpy(float)
    return fit_layout(scores["agent"], X, scores["score_norm"].to_numpy(), list(demands.columns), seed=seed,
                      **sampling).diagnostics


def _comparisons(seed: int) -> dict:
    from referee.prepare.comparisons import scenario_comparisons

    scores = contest_scores(seed).rename(columns={"score_norm": "score"}).assign(communication=None)
    return {"comparisons": scenario_comparisons(scores)}


def _bayes_bt(data: dict, seed: int, sampling: dict, by: str | None = None) -> dict:
    from referee.run.ratings.ratings import rate

    return rate(data["comparisons"], "bayes-bt", by=by, seed=seed, **sampling).diagnostics


def _season(seed: int) -> dict:
    from referee.io.store import Store
    from referee.run.social.audit import audit_frame
    from referee.simulators.aoa import simulate_aoa, write_aoa

    with tempfile.TemporaryDirectory() as folder:
        paths = write_aoa(simulate_aoa(seed=seed, validity=0.5), Path(folder) / "season")
        with Store(Path(folder) / "audit.duckdb") as store:
            store.ingest([str(p) for p in paths.values()])
            frame, _ = audit_frame(store)
    return {"frame": frame}


def _audit_regression(data: dict, seed: int, sampling: dict) -> dict:
    from referee.models.validity.checks import assignment_luck

    return assignment_luck(data["frame"], "role", "nation_power", seed=seed, sampling=sampling)["bayes_diagnostics"]


def _outcomes(seed: int, grades: int = 2) -> dict:
    from referee.simulators.pass_fail import pass_fail_samples

    # issue 52's design: 12 agents x 8 tasks x 40 items x 2; pass/fail, or `grades` ordered grades (0, 0.5, 1)
    return {"frame": pass_fail_samples(grades=grades, seed=seed)[0]}


def _pass_fail(data: dict, seed: int, sampling: dict, likelihood: str = "pass-fail") -> dict:
    from referee.models.scores.outcome_glm import fit_outcomes

    return fit_outcomes(data["frame"], likelihood=likelihood, seed=seed, **sampling).diagnostics


# model -> (its data from a seed, its fit of that data)
_FITS = {
    "tag effects": (_scores, _tag_effects),
    "tag effects (paper)": (_scores, lambda data, seed, sampling: _tag_effects(data, seed, sampling, "paper")),
    "baseline contrast": (_scores, _contrast),
    "measurement layout": (_layout_data, _layout),
    "bayes-bt": (_comparisons, _bayes_bt),
    "bayes-bt per game": (_comparisons, lambda data, seed, sampling: _bayes_bt(data, seed, sampling, by="game")),
    "audit regression": (_season, _audit_regression),
    "pass-fail": (_outcomes, _pass_fail),
    "graded": (partial(_outcomes, grades=3), partial(_pass_fail, likelihood="graded")),
}
