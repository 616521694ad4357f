"""The one-record-per-match runner, on the real GameBench matches and on bad records."""

import json

from referee.io.loaders import detect, records
from referee.io.loaders.base import LoadOptions, file_hash
from tests.conftest import shared_file, write_json


def load(path):
    return records.load(path, file_hash(path), LoadOptions())


def test_gamebench_counts():
    path = shared_file("gamebench", "matches.json")
    assert detect(path) == "records"
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (277, 277, 0)
    matches, results = result.tables["matches"], result.tables["results"]
    assert len(matches) == 277 and matches["game"].nunique() == 9
    assert results["agent"].nunique() == 7
    assert set(results["agent"]) == {"random", "human", "gpt-3", "gpt-3-cot", "gpt-4", "gpt-4-cot", "gpt-4-rap"}
    assert (matches["n_players"] == 2).all()
    spread = results.groupby("match_id")["score"].agg(lambda s: s.max() - s.min())
    assert int((spread == 0).sum()) == 18
    # a tie shares rank 1; otherwise the winner is rank 1 and the loser rank 2
    ranks = results.groupby("match_id")["rank"].apply(sorted)
    assert sum(r == [1.0, 1.0] for r in ranks) == 18
    assert sum(r == [1.0, 2.0] for r in ranks) == 277 - 18


def test_bad_records(tmp_path):
    docs = [
        {"game": "g", "a": 1.0, "b": 0.0},
        {"game": "g", "a": 1.0},
        {"game": "g", "a": "one", "b": 0.0},
        {"game": ["g"], "a": 1.0, "b": 0.0},
        "not an object",
    ]
    raw = json.dumps(docs)[:-1] + ', {"game": "g", "a": NaN, "b": 1.0}]'
    path = write_json(tmp_path / "m.json", None, raw=raw)
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (6, 1, 5)
    got = list(zip(result.quarantine.record, result.quarantine.reason, result.quarantine.field))
    assert got == [("1", "missing field", None), ("2", "wrong type", "a"), ("3", "wrong type", "game"),
                   ("4", "wrong type", None), ("5", "NaN", "a")]
