"""Ranked multiplayer games and their turn logs: bad records, ties, simulator round trip."""

import json

import pytest

from referee.io.loaders import detect, ranked
from referee.io.loaders.base import LoadOptions, file_hash
from referee.simulators.ranked import simulate_ranked, write_ranked
from referee.io.store import Store


def load(path):
    return ranked.load(path, file_hash(path), LoadOptions())


def _game(gid="g1", **over):
    game = {"game_id": gid, "game": "werewolf",
            "participants": [{"agent": "a", "points": 3}, {"agent": "b", "points": 3}, {"agent": "c", "points": 1}]}
    game.update(over)
    return game


def test_ties_and_derived_ranks(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(_game()) + "\n")
    assert detect(path) == "ranked"
    r = load(path).tables["results"].set_index("player")["rank"].to_dict()
    assert r == {"a": 1.0, "b": 1.0, "c": 3.0}


@pytest.mark.parametrize("game, reason, field", [
    (_game(participants=[{"agent": "a", "points": 1}]), "wrong value", "participants"),
    (_game(participants=[{"agent": "a", "points": 1}, {"agent": "a", "points": 2}]), "player listed twice", "participants"),
    (_game(participants=[{"agent": "a", "points": 1}, {"points": 2}]), "missing field", "participants[1].agent"),
    (_game(participants=[{"agent": "a", "points": 1}, {"agent": "b"}]), "missing field", "participants[1].points"),
    (_game(participants=[{"agent": "a", "points": 1}, {"agent": "b", "points": "2"}]), "wrong type", "participants[1].points"),
    (_game(participants=[{"agent": "a", "rank": 1}, {"agent": "b", "rank": 0}]), "wrong value", "participants[1].rank"),
    (_game(participants=[{"agent": "a", "rank": 1}, {"agent": "b", "points": 2}]), "missing field", "participants"),
    (_game(colour="red"), "unexpected field", "colour"),
    ({"game": "x", "participants": []}, "missing field", "game_id"),
])
def test_bad_games(tmp_path, game, reason, field):
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(_game("ok")) + "\n" + json.dumps(game) + "\n")
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (2, 1, 1)
    row = result.quarantine.iloc[0]
    assert (row.record, row.reason, row.field) == ("2", reason, field), row.message


def test_malformed_duplicate_and_nan_games(tmp_path):
    path = tmp_path / "games.jsonl"
    nan = json.dumps(_game("n")).replace('"points": 1', '"points": NaN')
    path.write_text(json.dumps(_game()) + "\n" + json.dumps(_game()) + "\n{oops\n" + nan + "\n")
    result = load(path)
    got = list(zip(result.quarantine.record, result.quarantine.reason))
    assert got == [("2", "duplicate match id"), ("3", "malformed JSON"), ("4", "NaN")]


def test_bad_turns(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join([
        json.dumps({"game_id": "g1", "turn": 1, "player": "a", "type": "vote", "target": "b"}),
        json.dumps({"game_id": "g1", "turn": 1, "player": "a", "type": "dance"}),
        json.dumps({"game_id": "g1", "turn": 1, "type": "move"}),
        json.dumps({"game_id": "g1", "turn": 2, "player": "a", "type": "move", "seq": 1}),
    ]) + "\n")
    assert detect(path) == "ranked"
    result = load(path)
    got = list(zip(result.quarantine.record, result.quarantine.reason, result.quarantine.field))
    assert got == [("2", "wrong value", "type"), ("3", "missing field", "player"), ("4", "duplicate event", "seq")]


def test_round_trip(tmp_path):
    sim = simulate_ranked(n_agents=8, n_games=50, seed=5)
    paths = write_ranked(sim, tmp_path / "sim")
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([paths["games"].parent], strict=True)
        results, events = store.table("results"), store.table("events")
    assert report.accepted == 50 + sim.truth["n_turns"]
    expected = [(g["game_id"], p["player"], p["agent"], p["points"], p["rank"]) for g in sim.games for p in g["participants"]]
    got = list(results[["match_id", "player", "agent", "score", "rank"]].itertuples(index=False, name=None))
    assert sorted(got) == sorted(expected)
    assert len(events) == sim.truth["n_turns"] and set(events.stage) <= {"message", "move", "vote"}
    assert 3 <= results.groupby("match_id").size().min() and results.groupby("match_id").size().max() <= 8
