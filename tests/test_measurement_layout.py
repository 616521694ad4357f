"""Measurement Layouts: recovery of known capabilities, and the predictive comparison on simulated layouts.

Bounded in CI (one small contest); REFEREE_FULL=1 runs a larger one.
"""

import os
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from referee.run.scores.predictive import cell_folds, compare_predictors, demand_matrix
from referee.simulators.concordia import cells_frame, simulate_concordia
from referee.models.scores.measurement_layout import fit_layout
from tests.helpers import synthetic_catalogue

FULL = bool(os.environ.get("REFEREE_FULL"))


def _layout_contest(seed: int, agents: int):
    catalogue = synthetic_catalogue(24, 3, seed)
    games = ["alpha", "beta", "gamma"]
    catalogue.scenarios["game"] = [games[i % 3] for i in range(len(catalogue.scenarios))]
    catalogue.scenarios["mode"] = ["resident" if i % 2 else "visitor" for i in range(len(catalogue.scenarios))]
    sim = simulate_concordia(catalogue, n_agents=agents, repetitions=3, seed=seed, model="layout")
    layout = sim.truth["layout"]
    demands = pd.DataFrame(layout["design"]).T[layout["demands"]]
    cells = cells_frame(sim.truth).rename(columns={"y": "score_norm"})
    return sim, catalogue, demands, cells


