"""Hostile and broken input (issue 14): a generated fuzz corpus over every runner, store faults, formulas."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from referee.io.store import Store, StoreError
from tests.fuzz_corpus import build_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_corpus(tmp_path_factory.mktemp("corpus"))


def test_the_corpus_covers_every_runner_and_class(corpus):
    from referee.io.loaders import RUNNERS

    assert {m.runner for m in corpus} == set(RUNNERS)
    assert {"deep", "badbyte", "inf", "dupkey", "bom", "truncated", "garbage", "empty", "dupheader", "badtime",
            "corrupt"} <= {m.kind for m in corpus}
    for runner in RUNNERS:  # every runner meets the classes every format can suffer
        assert {"garbage", "empty"} <= {m.kind for m in corpus if m.runner == runner}, runner


def test_every_mutant_is_quarantined_by_file_record_and_field_and_nothing_good_is_lost(corpus, tmp_path):
    """0 tracebacks; every quarantined record named by file and record (and field where a field is at
    fault); the bad record set aside; every good record of the same file accepted; read = accepted +
    quarantined; the good companion files of the same call ingested."""
    failures = []
    for m in corpus:
        with Store(tmp_path / f"{m.name}.duckdb") as store:
            try:
                report = store.ingest(m.files, runner=m.runner, workers=1)
            except Exception as exc:  # noqa: BLE001 - the point: there must be none
                failures.append(f"{m.name}: {type(exc).__name__}: {exc}")
                continue
            row = report.files.set_index("source_file").loc[str(m.path)]
            q = store.table("quarantine")
            mine = q[q["source_file"] == str(m.path)]
            problems = []
            if row["read"] != row["accepted"] + row["quarantined"] or row["quarantined"] != len(mine):
                problems.append(f"counts {dict(row)} vs {len(mine)} quarantine rows")
            if m.bad is None and (row["read"], row["quarantined"], list(mine["record"])) != (1, 1, ["-"]):
                problems.append(f"expected the whole file set aside once, got {dict(row)}")
            if m.bad is not None and row["quarantined"] != m.bad:
                problems.append(f"expected {m.bad} quarantined, got {row['quarantined']}: {list(mine['message'])[:3]}")
            if m.good is not None and row["accepted"] != m.good:
                problems.append(f"expected {m.good} accepted, got {row['accepted']}")
            for r in mine.itertuples():
                if not r.message.startswith(f"{m.path}, record {r.record}"):
                    problems.append(f"message does not name file and record: {r.message[:120]}")
                if m.kind in ("inf", "dupkey", "badtime") and not r.field:
                    problems.append(f"no field named for a {m.kind} fault: {r.message[:120]}")
            for companion in m.files[1:]:
                if report.files.set_index("source_file").loc[str(companion), "accepted"] == 0:
                    problems.append(f"the good companion {companion.name} was not ingested")
            if problems:
                failures.append(f"{m.name}: " + "; ".join(problems))
    assert not failures, "\n".join(failures)


def test_a_store_in_use_says_so(tmp_path):
    db = tmp_path / "busy.duckdb"
    Store(db).close()
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(db)!r}); "
                               "print('held', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for read_only in (False, True):
            with pytest.raises(StoreError, match="the store is in use by another process"):
                Store(db, read_only=read_only)
    finally:
        holder.kill()


@pytest.mark.parametrize("content, match", [
    (b"", "not a referee store"), (b"garbage" * 100, "not a referee store"), (None, "is a folder"),
])
def test_a_store_that_is_not_a_store_says_so(tmp_path, content, match):
    db = tmp_path / "bad.duckdb"
    if content is None:
        db.mkdir()
    else:
        db.write_bytes(content)
    with pytest.raises(StoreError, match=match):
        Store(db)


def test_another_applications_database_is_left_alone(tmp_path):
    import duckdb

    db = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="another application"):
        Store(db)
    con = duckdb.connect(str(db))
    assert [r[0] for r in con.execute("SHOW TABLES").fetchall()] == ["invoices"]
    con.close()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], capture_output=True, text=True, timeout=120)


def test_a_foreign_duckdb_with_a_sources_table_is_refused_and_left_byte_for_byte_unchanged(tmp_path):
    import hashlib

    import duckdb

    from referee.io.resources import shipped

    db = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE sources (path VARCHAR)")
    con.execute("INSERT INTO sources VALUES ('x')")
    con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    done = _cli("ingest", str(shipped("sample", "arena", "logs")), "--store", str(db))
    assert done.returncode == 1 and "another application" in done.stderr and "referee_store" in done.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_store_referee_wrote_carries_its_marker_and_an_unmarked_older_store_is_still_read(tmp_path):
    import duckdb

    db = tmp_path / "ours.duckdb"
    Store(db).close()
    con = duckdb.connect(str(db))
    assert con.execute("SELECT value FROM referee_store WHERE key = 'format'").fetchall() == [("referee",)]
    con.execute("DROP TABLE referee_store")  # as an earlier referee wrote it: referee's tables, no marker
    con.close()
    Store(db).close()  # its tables and columns are referee's own: read, and marked
    con = duckdb.connect(str(db))
    assert con.execute("SELECT count(*) FROM referee_store").fetchall() == [(1,)]
    con.execute("ALTER TABLE sources ADD COLUMN path VARCHAR")  # a column referee never writes
    con.execute("DROP TABLE referee_store")
    con.close()
    with pytest.raises(StoreError, match="another application"):
        Store(db)


def test_files_that_are_not_duckdb_stores_are_named_and_damaged_stores_are_plain_errors(tmp_path):
    import sqlite3

    lite = tmp_path / "app.sqlite"
    sqlite3.connect(lite).execute("CREATE TABLE t (a)").connection.commit()
    done = _cli("info", "--store", str(lite))
    assert done.returncode == 1 and "SQLite database" in done.stderr and "extension" not in done.stderr
    (tmp_path / "p.parquet").write_bytes(b"PAR1" + bytes(100))
    assert "a Parquet file" in _cli("info", "--store", str(tmp_path / "p.parquet")).stderr
    good = tmp_path / "good.duckdb"
    Store(good).close()
    data = good.read_bytes()
    (tmp_path / "cut.duckdb").write_bytes(data[:20_000])
    flipped = bytearray(data)
    for k in range(4096, len(flipped), 997):
        flipped[k] ^= 0xFF
    (tmp_path / "flip.duckdb").write_bytes(bytes(flipped))
    for name in ("cut.duckdb", "flip.duckdb"):
        done = _cli("info", "--store", str(tmp_path / name))
        assert done.returncode == 1 and name in done.stderr and "bug" not in done.stderr, done.stderr
    (tmp_path / "afile").write_text("x")
    done = _cli("info", "--store", str(tmp_path / "afile" / "s.duckdb"))
    assert done.returncode == 1 and "bug" not in done.stderr


def _formula_file(tmp_path, text: str):
    """(the formula file's path, FormulaError, load_formula): a formula file written for one test."""
    from referee.models.validity.formula import FormulaError, load_formula

    path = tmp_path / "f.toml"
    path.write_text(text)
    return path, FormulaError, load_formula


@pytest.mark.parametrize("expression, match", [
    ("9**9**9**9", "too large"), ("10**10**8", "too large"), ("10.0**400", "too large"), ("0**-1", "division by zero"),
    ("(-8)**(1/3)", "complex"), ("min()", "min\\(\\) takes"), ("clamp(1, 2)", "clamp\\(\\) takes 3"),
    ("if(1, 2)", "if\\(\\) takes 3"), ("+".join(["x"] * 100_000), "characters long"), ("1/0", "division by zero"),
    ("abs(" * 60 + "x" + ")" * 60, "nested 62 deep"),
])
def test_every_hostile_formula_is_a_named_error_within_a_second(tmp_path, expression, match):
    path, FormulaError, load_formula = _formula_file(
        tmp_path, f'name = "t"\n[components]\nc = "{expression}"\n[total]\nexpression = "c"\n')
    start = time.perf_counter()
    with pytest.raises(FormulaError, match=match) as caught:
        load_formula(path, {"x"}).evaluate({"x": 2.0})
    assert time.perf_counter() - start < 1.0
    assert str(caught.value).startswith(f"{path}, line 3")


@pytest.mark.parametrize("document, match", [
    ('name = "t"\ncomponents = [1]\n[total]\nexpression = "1"\n', "'components' must be a table"),
    ('name = "t"\n[total]\nexpression = "1"\nfloor = "zero"\n', "floor must be a number"),
    ('name = "t"\ncolour = 3\n[total]\nexpression = "1"\n', "unknown key 'colour'"),
    ('name = "t"\n[total]\nexpresion = "1"\nexpression = "1"\n', "did you mean 'expression'"),
])
def test_formula_files_with_unknown_keys_or_wrong_kinds_are_refused(tmp_path, document, match):
    path, FormulaError, load_formula = _formula_file(tmp_path, document)
    with pytest.raises(FormulaError, match=match):
        load_formula(path, set())


def test_a_second_season_file_with_the_same_id_is_set_aside_whole_not_counted_as_stored(tmp_path):
    import shutil

    from referee.io.resources import shipped

    season = shipped("sample", "aoa_sim", "logs", "season.json")
    copy = tmp_path / "again" / "season.json"
    copy.parent.mkdir()
    shutil.copy(season, copy)
    copy.write_text(copy.read_text() + "\n")  # other bytes, same season id
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([season])
        before = store.info()
        report = store.ingest([copy])
        assert (report.read, report.accepted, report.quarantined) == (1, 0, 1)
        assert report.quarantine.iloc[0].reason == "duplicate match id" and store.info()["matches"] == before["matches"]


def test_degenerate_data_never_reads_as_certainty(tmp_path, capsys):
    """All ties share one rank; an agent without comparisons is listed, not dropped; one match is flagged;
    a beta regression with nothing to explain says so before building a model."""
    import pandas as pd

    from referee.cli import main
    from referee.prepare.comparisons import comparisons_from_tables
    from referee.run.ratings.ratings import rate
    from referee.models.scores.beta_regression import design

    csv = tmp_path / "ties.csv"
    csv.write_text("match,agent,score\n" + "".join(f"m{i},{a},1\n" for i in range(6) for a in "abcde")
                   + "solo,f,3\n")  # every match a five-way tie; f plays alone
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(csv), "--store", str(db)]) == 0
    # only ties: nothing says who is stronger, and the command says so instead of a table of equal ratings
    assert main(["ratings", "--method", "bt", "--bootstrap", "20", "--store", str(db),
                 "--out", str(tmp_path / "r")]) == 1
    assert "no comparison carries information: 0 of 60 comparison(s)" in capsys.readouterr().err
    one = pd.DataFrame({"match_id": "m", "runner": "table", "game": "g", "scenario": None, "variant": None,
                        "phase": None, "repetition": None, "n_players": 2, "communication": None, "started_at": None},
                       index=[0])
    results = pd.DataFrame({"match_id": "m", "player": ["p", "q"], "agent": ["x", "y"], "group": None, "team": None,
                            "role": None, "score": [2.0, 1.0], "rank": [1.0, 2.0]})
    single = rate(comparisons_from_tables(one, results), "bt", bootstrap=50).table()
    assert single["flag"].str.contains("only 1 match").all()
    flat = pd.DataFrame({"agent": ["a", "b"], "scenario": ["s", "t"], "score_norm": [0.5, 0.5]})
    with pytest.raises(ValueError, match="no variation to explain"):
        design(flat, pd.DataFrame(columns=["scenario", "tag"]))
    with pytest.raises(ValueError, match="one scenario"):
        design(flat.assign(scenario="s", score_norm=[0.2, 0.6]), pd.DataFrame({"scenario": ["s"], "tag": ["t1"]}))


def test_every_csv_referee_writes_is_injection_safe(tmp_path):
    """Agent names that a spreadsheet would run as formulas reach no CSV cell unneutralised (OWASP)."""
    import csv

    from referee.cli import main

    hostile = ["=cmd|' /C calc'!A0", "+SUM(1,1)", "-2+3", "@evil", "\tTAB", "plain"]
    rows = ["match,agent,score"] + [f"m{i},\"{a}\",{(i + k) % 4}" for i in range(12) for k, a in enumerate(hostile)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(tmp_path / "t.csv"), "--store", str(db)]) == 0
    assert main(["ratings", "--method", "bt", "--bootstrap", "5", "--store", str(db), "--out", str(tmp_path / "r")]) == 0
    assert main(["rank", "--method", "all", "--store", str(db), "--out", str(tmp_path / "v")]) == 0
    cells = 0
    for path in list((tmp_path / "r").glob("*.csv")) + list((tmp_path / "v").glob("*.csv")):
        with open(path, newline="") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    try:
                        float(cell)
                        continue
                    except ValueError:
                        pass
                    cells += 1
                    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (path.name, cell)
    assert cells > 12  # the agents' names were there to check
