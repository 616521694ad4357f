"""Concordia loader: valid records, and every bad-input class named by file, record and field."""

import json
import math

import pytest

from referee.io.loaders import concordia, detect
from referee.io.loaders.base import LoadOptions, NotThisRunner, file_hash
from tests.conftest import write_json


def load(path, catalogue=None):
    return concordia.load(path, file_hash(path), LoadOptions(catalogue=catalogue))


def test_valid_record_becomes_one_match_and_its_players(tmp_path, record, contest):
    path = write_json(tmp_path / "alpha__m__e.json", [record(), record(repetition_idx="1")])
    result = load(path, contest)
    assert (result.read, result.accepted, result.quarantined) == (2, 2, 0)
    m = result.tables["matches"].iloc[0]
    assert m.match_id == "concordia:haggling_0:0:alpha_agent"
    assert (m.game, m.scenario, m.repetition, m.n_players) == ("haggling", "haggling_0", "0", 4)
    assert json.loads(m["attrs"])["focal_per_capita_score"] == 2.0
    r = result.tables["results"]
    first = r[r.match_id == m.match_id].set_index("player")
    assert first.loc["Ann", "group"] == "focal" and first.loc["Ann", "agent"] == "alpha_agent"
    assert first.loc["Dov", "group"] == "background" and first.loc["Dov", "agent"] == "rational_agent"
    assert first["rank"].to_dict() == {"Ann": 4.0, "Ben": 2.0, "Cat": 3.0, "Dov": 1.0}


def test_visitor_mode_makes_visitors_focal(tmp_path, record):
    rec = record(focal_is_resident=False, focal_per_capita_score=5.0, background_per_capita_score=2.0)
    result = load(write_json(tmp_path / "v.json", rec))
    groups = result.tables["results"].set_index("player")["group"]
    assert groups["Dov"] == "focal" and groups["Ann"] == "background"


def test_negative_infinity_is_kept(tmp_path, record):
    rec = record()
    rec["simulation_outcome"]["resident_scores"] = {"Ann": -math.inf, "Ben": -math.inf, "Cat": -math.inf}
    rec.update(focal_per_capita_score=-math.inf, ungrouped_per_capita_score=-math.inf)
    path = write_json(tmp_path / "inf.json", None, raw=json.dumps(rec))  # json writes -Infinity
    assert "-Infinity" in path.read_text()
    result = load(path)
    assert result.accepted == 1
    assert (result.tables["results"].set_index("player").loc["Ann", "score"]) == -math.inf


def _bad(record):
    rec = record()
    del rec["focal_agent"]
    missing = rec
    rec = record()
    rec["simulation_outcome"]["resident_scores"]["Ann"] = float("nan")
    nan = rec
    rec = record()
    rec["simulation_outcome"]["visitor_scores"] = {"Ann": 5.0}
    twice = rec
    return [
        ("missing field", missing, "focal_agent"),
        ("unexpected field", record(colour="red"), "colour"),
        ("wrong type", record(focal_is_resident="yes"), "focal_is_resident"),
        ("wrong type", record(repetition_idx="first"), "repetition_idx"),
        ("wrong type", record(focal_per_capita_score="2"), "focal_per_capita_score"),
        ("NaN", nan, "simulation_outcome.resident_scores.Ann"),
        ("player listed twice", twice, "simulation_outcome.visitor_scores"),
        ("unknown scenario", record(scenario="moon_base_0"), "scenario"),
        ("inconsistent", record(focal_per_capita_score=9.0), "focal_per_capita_score"),
    ]


def test_each_bad_record_is_quarantined_with_file_record_and_field(tmp_path, record, contest):
    cases = _bad(record)
    records = [record(repetition_idx="7")] + [c[1] for c in cases]
    path = write_json(tmp_path / "bad.json", None, raw=json.dumps(records))
    result = load(path, contest)
    assert result.read == len(records) == result.accepted + result.quarantined
    assert result.accepted == 1
    q = result.quarantine.reset_index(drop=True)
    for i, (reason, _, field) in enumerate(cases):
        row = q.iloc[i]
        assert (row.reason, row.field, row.record) == (reason, field, str(i + 1)), row.message
        assert row.message.startswith(f"{path}, record {i + 1}, field '{field}'")
        assert json.loads(row.raw.replace("NaN", "null"))["scenario"]  # the record is kept


