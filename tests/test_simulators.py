"""The Concordia simulator: what it writes is what the loader reads, and its draws follow its stated model."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from analysis.cli import main
from analysis.scores import normalised_scores
from analysis.simulate.concordia import cells_frame, simulate_concordia, write_concordia
from analysis.store import Store


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_round_trip_through_loader_and_normalisation(tmp_path, contest):
    sim = simulate_concordia(contest, n_agents=4, repetitions=2, seed=7)
    paths = write_concordia(sim, tmp_path / "sim")
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([paths["logs"]], catalogue=paths["catalogue"], strict=True)
        assert (report.read, report.accepted) == (4 * 12 * 2, 4 * 12 * 2)
        scores = normalised_scores(store)
    assert (scores["bounds"] == "theoretical").all()
    truth = cells_frame(json.loads(paths["truth"].read_text()))
    both = scores.merge(truth, on=["agent", "scenario", "repetition"], validate="one_to_one")
    assert len(both) == len(truth)
    np.testing.assert_allclose(both["score_norm"], both["y"], atol=1e-9)
    assert (both["y"] == 0).any() and (both["y"] == 1).any()


def test_same_seed_same_files(tmp_path, contest):
    a = write_concordia(simulate_concordia(contest, n_agents=3, seed=3), tmp_path / "a")
    b = write_concordia(simulate_concordia(contest, n_agents=3, seed=3), tmp_path / "b")
    for f in sorted(a["logs"].iterdir()):
        assert f.read_bytes() == (b["logs"] / f.name).read_bytes()


def test_draws_follow_the_ordered_beta_model(contest):
    # closed form: E[y] = P(y=1) + P(0<y<1) * sigmoid(eta), P(y=0) = 1 - sigmoid(eta - k1)
    sim = simulate_concordia(contest, n_agents=10, repetitions=20, seed=11)
    t = sim.truth
    cells = cells_frame(t)
    eta = cells.apply(lambda r: t["eta"][r.agent][r.scenario], axis=1).to_numpy()
    k1, k2 = t["cutpoints"]
    p0, p1 = 1 - _sigmoid(eta - k1), _sigmoid(eta - k2)
    expected = p1 + (1 - p0 - p1) * _sigmoid(eta)
    n = len(cells)
    assert abs(cells["y"].mean() - expected.mean()) < 4 * cells["y"].std() / np.sqrt(n)
    assert abs((cells["y"] == 0).mean() - p0.mean()) < 4 * np.sqrt(p0.mean() * (1 - p0.mean()) / n)
    # agents' observed means rank like their expected means
    by_agent = cells.assign(expected=expected).groupby("agent")[["y", "expected"]].mean()
    assert spearmanr(by_agent["y"], by_agent["expected"]).statistic > 0.9
    # the baseline's intercept is fixed at zero, and eta is the stated sum of parts
    assert t["agent_intercepts"]["rational_agent"] == 0.0
    a, s = "agent_03", "state_formation_0"
    x = t["design"][s]
    parts = (t["alpha"] + t["agent_intercepts"][a] + t["scenario_intercepts"][s] + t["resident_effect"]
             + sum(x[k] * (t["beta"][k] + t["agent_tag_slopes"][a][k]) for k in t["tags"]))
    assert t["eta"][a][s] == pytest.approx(parts)


def test_cli_simulate_writes_truth(tmp_path):
    assert main(["simulate", "concordia", "--agents", "3", "--repetitions", "1", "--seed", "1",
                 "--out", str(tmp_path / "o")]) == 0
    truth = json.loads((tmp_path / "o" / "truth.json").read_text())
    assert truth["agents"][0] == "rational_agent" and len(truth["cells"]) == 3 * 12
    assert len(list((tmp_path / "o" / "logs").glob("*.json"))) == 3


def test_bundled_sample_is_what_the_simulator_makes(tmp_path, contest):
    # data/sample/concordia was written by `referee simulate concordia --agents 8 --seed 2024`
    from analysis.pipeline import SAMPLE
    fresh = write_concordia(simulate_concordia(contest, n_agents=8, seed=2024), tmp_path / "s")
    for f in sorted((SAMPLE / "concordia" / "logs").iterdir()):
        assert f.read_bytes() == (fresh["logs"] / f.name).read_bytes(), f.name
    assert pd.read_json(SAMPLE / "concordia" / "truth.json", typ="series")["seed"] == 2024


@pytest.mark.parametrize("runner, args", [
    ("aoa", ["--agents", "12", "--seed", "7", "--event-scale", "0.2", "--validity", "0.3"]),
    ("compact", ["--agents", "6", "--games", "20", "--seed", "7"]),
    ("arena", ["--agents", "8", "--judgments", "400", "--seed", "7"]),
    ("ranked", ["--agents", "8", "--games", "30", "--seed", "7"]),
])
def test_bundled_samples_are_what_the_simulators_make(tmp_path, runner, args):
    # the commands in data/sample/README.md
    from analysis.pipeline import SAMPLE
    folder = {"aoa": "aoa_sim"}.get(runner, runner)
    assert main(["simulate", runner, *args, "--out", str(tmp_path)]) == 0
    for f in sorted((SAMPLE / folder / "logs").iterdir()):
        assert f.read_bytes() == (tmp_path / "logs" / f.name).read_bytes(), f.name
