"""Pairwise arenas: the real LLMFAO judgments, Chatbot-Arena spellings, bad rows, simulator round trip."""

import pandas as pd

from referee.io.loaders import arena, detect
from referee.io.loaders.base import LoadOptions, file_hash
from referee.simulators.arena import simulate_arena, write_arena
from tests.conftest import shared_file


def load(path, **mapping):
    return arena.load(path, file_hash(path), LoadOptions(mapping=mapping))


def test_llmfao_counts():
    path = shared_file("llmfao", "llmfao.csv")
    assert detect(path) == "arena"
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (8931, 8931, 0)
    matches, results = result.frame("matches"), result.frame("results")
    assert len(matches) == 8931 and results["agent"].nunique() == 59
    raw = pd.read_csv(path)
    assert set(results["agent"]) == set(raw["left"]) | set(raw["right"])
    # the winner column: left -> first wins, right -> second wins, tie -> half each
    first = results[results.role == "first"].set_index("match_id")["score"]
    counts = raw["winner"].value_counts()
    assert (first == 1).sum() == counts["left"] and (first == 0).sum() == counts["right"]
    assert (first == 0.5).sum() == counts["tie"]
    assert matches["game"].nunique() == raw["prompt"].nunique()


def test_chatbot_arena_spelling_and_both_bad(tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text("model_a,model_b,winner,judge,tstamp\n"
                    "x,y,model_a,j1,1700000000\nx,y,tie (bothbad),j2,1700000060\nx,y,model_b,j1,1700000120\n")
    assert detect(path) == "arena"
    result = load(path)
    r = result.frame("results")
    assert r[r.role == "first"]["score"].tolist() == [1.0, 0.0, 0.0]
    assert r[r.role == "second"]["rank"].tolist() == [2.0, 1.0, 1.0]
    assert str(result.frame("matches")["started_at"].iloc[0]) == "2023-11-14 22:13:20"


def test_bad_rows(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("left,right,winner,time\n"
                    "x,y,left,2026-01-01T00:00:00Z\n"   # 2 ok
                    ",y,left,\n"                         # 3 missing first
                    "x,y,,\n"                            # 4 missing winner
                    "x,y,maybe,\n"                       # 5 unknown winner
                    "x,x,tie,\n"                         # 6 self-comparison
                    "x,y,right,soon\n")                  # 7 unreadable time
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (6, 1, 5)
    got = sorted(zip(result.quarantine.record.astype(int), result.quarantine.reason, result.quarantine.field))
    assert got == [(3, "missing value", "left"), (4, "missing value", "winner"), (5, "wrong value", "winner"),
                   (6, "self-comparison", "right"), (7, "wrong type", "time")]


def test_mapping_and_missing_columns(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("red,blue,outcome\nx,y,first\n")
    assert load(path).quarantine.iloc[0].reason == "missing field"
    result = load(path, first="red", second="blue", winner="outcome")
    assert result.accepted == 1


def test_simulated_arena_round_trips(tmp_path):
    sim = simulate_arena(n_agents=6, n_judgments=3000, seed=2)
    paths = write_arena(sim, tmp_path / "sim")
    result = load(paths["judgments"])
    assert result.accepted == 3000
    r = result.frame("results")
    firsts = r[r.role == "first"].reset_index(drop=True)
    expected = sim.judgments["winner"].map({"first": 1.0, "second": 0.0, "tie": 0.5, "tie-both-bad": 0.0})
    assert firsts["score"].tolist() == expected.tolist()
    # win rates rank like the true ratings
    wins = r.groupby("agent")["score"].mean()
    truth = pd.Series(sim.truth["ratings"])
    assert wins.rank().corr(truth.reindex(wins.index).rank()) > 0.9
