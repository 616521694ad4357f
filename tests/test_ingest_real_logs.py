"""Ingest of logs shaped like real runners' (issue 12): thousands of small event-log files of a runner referee
has no loader for, wrong guesses, a fix-and-re-ingest cycle, typo'd mappings, measures, strict mode."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from referee.cli import main
from referee.io.loaders import detect, detect_runners, records
from referee.io.loaders.base import FILE_RAW_CAP, PROBE, RAW_CAP, LoadOptions, file_hash
from referee.io.store import Store
from referee.run.social.audit import audit_frame, default_outcomes
from referee.simulators import simulate_tavern, write_tavern

N_FILES = 2000  # the benchmark (benchmarks/ingest.py) runs 5,000


@pytest.fixture(scope="module")
def tavern(tmp_path_factory):
    """2,000 one-match event-log files of 3 to 8 players among 80 agents, 20 of whom play one match each."""
    out = tmp_path_factory.mktemp("tavern")
    sim = simulate_tavern(n_agents=80, n_matches=N_FILES, seed=3, rare_agents=20)
    return sim, write_tavern(sim, out)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_unknown_runner_is_set_aside_once_per_file_then_read_with_a_mapping(tavern, tmp_path, capsys):
    sim, paths = tavern
    db = tmp_path / "s.duckdb"
    code, out, err = _run(capsys, "ingest", paths["logs"], "--store", db)
    # problem 1: every file once, not line by line, with the keys it did see; a short summary; exit 1
    assert code == 1 and "could not be read as any runner's" in err
    assert len(out.splitlines()) <= 5, out
    with Store(db, read_only=True) as store:
        q = store.table("quarantine")
        sources = store.table("sources")
    assert len(q) == N_FILES and set(q.record) == {"-"} and set(q.reason) <= {"unknown format", "not this runner"}
    assert "'episode'" in q.message.iloc[0] and "'payload'" in q.message.iloc[0] and "--runner MAPPING.toml" in q.message.iloc[0] and "referee map " in q.message.iloc[0]
    assert (sources.accepted == 0).all() and (sources.read == 1).all()
    assert q.raw.str.len().max() <= FILE_RAW_CAP + 200  # each file's head, not all of its text
    # problem 3: after the fix the files are read again (they were never marked as ingested) ...
    code, out, err = _run(capsys, "ingest", paths["logs"], "--store", db, "--runner", paths["mapping"], "--json")
    totals = json.loads(out)
    assert code == 0, err
    assert totals["read"] == sim.truth["n_lines"] == totals["accepted"] and totals["quarantined"] == 0
    with Store(db, read_only=True) as store:
        info = store.info()
        matches, results, events = store.table("matches"), store.table("results"), store.table("events")
        # ... and their earlier quarantine rows are gone with the earlier attempt
        assert store.info()["quarantined"] == 0
        assert store.query("SELECT count(*) AS n FROM sources")["n"].iloc[0] == N_FILES
    assert info["matches"] == N_FILES and info["results"] == sim.truth["n_finals"]
    assert info["events"] == sim.truth["n_lines"] - sim.truth["n_finals"] - sim.truth["n_heartbeats"]
    assert set(matches.n_players.unique()) <= set(range(3, 9)) and {3, 8} <= set(matches.n_players)
    # games nobody wins: every seat shares place 1; abandoned games: a match with events and no results
    draws = results[results.match_id.isin(sim.truth["draws"])]
    assert len(sim.truth["draws"]) > 0 and (draws["rank"] == 1).all()
    assert set(sim.truth["abandoned"]).isdisjoint(results.match_id) and set(sim.truth["abandoned"]) <= set(matches.match_id)
    rare = results[results.agent.isin(sim.truth["rare_agents"])].groupby("agent").size()
    assert len(rare) == 20 and (rare == 1).all()
    assert set(events.stage.dropna()) == {"message", "action", "vote"}
    votes = events[events.stage == "vote"]
    assert votes.target.notna().all() and votes.target.str.match(r"s\d").all()  # from payload.for
    assert events.loc[events.type == "contribute", "value"].between(0, 10).all()  # from payload.amount
    # the results carry the simulated strengths: Bradley-Terry on the ingested store recovers their order
    code, out, err = _run(capsys, "ratings", "--method", "bt", "--store", db, "--out", tmp_path / "r", "--json")
    assert code == 0, err
    ratings = pd.read_csv(tmp_path / "r" / "ratings.csv").set_index("agent")
    common = ratings.index[~ratings.index.isin(sim.truth["rare_agents"])]
    truth = pd.Series(sim.truth["strengths"])[common]
    assert ratings.loc[common, "rating"].corr(truth, method="spearman") > 0.85


def test_a_wrong_forced_runner_gives_up_after_the_first_records(tavern, tmp_path, capsys):
    _, paths = tavern
    files = sorted(paths["logs"].glob("*.jsonl"))[:30]
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest(files, runner="ranked")
    assert (report.read, report.accepted, report.quarantined) == (30, 0, 30)
    row = report.quarantine.iloc[0]
    assert row.record == "-" and row.reason in ("missing field", "unexpected field")
    assert f"first {PROBE} record(s) all fail the ranked format" in row.message
    assert report.failed_files == [str(f) for f in files]


def test_flat_event_logs_are_not_a_table(tmp_path, capsys):
    """Problem 2: flat event logs look tabular; the table runner gives up instead of advising --map only."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for i in range(5):
        lines = [{"ts": f"2026-01-01T00:00:{s:02d}Z", "episode": f"e{i}", "kind": "say", "who": f"p{s % 3}"}
                 for s in range(20)]
        (folder / f"e{i}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert detect_runners(folder / "e0.jsonl").candidates == ["table"]
    code, out, err = _run(capsys, "ingest", folder, "--store", tmp_path / "s.duckdb", "--json")
    totals = json.loads(out)
    assert code == 1 and (totals["read"], totals["quarantined"]) == (5, 5)
    assert totals["by_reason"] == {"not this runner": 5}
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        message = store.table("quarantine").message.iloc[0]
    assert "tried table" in message and "'match'" in message and "--runner MAPPING.toml" in message and "referee map " in message


def test_early_stop_names_the_keys_and_the_runners_tried(tmp_path):
    """Problem 1's first cause: a games file whose lines carry a key the runner does not know."""
    path = tmp_path / "games.jsonl"
    lines = [{"game_id": f"g{i}", "timestamp": "2026-01-01T00:00:00Z",
              "participants": [{"agent": "a", "points": 1}, {"agent": "b", "points": 0}]} for i in range(500)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    found = detect_runners(path)
    assert found.runner == "ranked" and found.confidence == 1.0 and "50 of 50 sampled records fit" in found.describe()
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([path])
    assert (report.read, report.quarantined) == (1, 1)
    row = report.quarantine.iloc[0]
    assert row.reason == "not this runner" and "timestamp" in row.message and "tried ranked" in row.message
    assert "'timestamp'" in row.message.split("keys seen")[1]


def test_detection_confidence_is_the_share_of_sampled_records_that_fit(tmp_path):
    path = tmp_path / "mixed.jsonl"
    good = {"game_id": "g", "participants": [{"agent": "a", "points": 1}, {"agent": "b", "points": 0}]}
    path.write_text("".join(json.dumps(good if i % 4 else {"other": i}) + "\n" for i in range(40)))
    found = detect_runners(path)
    assert found.runner == "ranked" and found.confidence == pytest.approx(30 / 40)


def test_map_typos_are_refused_with_a_suggestion_and_every_missing_column_is_named(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("game_id,model,points\ng1,a,1\ng1,b,0\n")
    db = tmp_path / "s.duckdb"
    code, _, err = _run(capsys, "ingest", path, "--store", db, "--map", "scroe=points")
    assert code == 1 and "did you mean 'score'" in err and not db.exists()
    code, _, err = _run(capsys, "ingest", path, "--store", db, "--measure", "points=outcom")
    assert code == 1 and "did you mean 'outcome'" in err
    code, out, err = _run(capsys, "ingest", path, "--store", db, "--map", "match=game_id")
    assert code == 1
    with Store(db, read_only=True) as store:
        message = store.table("quarantine").message.iloc[0]
    assert "'agent'" in message and "'score'" in message and "'game_id', 'model', 'points'" in message.replace('"', "'")
    # the fix: read again, and the rejected attempt's quarantine goes
    code, out, err = _run(capsys, "ingest", path, "--store", db, "--map", "match=game_id", "--map", "agent=model",
                          "--map", "score=points")
    assert code == 0, err
    with Store(db, read_only=True) as store:
        assert (store.info()["results"], store.info()["quarantined"]) == (2, 0)


def test_replace_swaps_a_files_contribution_in_one_transaction(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("match,agent,score\nm1,a,1\nm1,b,0\nm2,a,0\nm2,b,1\n")
    db = tmp_path / "s.duckdb"
    assert _run(capsys, "ingest", path, "--store", db)[0] == 0
    path.write_text("match,agent,score\nm1,a,5\nm1,b,0\nm3,a,0\nm3,c,1\n")  # fixed at the source
    code, out, _ = _run(capsys, "ingest", path, "--store", db, "--json")  # without --replace: m1 collides
    assert code == 0 and json.loads(out)["by_reason"] == {"duplicate match id": 2}
    with Store(db, read_only=True) as store:
        assert sorted(store.table("matches").match_id) == ["m1", "m2", "m3"]
    code, out, _ = _run(capsys, "ingest", path, "--store", db, "--replace", "--json")
    assert code == 0 and json.loads(out)["quarantined"] == 0
    with Store(db, read_only=True) as store:
        results = store.table("results")
        assert sorted(store.table("matches").match_id) == ["m1", "m3"]
        assert results.set_index(["match_id", "agent"]).loc[("m1", "a"), "score"] == 5
        assert len(results) == 4 and store.info()["quarantined"] == 0 and len(store.table("sources")) == 1
        assert results.content_hash.eq(file_hash(path)).all()


def test_strict_leaves_no_store_behind(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("match,agent,score\nm1,a,1\nm1,b,NaN\n")
    db = tmp_path / "new.duckdb"
    code, _, err = _run(capsys, "ingest", path, "--store", db, "--strict")
    assert code == 1 and "--strict" in err
    assert not db.exists() and not Path(f"{db}.wal").exists()


def test_exit_codes(tmp_path, capsys):
    good = tmp_path / "good.csv"
    good.write_text("match,agent,score\nm1,a,1\nm1,b,0\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    db = tmp_path / "s.duckdb"
    assert _run(capsys, "ingest", good, "--store", db)[0] == 0
    assert _run(capsys, "ingest", good, "--store", db)[0] == 0  # already ingested: nothing to do is fine
    code, _, err = _run(capsys, "ingest", bad, "--store", db)
    assert code == 1 and "bad.json" in err
    empty = tmp_path / "nothing"
    empty.mkdir()
    code, _, err = _run(capsys, "ingest", empty, "--store", db)
    assert code == 1 and "no data files" in err
    assert "Exit codes: 0 records were accepted" in " ".join(
        __import__("referee.cli", fromlist=["build_parser"]).build_parser()._subparsers._group_actions[0]
        .choices["ingest"].format_help().split())


def test_measures_become_outcomes_the_audit_finds(tmp_path, capsys):
    path = tmp_path / "pgg.csv"
    rows = ["match,agent,score,coop,actions,started_at,note"]
    rows += [f"m{i},{a},{s},{c},{n},2026-01-0{1 + i % 9}T10:00:00Z,x" for i in range(6)
             for a, s, c, n in (("a", 3, 0.9, 10), ("b", 1, 0.1, 40), ("c", 2, "", 25))]
    path.write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.duckdb"
    code, _, err = _run(capsys, "ingest", path, "--store", db, "--measure", "coop=outcome", "--measure", "actions=telemetry")
    assert code == 0, err
    with Store(db, read_only=True) as store:
        measures, matches, results = store.table("measures"), store.table("matches"), store.table("results")
        frame, _ = audit_frame(store)
        assert default_outcomes(frame, measures) == ["coop"]
        assert store.info()["games"] == 1  # problem 7: a table without game names still has one game
    assert sorted(measures.groupby("kind").size().items()) == [("outcome", 12), ("telemetry", 18)]  # empty coop: no row
    assert matches.started_at.notna().all() and str(matches.started_at.min()) == "2026-01-01 10:00:00"
    assert json.loads(results["attrs"].iloc[0]) == {"note": "x"}


def test_records_as_json_lines_with_a_scores_key(tmp_path):
    path = tmp_path / "matches.jsonl"
    lines = [{"game_id": f"g{i}", "timestamp": "2026-02-01T10:00:00Z", "seed": i, "game": "hanabi",
              "scores": {"gpt": 3 + i % 2, "claude": 2, "llama": 2}} for i in range(12)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"scores": {"gpt": 1, "x": NaN}}\n')
    assert detect(path) == "records"
    result = records.load(path, file_hash(path), LoadOptions())
    assert (result.read, result.accepted, result.quarantined) == (13, 12, 1)
    assert (result.quarantine.iloc[0].record, result.quarantine.iloc[0].field) == ("13", "scores.x")
    matches, results = result.tables["matches"], result.tables["results"]
    assert set(results.agent) == {"gpt", "claude", "llama"}  # not timestamp, game_id or seed
    assert list(matches.match_id[:2]) == ["g0", "g1"] and json.loads(matches["attrs"].iloc[0]) == {"seed": 0}
    assert str(matches.started_at.iloc[0]) == "2026-02-01 10:00:00"
    assert sorted(results[results.match_id == "g0"]["rank"]) == [1.0, 2.0, 2.0]
    array = tmp_path / "full.json"
    array.write_text(json.dumps(lines))
    assert detect(array) == "records"
    assert set(records.load(array, file_hash(array), LoadOptions()).tables["results"].agent) == {"gpt", "claude", "llama"}


def test_messages_say_what_happened(tmp_path):
    """Problem 7: no 'at at'; a cut last line is a truncated file, a cut line inside is a truncated line."""
    path = tmp_path / "m.jsonl"
    good = json.dumps({"game": "g", "a": 1, "b": 0})
    path.write_text(good + "\n" + '{"game": "g", "a": "unterminated\n' + good + "\n" + '{"game": "g", "a": 1')
    result = records.load(path, file_hash(path), LoadOptions())
    q = result.quarantine.set_index("record")
    assert q.loc["2", "reason"] == "truncated line" and q.loc["4", "reason"] == "truncated file"
    assert not any("at at" in m for m in q.message) and "Unterminated string starting at: column" in q.loc["2", "message"]


def test_raw_text_in_quarantine_is_capped_per_file(tmp_path):
    path = tmp_path / "big.jsonl"
    good = json.dumps({"game": "g", "a": 1, "b": 0})
    bad = json.dumps({"game": "g", "a": float("nan"), "b": 0, "pad": "x" * 2000}).replace("NaN", "NaN")
    path.write_text(good + "\n" + "\n".join([bad] * 1500) + "\n")
    result = records.load(path, file_hash(path), LoadOptions())
    assert (result.read, result.accepted, result.quarantined) == (1501, 1, 1500)
    kept = result.quarantine.raw.str.len().sum()
    assert RAW_CAP < kept < RAW_CAP + 1500 * 300  # the cap, plus one short note per record past it
    assert "quarantine keeps at most 1 MiB of raw text per source file" in result.quarantine.raw.iloc[-1]


def test_formats_lists_every_runner_and_what_can_be_mapped(capsys):
    code, out, _ = _run(capsys, "formats", "--json")
    listing = json.loads(out)
    assert code == 0 and set(listing["runners"]) == {"aoa", "arena", "compact", "concordia", "ranked", "records",
                                                     "table", "textarena", "kaggle", "clembench", "concordia-log",
                                                     "gtbench", "inspect", "sotopia", "meltingpot",
                                                     "mapped"}
    assert listing["table"]["required"] == ["match", "agent", "score"] and "started_at" in listing["table"]["optional"]
    assert set(listing["fields"]) == set(listing["runners"])  # every runner's fields are listed
    assert "participants" in listing["fields"]["ranked"]["game line"] and "score" in listing["fields"]["mapped"]["[keys]"]
    code, out, _ = _run(capsys, "formats", "table")
    assert code == 0 and "--measure coop=outcome" in out
    code, _, err = _run(capsys, "formats", "tabel")
    assert code == 1 and "did you mean 'table'" in err


def test_the_worked_example_in_the_format_document_is_the_mapping_that_reads_the_simulated_runner():
    from referee.io.resources import shipped
    from referee.simulators.tavern import MAPPING

    doc = shipped("formats", "mapped.md").read_text(encoding="utf-8")
    block = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    assert block == MAPPING


def test_a_concordia_game_masters_events_are_the_runners_own_role_not_a_spectators(tmp_path):
    """Issue 87: Concordia's game master writes `resolution` events under its own name, which is no player's;
    the format declares them the runner's own role, so the audit's spectator check reads the entities' actions
    only and finds no outside input, while the same events without the declaration count as a non-agent source."""
    from referee.models.validity.season import spectator_input
    from referee.run.social.audit import agents_events

    sample = Path(__file__).resolve().parents[1] / "data" / "sample" / "concordia_log"
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(sample), "--store", str(db), "--quiet"]) == 0
    with Store(db, read_only=True) as store:
        frame, events = audit_frame(store)
    masters = events[events["type"] == "resolution"]
    assert len(masters) and not masters["actor"].isin(frame["player"].str.split("/").str[-1]).any()
    players = set(frame["player"])
    assert spectator_input(agents_events(events, frame), players)["passed"] is True
    bare = frame.copy()
    bare.attrs = {**frame.attrs, "runner_roles": {}}
    found = spectator_input(agents_events(events, bare), players)
    assert found["passed"] is False and found["non_agent"] == len(masters)
