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
                                         ("1e400", "episode scores.Main Score"),
                                         (str(10**30), "episode scores.Main Score")])
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


@pytest.mark.parametrize("where", ["episode scores", "round scores"])
def test_clem_an_integer_past_64_bits_costs_that_value_alone(tmp_path, where):
    """Issue 89: an integer 10**30 among clem's scores (a request count, a round score) is set aside alone, as
    1e400 is, naming its field: the episode keeps its Main Score, outcome and every other measure."""
    def change(doc):
        group = doc[where] if where == "episode scores" else next(iter(doc[where].values()))
        group["Request Count"] = 10**30

    folder = _clem_episode(tmp_path, scores=change)
    store, report = _ingest(tmp_path, [folder])
    assert report.quarantined == 1
    [field] = store.table("quarantine")["field"].tolist()
    assert field.startswith(where) and field.endswith("Request Count")
    assert store.table("results")["score"].notna().all()  # the episode's Main Score stands
    kept = store.table("measures")
    assert {"Main Score", "Aborted"} <= set(kept["name"]) and len(kept) > 5


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


def _last_scores_owner(node, found=None):
    """The object holding the last `Player Scores` nested in a Concordia log document."""
    if isinstance(node, dict):
        for key, value in node.items():
            found = node if key == "Player Scores" and isinstance(value, dict) else _last_scores_owner(value, found)
    elif isinstance(node, list):
        for value in node:
            found = _last_scores_owner(value, found)
    return found


def _last_scores(doc) -> dict:
    """The last `Player Scores` object nested in a Concordia log document."""
    return _last_scores_owner(doc)["Player Scores"]


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


def test_concordia_log_scores_as_a_list_a_negative_step_are_set_aside_and_a_stranger_scored_is_noted(tmp_path):
    doc = json.loads((SAMPLE / "concordia_log" / "simulation.json").read_text())
    cases = {"list": lambda d: _last_scores_owner(d).__setitem__("Player Scores", [1, 2]),
             "step": lambda d: d["entries"][0].__setitem__("step", -1),
             "stranger": lambda d: _last_scores(d).__setitem__("Zed", 3.0)}
    for name, change in cases.items():
        edited = json.loads(json.dumps(doc))
        change(edited)
        path = tmp_path / name / "simulation.json"
        path.parent.mkdir()
        path.write_text(json.dumps(edited))
        store, report = _ingest(tmp_path / name, [path], runner="concordia-log")
        if name == "stranger":  # stored as written, the score of one who never acted named in the match
            assert report.quarantined == 0
            assert json.loads(store.table("matches")["attrs"].iloc[0])["scored_non_acting"] == {"Zed": 3.0}
            continue
        field = store.table("quarantine")["field"].iloc[0]
        assert report.accepted == 0 and field.endswith("Player Scores" if name == "list" else "entries[0].step")


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


def _sotopia_lines(n: int = 4) -> list[dict]:
    lines = (SAMPLE / "sotopia" / "logs" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:n]]


def _rename(d: dict, old: str, new: str) -> dict:
    return {(new if k == old else k): v for k, v in d.items()}


@pytest.mark.parametrize("change, reason, field", [
    (lambda r: r["raw_rewards"][0][1].pop("goal"), "missing field", "raw_rewards[0].goal"),
    (lambda r: r["raw_rewards"][0].__setitem__(1, _rename(r["raw_rewards"][0][1], "believability", "believabilty")),
     "unknown field", "raw_rewards[0].believabilty"),
    (lambda r: r["raw_rewards"][1][1].__setitem__("charisma", 1e6), "unknown field", "raw_rewards[1].charisma"),
    (lambda r: r["raw_rewards"][0][1].__setitem__("overall_score", r["raw_rewards"][0][1]["overall_score"] + 1),
     "wrong value", "raw_rewards[0].overall_score"),
    (lambda r: r["raw_rewards"][0].__setitem__(0, r["raw_rewards"][0][0] + 0.5), "wrong value",
     "raw_rewards[0].overall_score"),
    (lambda r: r["raw_rewards"][0][1].__setitem__("overall_score", float("nan")), "not a number", None),
])
def test_sotopia_an_episode_that_breaks_sotopia_evals_rules_is_set_aside_alone(tmp_path, change, reason, field):
    """SOTOPIA-EVAL's seven dimensions, no other, and the overall their mean with one value in both its places:
    an episode breaking one is set aside naming the dimension; the others are stored."""
    records = _sotopia_lines()
    change(records[1])
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    store, report = _ingest(tmp_path, [path])
    aside = store.table("quarantine")
    assert report.accepted == 3 and len(aside) == 1 and aside["record"].tolist() == ["2"], aside["message"].tolist()
    if reason == "not a number":  # NaN, as Python writes it: the score's own check names it
        assert "NaN" in aside["message"].iloc[0]
    else:
        assert (aside["reason"].iloc[0], aside["field"].iloc[0]) == (reason, field), aside["message"].iloc[0]


