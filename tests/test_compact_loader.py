"""COMPACT traces: simulator round trip and every bad-input class by line and field."""

import json

import numpy as np
import pytest

from referee.io.loaders import compact, detect
from referee.io.loaders.base import LoadOptions, file_hash
from referee.simulators.compact import simulate_compact, write_compact
from referee.io.store import Store


def load(path):
    return compact.load(path, file_hash(path), LoadOptions())


def test_round_trip(tmp_path):
    sim = simulate_compact(n_agents=5, n_games=40, seed=3)
    paths = write_compact(sim, tmp_path / "sim")
    assert detect(paths["trace"]) == "compact"
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([paths["trace"]], strict=True)
        matches, results = store.table("matches"), store.table("results")
        events, measures = store.table("events"), store.table("measures")
    lines = sim.lines
    assert report.read == report.accepted == len(lines)
    kinds = {k: [x for x in lines if x["record"] == k] for k in ("game", "player", "message", "prediction",
                                                                  "reasoning", "action", "reward", "judge")}
    assert len(matches) == len(kinds["game"]) and len(results) == len(kinds["player"])
    assert (events.stage == "communicate").sum() == len(kinds["message"])
    assert (events.stage == "predict").sum() == len(kinds["prediction"])
    assert (events.type == "action").sum() == len(kinds["action"]) and len(measures) == len(kinds["judge"])
    # rewards land on the right player, and agents' mean rewards rank like their true skills
    rewards = {(x["game_id"], x["player"]): x["reward"] for x in kinds["reward"]}
    assert all(rewards[(r.match_id, r.player)] == r.score for r in results.itertuples())
    means = results.groupby("agent")["score"].mean()
    t = sim.truth
    # the reward's expectation from the truth: skill plus the drivers (influence counts in half the games)
    expected = {a: 0.3 * t["skill"][a] + t["drivers"]["theory_of_mind"] * t["tom"][a]
                + 0.5 * t["drivers"]["influence"] * np.clip((1.5 + t["influence"][a]) / 3, 0, 1) for a in t["skill"]}
    assert np.corrcoef(means.values, [expected[a] for a in means.index])[0, 1] > 0.8
    # communication off means no messages in that game
    silent = set(matches.match_id[~matches.communication.astype(bool)])
    assert silent and not set(events.match_id[events.stage == "communicate"]) & silent
    # predictions can be checked against actions from events alone: accuracy tracks the truth
    pred = events[events.stage == "predict"][["match_id", "round", "actor", "target", "text"]]
    act = events[events.type == "action"][["match_id", "round", "actor", "text"]].rename(
        columns={"actor": "target", "text": "actual"})
    joined = pred.merge(act, on=["match_id", "round", "target"]).merge(
        results[["match_id", "player", "agent"]].rename(columns={"player": "actor"}), on=["match_id", "actor"])
    assert len(joined) == len(pred)
    accuracy = (joined.text == joined.actual).groupby(joined.agent).mean()
    assert np.corrcoef(accuracy.values, [sim.truth["tom"][a] for a in accuracy.index])[0, 1] > 0.8


GOOD = [
    {"record": "game", "game_id": "g", "game": "hupi", "communication": True},
    {"record": "player", "game_id": "g", "player": "A", "agent": "x"},
    {"record": "player", "game_id": "g", "player": "B", "agent": "y"},
    {"record": "action", "game_id": "g", "round": 1, "player": "A", "action": "bid 3", "value": 3},
    {"record": "reward", "game_id": "g", "player": "A", "reward": 1.0},
    {"record": "reward", "game_id": "g", "player": "B", "reward": 0.0},
]


@pytest.mark.parametrize("line, reason, field", [
    ({"record": "dance", "game_id": "g"}, "wrong value", "record"),
    ({"game_id": "g", "player": "A"}, "missing field", "record"),
    ({"record": "message", "game_id": "g", "round": 1, "sender": "A", "recipient": "B"}, "missing field", "text"),
    ({"record": "message", "game_id": "g", "round": 1, "sender": "A", "recipient": "Z", "text": "hi"}, "unknown player", "recipient"),
    ({"record": "action", "game_id": "g", "round": 1, "player": "Q", "value": 2}, "unknown player", "player"),
    ({"record": "action", "game_id": "g", "round": 1, "player": "B"}, "missing field", "action"),
    ({"record": "judge", "game_id": "g", "judge": "j", "metric": "influence", "subject": "A", "value": 5}, "wrong value", "value"),
    ({"record": "judge", "game_id": "g", "judge": "j", "metric": "charm", "subject": "A", "value": 1}, "wrong value", "metric"),
    ({"record": "player", "game_id": "g", "player": "A", "agent": "z"}, "player listed twice", "player"),
    ({"record": "reward", "game_id": "g", "player": "B", "reward": 2.0}, "player listed twice", "player"),
    ({"record": "game", "game_id": "g", "game": "hupi"}, "duplicate match id", "game_id"),
    ({"record": "game", "game_id": "h", "game": "chess"}, "wrong value", "game"),
    ({"record": "player", "game_id": "nowhere", "player": "A", "agent": "x"}, "unknown match", "game_id"),
    ({"record": "action", "game_id": "g", "round": "one", "player": "A", "value": 1}, "wrong type", "round"),
    ({"record": "action", "game_id": "g", "round": 1, "player": "A", "value": 1, "mood": "ok"}, "unexpected field", "mood"),
])
def test_bad_lines(tmp_path, line, reason, field):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in GOOD + [line]))
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (7, 6, 1)
    row = result.quarantine.iloc[0]
    assert (row.record, row.reason, row.field) == ("7", reason, field), row.message
    assert row.message.startswith(f"{path}, record 7")


def test_nan_reward_and_empty_file(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in GOOD[:5]) +
                    '{"record": "reward", "game_id": "g", "player": "B", "reward": NaN}\n')
    result = load(path)
    assert result.quarantine.iloc[0].reason == "NaN" and result.quarantine.iloc[0].record == "6"
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    assert load(empty).quarantine.iloc[0].reason == "empty file"


def test_duplicate_game_across_files_sets_aside_every_line(tmp_path, store):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text("".join(json.dumps(x) + "\n" for x in GOOD))
    two.write_text("".join(json.dumps(x) + "\n" for x in GOOD) + "\n")
    store.ingest([one])
    report = store.ingest([two])
    assert (report.read, report.accepted, report.quarantined) == (6, 0, 6)
    assert sorted(report.quarantine.record.astype(int)) == [1, 2, 3, 4, 5, 6]
    assert [json.loads(r) for r in report.quarantine.sort_values("record").raw] == GOOD
