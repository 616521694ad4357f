"""Runners read from their documented formats where the runner itself cannot be played here: Concordia 2.x
structured logs (gdm-concordia 2.4 needs Python 3.12; logs written as its structured_logging.py writes them)
and GTBench-style match files (GTBench is not on the package registry)."""

from __future__ import annotations

import json

import pytest

from referee.io.store import Store
from concordia_log_fixture import simulate
from conftest import REPO

SAMPLE = REPO / "data" / "sample"


def _ingest(tmp_path, *paths, **kw):
    store = Store(tmp_path / "s.duckdb")
    report = store.ingest([str(p) for p in paths], **kw)
    return store, report


def test_concordia_log_scores_are_the_last_cumulative_payoffs_and_references_resolve(tmp_path):
    players = ["Ann", "Ben", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"]  # an 8-player simulation
    doc, totals = simulate(players, rounds=5, seed=11)
    assert doc["content_store"] and '{"_ref": ' in json.dumps(doc["entries"])  # long prompts are references
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(doc))
    store, report = _ingest(tmp_path, path)
    with store:
        assert store.info()["matches"] == 1 and report.quarantined == 0
        results = store.table("results").set_index("player")
        events = store.table("events")
        matches = store.table("matches")
    assert matches.iloc[0]["runner"] == "concordia-log" and matches.iloc[0]["game"] == "dilemma rules"
    assert matches.iloc[0]["n_players"] == 8
    for name, total in totals.items():
        assert results.loc[name, "score"] == pytest.approx(total)
    best = max(totals.values())
    assert set(results.index[results["rank"] == 1]) == {n for n, t in totals.items() if t == best}
    assert len(events) == 5 * (8 + 1)  # an action per entity per step, a resolution per step
    actions = events[events["type"] == "action"]
    assert actions["text"].str.match(r"^\w+ chooses to (cooperate|defect)$").all()


def test_concordia_log_without_scores_and_with_a_broken_reference(tmp_path):
    doc, _ = simulate(["Ann", "Ben", "Cy"], rounds=2, seed=1, scores=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "plain.json").write_text(json.dumps(doc))
    broken, _ = simulate(["Ann", "Ben", "Cy"], rounds=2, seed=2)
    ref = next(iter(broken["content_store"]))
    del broken["content_store"][ref]
    (tmp_path / "a" / "broken.json").write_text(json.dumps(broken))
    store, report = _ingest(tmp_path, tmp_path / "a", runner="concordia-log")
    with store:
        results = store.table("results")
    assert len(results) == 3 and results["score"].isna().all() and results["rank"].isna().all()
    assert (report.read, report.accepted, report.quarantined) == (2, 1, 1)
    row = report.quarantine.iloc[0]
    assert row.reason == "missing reference" and row.field.startswith("entries[") and "broken.json" in row.message


def test_gtbench_sample_outcomes_as_its_lines_say(tmp_path):
    path = SAMPLE / "gtbench" / "logs" / "matches.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    store, report = _ingest(tmp_path, path)
    with store:
        results = store.table("results")
        matches = store.table("matches")
    assert report.quarantined == 0 and set(matches["runner"]) == {"gtbench"} and len(matches) == len(lines)
    for line in lines:  # the documented rule, written apart from the loader's
        mine = results[results["match_id"] == f"gtbench:{line['match_id']}"].sort_values("player")
        assert list(mine["agent"]) == [f"{m}/{a}" for m, a in zip(line["models"], line["agents"])]
        status = line.get("status", "completed")
        if status == "aborted":
            want = ["aborted", "aborted"]
        elif status == "forfeit":
            want = ["forfeit" if i == line["forfeit"] else "win" for i in range(2)]
        elif line.get("winner") is None:
            want = ["tie", "tie"]
        else:
            want = ["win" if i == line["winner"] else "loss" for i in range(2)]
        assert list(mine["outcome"]) == want, line
        if "scores" in line:
            assert list(mine["score"]) == line["scores"]


def test_gtbench_names_scores_by_agent_and_sets_bad_lines_aside_by_field(tmp_path):
    path = tmp_path / "m.jsonl"
    rows = [{"game": "nim", "agents": ["a", "b", "c"], "winner": "b", "scores": {"a": 1, "b": 5, "c": 2}},
            {"game": "nim", "agents": ["a", "b"], "winner": "z"},
            {"game": "nim", "agents": ["a", "a"], "winner": "a"},
            {"game": "nim", "agents": ["a", "b"], "status": "forfeit"},
            {"game": "nim", "agents": ["a", "b"], "scores": [1, 2, 3]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    store, report = _ingest(tmp_path, path)  # detected, though `scores` is an object as in the records runner
    with store:
        results = store.table("results").sort_values("player")
    assert list(results["score"]) == [1, 5, 2] and list(results["outcome"]) == ["loss", "win", "loss"]
    assert list(results["rank"]) == [3, 1, 2]
    assert (report.read, report.accepted, report.quarantined) == (5, 1, 4)
    assert list(report.quarantine["field"]) == ["winner", "winner", "forfeit", "scores"]
    assert list(report.quarantine["record"]) == ["2", "3", "4", "5"]