def test_sotopia_numeric_episode_ids_are_ids_and_missing_agent_ids_are_said(tmp_path):
    records = _sotopia_lines()
    records[0]["episode_id"] = records[1]["episode_id"] = 7
    del records[2]["agent_ids"]
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    store, report = _ingest(tmp_path, [path])
    aside = store.table("quarantine")
    assert aside["reason"].tolist() == ["duplicate match id"] and report.accepted == 3
    matches = store.table("matches").set_index("record_index")
    assert "sotopia:7" in set(matches["match_id"])
    assert "not in the log" in json.loads(matches.loc["3", "attrs"])["agent_ids"]


@pytest.mark.parametrize("edit, reason, field", [
    (lambda rows: rows.append(rows[3]), "duplicate row", None),  # one episode written twice
    (lambda rows: rows.append(rows[3][:40]), "truncated line", None),  # the last row cut short, no line end
    (lambda rows: rows.append(rows[3][:12]), "truncated line", None),  # ... cut outside a quoted cell
    (lambda rows: rows.__setitem__(1, rows[1].replace("[62.518 66.981 58.388]", "[NaN NaN NaN]")),
     "wrong value", "focal_player_returns"),
])
def test_meltingpot_a_repeated_cut_or_unreadable_row_is_set_aside_alone(tmp_path, edit, reason, field):
    rows = (SAMPLE / "meltingpot" / "logs" / "results.csv").read_text(encoding="utf-8").splitlines()[:8]
    edit(rows)
    path = tmp_path / "results.csv"
    path.write_text("\n".join(rows) + ("" if reason == "truncated line" else "\n"), encoding="utf-8")
    store, report = _ingest(tmp_path, [path])
    aside = store.table("quarantine")
    assert len(aside) == 1 and (aside["reason"].iloc[0], aside["field"].iloc[0]) == (reason, field), \
        aside["message"].tolist()
    assert report.accepted == len(rows) - 2


@pytest.mark.parametrize("episode", ["-1", "1.5", "text", "1e400"])
def test_meltingpot_an_episode_that_is_not_a_whole_number_and_a_repeated_episode_are_set_aside(tmp_path, episode):
    rows = (SAMPLE / "meltingpot" / "logs" / "results.csv").read_text(encoding="utf-8").splitlines()[:6]
    rows = [rows[0] + ",episode"] + [f"{r},{i}" for i, r in enumerate(rows[1:])]
    rows[2] = rows[2].rsplit(",", 1)[0] + f",{episode}"
    rows.append(rows[4].rsplit(",", 1)[0] + ",0")  # the same scenario, population and episode as row 2's first
    path = tmp_path / "results.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    store, report = _ingest(tmp_path, [path])
    aside = store.table("quarantine").sort_values("record")
    assert list(zip(aside["record"], aside["reason"], aside["field"])) == [
        ("3", "wrong value", "episode"), ("7", "duplicate episode", "episode")], aside["message"].tolist()


def _eval_log(tmp_path: Path, samples=None, header=None, extra: dict | None = None) -> Path:
    """The bundled Inspect log rewritten (deflated): `samples(list)` edits its sample dicts, `header(dict)` its
    header, `extra` adds members (name -> bytes) after the others."""
    import zipfile

    from tests.hostile.corpus import _members

    members = _members(SAMPLE / "inspect" / "logs" / "addition_weak.eval")
    names = [n for n in members if n.startswith("samples/")]
    records = [json.loads(members[n]) for n in names]
    if samples:
        samples(records)
    head = json.loads(members["header.json"])
    if header:
        header(head)
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            if name in names:
                if names.index(name) >= len(records):
                    continue
                data = json.dumps(records[names.index(name)]).encode()
            out.writestr(name, json.dumps(head).encode() if name == "header.json" else data)
        for name, data in (extra or {}).items():
            out.writestr(name, data)
    return path


