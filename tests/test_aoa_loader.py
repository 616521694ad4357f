"""Age-of-Agents seasons: the bundled EVAL 01 table, bad season entries and event lines, simulator round trip."""

import json

import pytest

from referee.io.loaders import aoa, detect
from referee.io.loaders.base import LoadOptions, file_hash
from referee.reporting import SAMPLE
from referee.simulators.aoa import eval01_score, simulate_aoa, write_aoa
from referee.io.store import Store
from tests.conftest import write_json

EVAL01 = SAMPLE / "aoa_eval01" / "season.json"


def load(path):
    return aoa.load(path, file_hash(path), LoadOptions())


def test_eval01_table_has_the_published_twelve_rows():
    assert detect(EVAL01) == "aoa"
    result = load(EVAL01)
    assert result.quarantined == 0
    r = result.tables["results"].set_index("player")
    assert len(r) == 12
    assert r.loc["Sunny", "score"] == 15167 and r.loc["Sunny", "rank"] == 1
    assert r.loc["Pickles", "rank"] == 2 and r.loc["Pickles", "team"] == "Rivenmarch"
    assert r.loc["Peanut", "score"] == 0 and r.loc["Peanut", "role"] == "Last Standing"
    assert r.loc["Tofu", "agent"] == "claude-haiku-4-5"
    assert sorted(r.index[r["team"] == "Valdris"]) == ["Biscuit", "Pumpkin", "Scout", "Smokey"]
    assert (r["role"].value_counts().to_dict() == {"Last Standing": 5, "Total Control": 4, "World Peace": 3})
    m = result.tables["measures"]
    comp = m[m.kind == "component"].pivot(index="player", columns="name", values="value")
    # universal + bonus = final for 10 agents; Mochi (bonus not applied) and Peanut (floor) are the exceptions
    agrees = (comp["universal"] + comp["bonus"]).round() == r["score"].reindex(comp.index)
    assert sorted(comp.index[~agrees]) == ["Mochi", "Peanut"]
    assert comp.loc["Mochi", "universal"] + comp.loc["Mochi", "bonus"] == 647
    assert comp.loc["Peanut", "universal"] + comp.loc["Peanut", "bonus"] == -529
    outcome = m[m.kind == "outcome"].pivot(index="player", columns="name", values="value")
    assert outcome.loc["Tofu", "nation_power"] == 269 and outcome.loc["Pickles", "nation_alive"] == 0
    assert "Pepper" not in outcome.index  # Frosthal: no power, no alive status
    # Biscuit's published counters reproduce its score with the EVAL 01 formula
    counters = m[(m.kind == "telemetry") & (m.player == "Biscuit")].set_index("name")["value"].to_dict()
    assert eval01_score(counters, "Total Control") == {"universal": 51, "bonus": 0, "final": 51}


def _season(**over):
    doc = {"season": "s1", "agents": [{"agent": "A", "model": "m", "nation": "N", "mission": "Last Standing",
                                       "final_score": 10}],
           "nations": [{"nation": "N", "power": 5, "alive": True}]}
    doc.update(over)
    return doc


@pytest.mark.parametrize("agent, reason, field", [
    ({"model": "m", "nation": "N", "mission": "Last Standing", "final_score": 1}, "missing field", "agent"),
    ({"agent": "B", "model": "m", "nation": "N", "mission": "Peace", "final_score": 1}, "unknown mission", "mission"),
    ({"agent": "B", "model": "m", "nation": "Q", "mission": "World Peace", "final_score": 1}, "unknown nation", "nation"),
    ({"agent": "B", "model": "m", "nation": "N", "mission": "World Peace", "final_score": "1"}, "wrong type", "final_score"),
    ({"agent": "B", "model": "m", "nation": "N", "mission": "World Peace", "final_score": 1, "counters": {"hugs": 3}},
     "unexpected field", "counters.hugs"),
    ({"agent": "B", "model": "m", "nation": "N", "mission": "World Peace", "final_score": 1, "colour": 1},
     "unexpected field", "colour"),
    ({"agent": "A", "model": "m", "nation": "N", "mission": "World Peace", "final_score": 1}, "player listed twice", "agent"),
])
def test_bad_agent_entries(tmp_path, agent, reason, field):
    doc = _season()
    doc["agents"].append(agent)
    result = load(write_json(tmp_path / "s.json", doc))
    assert (result.read, result.accepted, result.quarantined) == (3, 2, 1)
    row = result.quarantine.iloc[0]
    assert (row.record, row.reason, row.field) == ("agents[1]", reason, field)


