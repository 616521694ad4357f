"""clembench played for real: clemcore's own `clem run`, `clem score` and `clem eval` (in the runner's own venv)
play a two-player guessing game (tests/runner_play/clem_guess) whose programmatic players succeed, lose or
abort, for two model pairs; the records tree is ingested with no options and checked against clem eval's own
per-episode table (raw.csv)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from referee.cli import main
from referee.io.store import Store
from referee.prepare.comparisons import comparisons_from_tables, no_comparisons_reason
from conftest import play_runner

pytestmark = pytest.mark.runners


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("clem")
    out = play_runner("clem", "clem_games.py", root / "results")
    raw = pd.read_csv(out / "raw.csv", index_col=0)  # what clembench itself reports per episode
    store = root / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(out)]) == 0  # detected with no options
    return store, out, raw


def test_every_episode_is_a_match_scored_and_flagged_as_clem_reported(played):
    store, out, raw = played
    with Store(store, read_only=True) as s:
        matches, results, measures, events, quarantine, sources = (
            s.table(t) for t in ("matches", "results", "measures", "events", "quarantine", "sources"))
    episodes = raw.set_index(["model", "game", "experiment", "episode", "metric"])["value"].unstack()
    assert len(quarantine) == 0 and set(matches["runner"]) == {"clembench"}
    assert len(matches) == len(episodes) == 10  # 5 instances x 2 model pairs
    for (pair, game, experiment, episode), row in episodes.iterrows():
        mid = f"clembench:{pair}/{game}/{experiment}/{episode}"
        mine = results[results["match_id"] == mid]
        assert len(mine) == 2 and set(mine["agent"]) == set(pair.split("--"))
        assert set(mine["role"]) == {"Describer", "Guesser"}
        expected = "forfeit" if row["Aborted"] == 1 else "win" if row["Success"] == 1 else "loss"
        assert set(mine["outcome"]) == {expected}
        assert set(mine.loc[mine["agent"] == "programmatic", "group"]) == {"background"}  # clem's scripted partner
        assert set(mine.loc[mine["agent"] != "programmatic", "group"]) == {"focal"}
        if expected == "forfeit":  # a missing main score, never a zero
            assert math.isnan(row["Main Score"]) and mine["score"].isna().all()
        else:
            assert (mine["score"] == row["Main Score"]).all()
        stored = measures[(measures["match_id"] == mid) & measures["round"].isna()].set_index("name")["value"]
        for metric, value in row.items():  # clem eval adds "Played" (1 - Aborted), not in scores.json
            if metric != "Played" and not math.isnan(value):
                assert stored[metric] == value
        assert len(events[events["match_id"] == mid]) >= 4
    assert {"win", "loss", "forfeit"} == set(results["outcome"])
    # scores.json files were read as records of the same matches; clem's other files were left out and said so
    assert (sources["source_file"].str.endswith("scores.json")).sum() == 10


def test_companion_files_are_left_out_and_counted(played):
    store, out, _ = played
    again = Store(store.parent / "again.duckdb")
    with again:
        report = again.ingest([str(out)])
    # every file clem wrote beside its records, found apart from the loader: the report names exactly these
    companions = {str(p) for p in out.rglob("*") if p.is_file() and p.suffix in (".json", ".csv")
                  and p.name not in ("interactions.json", "scores.json")}
    files = report.files
    assert set(files.loc[files["status"] == "companion", "source_file"]) == companions and len(companions) > 30
    assert (files.loc[files["status"] == "companion", ["read", "accepted", "quarantined"]] == 0).all().all()
    assert (files.loc[files["status"] == "companion", "runner"] == "clembench").all()
    assert report.quarantined == 0


def test_one_model_against_the_scripted_partner_gives_no_comparison_and_says_why(played):
    store, _, _ = played
    with Store(store, read_only=True) as s:
        matches, results = s.table("matches"), s.table("results")
    assert len(set(results.loc[results["outcome"] == "forfeit", "match_id"])) == 2  # clem's Aborted episodes
    # mock plays every instance twice (either seat) against clem's scripted partner: nothing to compare
    assert len(comparisons_from_tables(matches, results)) == 0
    assert "one such agent (mock)" in no_comparisons_reason(matches, results)
    # asked to rate the scripted partner, the instances compare mock's and programmatic's shared scores: ties
    scripted = comparisons_from_tables(matches, results, scripted=True)
    assert set(scripted["a"]) | set(scripted["b"]) == {"mock", "programmatic"}
    assert (scripted["outcome"] == 0.5).all() and scripted["cluster"].str.startswith("guessnumber/").all()