def test_inspect_checks_what_it_stores_against_its_own_rules(tmp_path):
    """A ZIP member named twice (both copies set aside: which is the sample cannot be told), a negative working
    time (that sample), an object as the log's id (the log), fewer samples than the header counts (said)."""
    import warnings

    from tests.hostile.corpus import _members

    members = _members(SAMPLE / "inspect" / "logs" / "addition_weak.eval")
    copy = {"samples/q0_epoch_1.json": members["samples/q0_epoch_1.json"]}
    (tmp_path / "twice").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it writes
        twice = _eval_log(tmp_path / "twice", extra=copy)
    store, report = _ingest(tmp_path / "twice", [twice])
    aside = store.table("quarantine")
    assert aside["reason"].tolist() == ["duplicate member"] * 2 and report.accepted == 11

    (tmp_path / "negative").mkdir()
    negative = _eval_log(tmp_path / "negative", samples=lambda rs: rs[3].__setitem__("working_time", -3.0))
    store, report = _ingest(tmp_path / "negative", [negative])
    aside = store.table("quarantine")
    assert list(zip(aside["reason"], aside["field"])) == [("wrong value", "working_time")] and report.accepted == 11

    (tmp_path / "id").mkdir()
    odd_id = _eval_log(tmp_path / "id", header=lambda h: h["eval"].__setitem__("eval_id", {"x": 1}))
    store, report = _ingest(tmp_path / "id", [odd_id])
    aside = store.table("quarantine")
    assert list(zip(aside["record"], aside["field"])) == [("-", "eval.eval_id")] and report.accepted == 0

    (tmp_path / "half").mkdir()
    half = _eval_log(tmp_path / "half", samples=lambda rs: rs.__delitem__(slice(6, None)))
    store, report = _ingest(tmp_path / "half", [half])
    assert report.accepted == 6
    assert any("fewer samples than their header" in w and "6 of 12" in w for w in report.warnings), report.warnings


@pytest.mark.parametrize("name, value", [("Aborted", 2), ("Success", 0.5)])
def test_clem_a_flag_not_0_or_1_is_set_aside(tmp_path, name, value):
    def change(doc):
        doc["episode scores"][name] = value

    folder = _clem_episode(tmp_path, scores=change)
    store, report = _ingest(tmp_path, [folder])
    quarantine = store.table("quarantine")
    assert quarantine["field"].tolist() == [f"episode scores.{name}"]
    assert quarantine["reason"].tolist() == ["out of range"]
    assert store.table("results")["score"].isna().all() and store.table("results")["outcome"].isna().all()
    assert {"Success", "Aborted"} - {name} <= set(store.table("measures")["name"])  # the file's other scores kept


@pytest.mark.parametrize("value", [-5.0, -37.5, 1e6])
def test_clem_a_main_score_outside_0_to_100_is_stored_as_clem_writes_it(tmp_path, value):
    """clem's eqbench writes negative Main Scores and clem's results.csv averages them in: no range is a rule."""
    def change(doc):
        doc["episode scores"]["Main Score"] = value

    folder = _clem_episode(tmp_path, scores=change)
    store, report = _ingest(tmp_path, [folder])
    assert report.quarantined == 0
    main = store.table("measures").query("name == 'Main Score'")["value"]
    assert main.tolist() == [value] and (store.table("results")["score"] == value).all()


def test_clem_an_object_game_id_is_set_aside_and_a_turn_from_a_stranger_is_named(tmp_path):
    def game_id(doc):
        doc["meta"]["game_id"] = {"x": 1}

    folder = _clem_episode(tmp_path / "a", interactions=game_id)
    store, _ = _ingest(tmp_path / "a", [folder / "interactions.json"])
    assert store.table("quarantine")["field"].tolist() == ["meta.game_id"]

    def stranger(doc):
        doc["turns"][0][0]["from"] = "Player 9"

    folder = _clem_episode(tmp_path / "b", interactions=stranger)
    store, report = _ingest(tmp_path / "b", [folder / "interactions.json"])
    assert report.quarantined == 0
    assert json.loads(store.table("matches")["attrs"].iloc[0])["unknown_actors"] == ["Player 9"]


