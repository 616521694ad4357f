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
from referee.simulators import benchmark_shapes as shapes

MODELS = list(shapes.MODELS)
_skills, _points_logs, _seat_logs = shapes.skills, shapes.points_logs, shapes.seat_logs


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
    ("[results]\nevent = \"final\"\nplayers = \"p\"\norder = \"b\"\n", "players goes with scores or ranks"),
    ("[measures]\nalive = { key = \"a\", kind = \"outcome\" }\n", "direction must say which way"),
    ("[measures]\nalive = { key = \"a\", kynd = \"outcome\" }\n", "did you mean 'kind'"),
    ("[measures]\nalive = { key = \"a\", kind = \"outcom\", direction = \"higher\" }\n", "did you mean 'outcome'"),
    ("[measures]\nkills = { key = \"k\", kind = \"telemetry\", direction = \"higher\" }\n", "for outcomes only"),
    ("[measures]\nkills = \"k\"\n", "must be an inline table"),
    ("[measures]\nkills = { kind = \"telemetry\" }\n", "needs key"),
    ("[measures]\n\"\" = { key = \"k\", kind = \"telemetry\" }\n", "not blank"),
    ("[measures]\nkills = { key = \"a..b\", kind = \"telemetry\", event = \"t\" }\n", "between each '.'"),
])
def test_malformed_mappings_of_each_new_kind_are_refused_naming_the_key(tmp_path, table, message):
    path = tmp_path / "m.toml"
    path.write_text("name = \"x\"\n[keys]\nmatch = \"m\"\ntype = \"t\"\nscore = \"s\"\nplayer = \"p\"\n" + table)
    with pytest.raises(MappingError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        read_runner_map(path)


@pytest.mark.parametrize("name", ["concordia", "Inspect", "table", "mapped"])
def test_a_mapping_cannot_take_a_built_in_runners_name(tmp_path, name):
    """Issue 39: a mapping named `concordia` mixed its matches with the built-in runner's."""
    path = tmp_path / "m.toml"
    path.write_text(f"name = \"{name}\"\n[keys]\nmatch = \"m\"\ntype = \"t\"\nscore = \"s\"\nplayer = \"p\"\n")
    with pytest.raises(MappingError, match="built-in runner's name"):
        read_runner_map(path)


def test_a_key_path_of_only_a_dot_is_refused(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text("name = \"x\"\n[keys]\nmatch = \"m\"\ntype = \"t\"\nscore = \"s\"\nplayer = \".\"\n")
    with pytest.raises(MappingError, match=r"\[keys\] player: a key path"):
        read_runner_map(path)


def _ingest_one_set_aside(tmp_path, logs, mapping_text: str, capsys):
    """Ingest `logs` through the mapping `mapping_text` with `--json`; asserts the counts add up with one record
    set aside, and returns the store's (quarantine, measures)."""
    from referee.io.store import Store

    mapping = tmp_path / "m.toml"
    mapping.write_text(mapping_text)
    assert main(["ingest", str(logs), "--runner", str(mapping), "--store", str(tmp_path / "s.duckdb"),
                 "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["read"] == found["accepted"] + found["quarantined"] and found["quarantined"] == 1
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        return store.query("SELECT * FROM quarantine"), store.table("measures")


def test_a_measure_of_a_player_not_in_the_match_is_set_aside_alone(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    line = {"id": "m0", "kind": "result", "names": ["p0-a", "p1-b"], "pts": [3, 1],
            "kills": {"p0-a": 1, "p1-b": 2, "p9-z": 5}, "alive": [1, 0]}
    (logs / "m0.jsonl").write_text(json.dumps(line) + "\n")
    quarantine, measures = _ingest_one_set_aside(tmp_path, logs, PARALLEL_MAP, capsys)
    assert quarantine["reason"].tolist() == ["unknown player"] and quarantine["field"].tolist() == ["kills.p9-z"]
    assert len(measures) == 4 and "p9-z" not in set(measures["player"])  # the line's other values kept


def test_a_bad_result_value_is_set_aside_with_its_line_and_the_counts_add_up(tmp_path, capsys):
    logs = tmp_path / "logs"
    _points_logs(logs, 20, seed=1)
    bad = logs / "game_0003.jsonl"
    lines = bad.read_text().splitlines()
    last = json.loads(lines[-1])
    first = next(iter(last["final_positions"]))
    last["final_positions"][first] = "twelve"
    bad.write_text("\n".join(lines[:-1] + [json.dumps(last)]) + "\n")
    quarantine, _ = _ingest_one_set_aside(tmp_path, logs, POINTS_MAP, capsys)
    assert len(quarantine) == 1 and quarantine.iloc[0].astype(str).str.contains("final_positions").any()
    assert quarantine.iloc[0].astype(str).str.contains("game_0003").any()


PARALLEL_MAP = """name = "arena-bench"
[keys]
match = "id"
type = "kind"
[events]
action = ["move"]
[results]
event = "result"
players = "names"
scores = "pts"
[agents]
pattern = '^p\\d+-(?P<agent>.+)$'
[measures]
kills = { key = "kills", kind = "telemetry" }
alive = { key = "alive", kind = "outcome", direction = "higher" }
"""


def test_parallel_lists_and_declared_measures_are_stored_and_the_audit_reads_the_direction(tmp_path, capsys):
    """Shape 3: players and points in parallel lists, a telemetry counter keyed by player and an outcome in a list
    parallel to the players; the outcome's declared direction reaches the audit without --outcome."""
    rng, skill = np.random.default_rng(3), _skills(3)
    logs = tmp_path / "logs"
    logs.mkdir()
    for g in range(200):
        who = rng.choice(MODELS, 4, replace=False)
        names = [f"p{k}-{m}" for k, m in enumerate(who)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=4)
        line = {"id": f"m{g}", "kind": "result", "names": names, "pts": np.round(perf * 10, 1).tolist(),
                "kills": {n: int(k) for n, k in zip(names, rng.poisson(2, 4))},
                "alive": [int(x) for x in perf > np.median(perf)]}
        (logs / f"m{g}.jsonl").write_text(json.dumps({"id": f"m{g}", "kind": "move"}) + "\n" + json.dumps(line) + "\n")
    table, store = _ingest_and_rate(tmp_path, logs, PARALLEL_MAP, "parallel")
    assert spearmanr(table["rating"], [skill[a] for a in table.index]).statistic >= 0.9
    from referee.io.store import Store
    from referee.run.social.audit import audit_frame

    with Store(store, read_only=True) as s:
        measures = s.table("measures")
        frame, _ = audit_frame(s)
    assert len(measures) == 200 * 4 * 2
    assert set(measures.loc[measures["name"] == "alive", "direction"]) == {"higher"}
    assert measures.loc[measures["name"] == "kills", "direction"].isna().all()
    assert set(measures["kind"]) == {"telemetry", "outcome"}
    assert frame.attrs["directions"]["alive"] == "higher" and "kills" not in frame.attrs["directions"]
    # a list that does not run parallel to the players sets its line aside, naming the key
    bad = logs / "m7.jsonl"
    lines = bad.read_text().splitlines()
    last = json.loads(lines[-1])
    last["alive"] = [1, 0]
    bad.write_text(lines[0] + "\n" + json.dumps(last) + "\n")
    assert main(["ingest", str(bad), "--runner", str(tmp_path / "parallel.toml"), "--store",
                 str(tmp_path / "bad.duckdb"), "--json"]) == 0
    found = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert found["read"] == 2 and found["accepted"] == 1 and found["quarantined"] == 1
    with Store(tmp_path / "bad.duckdb", read_only=True) as s:
        assert s.query("SELECT field FROM quarantine")["field"].tolist() == ["alive"]


@pytest.mark.parametrize("content, needle", [(b"name = \"x\"\na = " + b"{b = " * 5000 + b"1" + b"}" * 5000 + b"\n",
                                              "nested too deeply"),
                                             (b"name = \"\xff\"\n", "not UTF-8")])
def test_a_runner_mapping_nested_5000_deep_or_not_utf8_is_refused_naming_the_file(tmp_path, content, needle):
    """Issue 39: an inline table nested 5,000 deep was a RecursionError (exit 3)."""
    path = tmp_path / "m.toml"
    path.write_bytes(content)
    with pytest.raises(MappingError, match=needle) as err:
        read_runner_map(path)
    assert str(path) in str(err.value)
