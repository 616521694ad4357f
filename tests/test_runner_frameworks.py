"""Sotopia episodes and Melting Pot results, in their published formats with known truth
(`referee.simulators.frameworks`): ingested with no options, the models (populations) are the agents, the
SOTOPIA-EVAL dimensions are judge measures, Bradley-Terry recovers the generating order, a catalogue gives
Melting Pot's scenarios their tags, and bad episodes and rows are set aside by field with the counts adding up."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from scipy.stats import spearmanr

from referee.cli import main
from referee.io.store import Store
from referee.reporting import SAMPLE
from referee.simulators.frameworks import MP_SCENARIOS, meltingpot_results, sotopia_episodes


def _rate(tmp_path, store) -> pd.Series:
    assert main(["ratings", "--store", str(store), "--method", "bt", "--out", str(tmp_path / "r")]) == 0
    return pd.read_csv(tmp_path / "r" / "ratings.csv").set_index("agent")["rating"]


def test_sotopia_models_are_the_agents_the_dimensions_judge_measures_and_goal_recovers_the_order(tmp_path):
    skill = sotopia_episodes(tmp_path / "logs" / "episodes.jsonl", 300, seed=3)
    store = tmp_path / "s.duckdb"
    assert main(["ingest", str(tmp_path / "logs"), "--store", str(store)]) == 0
    with Store(store, read_only=True) as s:
        results, measures = s.table("results"), s.table("measures")
        events = s.query("SELECT type, count(*) AS n FROM events GROUP BY type").set_index("type")["n"]
    assert set(results["agent"]) == set(skill) and len(results) == 600
    assert set(measures["name"]) == {"believability", "relationship", "knowledge", "secret", "social_rules",
                                     "financial_and_material_benefits", "goal", "overall_score"}
    assert set(measures["kind"]) == {"judge"} and set(measures["rater"]) == {"gpt-4"}
    goal = measures[measures["name"] == "goal"].merge(results, on=["match_id", "player"])
    assert (goal["value"] == goal["score"]).all()  # the score is goal
    assert events.to_dict() == {"observation": 600, "message": 1200}
    rating = _rate(tmp_path, store)
    assert spearmanr(rating, [skill[a] for a in rating.index]).statistic >= 0.9


def test_sotopia_score_can_be_another_dimension_and_out_of_range_values_are_set_aside(tmp_path, capsys):
    path = tmp_path / "episodes.jsonl"
    sotopia_episodes(path, 10, seed=1)
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["raw_rewards"][1][1]["goal"] = 11  # goal runs 0..10
    worse = json.loads(lines[5])
    worse["experiment_model_name_pairs"] = ["gpt-4", "only-one"]
    path.write_text("\n".join(lines[:2] + [json.dumps(bad)] + lines[3:5] + [json.dumps(worse)] + lines[6:]) + "\n")
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([path], score="overall_score")
        scores = store.query("SELECT r.score, m.value FROM results r JOIN measures m USING (match_id, player) "
                             "WHERE m.name = 'overall_score'")
    assert (report.read, report.accepted, report.quarantined) == (10, 8, 2)
    assert set(report.quarantine["field"]) == {"raw_rewards[1].goal", "experiment_model_name_pairs"}
    assert (scores["score"] == scores["value"]).all() and len(scores) == 16
    assert main(["ingest", str(path), "--score", "charm", "--store", str(tmp_path / "t.duckdb")]) == 1
    assert "Sotopia scores are one of" in capsys.readouterr().out


def test_sotopia_episode_log_json_reads_as_the_export(tmp_path):
    path = tmp_path / "episodes.jsonl"
    sotopia_episodes(path, 4, seed=2)
    logs = []
    for line in path.read_text().splitlines():
        e = json.loads(line)
        logs.append({"pk": e["episode_id"], "environment": e["environment_id"], "agents": e["agent_ids"],
                     "tag": e["experiment_tag"], "models": e["experiment_model_name_pairs"],
                     "messages": e["raw_messages"], "rewards": e["raw_rewards"]})
    (tmp_path / "logs.json").write_text(json.dumps(logs))
    frames = {}
    for name in ("episodes.jsonl", "logs.json"):
        with Store(tmp_path / f"{name}.duckdb") as store:
            assert store.ingest([tmp_path / name]).accepted == 4
            frames[name] = store.query("SELECT match_id, player, agent, score, rank FROM results ORDER BY ALL")
    pd.testing.assert_frame_equal(frames["episodes.jsonl"], frames["logs.json"])


def test_meltingpot_populations_are_the_agents_and_the_catalogue_tags_the_scenarios(tmp_path):
    truth = meltingpot_results(tmp_path / "mp", episodes=8, seed=5)
    store = tmp_path / "s.duckdb"
    assert main(["ingest", str(tmp_path / "mp" / "results.csv"), "--catalogue", str(tmp_path / "mp" / "catalogue.toml"),
                 "--store", str(store)]) == 0
    with Store(store, read_only=True) as s:
        matches, results = s.table("matches"), s.table("results")
        tags = s.table("scenario_tags")
        background = s.query("SELECT direction, count(*) AS n FROM measures WHERE name = 'background_per_capita_return' "
                             "GROUP BY ALL")
    assert len(matches) == 6 * 4 * 8 and set(results["agent"]) == set(truth)
    assert set(matches["scenario"]) == set(MP_SCENARIOS) and "clean_up" in set(matches["game"])
    assert {(r.scenario, r.tag) for r in tags.itertuples()} == {(sc, t) for sc, (_, _, ts) in MP_SCENARIOS.items()
                                                                for t in ts}
    assert background.to_dict("records") == [{"direction": "higher", "n": 192}]
    rating = _rate(tmp_path, store)
    assert spearmanr(rating, [truth[a] for a in rating.index]).statistic == pytest.approx(1.0)


def test_meltingpot_parquet_reads_as_the_csv_and_bad_rows_are_set_aside_by_column(tmp_path):
    meltingpot_results(tmp_path / "mp", episodes=2, seed=1)
    frame = pd.read_csv(tmp_path / "mp" / "results.csv")
    parquet = frame.assign(focal_player_returns=[[float(x) for x in s.strip("[]").split()]
                                                 for s in frame["focal_player_returns"]])
    parquet.to_parquet(tmp_path / "results.parquet")
    broken = frame.astype({"focal_per_capita_return": object})
    broken.loc[3, "focal_per_capita_return"] = "lots"
    broken.loc[7, "focal_per_capita_return"] = broken.loc[7, "focal_per_capita_return"] + 5  # not the mean
    broken.loc[9, "mapla"] = None
    broken.to_csv(tmp_path / "broken.csv", index=False)
    got = {}
    for name in ("results.parquet", "broken.csv"):
        with Store(tmp_path / f"{name}.duckdb") as store:
            report = store.ingest([tmp_path / name])
            got[name] = (report, store.query("SELECT agent, score FROM results ORDER BY ALL"))
    report, _ = got["results.parquet"]
    assert (report.read, report.accepted, report.quarantined) == (48, 48, 0)
    report, _ = got["broken.csv"]
    assert (report.read, report.accepted, report.quarantined) == (48, 45, 3)
    assert report.quarantine.set_index("record")["field"].to_dict() == {
        "5": "focal_per_capita_return", "9": "focal_per_capita_return", "11": "mapla"}


def test_the_bundled_samples_ingest_whole(tmp_path):
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([SAMPLE / "sotopia" / "logs", SAMPLE / "meltingpot" / "logs"],
                              catalogue=SAMPLE / "meltingpot" / "catalogue.toml")
        runners = store.query("SELECT runner, count(*) AS n FROM matches GROUP BY runner ORDER BY runner")
    assert report.quarantined == 0
    assert runners.to_dict("records") == [{"runner": "meltingpot", "n": 120}, {"runner": "sotopia", "n": 60}]


@pytest.mark.parametrize("runner, heading", [("inspect", "# Inspect AI eval logs"), ("sotopia", "# Sotopia episodes"),
                                             ("meltingpot", "# Melting Pot results")])
def test_formats_prints_each_new_runners_format(capsys, runner, heading):
    assert main(["formats", runner]) == 0
    assert capsys.readouterr().out.startswith(heading)