@pytest.mark.parametrize("rank", ["1e30", "1.5", "0"])
def test_a_rank_that_is_not_a_whole_number_from_1_is_set_aside_in_a_table_and_a_mapped_log(tmp_path, rank):
    table = tmp_path / "t.csv"
    table.write_text(f"match,agent,score,rank\nm1,a,3,1\nm1,b,1,{rank}\nm2,a,1,2\nm2,b,3,1\n")
    store, report = _ingest(tmp_path, [table], runner="table")
    quarantine = store.table("quarantine")
    assert quarantine["field"].tolist() == ["rank"] and report.accepted == 3

    mapping = tmp_path / "m.toml"
    mapping.write_text('name = "v1-bench"\n[keys]\nmatch = "m"\ntype = "t"\nplayer = "p"\nagent = "p"\n'
                       'rank = "r"\n[events]\nresult = ["final"]\n')
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"m": "g1", "t": "final", "p": p, "r": r}) + "\n"
                           for p, r in (("a", 1), ("b", json.loads(rank)))))
    store = Store(tmp_path / "m.duckdb")
    report = store.ingest([str(log)], runner=str(mapping))
    assert report.read == 2 and report.quarantined == 1 and store.table("quarantine")["field"].tolist() == ["r"]


def test_arena_json_lines_a_number_as_a_model_name_is_set_aside(tmp_path):
    path = tmp_path / "battles.jsonl"
    rows = [{"model_a": "x", "model_b": "y", "winner": "model_a"}, {"model_a": 7, "model_b": "y", "winner": "tie"},
            {"model_a": "y", "model_b": {"n": 1}, "winner": "model_b"}, {"model_a": "y", "model_b": "x",
                                                                         "winner": "model_b"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store, report = _ingest(tmp_path, [path], runner="arena")
    quarantine = store.table("quarantine")
    assert report.accepted == 2 and sorted(quarantine["field"]) == ["model_a", "model_b"]
    assert set(store.table("results")["agent"]) == {"x", "y"}


def test_inspect_a_header_naming_eval_twice_sets_the_log_aside_naming_the_key(tmp_path):
    """Both forms: a .eval's header.json and a .json log whose top level names `eval` twice (a JSON reader keeps
    the last copy without a word)."""
    path = _eval_log(tmp_path)
    import zipfile

    with zipfile.ZipFile(path) as archive:
        members = {i.filename: archive.read(i) for i in archive.infolist()}
    head = members["header.json"].decode()
    members["header.json"] = head.replace('{"version"', '{"eval": {"task": "other"}, "version"', 1).encode()
    assert members["header.json"] != head.encode()
    twice = tmp_path / "twice.eval"
    with zipfile.ZipFile(twice, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)
    store, report = _ingest(tmp_path, [twice])
    assert report.accepted == 0 and store.table("quarantine")["field"].tolist() == ["eval"]

    log = tmp_path / "j" / "log.json"
    log.parent.mkdir()
    log.write_text('{"version": 2, "status": "success", "eval": {"task": "a"}, "eval": {"task": "b"}, '
                   '"samples": []}')
    store = Store(tmp_path / "j.duckdb")
    report = store.ingest([str(log)], runner="inspect")
    assert report.accepted == 0 and store.table("quarantine")["field"].tolist() == ["eval"]


def _kaggle_sample() -> dict:
    return json.loads((SAMPLE / "kaggle" / "replays" / "connectx-random-vs-negamax.json").read_text())


def _no_final(doc: dict) -> dict:
    """The replay as Kaggle's OpenSpiel repeated-game test replays are written: no top-level rewards or statuses,
    each seat's in the last step."""
    return {k: v for k, v in doc.items() if k not in ("rewards", "statuses")}


@pytest.mark.parametrize("case, field", [
    ("done with no reward", "rewards[1]"),
    ("done with no reward, steps only", "steps[{last}][1].reward"),
    ("rewards against the last step", "rewards"),
    ("statuses against the last step", "statuses"),
    ("names against agents", "info.Agents"),
])
def test_kaggle_contradictions_its_own_code_never_writes_are_set_aside_naming_the_field(tmp_path, case, field):
    """Issue 89: what Kaggle's Environment.toJSON never writes is flagged, not stored as a loss or a stranger's
    seat: a seat DONE with no reward (top level or in the last step of a steps-only replay, named there), top-level
    rewards or statuses unlike the last step's (toJSON computes them from it), TeamNames against info.Agents."""
    doc = _kaggle_sample()
    last = doc["steps"][-1]
    assert doc["statuses"] == ["DONE", "DONE"] and [s["reward"] for s in last] == doc["rewards"]
    if case == "done with no reward":
        doc["rewards"][1] = None
        last[1]["reward"] = None
    elif case == "done with no reward, steps only":
        last[1]["reward"] = None
        doc = _no_final(doc)
    elif case == "rewards against the last step":
        doc["rewards"] = list(reversed(doc["rewards"]))
    elif case == "statuses against the last step":
        last[0]["status"] = "TIMEOUT"
    else:
        doc["info"]["Agents"] = [{"Name": "someone"}, {"Name": doc["info"]["TeamNames"][1]}]
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(doc))
    store, report = _ingest(tmp_path, [path], runner="kaggle")
    assert report.accepted == 0 and report.quarantined == 1
    row = store.table("quarantine").iloc[0]
    assert row["field"] == field.format(last=len(doc["steps"]) - 1) and row["reason"] == "contradiction", row.to_dict()


@pytest.mark.parametrize("forced", [True, False])
def test_a_file_set_aside_whole_is_named_with_its_field_in_the_commands_error(tmp_path, capsys, forced):
    """Issue 89: when every record of a file fails, the command's error names the file, the field and the fault;
    with the runner the user named (--runner kaggle) it says the file was read as that runner, never that it
    'could not be read as any runner's', and offers no other runner to try."""
    from referee.cli import main

    doc = _kaggle_sample()
    doc["steps"] = 5
    path = tmp_path / "nan__m__e.json"
    path.write_text(json.dumps(doc))
    args = ["ingest", str(path), "--store", str(tmp_path / "s.duckdb")] + (["--runner", "kaggle"] if forced else [])
    assert main(args) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "nan__m__e.json" in error and "'steps'" in error and "expected a list of steps" in error, error
    if forced:
        assert "read as kaggle (as asked)" in error and "any runner" not in error and "referee map" not in error


def test_a_kaggle_replay_without_an_id_under_two_file_names_is_one_match(tmp_path):
    """Issue 89: the same replay, naming no id, written under two file names (once re-indented, so the bytes
    differ) is found by its content: one match stored, the second copy set aside as a duplicate naming the match."""
    doc = _kaggle_sample()
    doc.pop("id")
    doc["info"].pop("EpisodeId", None)
    first, second = tmp_path / "a.json", tmp_path / "copy-of-a.json"
    first.write_text(json.dumps(doc))
    second.write_text(json.dumps(doc, indent=1))
    store, report = _ingest(tmp_path, [first, second], runner="kaggle")
    assert (report.accepted, report.quarantined) == (1, 1)
    assert store.table("quarantine")["reason"].tolist() == ["duplicate match id"]
    assert len(store.table("matches")) == 1


@pytest.mark.parametrize("change, said", [
    (lambda d: d.__setitem__("results", "x"), "results: str"),
    (lambda d: d.__setitem__("status", 5), "status: 5"),
    (lambda d: d["results"]["scores"][0].__setitem__("metrics", "x"), "results.scores[0].metrics: str"),
])
def test_an_inspect_header_of_types_inspect_never_writes_is_said_and_its_samples_read(tmp_path, change, said):
    """Issue 89: a .json log whose header holds what Inspect's EvalLog never holds (results as text, a status
    outside started/success/cancelled/error, metrics as text) keeps every sample, and the ingest says which
    field it did not read, instead of passing over it."""
    from conftest import shared_file

    doc = json.loads((shared_file("real", "inspect") / "tests_analysis_test_logs"
                      / "2025-05-12T20-28-13-04-00_popularity.json").read_text())
    samples = len(doc["samples"])
    change(doc)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    store, report = _ingest(tmp_path, [path], runner="inspect")
    assert report.accepted == samples and report.quarantined == 0
    assert any("types Inspect never writes" in w and said in w for w in report.warnings), report.warnings


def test_an_inspect_log_whose_samples_are_not_a_list_is_set_aside_naming_the_field(tmp_path, capsys):
    """Issue 89: `samples: 5` in a .json log was read as a log with no samples (a warning about cancelled
    runs); it is set aside whole naming the field, and the command's error says it was read as Inspect's."""
    from conftest import shared_file
    from referee.cli import main

    doc = json.loads((shared_file("real", "inspect") / "tests_analysis_test_logs"
                      / "2025-05-12T20-28-13-04-00_popularity.json").read_text())
    doc["samples"] = 5
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    assert main(["ingest", str(path), "--store", str(tmp_path / "s.duckdb")]) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "set aside whole" in error and "field 'samples'" in error and "log.json" in error, error
