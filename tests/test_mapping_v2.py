"""Mapping v2 (data/formats/mapped.md): the shapes real benchmarks write, read without Python. A game's result in
one line (an object keyed by player of scores, or a list of players best first with ties nested), agents from
a pattern on the player id or from a seat table in a setup line, match ids from file names; generated logs
with known skills are ingested and Bradley-Terry recovers the skills; each new kind of malformed mapping is
refused naming its key; a bad result value is set aside with its line and the counts add up."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from referee.cli import main
from referee.io.loaders.mapped import MappingError, read_runner_map

MODELS = [f"model-{c}" for c in "abcdefgh"]


def _skills(seed: int) -> dict[str, float]:
    return dict(zip(MODELS, np.random.default_rng(seed).normal(0, 1, len(MODELS))))


def _points_logs(folder, games: int, seed: int) -> dict[str, float]:
    """Shape 1: 3-player games; moves, then one `final` line of points keyed by player ids embedding the model."""
    rng, skill = np.random.default_rng(seed), _skills(seed)
    folder.mkdir()
    for g in range(games):
        who = rng.choice(MODELS, 3, replace=False)
        ids = [f"Player{k + 1}_Game{g}_{m}" for k, m in enumerate(who)]
        points = np.round(10 * (np.array([skill[m] for m in who]) + rng.gumbel(size=3)), 1)
        lines = [{"game_id": f"G{g}", "type": "move", "player": p, "turn": t} for t in range(3) for p in ids]
        lines.append({"game_id": f"G{g}", "type": "final", "final_positions": dict(zip(ids, points.tolist()))})
        (folder / f"game_{g:04d}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return skill


def _seat_logs(folder, games: int, seed: int) -> dict[str, float]:
    """Shape 2: 6-player games with no match id in the lines: a setup line maps seats to models, the last line
    ranks the seats best first (a nested list: seats tied)."""
    rng, skill = np.random.default_rng(seed), _skills(seed)
    folder.mkdir()
    for g in range(games):
        who = rng.choice(MODELS, 6, replace=False)
        seats = [f"s{k}" for k in range(6)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=6)
        order = [seats[k] for k in np.argsort(-perf)]
        ranking = [order[0], [order[1], order[2]], order[3], order[4], order[5]] if g % 5 == 0 else order
        lines = [{"event": "setup", "seats": dict(zip(seats, who.tolist()))}]
        lines += [{"event": "act", "seat": s, "round": r} for r in range(2) for s in seats]
        lines.append({"event": "end", "ranking": ranking})
        (folder / f"table-{g:04d}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return skill


POINTS_MAP = """name = "points-bench"
[keys]
match = "game_id"
type = "type"
player = "player"
round = "turn"
[events]
action = ["move"]
[results]
event = "final"
scores = "final_positions"
[agents]
pattern = '^Player\\d+_Game\\d+_(?P<agent>.+)$'
"""

SEAT_MAP = """name = "seat-bench"
[match]
from = "file"
[keys]
type = "event"
player = "seat"
round = "round"
[events]
action = ["act"]
ignore = ["setup"]
[results]
event = "end"
order = "ranking"
[agents]
table = "seats"
"""


def _ingest_and_rate(tmp_path, logs, mapping_text, name):
    mapping = tmp_path / f"{name}.toml"
    mapping.write_text(mapping_text)
    store = tmp_path / f"{name}.duckdb"
    assert main(["ingest", str(logs), "--runner", str(mapping), "--store", str(store)]) == 0
    assert main(["ratings", "--store", str(store), "--method", "bt", "--out", str(tmp_path / f"{name}-r")]) == 0
    return pd.read_csv(tmp_path / f"{name}-r" / "ratings.csv").set_index("agent"), store


@pytest.mark.parametrize("shape", ["points", "seats"])
def test_each_shape_is_stored_whole_and_bradley_terry_recovers_the_skills(tmp_path, shape):
    logs = tmp_path / "logs"
    games = 300
    skill = (_points_logs if shape == "points" else _seat_logs)(logs, games, seed=4)
    table, store = _ingest_and_rate(tmp_path, logs, POINTS_MAP if shape == "points" else SEAT_MAP, shape)
    assert sorted(table.index) == sorted(MODELS)  # the models, not one agent per player id
    rho = spearmanr(table["rating"], [skill[a] for a in table.index]).statistic
    assert rho >= 0.9, rho
    from referee.io.store import Store

    with Store(store, read_only=True) as s:
        matches, results = s.table("matches"), s.table("results")
    assert len(matches) == games and len(results) == games * (3 if shape == "points" else 6)
    if shape == "seats":  # match ids from the file names; the tied seats share a rank
        assert matches["match_id"].str.startswith("table-").all()
        first = results[results["match_id"] == "table-0000"].sort_values("rank")["rank"].tolist()
        assert first == [1.0, 2.0, 2.0, 4.0, 5.0, 6.0]
    else:
        assert results.groupby("match_id")["rank"].min().eq(1).all()  # ranks derived from the points


@pytest.mark.parametrize("table, message", [
    ("[results]\nevent = \"final\"\nscores = \"a\"\norder = \"b\"\n", "exactly one of"),
    ("[results]\nscores = \"a\"\n", "event must name"),
    ("[results]\nevent = \"final\"\nscore = \"a\"\n", "did you mean 'scores'"),
    ("[agents]\npattern = \"(unclosed\"\n", "not a regular expression"),
    ("[agents]\npattern = \"^(?P<model>.+)$\"\n", "group named agent"),
    ("[agents]\npattern = \"x\"\nconstant = \"y\"\n", "takes one of"),
    ("[match]\nfrom = \"name\"\n", "from must be"),
    ("[events]\nresult = [\"final\"]\n[results]\nevent = \"final\"\nscores = \"a\"\n", "listed in [events]"),
])
def test_malformed_mappings_of_each_new_kind_are_refused_naming_the_key(tmp_path, table, message):
    path = tmp_path / "m.toml"
    path.write_text("name = \"x\"\n[keys]\nmatch = \"m\"\ntype = \"t\"\nscore = \"s\"\nplayer = \"p\"\n" + table)
    with pytest.raises(MappingError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        read_runner_map(path)


def test_a_bad_result_value_is_set_aside_with_its_line_and_the_counts_add_up(tmp_path, capsys):
    logs = tmp_path / "logs"
    _points_logs(logs, 20, seed=1)
    bad = logs / "game_0003.jsonl"
    lines = bad.read_text().splitlines()
    last = json.loads(lines[-1])
    first = next(iter(last["final_positions"]))
    last["final_positions"][first] = "twelve"
    bad.write_text("\n".join(lines[:-1] + [json.dumps(last)]) + "\n")
    mapping = tmp_path / "m.toml"
    mapping.write_text(POINTS_MAP)
    assert main(["ingest", str(logs), "--runner", str(mapping), "--store", str(tmp_path / "s.duckdb"),
                 "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["read"] == found["accepted"] + found["quarantined"] and found["quarantined"] == 1
    from referee.io.store import Store

    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        quarantine = store.query("SELECT * FROM quarantine")
    assert len(quarantine) == 1 and quarantine.iloc[0].astype(str).str.contains("final_positions").any()
    assert quarantine.iloc[0].astype(str).str.contains("game_0003").any()