def test_duplicate_match_id_and_duplicate_key_within_a_file(tmp_path, record):
    dup_key = json.dumps(record())[:-1] + ', "scenario": "haggling_1"}'
    path = write_json(tmp_path / "dup.json", None, raw=f"[{json.dumps(record())}, {json.dumps(record())}]")
    result = load(path)
    assert (result.accepted, result.quarantined) == (1, 1)
    assert result.quarantine.iloc[0].reason == "duplicate match id"
    assert result.quarantine.iloc[0].record == "1"
    path = write_json(tmp_path / "dupkey.json", None, raw=dup_key)
    result = load(path)
    assert (result.read, result.quarantined) == (1, 1)
    assert (result.quarantine.iloc[0].reason, result.quarantine.iloc[0].field) == ("duplicate key", "scenario")


@pytest.mark.parametrize("raw, reason", [
    ("", "empty file"),
    ("   \n", "empty file"),
    ('[{"scenario": "haggling_0", "focal_agent": "a"', "truncated file"),
    ('[{"scenario": "haggling_0",, }]', "malformed JSON"),
])
def test_unreadable_files_count_as_one_quarantined_record(tmp_path, raw, reason):
    path = write_json(tmp_path / "f.json", None, raw=raw)
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (1, 0, 1)
    row = result.quarantine.iloc[0]
    assert row.reason == reason and row.record == "-" and str(path) in row.message
    assert row.raw == raw


def test_another_runners_records_are_not_this_runner(tmp_path):
    path = write_json(tmp_path / "f.json", None, raw='[{"game": "chess", "gpt-4": 1.0, "random": 0.0}]')
    with pytest.raises(NotThisRunner, match="focal_agent") as caught:
        load(path)
    assert caught.value.runner == "concordia"


def test_truncated_message_names_line_and_column(tmp_path):
    path = write_json(tmp_path / "t.json", None, raw='[\n {"scenario": "x",\n  "focal_agent": ')
    message = load(path).quarantine.iloc[0].message
    assert "line 3" in message and "column" in message


def test_detection(tmp_path, record):
    assert detect(write_json(tmp_path / "a.json", [record()])) == "concordia"
    assert detect(write_json(tmp_path / "b.json", record())) == "concordia"
    assert detect(write_json(tmp_path / "c.json", [{"game": "g", "x": 1, "y": 0}])) == "records"
    assert detect(write_json(tmp_path / "d.json", {"hello": 1})) is None


def _earlier(record, outcomes, **per_capita):
    """A Concordia 1.8.0-1.8.9 ScenarioResult: `simulation_outcomes` (a list) and no repetition_idx."""
    rec = {k: v for k, v in record().items() if k not in ("repetition_idx", "simulation_outcome")}
    return {**rec, "simulation_outcomes": outcomes, **per_capita}


def test_a_v1_8_0_result_is_one_match_per_repetition_checked_against_its_averages(tmp_path, record, contest):
    first = {"resident_scores": {"Ann": 1.0, "Ben": 3.0}, "visitor_scores": {"Dov": 5.0}, "metadata": {}}
    second = {"resident_scores": {"Ann": 4.0, "Ben": 6.0}, "visitor_scores": {"Dov": 1.0}, "metadata": {}}
    # Concordia averages each repetition's focal mean: (2 + 5) / 2; background (5 + 1) / 2; ungrouped (3 + 11/3) / 2
    good = _earlier(record, [first, second], focal_per_capita_score=3.5, background_per_capita_score=3.0,
                    ungrouped_per_capita_score=(3.0 + 11 / 3) / 2)
    bad = dict(good, scenario="haggling_1", focal_per_capita_score=9.0)
    result = load(write_json(tmp_path / "alpha__m__e.json", [good, bad]), contest)
    assert (result.read, result.accepted, result.quarantined) == (4, 2, 2)
    matches = result.tables["matches"].set_index("repetition")
    assert sorted(matches.index) == ["0", "1"] and set(matches["scenario"]) == {"haggling_0"}
    scores = result.tables["results"].set_index(["match_id", "player"])["score"]
    assert scores[("concordia:haggling_0:1:alpha_agent", "Ann")] == 4.0
    assert set(result.quarantine["reason"]) == {"inconsistent"}
    assert set(result.quarantine["record"]) == {"1.simulation_outcomes[0]", "1.simulation_outcomes[1]"}


def test_a_v1_8_0_result_without_its_outcomes_keeps_its_per_capita_scores(tmp_path, record, contest):
    rec = _earlier(record, [], focal_per_capita_score=1.5, background_per_capita_score=2.0)
    result = load(write_json(tmp_path / "alpha__m__e.json", rec), contest)
    rows = result.tables["results"].set_index("group")
    assert result.tables["matches"]["repetition"].tolist() == ["mean"]
    assert (rows.loc["focal", "score"], rows.loc["background", "score"]) == (1.5, 2.0)
    assert (rows.loc["focal", "rank"], rows.loc["background", "rank"]) == (2.0, 1.0)
