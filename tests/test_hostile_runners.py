"""Hostile input, round 2 (issue 39): values the runners once accepted silently. Each case is a real sample
file of its runner with one value changed; a correct ingest sets the record aside naming its field, or
keeps the match with its outcome unknown, and the counts add up (read = accepted + quarantined)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from referee.io.resources import shipped
from referee.io.store import Store

SAMPLE = shipped("sample")
EPISODE = Path("mock--programmatic") / "guessnumber" / "easy" / "instance_00000"


def _ingest(tmp_path: Path, paths: list[Path], **options):
    store = Store(tmp_path / "s.duckdb")
    report = store.ingest([str(p) for p in paths], **options)
    assert report.read == report.accepted + report.quarantined
    return store, report


def _clem_episode(tmp_path: Path, scores=None, interactions=None) -> Path:
    """One clembench episode folder (interactions.json and scores.json) copied from the sample, each document
    passed through its function to change a value."""
    folder = tmp_path / "results" / EPISODE
    folder.parent.mkdir(parents=True)
    shutil.copytree(SAMPLE / "clembench" / "results" / EPISODE, folder)
    for name, change in (("scores.json", scores), ("interactions.json", interactions)):
        if change is not None:
            doc = json.loads((folder / name).read_text())
            text = change(doc)
            (folder / name).write_text(text if isinstance(text, str) else json.dumps(doc))
    return folder


@pytest.mark.parametrize("main, field", [('"100"', "episode scores.Main Score"),
                                         ("Infinity", "episode scores.Main Score"),
                                         ("1e400", "episode scores.Main Score")])
def test_clem_main_score_that_is_not_a_number_leaves_the_outcome_unknown_and_sets_the_scores_aside(
        tmp_path, main, field):
    def change(doc):
        return json.dumps(doc).replace('"Main Score": 100.0', f'"Main Score": {main}')

    folder = _clem_episode(tmp_path, scores=change)
    store, report = _ingest(tmp_path, [folder])
    results = store.table("results")
    assert results["outcome"].isna().all() and results["score"].isna().all()  # never a win with no score
    quarantine = store.table("quarantine")
    assert quarantine["field"].tolist() == [field] and quarantine["source_file"].str.endswith("scores.json").all()


def test_clem_success_and_lose_both_set_is_stored_as_clem_counts_it_with_no_outcome(tmp_path):
    def change(doc):
        doc["episode scores"]["Lose"] = 1

    folder = _clem_episode(tmp_path, scores=change)
    store, report = _ingest(tmp_path, [folder])
    assert report.quarantined == 0  # clem's own output: played, scored by its Main Score
    measures = store.table("measures").set_index("name")
    assert measures.loc["Success", "value"] == 1 and measures.loc["Lose", "value"] == 1
    assert store.table("results")["outcome"].isna().all()  # neither a win nor a loss
    assert "Success and Lose both 1" in store.table("matches")["attrs"].iloc[0]


def test_clem_a_text_or_list_episode_score_is_set_aside_alone(tmp_path):
    def change(doc):
        doc["episode scores"]["Moves"] = ["a1", "b2"]
        doc["episode scores"]["experiment variable"] = "easy"

    folder = _clem_episode(tmp_path, scores=change)
    store, report = _ingest(tmp_path, [folder])
    quarantine = store.table("quarantine")
    assert sorted(quarantine["field"]) == ["episode scores.Moves", "episode scores.experiment variable"]
    names = set(store.table("measures")["name"])
    assert {"Main Score", "Success", "Aborted"} <= names  # the file's other scores are kept
    assert store.table("results")["score"].notna().all()


def test_clem_scores_naming_another_episode_are_not_attached(tmp_path):
    def change(doc):
        doc["meta"]["game_id"] = 7

    folder = _clem_episode(tmp_path, scores=change)
    store, _ = _ingest(tmp_path, [folder])
    quarantine = store.table("quarantine")
    assert quarantine["field"].tolist() == ["meta"] and "game_id" in quarantine["message"].iloc[0]
    assert store.table("measures").empty and store.table("results")["score"].isna().all()


def _last_scores(node, found=None):
    """The last `Player Scores` object nested in a Concordia log document."""
    if isinstance(node, dict):
        for key, value in node.items():
            found = value if key == "Player Scores" and isinstance(value, dict) else _last_scores(value, found)
    elif isinstance(node, list):
        for value in node:
            found = _last_scores(value, found)
    return found


@pytest.mark.parametrize("value", [float("nan"), float("-inf"), "lots"])
def test_concordia_log_scores_that_are_not_finite_numbers_set_the_log_aside_naming_the_player(tmp_path, value):
    doc = json.loads((SAMPLE / "concordia_log" / "simulation.json").read_text())
    _last_scores(doc)["Alice"] = value
    path = tmp_path / "simulation.json"
    path.write_text(json.dumps(doc))
    store, report = _ingest(tmp_path, [path], runner="concordia-log")
    quarantine = store.table("quarantine")
    assert report.accepted == 0 and quarantine["field"].iloc[0].endswith("Player Scores.Alice")
    assert store.table("results").empty  # never the previous step's scores


def _lines_file(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_gtbench_a_winner_without_the_highest_score_and_self_play_are_set_aside(tmp_path):
    good = {"game": "prisoners_dilemma", "agents": ["cot", "prompt"], "models": ["m1", "m2"], "winner": 1,
            "scores": [1, 3], "status": "completed"}
    records = [good, dict(good, winner=0), dict(good, models=["m1", "m1"], agents=["cot", "cot"])]
    store, report = _ingest(tmp_path, [_lines_file(tmp_path, "gt.jsonl", records)], runner="gtbench")
    assert (report.accepted, report.quarantined) == (1, 2)
    assert sorted(store.table("quarantine")["field"]) == ["agents", "winner"]


@pytest.mark.parametrize("change, field", [
    (lambda d: d.__setitem__("steps", []), "steps"),
    (lambda d: d["steps"][1].__setitem__(0, 7), "steps[1][0]"),
])
def test_kaggle_no_steps_and_a_numeric_seat_state_are_set_aside(tmp_path, change, field):
    doc = json.loads((SAMPLE / "kaggle" / "replays" / "connectx-random-vs-negamax.json").read_text())
    change(doc)
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(doc))
    store, report = _ingest(tmp_path, [path], runner="kaggle")
    assert report.accepted == 0 and store.table("quarantine")["field"].tolist() == [field]


@pytest.mark.parametrize("change, field", [
    (lambda d: d.__setitem__("game_id", {"a": 1}), "game_id"),
    (lambda d: d["players"][0].__setitem__("turn_count", -3), "players[0].turn_count"),
])
def test_textarena_an_object_game_id_and_a_negative_turn_count_are_set_aside(tmp_path, change, field):
    lines = (SAMPLE / "textarena" / "logs").glob("*.jsonl")
    records = [json.loads(line) for line in next(iter(lines)).read_text().splitlines() if line.strip()][:3]
    change(records[0])
    store, report = _ingest(tmp_path, [_lines_file(tmp_path, "games.jsonl", records)], runner="textarena")
    assert (report.accepted, report.quarantined) == (2, 1)
    assert store.table("quarantine")["field"].tolist() == [field]
    assert not store.table("matches")["match_id"].str.contains("{", regex=False).any()


def test_compact_and_aoa_a_value_of_minus_infinity_is_set_aside_like_nan_and_plus_infinity(tmp_path):
    lines = (SAMPLE / "compact" / "logs" / "games.jsonl").read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if '"record": "prediction"' in line)
    lines[k] = lines[k].replace('"value": 9.0', '"value": -Infinity')
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "c").mkdir()
    store, report = _ingest(tmp_path / "c", [path], runner="compact")
    assert report.quarantined == 1 and store.table("quarantine")["field"].tolist() == ["value"]
    season = tmp_path / "aoa"
    shutil.copytree(SAMPLE / "aoa_sim" / "logs", season)
    events = (season / "events.jsonl").read_text().splitlines()
    events[0] = events[0][:-1] + ',"value":-Infinity}'
    (season / "events.jsonl").write_text("\n".join(events) + "\n")
    store, report = _ingest(tmp_path / "aoa", [season / "season.json", season / "events.jsonl"])
    assert "value" in store.table("quarantine")["field"].tolist()


def test_aoa_a_nation_whose_state_cannot_be_read_keeps_its_agents(tmp_path):
    season = tmp_path / "logs"
    shutil.copytree(SAMPLE / "aoa_sim" / "logs", season)
    doc = json.loads((season / "season.json").read_text())
    nation = doc["agents"][0]["nation"]
    agents_there = sum(a["nation"] == nation for a in doc["agents"])
    for entry in doc["nations"]:
        if entry["nation"] == nation:
            entry["alive"] = "yes"
    (season / "season.json").write_text(json.dumps(doc))
    store, report = _ingest(tmp_path, [season / "season.json"])
    quarantine = store.table("quarantine")
    assert quarantine["field"].tolist() == ["alive"]  # the nation's state, and nothing else
    assert (store.table("results")["team"] == nation).sum() == agents_there


def test_arena_one_unreadable_unix_time_sets_aside_its_row_not_the_file(tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text("model_a,model_b,winner,tstamp\nx,y,model_a,1700000000\nx,y,model_b,NaN\ny,x,tie,1700000100\n"
                    "x,y,model_a,1e30\n")
    store, report = _ingest(tmp_path, [path])
    assert (report.accepted, report.quarantined) == (2, 2)
    assert store.table("quarantine")["field"].tolist() == ["tstamp", "tstamp"]


def test_table_names_with_control_characters_and_a_column_read_twice_are_refused(tmp_path):
    from referee.io.loaders.table import check_mapping

    path = tmp_path / "t.csv"
    path.write_text("match,agent,score\nm1,bob,1\nm1,\tbob,2\nm2,bob,1\nm2,\"\ralice\",0\nm3,bob,1\nm3,carol,2\n", newline="")
    store, report = _ingest(tmp_path, [path], runner="table")
    assert (report.accepted, report.quarantined) == (4, 2)
    assert sorted(store.table("results")["agent"].unique()) == ["bob", "carol"]
    with pytest.raises(ValueError, match="file column 'score' would be read as agent and as score"):
        check_mapping({"agent": "score"})
    check_mapping({"agent": "model", "score": "points"})  # distinct columns are fine


@pytest.mark.parametrize("sample", ["kaggle/replays/connectx-random-vs-negamax.json", None])
def test_a_byte_order_mark_does_not_hide_a_runner_from_detection(tmp_path, sample):
    if sample is None:  # a records file (JSON lines) of the generic records runner
        text = "\n".join(json.dumps({"game": "g", "match": f"r{i}", "a": float(i % 3), "b": 1.0}) for i in range(6))
        name = "records.jsonl"
    else:
        text, name = (SAMPLE / sample).read_text(encoding="utf-8"), Path(sample).name
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    store, report = _ingest(tmp_path, [path])  # no --runner
    assert report.accepted > 0 and report.quarantined == 0


def test_formula_errors_for_operators_quote_the_expression(tmp_path):
    from referee.models.validity.formula import FormulaError, parse_expression

    for text, symbol in (("not x", "not"), ("~x", "~"), ("x % 2", "%"), ("x // 2", "//")):
        with pytest.raises(FormulaError, match=f"the operator '{symbol}'.*in '{text}'"):
            parse_expression(text, {"x"}, "f.toml line 2")


def test_trueskill_imports_without_a_warning():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-W", "error", "-c", "import trueskill"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_byte_identical_copy_in_another_folder_is_named_and_the_first_kept(tmp_path):
    folder = _clem_episode(tmp_path)
    copy = tmp_path / "results" / "mock--programmatic" / "guessnumber" / "easy-copy" / "instance_00000"
    copy.mkdir(parents=True)
    shutil.copy(folder / "interactions.json", copy / "interactions.json")
    store, report = _ingest(tmp_path, [folder / "interactions.json", copy / "interactions.json"])
    files = report.files.set_index("source_file")
    row = files.loc[str(copy / "interactions.json")]
    assert row["status"] == "already ingested" and str(folder / "interactions.json") in row["detected"]
    assert len(store.table("matches")) == 1 and store.table("results")["score"].notna().all()  # the original's score


def test_ranked_a_turn_by_a_player_not_in_the_game_is_set_aside(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLE / "ranked" / "logs", logs)
    turns = (logs / "turns.jsonl").read_text().splitlines()
    first = json.loads(turns[0])
    turns[0] = json.dumps(dict(first, player="p99"))
    (logs / "turns.jsonl").write_text("\n".join(turns) + "\n")
    store, report = _ingest(tmp_path, [logs])
    quarantine = store.table("quarantine")
    assert quarantine["field"].tolist() == ["player"] and quarantine["reason"].tolist() == ["unknown player"]
    assert report.quarantined == 1
