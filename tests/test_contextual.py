"""Contextual Bradley-Terry: recovery of a known seat advantage and role effect on simulated matches, the
uncontrolled fit's rank changes, and the ratings command with --covariate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import referee
import pytest

from referee.cli import main
from referee.prepare.covariates import covariate_pairs
from referee.models.ratings.contextual import fit_contextual_bt

SEAT = 0.5  # log-odds per seat position, per pair: later seats do better
ROLE = -0.8  # the 'spy' role does worse


def simulate(agents: int, matches: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.6, agents)
    games, rows = [], []
    for m in range(matches):
        k = int(rng.choice([2, 3, 4]))
        who = rng.choice(agents, k, replace=False)
        spy = rng.integers(k)
        utility = theta[who] + SEAT * np.arange(k) + ROLE * (np.arange(k) == spy) + rng.gumbel(size=k)
        games.append({"match_id": f"m{m:05d}", "runner": "table", "game": "g", "n_players": k})
        rows += [{"match_id": f"m{m:05d}", "player": f"seat {s}", "agent": f"a{who[s]:02d}", "score": float(utility[s]),
                  "rank": None, "role": "spy" if s == spy else "citizen", "outcome": None} for s in range(k)]
    return pd.DataFrame(games), pd.DataFrame(rows), theta


def seat_measures(results: pd.DataFrame) -> pd.DataFrame:
    """The seats as the data record them (a per-player measure `seat`): the table runner numbers no seats, and a
    seat is never read from player or agent names (issue 66)."""
    seat = results["player"].str.extract(r"(\d+)$")[0].astype(float)
    return pd.DataFrame({"match_id": results["match_id"], "player": results["player"], "name": "seat",
                         "value": seat, "kind": "telemetry"})


def test_recovers_a_known_seat_advantage_and_role_effect():
    matches, results, theta = simulate(agents=30, matches=3000, seed=1)
    pairs, names, notes = covariate_pairs(matches, results, seat_measures(results), ["seat", "role"])
    assert names == ["seat", "role=spy"] and "citizen" in notes[0]
    fit = fit_contextual_bt(pairs, names)
    effects = fit.effects.set_index("covariate")
    # with Gumbel noise the pairwise model is logistic: the truth lies inside the 95 % intervals
    assert effects.loc["seat", "lower"] < SEAT < effects.loc["seat", "upper"]
    assert effects.loc["role=spy", "lower"] < ROLE < effects.loc["role=spy", "upper"]
    assert effects.loc["seat", "estimate_elo"] == pytest.approx(effects.loc["seat", "estimate"] * 400 / math.log(10))
    table = fit.ratings.set_index("agent")
    truth = pd.Series(theta, index=[f"a{i:02d}" for i in range(30)])
    assert np.corrcoef(table["rating"], truth[table.index])[0, 1] > 0.9
    assert (table["rank_change"] == table["rank_uncontrolled"] - table["rank"]).all()


def test_controlling_for_seat_moves_an_agent_that_always_sat_last():
    # 'lucky' always takes the best seat and is otherwise average: uncontrolled it looks strong
    matches, results, _ = simulate(agents=12, matches=1500, seed=2)
    results = results.copy()
    last = results.groupby("match_id")["player"].transform("max") == results["player"]
    first_match = results["match_id"].isin(results.loc[last, "match_id"].unique()[:400])
    results.loc[last & first_match, "agent"] = "lucky"
    pairs, names, _ = covariate_pairs(matches, results, seat_measures(results), ["seat"])
    fit = fit_contextual_bt(pairs, names).ratings.set_index("agent")
    assert fit.loc["lucky", "rank_uncontrolled"] < fit.loc["lucky", "rank"]  # it falls once seats are accounted for
    assert fit.loc["lucky", "rank_change"] < 0


def test_ratings_command_with_covariates(tmp_path, capsys):
    matches, results, _ = simulate(agents=8, matches=400, seed=3)
    path = tmp_path / "t.csv"
    table = results.assign(seat=seat_measures(results)["value"]).rename(columns={"match_id": "match"})
    table[["match", "player", "agent", "score", "role", "seat"]].to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(path), "--map", "role=role", "--measure", "seat=telemetry"]) == 0
    out = tmp_path / "r"
    assert main(["ratings", "--store", str(store), "--method", "bt", "--covariate", "seat", "--covariate", "role",
                 "--out", str(out)]) == 0
    effects = pd.read_csv(out / "covariates.csv").set_index("covariate")
    assert effects.loc["seat", "estimate"] > 0 and effects.loc["role=spy", "estimate"] < 0
    assert {"rating_uncontrolled", "rank_change"} <= set(pd.read_csv(out / "ratings.csv").columns)
    assert main(["ratings", "--store", str(store), "--method", "elo", "--covariate", "seat", "--out",
                 str(tmp_path / "x")]) != 0


def _statsmodels_fit(pairs: pd.DataFrame, names: list[str]):
    """The same model as statsmodels' binomial GLM with a dense design and match-clustered covariance: the
    independent reference for the sufficient-statistics Newton."""
    import statsmodels.api as sm

    agents = sorted(set(pairs["a"]) | set(pairs["b"]))
    index, n = pd.Index(agents), len(agents)
    ia, ib = index.get_indexer(pairs["a"]), index.get_indexer(pairs["b"])
    X = np.zeros((len(pairs), n - 1 + len(names)))
    rows = np.arange(len(pairs))
    X[rows[ia > 0], ia[ia > 0] - 1] += 1.0
    X[rows[ib > 0], ib[ib > 0] - 1] -= 1.0
    for k, name in enumerate(names):
        X[:, n - 1 + k] = pairs[f"{name}_a"] - pairs[f"{name}_b"]
    codes, _ = pd.factorize(pairs["match_id"])
    fit = sm.GLM(pairs["outcome"].to_numpy(float), X, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": codes})
    theta = np.r_[0.0, fit.params[: n - 1]]
    return agents, theta - theta.mean(), fit.params[n - 1:], fit.bse[n - 1:]


def test_sufficient_statistics_newton_matches_statsmodels_glm_with_clustered_errors():
    matches, results, _ = simulate(agents=20, matches=1500, seed=4)
    pairs, names, _ = covariate_pairs(matches, results, seat_measures(results), ["seat", "role"])
    ours = fit_contextual_bt(pairs, names)
    agents, theta, beta, beta_se = _statsmodels_fit(pairs, names)
    assert list(ours.ratings["agent"]) == agents
    assert np.allclose((ours.ratings["rating"] - 1500) / (400 / math.log(10)), theta, atol=1e-7)
    assert np.allclose(ours.effects["estimate"], beta, atol=1e-7)
    assert np.allclose(ours.effects["se"], beta_se, rtol=1e-6)  # statsmodels' small-sample factor included
    assert ours.diagnostics["converged"]


def test_style_control_recovers_a_known_length_effect_from_simulated_arena_logs(tmp_path):
    from referee.simulators.arena import simulate_arena, write_arena

    sim = simulate_arena(n_agents=12, n_judgments=6000, seed=7, tie_rate=0.0, style_effect=0.4)
    write_arena(sim, tmp_path / "sim")
    store = tmp_path / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(tmp_path / "sim" / "logs")]) == 0
    out = tmp_path / "r"
    assert main(["ratings", "--store", str(store), "--method", "bt", "--covariate", "style:length",
                 "--out", str(out)]) == 0
    effect = pd.read_csv(out / "covariates.csv").set_index("covariate").loc["style:length"]
    assert effect["lower"] < 0.4 < effect["upper"] and effect["upper"] - effect["lower"] < 0.2
    ratings = pd.read_csv(out / "ratings.csv").set_index("agent")
    truth = pd.Series(sim.truth["ratings"])[ratings.index]
    # controlled ratings recover the generating strengths within their own 95 % intervals (all but at most one
    # of the 12, as 95 % coverage allows); uncontrolled ones carry the length advantage
    covered = ((ratings["lower"] <= truth) & (truth <= ratings["upper"])).sum()
    assert covered >= len(truth) - 1
    controlled = (ratings["rating"] - truth).abs().max()
    assert (ratings["rating_uncontrolled"] - truth).abs().max() > controlled


def test_style_feature_is_fastchats_normalised_difference():
    from referee.prepare.covariates import style_feature

    a, b = np.array([500.0, 20.0, 0.0, 30.0]), np.array([520.0, 40.0, 0.0, 10.0])
    share = np.array([-20 / 1020, -20 / 60, 0.0, 20 / 40])  # by hand; 0/0 is no difference
    feature, note = style_feature(a, b)
    assert np.allclose(feature, (share - share.mean()) / share.std())
    assert "per sd" in note
    with pytest.raises(ValueError, match="nothing to control"):
        style_feature(np.ones(3), np.ones(3))


def test_arena_per_side_columns_become_measures_and_bad_cells_are_set_aside(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text("model_a,model_b,winner,sum_assistant_a_tokens,sum_assistant_b_tokens,bold_a,bold_b\n"
                    "x,y,model_a,120,80,1,\n"
                    "y,z,model_b,1_000,3,0,0\n"
                    "x,z,tie,inf,3,0,0\n"
                    "x,y,model_b,10,NaN,0,0\n", encoding="utf-8")
    store = tmp_path / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(path)]) == 0
    from referee.io.store import Store

    with Store(store, read_only=True) as s:
        measures = s.table("measures")
        quarantine = s.table("quarantine")
    assert sorted(set(measures["name"])) == ["bold", "sum_assistant_tokens"]
    first = measures[measures["match_id"].str.endswith(":2")].set_index(["name", "player"])["value"]
    assert first[("sum_assistant_tokens", "x")] == 120 and first[("sum_assistant_tokens", "y")] == 80
    assert ("bold", "y") not in first.index  # a blank cell is no measure
    assert sorted(quarantine["field"]) == ["sum_assistant_a_tokens", "sum_assistant_a_tokens", "sum_assistant_b_tokens"]
    assert quarantine["record"].tolist() == ["3", "4", "5"]


def test_no_seat_is_read_from_names_without_a_seat_field(tmp_path):
    # issue 66: a table whose player names end in digits but records no seat gets no seat effect, in the ratings
    # (refused, saying why) and on the leaderboard (nothing printed)
    matches, results, _ = simulate(agents=8, matches=200, seed=5)
    with pytest.raises(ValueError, match="no match records its players' seats"):
        covariate_pairs(matches, results, None, ["seat"])
    path = tmp_path / "t.csv"
    results.rename(columns={"match_id": "match"})[["match", "player", "agent", "score"]].to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(path)]) == 0
    board = referee.leaderboard(store)
    assert "seat_effect" not in board.tables and not any("seat" in line for line in board.said)


def test_plain_bt_cluster_robust_covariance_is_statsmodels_and_the_contextual_fits():
    """One cluster-robust covariance for a rating, with or without covariates: the plain fit's (`bt_covariance`,
    behind every interval, rank set and pairwise test) equals statsmodels' clustered binomial GLM, small-sample
    factor G/(G-1) (m-1)/(m-k) included, and the contextual fit's with no covariate, on 2-4 player matches."""
    import statsmodels.api as sm

    from referee.models.ratings.bradley_terry import bt_covariance, centred_se, clustered, fit_bt, pair_counts

    matches, results, _ = simulate(agents=8, matches=60, seed=11)
    pairs, _, _ = covariate_pairs(matches, results, seat_measures(results), [])
    agents = sorted(set(pairs["a"]) | set(pairs["b"]))
    n, m = len(agents), len(pairs)
    a, b = pd.Index(agents).get_indexer(pairs["a"]), pd.Index(agents).get_indexer(pairs["b"])
    outcome, cluster = pairs["outcome"].to_numpy(float), pairs["match_id"].to_numpy()
    assert set(outcome) == {0.0, 1.0} and clustered(cluster, n)  # 60 matches of 1-6 pairs, 8 agents
    fit = fit_bt(pair_counts(a, b, outcome, n), agents)
    ours = centred_se(bt_covariance(fit.theta, a, b, outcome, cluster))

    X = np.zeros((m, n - 1))
    rows = np.arange(m)
    X[rows[a > 0], a[a > 0] - 1] += 1.0
    X[rows[b > 0], b[b > 0] - 1] -= 1.0
    groups, _ = pd.factorize(pd.Series(cluster))
    glm = sm.GLM(outcome, X, family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": groups})
    full = np.zeros((n, n))
    full[1:, 1:] = glm.cov_params()
    assert np.allclose(np.r_[0.0, glm.params] - np.r_[0.0, glm.params].mean(), fit.theta - fit.theta.mean(), atol=1e-6)
    assert np.allclose(ours, centred_se(full), rtol=1e-5)

    contextual = fit_contextual_bt(pairs, [])
    elo = 400 / math.log(10)
    assert list(contextual.ratings["agent"]) == agents
    assert np.allclose((contextual.ratings["upper"] - contextual.ratings["lower"]) / (2 * 1.959963984540054 * elo),
                       ours, rtol=1e-5)
