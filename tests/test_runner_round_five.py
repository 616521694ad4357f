"""Real runner output, round five (issue 103): the arena runner's documented `--map first=COLUMN` route, a result
written as codes read through a mapping file's `[values]` (LLM Game Benchmark's `Result`: winner1st, winner2nd,
draw, disqualified1st/2nd, networkerror), a disqualification stored as a forfeit, a network error as an aborted
game, and an aborted row without a score kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import referee
from referee.cli import main
from referee.io.store import Store

# the header research-outcome/LLM-Game-Benchmark writes (outputs/<game>_<prompt>_<time>_all.csv), and its codes
HEADER = ["UUID", "DateTime", "GameType", "PromptType", "PromptVersion", "GameNumber", "Player1", "Player2", "Result",
          "GameDuration", "TotalMoves"]
CODES = ("winner1st", "winner2nd", "draw", "disqualified1st", "disqualified2nd", "networkerror")
MAPPING = """[columns]
first = "Player1"
second = "Player2"
winner = "Result"
prompt = "GameType"

[values]
winner = { winner1st = "first", winner2nd = "second", draw = "tie", disqualified1st = "forfeit-first", disqualified2nd = "forfeit-second", networkerror = "aborted" }
"""


def _benchmark_games(n: int = 600, seed: int = 3) -> pd.DataFrame:
    """Games in the benchmark's CSV shape: 6 models, every ordered pair, results drawn by skill, a few codes of
    every kind."""
    rng = np.random.default_rng(seed)
    models = ["gpt-4o", "gpt-4-turbo", "gemini-1.5-pro", "gemini-1.5-flash", "meta.llama3-70b-instruct-v1:0",
              "anthropic.claude-3-sonnet-20240229-v1:0"]
    skill = dict(zip(models, [1.2, 0.8, 0.5, -0.2, -0.6, 0.1]))
    rows = []
    for k in range(n):
        a, b = rng.choice(models, 2, replace=False)
        u = rng.random()
        if u < 0.03:
            result = "networkerror"
        elif u < 0.08:
            result = "disqualified1st" if rng.random() < 0.5 else "disqualified2nd"
        elif u < 0.13:
            result = "draw"
        else:
            result = "winner1st" if rng.random() < 1 / (1 + np.exp(skill[b] - skill[a] - 0.3)) else "winner2nd"
        rows.append([f"u{k // 5}", "240612-192252", "connect-four", "list", "2024-06-12", k % 5 + 1, a, b, result,
                     30, 25])
    return pd.DataFrame(rows, columns=HEADER)


def test_the_arena_runner_reads_columns_by_any_name_with_map(tmp_path, capsys):
    table = pd.DataFrame({"m1": ["a", "b", "a", "c"], "m2": ["b", "c", "c", "a"], "winner": ["first", "second",
                                                                                        "tie", "first"]})
    table.to_csv(tmp_path / "t.csv", index=False)
    store = tmp_path / "a.duckdb"
    assert main(["ingest", str(tmp_path / "t.csv"), "--runner", "arena", "--map", "first=m1", "--map", "second=m2",
                 "--store", str(store)]) == 0
    with Store(store, read_only=True) as s:
        assert len(s.matches()) == 4 and set(s.results()["agent"]) == {"a", "b", "c"}
    with pytest.raises(ValueError, match="'frst' is not a column the arena runner reads .did you mean 'first'"):
        referee.open(tmp_path / "t.csv", runner="arena", mapping={"frst": "m1"})
    with pytest.raises(ValueError, match="the clembench runner reads its own format"):
        referee.open(tmp_path / "t.csv", runner="clembench", mapping={"first": "m1"})


def test_a_result_written_as_codes_ingests_through_a_mapping_with_no_script(tmp_path):
    games = _benchmark_games()
    games.to_csv(tmp_path / "connect-four_list_all.csv", index=False)
    (tmp_path / "lgb.toml").write_text(MAPPING)
    store = tmp_path / "g.duckdb"
    assert main(["ingest", str(tmp_path / "connect-four_list_all.csv"), "--runner", "arena", "--mapping",
                 str(tmp_path / "lgb.toml"), "--store", str(store)]) == 0
    with Store(store, read_only=True) as s:
        results = s.results()
    first = results[results["role"] == "first"].set_index("match_id")
    second = results[results["role"] == "second"].set_index("match_id").reindex(first.index)
    assert len(first) == len(games)  # every game kept, the network errors too
    # per pair, the benchmark's own counts against what the store holds
    stored = pd.DataFrame({"a": first["agent"], "b": second["agent"].to_numpy(), "sa": first["score"],
                           "oa": first["outcome"], "ob": second["outcome"].to_numpy()})
    for (a, b), mine in games.groupby(["Player1", "Player2"]):
        held = stored[(stored["a"] == a) & (stored["b"] == b)]
        counts = mine["Result"].value_counts()
        assert int((held["sa"] == 1).sum()) == counts.get("winner1st", 0) + counts.get("disqualified2nd", 0)
        assert int((held["sa"] == 0).sum()) == counts.get("winner2nd", 0) + counts.get("disqualified1st", 0)
        assert int((held["sa"] == 0.5).sum()) == counts.get("draw", 0)
        assert int((held["oa"] == "forfeit").sum()) == counts.get("disqualified1st", 0)
        assert int((held["ob"] == "forfeit").sum()) == counts.get("disqualified2nd", 0)
        assert int((held["oa"] == "aborted").sum()) == counts.get("networkerror", 0)
    aborted = results[results["outcome"] == "aborted"]
    assert len(aborted) == 2 * (games["Result"] == "networkerror").sum() and aborted["score"].isna().all()
    board = referee.leaderboard(str(store)).table()
    assert board["agent"].nunique() == 6 and (board["block"] == "ranked").sum() == 6
    assert board.iloc[0]["agent"] == "gpt-4o"  # the strongest by construction


def test_an_aborted_row_without_a_score_is_kept_as_aborted(tmp_path):
    table = pd.DataFrame({"match": ["m1", "m1", "m2", "m2", "m3"], "agent": ["a", "b", "a", "b", "a"],
                          "score": [1, 0, None, None, None], "outcome": ["win", "loss", "aborted", "aborted", "win"]})
    table.to_csv(tmp_path / "long.csv", index=False)
    store = referee.open(tmp_path / "long.csv")
    results = store.results()
    assert set(results.loc[results["match_id"] == "m2", "outcome"]) == {"aborted"}
    assert store.last_ingest.as_dict()["quarantined"] == 1  # m3: a win with no score is still a fault
