"""`referee plan`: never an impossible match, bridges and thin agents first with their reason, the same plan
for the same seed, and the simulated power curve against its closed-form normal approximation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.prepare.comparisons import comparisons_from_tables
from referee.run.ratings.plan import normal_power, plan, power_curve
from referee.models.ratings.design import RULES
from test_rating_labels import tournament


@pytest.fixture(scope="module")
def islands():
    matches, results, _ = tournament(agents=60, matches=400, seed=7, rare=8, islands=2)
    return comparisons_from_tables(matches, results)


@pytest.mark.parametrize("rule", RULES)
def test_never_an_impossible_match(islands, rule):
    names = set(islands["a"]) | set(islands["b"])
    for players, target in ((2, "adjacent:0.95"), (3, "width:150"), (8, "top:5")):
        table = plan(islands, 25, target=target, rule=rule, players=players, seed=1).matches
        seats = table[[f"agent_{k}" for k in range(1, players + 1)]]
        assert len(table) == 25 and seats.notna().all().all()
        assert (seats.nunique(axis=1) == players).all()  # nobody plays itself
        assert set(seats.to_numpy().ravel()) <= names  # only agents that exist
    with pytest.raises(ValueError, match="--players"):
        plan(islands, 5, players=61)


def test_bridges_and_thin_agents_come_first_with_their_reason(islands):
    table = plan(islands, 30, seed=0).matches
    assert table.loc[0, "rule"] == "bridge" and "component 2" in table.loc[0, "reason"]
    thin = table[table["rule"] == "few matches"]
    assert len(thin) >= 8 and thin["reason"].str.contains("fewer than 10").all()
    first_rule = table.index[table["rule"] == "c-optimal"].min()
    assert (table.loc[: first_rule - 1, "rule"] != "c-optimal").all()  # scheduled matches before the rule's


def test_same_seed_same_plan(islands):
    for rule in ("arena", "uniform", "active", "c-optimal"):
        one = plan(islands, 20, rule=rule, seed=3).matches
        two = plan(islands, 20, rule=rule, seed=3).matches
        pd.testing.assert_frame_equal(one, two)
    assert not plan(islands, 20, rule="uniform", seed=3).matches.equals(plan(islands, 20, rule="uniform", seed=4).matches)


def test_power_curve_matches_the_normal_approximation_for_one_pair():
    # two agents who only ever play each other: the simulated power of the Wald test equals the closed form
    comparisons = pd.DataFrame({"a": ["x"] * 30, "b": ["y"] * 30, "outcome": [1.0, 0.0] * 15,
                                "cluster": [f"m{k}" for k in range(30)], "game": "g", "kind": "match"})
    grid = [40, 120, 300, 600]
    curve = power_curve(comparisons, 80.0, grid=grid, sims=400, seed=2)
    closed = normal_power(80.0, np.array(grid))
    assert np.allclose(curve["normal"], closed)
    assert (np.abs(curve["power"] - closed) <= 3 * np.sqrt(closed * (1 - closed) / 400) + 0.02).all()
    assert curve["power"].is_monotonic_increasing


def test_plan_command_and_power_figure(sample_store, tmp_path):
    out = tmp_path / "plan"
    assert main(["plan", "--store", str(sample_store), "--runner", "ranked", "--budget", "12", "--players", "4",
                 "--target", "top:3", "--out", str(out)]) == 0
    table = pd.read_csv(out / "plan.csv")
    assert len(table) == 12 and {"agent_1", "agent_4", "gain_elo2", "reason"} <= set(table.columns)
    out = tmp_path / "power"
    assert main(["plan", "--store", str(sample_store), "--runner", "ranked", "--power", "--delta", "100",
                 "--sims", "20", "--out", str(out)]) == 0
    assert (out / "power.png").stat().st_size > 5000 and len(pd.read_csv(out / "power.csv")) > 5


def test_scenario_choice_serves_the_least_known_tag_coefficient():
    from referee.models.scores.scenario_design import next_scenarios

    # six played scenarios: tag 'rare' on one of them only, 'common' on four; 'rare' is the least known
    played = {"s1": ["common"], "s2": ["common"], "s3": ["common", "rare"], "s4": ["common"], "s5": [], "s6": []}
    unplayed = {"u_common": ["common"], "u_rare": ["rare"], "u_none": []}
    tags = pd.DataFrame([(s, t) for s, ts in {**played, **unplayed}.items() for t in ts], columns=["scenario", "tag"])
    rng = np.random.default_rng(0)
    scores = pd.DataFrame([{"scenario": s, "agent": f"a{k}", "score_norm": float(rng.uniform(0.2, 0.8))}
                           for s in played for k in range(8)])
    table = next_scenarios(scores, tags, list(unplayed), 2)
    assert table.loc[0, "target"] == "rare" and table.loc[0, "scenario"] == "u_rare"
    assert (table["sd_after"] < table["sd_before"]).all()
    # the first pick's sds by a second route: tau from statsmodels' OLS of the scenario means on their tags, the
    # posterior covariance by inverting the information directly, before and after u_rare (intercept, common, rare)
    import statsmodels.api as sm

    y = scores.assign(logit=np.log(scores["score_norm"] / (1 - scores["score_norm"]))).groupby("scenario")["logit"].mean()
    X = np.array([[1.0, float("common" in played[s]), float("rare" in played[s])] for s in y.index])
    tau = sm.OLS(y.to_numpy(), X).fit().mse_resid
    before = np.linalg.inv(X.T @ X / tau + np.eye(3))
    x = np.array([1.0, 0.0, 1.0])
    after = np.linalg.inv(X.T @ X / tau + np.eye(3) + np.outer(x, x) / tau)
    assert table.loc[0, "sd_before"] == pytest.approx(np.sqrt(before[2, 2]), rel=1e-9)
    assert table.loc[0, "sd_after"] == pytest.approx(np.sqrt(after[2, 2]), rel=1e-9)
    with_profiles = next_scenarios(scores, tags, [], 3, profiles=True)
    assert len(with_profiles) == 3 and with_profiles["scenario"].str.startswith("profile:").all()


def test_plan_scenarios_command(sample_store, tmp_path):
    out = tmp_path / "sc"
    assert main(["plan", "--store", str(sample_store), "--runner", "concordia", "--scenarios", "3", "--profiles",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out / "scenarios.csv")
    assert len(table) == 3 and (table["sd_after"] <= table["sd_before"]).all()