def test_nan_counter_and_bad_snapshot(tmp_path):
    raw = json.dumps(_season(snapshots=[{"time": "yesterday", "nation": "N"}]))
    raw = raw.replace('"final_score": 10', '"final_score": 10, "counters": {"votes_cast": NaN}')
    result = load(write_json(tmp_path / "s.json", None, raw=raw))
    got = sorted(zip(result.quarantine.record, result.quarantine.reason))
    assert got == [("agents[0]", "NaN"), ("snapshots[0]", "wrong type")]


@pytest.mark.parametrize("raw, reason", [("", "empty file"), ('{"season": "s", "agents": [', "truncated file"),
                                         ('{"season": "s", "agents": []}', "missing field"), ("[1, 2]", "not this runner")])
def test_unreadable_season_files(tmp_path, raw, reason):
    result = load(write_json(tmp_path / "s.json", None, raw=raw))
    assert (result.read, result.quarantined) == (1, 1) and result.quarantine.iloc[0].reason == reason


EVENT = {"season": "s1", "seq": 1, "agent": "A", "type": "action", "action": "attack", "status": "accepted",
         "time": "2026-06-07T15:00:00Z"}


def _line(**over):
    return json.dumps({k: v for k, v in dict(EVENT, **over).items() if v is not None})


def test_bad_event_lines_are_named_by_line_and_field(tmp_path):
    lines = [
        _line(seq=1),                                   # 1 ok
        _line(seq=2, status="rejected", reason="cooldown"),  # 2 ok
        _line(seq=3, agent=None),                       # 3 missing agent
        _line(seq=4, type="dance"),                     # 4 unknown type
        _line(seq=5, action=None),                      # 5 action without name
        _line(seq=6, status="rejected"),                # 6 rejected without reason
        _line(seq=7, status="maybe"),                   # 7 bad status
        _line(seq=1),                                   # 8 duplicate seq
        _line(seq=9, time="noon"),                      # 9 bad time
        _line(seq=10, colour="red"),                    # 10 unexpected field
        _line(seq="11"),                                # 11 wrong type
        '{"season": "s1", "seq": 12',                  # 12 truncated
        _line(seq=13, value=float("nan")),              # 13 NaN
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (13, 2, 11)
    got = sorted((int(r), reason, field) for r, reason, field in
                 zip(result.quarantine.record, result.quarantine.reason, result.quarantine.field))
    assert got == [(3, "missing field", "agent"), (4, "unknown event type", "type"), (5, "missing field", "action"),
                   (6, "missing field", "reason"), (7, "wrong value", "status"), (8, "duplicate event", "seq"),
                   (9, "wrong type", "time"), (10, "unexpected field", "colour"), (11, "wrong type", "seq"),
                   (12, "truncated line", None), (13, "NaN", "value")]
    assert all(str(path) in m for m in result.quarantine.message)


def test_events_without_their_season_are_set_aside(tmp_path, store):
    path = tmp_path / "events.jsonl"
    path.write_text(_line(seq=1) + "\n" + _line(seq=2) + "\n")
    report = store.ingest([path])
    assert (report.read, report.accepted, report.quarantined) == (2, 0, 2)
    assert set(report.quarantine.reason) == {"unknown match"}
    assert list(report.quarantine.raw) == path.read_text().splitlines()
    write_json(tmp_path / "season.json", _season())
    path.write_text(_line(seq=1) + "\n")
    report = store.ingest([tmp_path])
    assert (report.accepted, report.quarantined) == (1 + 2, 0)  # the event and the season's agent + nation


@pytest.mark.parametrize("validity", [0.0, 0.9])
def test_simulated_season_round_trips(tmp_path, validity):
    sim = simulate_aoa(n_agents=10, n_nations=5, seed=4, validity=validity)
    paths = write_aoa(sim, tmp_path / "sim")
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([paths["logs"]], strict=True)
        measures = store.table("measures")
        events = store.table("events")
        results = store.table("results").set_index("player")
    truth = sim.truth
    # every event line, agent, nation, snapshot and peace-timer reading is one record
    assert report.read == report.accepted == sim.truth["n_events"] + 10 + 5 + 9 * 5 + len(sim.season["peace"])
    for name, agent in truth["agents"].items():
        got = measures[(measures.player == name) & (measures.kind == "telemetry")].set_index("name")["value"]
        assert got.to_dict() == agent["counters"]
        assert results.loc[name, "score"] == agent["score"]["final"]
        assert results.loc[name, "role"] == agent["mission"] and results.loc[name, "team"] == agent["nation"]
        acts = events[(events.actor == name) & (events.stage == "act")]
        assert (acts.status == "accepted").sum() == agent["counters"]["actions_total"]
        assert (acts.status == "rejected").sum() == agent["counters"]["wasted_actions"]
    assert events[events.stage == "act"].seq.is_unique
