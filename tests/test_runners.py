"""Runners played for real: TextArena games played offline with seeded random players, recorded with
`record_textarena`, ingested with no options, and checked against what TextArena itself reported; the outcome
types (win, loss, tie, forfeit, aborted) and how ratings treat them."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.io.loaders.textarena import outcomes
from referee.io.recorders import record_textarena
from referee.io.store import Store
from referee.prepare.comparisons import ballots_from_tables, comparisons_from_tables
from referee.prepare.selection import outcome_note

textarena = pytest.importorskip("textarena", reason="the runners extra (pip install referee[runners])")
pytestmark = pytest.mark.runners

MOVES = ["[0]", "[1]", "[2]", "[3]", "[4]", "[5]", "[6]", "[7]", "[8]", "[call]", "[fold]", "[bid 2 3]", "[up]",
         "[left]", "[vote 1]", "hello"]


def play(env_id: str, players: int, seed: int, agents: list[str]) -> tuple[dict, dict]:
    """One game of `env_id` with random moves (seeded); returns what env.close() reported."""
    env = textarena.make(env_id=env_id)
    env.reset(num_players=players, seed=seed)
    rng = random.Random(seed)
    done, steps = False, 0
    while not done and steps < 500:
        env.get_observation()
        done, _ = env.step(action=rng.choice(MOVES))
        steps += 1
    return env.close()


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("textarena")
    log = root / "logs" / "arena.jsonl"
    pool = [f"random-{k}" for k in range(5)]
    reported = []
    for seed in range(24):
        env_id, n = [("TicTacToe-v0", 2), ("LiarsDice-v0", 4), ("Snake-v0", 3), ("SecretMafia-v0", 6)][seed % 4]
        seats = random.Random(100 + seed).sample(pool * 2, n)
        agents = dict(enumerate(seats))
        if len(set(seats)) < n:  # one agent per seat: a player plays itself nowhere
            agents = {i: f"{seats[i]}#{i}" for i in range(n)}
        rewards, info = play(env_id, n, seed, list(agents.values()))
        record_textarena(log, env_id, agents, rewards, info, seed=seed, game_id=f"g{seed:02d}")
        reported.append((f"g{seed:02d}", env_id, agents, rewards, info))
    store = root / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(log)]) == 0  # detected with no options
    return store, reported


def test_every_game_and_player_is_ingested_as_textarena_reported(played):
    store, reported = played
    with Store(store, read_only=True) as s:
        matches, results = s.table("matches"), s.table("results")
    assert set(matches["runner"]) == {"textarena"} and len(matches) == len(reported)
    for game_id, env_id, agents, rewards, info in reported:
        match = matches.set_index("match_id").loc[game_id]
        assert match["game"] == env_id and match["n_players"] == len(agents)
        mine = results[results["match_id"] == game_id].set_index("player")
        for pid, reward in rewards.items():
            row = mine.loc[f"player {pid}"]
            assert (row["agent"], row["score"], row["role"]) == (agents[pid], reward, info[pid]["role"])
            assert json.loads(row["attrs"])["invalid_move"] == info[pid]["invalid_move"]
        best = max(rewards.values())  # the documented rule, written here apart from the loader's
        for pid, reward in rewards.items():
            expected = ("tie" if len(set(rewards.values())) == 1 else "win" if reward == best
                        else "forfeit" if info[pid]["invalid_move"] else "loss")
            assert mine.loc[f"player {pid}", "outcome"] == expected
    mafia = results[results["role"].isin(["Mafia", "Doctor", "Detective", "Villager"])]
    assert len(mafia) > 0  # hidden-role games keep the role


def test_forfeits_lose_to_everyone_in_ratings(played):
    store, _ = played
    with Store(store, read_only=True) as s:
        matches, results = s.table("matches"), s.table("results")
    forfeits = results[results["outcome"] == "forfeit"]
    assert len(forfeits) > 0 and "forfeit(s) counted as losses" in outcome_note(results)
    comparisons = comparisons_from_tables(matches, results)
    for row in forfeits.itertuples():
        others = results[(results["match_id"] == row.match_id) & (results["player"] != row.player)
                         & (results["outcome"] != "forfeit")]
        mine = comparisons[(comparisons["cluster"] == row.match_id)
                           & ((comparisons["a"] == row.agent) | (comparisons["b"] == row.agent))]
        lost = ((mine["a"] == row.agent) & (mine["outcome"] == 0)) | ((mine["b"] == row.agent) & (mine["outcome"] == 1))
        against = mine[mine["a"].isin(others["agent"]) | mine["b"].isin(others["agent"])]
        assert lost[against.index].all()


def test_outcome_types_in_hand_examples():
    assert outcomes([1, -1], [False, True]) == ["win", "forfeit"]
    assert outcomes([0, 0, 0], [False, False, False]) == ["tie", "tie", "tie"]
    assert outcomes([1, 1, -1, 1], [False, False, True, False]) == ["win", "win", "forfeit", "win"]  # a team wins
    assert outcomes([4, 0, -1], [True, True, False]) == ["win", "forfeit", "loss"]


def test_aborted_matches_are_left_out_and_counted(tmp_path):
    rows = [{"match": "m1", "agent": "a", "score": 1, "outcome": "win"}, {"match": "m1", "agent": "b", "score": 0, "outcome": "loss"},
            {"match": "m2", "agent": "a", "score": 0, "outcome": "aborted"},
            {"match": "m2", "agent": "b", "score": 0, "outcome": "aborted"},
            {"match": "m3", "agent": "a", "score": 0, "outcome": "loss"}, {"match": "m3", "agent": "b", "score": 1, "outcome": "win"},
            {"match": "m4", "agent": "a", "score": 5, "outcome": "forfeit"}, {"match": "m4", "agent": "b", "score": 2, "outcome": "loss"}]
    path = tmp_path / "games.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([path], runner="table")
        matches, results = store.table("matches"), store.table("results")
    comparisons = comparisons_from_tables(matches, results)
    assert sorted(comparisons["cluster"]) == ["m1", "m3", "m4"]  # m2 aborted: no comparison
    m4 = comparisons[comparisons["cluster"] == "m4"].iloc[0]
    assert (m4["a"], m4["outcome"]) in (("a", 0.0), ("b", 1.0))  # the forfeit loses despite its higher score
    assert set(ballots_from_tables(matches, results)["ballot"]) == {"m1", "m3", "m4"}
    assert outcome_note(results) == ("1 forfeit(s) counted as losses to every other player of their match; 1 aborted "
                                     "match(es) left out of every rating and ranking (no result)")
    bad = tmp_path / "bad.csv"
    bad.write_text("match,agent,score,outcome\nm9,a,1,victory\nm9,b,0,loss\n")
    with Store(tmp_path / "t.duckdb") as store:
        report = store.ingest([bad], runner="table")
    assert report.quarantined == 1 and "outcome 'victory' is not one of" in report.quarantine["message"].iloc[0]


def test_ratings_command_says_how_outcomes_were_treated(played, tmp_path, capsys):
    store, _ = played
    assert main(["ratings", "--store", str(store), "--method", "bt", "--out", str(tmp_path / "r")]) == 0
    assert "forfeit(s) counted as losses" in capsys.readouterr().out
    ratings = pd.read_csv(tmp_path / "r" / "ratings.csv")
    assert ratings["rating"].notna().sum() >= 5 and np.isfinite(ratings["rating"].dropna()).all()