@pytest.mark.heavy  # make test-all (issue 65: make test under 20 minutes on 2 cores)
@pytest.mark.bayes
def test_capabilities_are_recovered():
    sim, _, demands, cells = _layout_contest(seed=1, agents=10 if FULL else 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_layout(cells["agent"], demands.reindex(cells["scenario"]).to_numpy(float), cells["score_norm"],
                         list(demands.columns), seed=1)  # the defaults users get
    assert fit.converged, fit.diagnostics  # the fit's own verdict at its defaults, on every seed (issue 53)
    truth = sim.truth["layout"]
    caps = fit.capabilities()
    caps["truth"] = [truth["capability"][a][d] for a, d in zip(caps["agent"], caps["demand"])]
    assert spearmanr(caps["mean"], caps["truth"]).statistic > 0.5
    coverage = ((caps["hdi_low"] <= caps["truth"]) & (caps["truth"] <= caps["hdi_high"])).mean()
    assert coverage >= 0.8  # nominal 94%
    base = fit.parameters("base_chance").set_index("agent")
    base_cover = [(base.loc[a, "hdi_low"] <= v <= base.loc[a, "hdi_high"]) for a, v in truth["base_chance"].items()]
    assert np.mean(base_cover) >= 0.6


def test_contest_demands_are_merged_and_dealiased():
    from referee.run.scores.convergence import contest_scores
    from referee.io.catalogue import CONTEST_2024, load_catalogue
    from referee.models.scores.beta_regression import aliased_tags
    from referee.models.scores.measurement_layout import merge_identical_demands

    catalogue = load_catalogue(CONTEST_2024)
    demands = demand_matrix(contest_scores(0, "layout"), catalogue.scenarios, catalogue.tags)
    X = demands.to_numpy(float)
    columns, names = merge_identical_demands(X, list(demands.columns))
    # the multi-item haggling scenario is the only one with hidden information; the pub substrate is coordination
    assert "hidden information + substrate: haggling_multi_item" in names
    assert "coordination + substrate: pub_coordination" in names
    assert len(columns) == len(names) and np.linalg.matrix_rank(X[:, columns]) == len(columns) - 1
    kept, aliased = aliased_tags(X[:, columns], names, intercept=False)
    # persuasion = the pub, reality-show and state-formation substrates plus the paranoid-boss scenario's tags
    assert list(aliased) == ["leadership + role playing"] and "+1 persuasion" in aliased["leadership + role playing"]
    assert np.linalg.matrix_rank(X[:, columns][:, kept]) == len(kept)


def test_folds_keep_cells_whole_and_test_every_cell_once():
    """Two agents, four scenarios of three repetitions, four folds: every fold holds one whole cell of each
    agent (all three repetitions), and every cell is in exactly one fold."""
    cells = pd.DataFrame({"agent": np.repeat(["a", "b"], 12), "scenario": np.tile(np.repeat(list("wxyz"), 3), 2)})
    fold = pd.Series(cell_folds(cells, 4, seed=0))
    assert (fold.groupby([cells["agent"], cells["scenario"]]).nunique() == 1).all()
    assert (fold.groupby(cells["agent"]).value_counts() == 3).all()  # one scenario of four per agent and fold
    assert sorted(fold.unique()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="at least 2"):
        cell_folds(cells, 1)


def test_demands_are_chosen_on_the_training_rows_only():
    """A tag negatively correlated with score in the training rows is a demand; the same tag is not when only
    the held-out rows would have made it one."""
    from referee.run.scores.predictive import demand_matrix

    scenarios = pd.DataFrame({"scenario": ["s1", "s2", "s3", "s4"], "game": ["x", "x", "y", "y"],
                              "mode": ["resident", "visitor", "resident", "visitor"]})
    tags = pd.DataFrame({"scenario": ["s1", "s3"], "tag": ["hard", "hard"]})
    train = pd.DataFrame({"scenario": ["s1", "s2", "s3", "s4"], "score_norm": [0.1, 0.9, 0.2, 0.8], "agent": "a"})
    held_out = train.assign(score_norm=[0.9, 0.1, 0.8, 0.2])  # the opposite: 'hard' scenarios score high
    assert "hard" in demand_matrix(train, scenarios, tags, select_on=train).columns
    assert "hard" not in demand_matrix(train, scenarios, tags, select_on=held_out).columns


@pytest.mark.heavy  # make test-all (issue 65: make test under 20 minutes on 2 cores)
@pytest.mark.bayes
def test_layout_beats_the_constant_on_its_own_data():
    sim, catalogue, demands, cells = _layout_contest(seed=2, agents=8 if FULL else 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = compare_predictors(cells, demands, folds=2, seed=0, draws=400, tune=400)
    pooled = comp.pooled.set_index("predictor")
    assert pooled.loc["measurement layout", "rmse"] < pooled.loc["constant", "rmse"]
    assert pooled.loc["measurement layout", "r2"] > pooled.loc["constant", "r2"]
    assert set(comp.per_agent["predictor"]) == {"measurement layout", "linear regression", "xgboost", "constant"}
    assert comp.predictions["measurement layout"].between(0, 1).all()
    assert set(comp.included_agents()) <= set(cells["agent"])
    # each row predicted once, by the fold that held it out; R^2 averaged over the two folds with its spread
    assert len(comp.predictions) == len(cells.dropna(subset=["score_norm"])) and set(comp.predictions["fold"]) == {0, 1}
    assert (comp.pooled["folds"] == 2).all() and comp.pooled["r2_sd"].notna().all()
    assert len(comp.fold_diagnostics) == 2


def test_demands_follow_the_paper(sample_store):
    from referee.run.scores.score_models import model_scores
    from referee.io.store import Store

    with Store(sample_store, read_only=True) as store:
        scores, scenarios, tags = model_scores(store)
    demands = demand_matrix(scores, scenarios, tags)
    from referee.run.scores.describe import feature_correlations, scenario_features
    corr = feature_correlations(scores, scenario_features(scenarios, tags))["score"]
    tag_columns = [c for c in demands.columns if not c.startswith("substrate: ") and c != "visitor"]
    assert tag_columns and all(corr[t] < 0 for t in tag_columns)
    assert sum(c.startswith("substrate: ") for c in demands.columns) == 6 and "visitor" in demands.columns
    assert (demands["visitor"] == (scenarios.set_index("scenario")["mode"] == "visitor").reindex(demands.index)).all()
