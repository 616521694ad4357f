"""COMPACT's second half: socio-cognitive metrics against the simulator's truth, consistency, what predicts
winning (with folds that never leak an agent), and judge agreement against hand-computed values."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from referee.cli import main
from referee.io.store import Store
from referee.prepare.socio import prediction_accuracy, socio_metrics
from referee.run.social.socio import socio_analysis
from referee.simulators.compact import DRIVERS, simulate_compact, write_compact
from referee.models.social.agreement import judge_agreement, paired_ratings
from referee.models.social.determinants import agent_folds, match_folds


@pytest.fixture(scope="module")
def compact(tmp_path_factory):
    """The simulator at its default size (6 agents, 60 games), ingested; (sim, tables, store path)."""
    folder = tmp_path_factory.mktemp("compact")
    sim = simulate_compact(seed=0)
    paths = write_compact(sim, folder / "sim")
    with Store(folder / "s.duckdb") as store:
        store.ingest([paths["trace"]], strict=True)
        tables = {k: store.table(k) for k in ("matches", "results", "events", "measures")}
    return sim, tables, folder / "s.duckdb"


@pytest.fixture(scope="module")
def analysis(compact):
    _, t, _ = compact
    return socio_analysis(t["matches"], t["results"], t["events"], t["measures"], n_boot=30)


def test_metrics_rank_agents_as_the_truth_does(compact, analysis):
    sim, _, _ = compact
    per_agent = analysis.players.groupby("agent").mean(numeric_only=True)
    for metric, trait in (("theory_of_mind", "tom"), ("assertiveness", "assertiveness"), ("influence", "influence"),
                          ("planning", "planning")):
        rho = spearmanr(per_agent[metric], [sim.truth[trait][a] for a in per_agent.index]).statistic
        assert rho >= 0.9, (metric, rho)
    # predictability is theory of mind read the other way: the same dyads, swapped
    m = analysis.metrics
    tom = m[m.metric == "theory_of_mind"].set_index(["match_id", "player", "other"])["value"]
    pred = m[m.metric == "predictability"].set_index(["match_id", "other", "player"])["value"]
    pred.index.names = tom.index.names
    assert np.allclose(tom.sort_index(), pred.reindex(tom.index).sort_index())
    assert m.loc[m.metric.isin(["theory_of_mind", "assertiveness"]), "value"].between(0, 1).all()


def test_accuracy_rules_exact_and_distance():
    matches = pd.DataFrame({"match_id": ["s", "h"], "game": ["scheduler", "hupi"]})
    ev = pd.DataFrame([
        # scheduler: exact match of the option only
        {"match_id": "s", "round": 1, "stage": "predict", "type": "prediction", "actor": "A", "target": "B",
         "text": "propose C", "value": 2.0},
        {"match_id": "s", "round": 1, "stage": "act", "type": "action", "actor": "B", "target": None,
         "text": "propose D", "value": 3.0},
        # hupi: a bid of 7 predicted as 4 on the 1-10 range: 1 - 3/9
        {"match_id": "h", "round": 2, "stage": "predict", "type": "prediction", "actor": "A", "target": "B",
         "text": "bid 4", "value": 4.0},
        {"match_id": "h", "round": 2, "stage": "act", "type": "action", "actor": "B", "target": None,
         "text": "bid 7", "value": 7.0},
    ])
    acc = prediction_accuracy(ev, matches).set_index("match_id")["accuracy"]
    assert acc["s"] == 0.0 and acc["h"] == pytest.approx(1 - 3 / 9)
    results = pd.DataFrame({"match_id": ["s", "s", "h", "h"], "player": ["A", "B"] * 2, "agent": ["x", "y"] * 2})
    measures = pd.DataFrame(columns=["match_id", "player", "other", "name", "value", "kind", "round", "rater"])
    long = socio_metrics(matches, results, ev, measures)
    # B's bid of 7 on 1..10 is 6/9 assertive; its proposal 3 of 0..4 is 3/4
    a = long[long.metric == "assertiveness"].set_index("match_id")["value"]
    assert a["h"] == pytest.approx(6 / 9) and a["s"] == pytest.approx(0.75)


def test_the_drivers_of_winning_outweigh_the_rest(compact, analysis):
    found = analysis.determinants["all games"]
    w = found.weights[found.weights["model"] == "metrics"].set_index("feature")["weight"].abs()
    drivers = [m for m, v in DRIVERS.items() if v > 0]
    others = [m for m, v in DRIVERS.items() if v == 0]
    assert min(w[d] for d in drivers) > max(w[o] for o in others), w
    auc = found.auc.set_index("model")["auc"]
    # metrics that drive winning predict it above chance in agents never seen in training
    assert auc["metrics"] > 0.65 and auc["elo"] > 0.5
    assert set(analysis.determinants) == {"all games", "with communication", "without communication"}


def test_leave_two_agents_out_never_shares_an_agent(compact, analysis):
    from referee.models.social.determinants import pairs

    _, t, _ = compact
    metrics = ["theory_of_mind", "assertiveness"]
    rows = pairs(analysis.players, t["results"], metrics)
    folds = agent_folds(rows)
    n_agents = len(set(rows.agent_i) | set(rows.agent_j))
    assert len(folds) == n_agents * (n_agents - 1) // 2
    for train, test, (a, b) in folds:
        train_agents = set(rows.agent_i[train]) | set(rows.agent_j[train])
        assert not train_agents & {a, b}
        test_rows = rows[test]
        assert (test_rows.agent_i.isin([a, b]) | test_rows.agent_j.isin([a, b])).all()
    for train, test, _ in match_folds(rows):
        assert not set(rows.match_id[train]) & set(rows.match_id[test])


def test_consistency_separates_agents_from_each_other(analysis):
    summary = analysis.consistency.set_index("comparison")
    # the simulator's agents have stable traits: an agent resembles itself far more than another agent
    assert summary.loc["intra-agent, across categories", "mean_r"] > 0.3
    assert abs(summary.loc["inter-agent, same category", "mean_r"]) < 0.1
    assert summary.loc["intra-agent, across categories", "low"] > summary.loc["inter-agent, same category", "high"]


def test_judge_agreement_matches_hand_computation():
    a = np.array([0, 1, 2, 3, 2, 1, 0, 3])
    b = np.array([0, 2, 2, 1, 3, 1, 1, 3])
    out = judge_agreement(a, b, level="nominal")
    assert out["n"] == 8 and out["exact"] == 4 and out["within_one"] == 7
    assert out["mean_abs_diff"] == pytest.approx((0 + 1 + 0 + 2 + 1 + 0 + 1 + 0) / 8)
    # nominal alpha by hand from the coincidence matrix: 1 - (n - 1) * disagreeing pairs / sum_c!=k n_c n_k
    values = np.r_[a, b]
    n = len(values)
    counts = np.array([(values == v).sum() for v in range(4)])
    observed = 2 * (a != b).sum()  # each disagreeing unit adds two ordered pairs
    expected = (counts.sum() ** 2 - (counts ** 2).sum())
    assert out["krippendorff_alpha"] == pytest.approx(1 - (n - 1) * observed / expected)
    measures = pd.DataFrame({"match_id": "g", "player": list("PQ") * 4, "other": None, "round": np.repeat([1, 2], 4),
                             "name": "planning", "kind": "judge", "value": [1.0, 2, 3, 0, 1, 2, 2, 0],
                             "rater": ["j1", "j1", "j2", "j2"] * 2})
    paired = paired_ratings(measures, "j1", "j2")
    # items in (player, round) order: P1, P2, Q1, Q2
    assert len(paired) == 4 and list(paired["j1"]) == [1, 1, 2, 2] and list(paired["j2"]) == [3, 2, 0, 0]
    with pytest.raises(ValueError, match="no judge ratings by 'j3'"):
        paired_ratings(measures, "j1", "j3")


def test_socio_command_writes_its_files(compact, tmp_path):
    _, _, store = compact
    out = tmp_path / "socio"
    assert main(["socio", "--store", str(store), "--bootstrap", "20", "--out", str(out)]) == 0
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics.columns) == ["match_id", "player", "other", "agent", "game", "metric", "value"]
    determinants = json.loads((out / "determinants.json").read_text())
    models = {r["model"] for r in determinants["auc"]}
    assert {"metrics", "metrics per game", "metrics + identity", "elo"} <= models
    assert all(r["low"] <= r["auc"] <= r["high"] for r in determinants["auc"])
    assert (out / "consistency.csv").exists() and (out / "similarity.png").exists() and (out / "roc.png").exists()


def test_similarity_of_all_pairs_at_once_equals_each_pairs_pearson_r():
    """Issue 88 (speed): Figure 4's similarity matrix from matrix products equals numpy's Pearson r of each pair
    over the metrics both rows have, NaN where they share fewer than 3 or one row is constant over them."""
    from referee.models.social.consistency import similarity
    from tests.helpers import pairwise_pearson

    rng = np.random.default_rng(3)
    for _ in range(20):
        n, m = rng.integers(3, 30), rng.integers(3, 10)
        values = rng.normal(size=(n, m)) * rng.uniform(0.1, 5) + rng.uniform(-3, 3)
        values[rng.random((n, m)) < 0.2] = np.nan
        values[0] = 1.5  # a constant row
        expected = pairwise_pearson(values)
        found = similarity(pd.DataFrame(values)).to_numpy()
        assert np.array_equal(np.isnan(found), np.isnan(expected))
        assert np.nanmax(np.abs(found - expected)) < 1e-10


def test_the_bootstrap_over_matches_is_the_resampled_rows_own_pair_means():
    """`consistency` computes the group means of the data and of each resample from per-match sums and counts (two
    matrix products); the definition is the rows (of the drawn matches, each match as often as drawn) grouped again.
    Both, with the same draws, on players with framings, a metric missing in some rows and a match drawn more than
    once: equal to 1e-12 in every comparison's mean and interval, the same pairs counted."""
    from referee.models.social import consistency as C

    rng = np.random.default_rng(5)
    rows = []
    for m in range(24):
        category, framing = f"g{m % 3} x2", ["cowboys", "pirates"][m % 2]
        for agent in rng.choice([f"a{k}" for k in range(6)], 2, replace=False):
            rows.append({"match_id": f"m{m}", "player": f"{m}-{agent}", "agent": agent, "game": f"g{m % 3}",
                         "category": category, "framing": framing, "accuracy": rng.normal(),
                         "deception": np.nan if rng.random() < 0.2 else rng.normal(), "cooperation": rng.normal()})
    players = pd.DataFrame(rows)
    found = C.consistency(players, n_boot=30, seed=2).set_index("comparison")

    def pair_means(frame):  # the definition: the rows' own group means, grouped again
        return C._pair_means_of([frame.groupby(k)[C._metrics(frame)].mean() for k in C._keys(frame)])

    for k, (value, n) in pair_means(players).items():
        assert found.loc[k, "mean_r"] == pytest.approx(value, abs=1e-12) and found.loc[k, "n_pairs"] == n
    draw = np.random.default_rng(2)
    matches = players["match_id"].unique()
    groups = {m: g for m, g in players.groupby("match_id")}
    boots = {k: [] for k in C.COMPARISONS}
    for _ in range(30):
        pick = draw.choice(matches, size=len(matches), replace=True)
        sample = pd.concat([groups[m].assign(match_id=f"{m}#{i}") for i, m in enumerate(pick)], ignore_index=True)
        for k, (value, _) in pair_means(sample).items():
            boots[k].append(value)
    for k in C.COMPARISONS:
        values = np.asarray(boots[k], float)
        values = values[np.isfinite(values)]
        low, high = np.percentile(values, [2.5, 97.5])
        assert found.loc[k, "low"] == pytest.approx(low, abs=1e-12) and found.loc[k, "high"] == pytest.approx(high, abs=1e-12)
