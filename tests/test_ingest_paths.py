"""The columnar ingest path against the row-wise one (issue 49): the same inputs, read both ways, give the same
store (every row of every table, the same quarantine records, reasons and messages)."""

from __future__ import annotations

import duckdb
from pathlib import Path
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from referee.io import columnar
from referee.io.store import Store
from referee.simulators.arena import simulate_arena, write_arena

TABLES = ("matches", "results", "measures", "events", "quarantine", "sources")


def _rows(store_path) -> dict[str, pd.DataFrame]:
    """Every table's rows, sorted, without the time of the ingest."""
    con = duckdb.connect(str(store_path), read_only=True)
    try:
        out = {}
        for table in TABLES:
            frame = con.execute(f"SELECT * FROM {table}").df().drop(columns=["ingested_at"], errors="ignore")
            frame = frame.astype(object).where(frame.notna(), None)
            out[table] = frame.sort_values(list(frame.columns), key=lambda c: c.astype(str)).reset_index(drop=True)
        return out
    finally:
        con.close()


def _both_ways(tmp_path, paths, monkeypatch) -> tuple[dict, dict]:
    fast = tmp_path / "fast.duckdb"
    with Store(fast) as store:
        store.ingest(paths, workers=1)
    with monkeypatch.context() as patched:  # the row-wise path: no file is read columnar
        patched.setattr("referee.io.loaders.arena.read_csv_text", lambda path, header: None)
        patched.setattr("referee.io.loaders.arena.csv_text_blocks", lambda path, header, block_bytes: None)
        slow = tmp_path / "slow.duckdb"
        with Store(slow) as store:
            store.ingest(paths, workers=1)
    return _rows(fast), _rows(slow)


def _hostile_arena(tmp_path):
    """A simulated arena CSV with a row of every kind the loader sets aside or must keep exactly."""
    sim = simulate_arena(n_agents=12, n_judgments=3000, seed=3, tie_rate=0.1, style_effect=0.2)
    frame = pd.read_csv(write_arena(sim, tmp_path / "sim")["judgments"], dtype=str, keep_default_na=False)
    odd = pd.DataFrame([
        {"first": "", "second": "model_1", "winner": "first"},  # blank contestant
        {"first": "model_1", "second": "model_1", "winner": "tie"},  # self-comparison
        {"first": "model_2", "second": "model_3", "winner": "nobody"},  # unknown winner
        {"first": "model_2", "second": "model_3", "winner": ""},  # blank winner
        {"first": " model_2\t", "second": "model_3 ", "winner": " FIRST "},  # padding and case
        {"first": "m\u00e9lange", "second": "\u00a0model_3", "winner": "second"},  # non-ASCII at an edge
        {"first": "model_4", "second": "model_5", "winner": "tie (bothbad)", "judge": 'say "hi"\\'},
        {"first": "model_4", "second": "model_5", "winner": "b", "judge": "j\u00fcrgen", "length_a": "1_000"},
        {"first": "model_4", "second": "model_5", "winner": "a", "length_a": "inf"},
        {"first": "model_4", "second": "model_5", "winner": "a", "length_b": "1e3", "length_a": ".5"},
        {"first": "model_4", "second": "model_5", "winner": "a", "length_b": "true"},
        {"first": "model_4", "second": "model_5", "winner": "a", "time": "yesterday"},
        {"first": "model_4", "second": "model_5", "winner": "a", "time": "2026-02-30T00:00:00Z"},
        {"first": "model_4", "second": "model_5", "winner": "a", "length_a": "", "length_b": ""},
    ])
    odd["time"] = odd["time"].fillna(frame["time"].iloc[0])
    mixed = pd.concat([frame.iloc[:1000], odd, frame.iloc[1000:]], ignore_index=True).fillna("")
    path = tmp_path / "judgments.csv"
    mixed.to_csv(path, index=False)
    return path


def test_a_hostile_arena_file_is_stored_alike_both_ways(tmp_path, monkeypatch):
    path = _hostile_arena(tmp_path)
    fast, slow = _both_ways(tmp_path, [path], monkeypatch)
    for table in TABLES:
        pd.testing.assert_frame_equal(fast[table], slow[table], check_dtype=False, obj=table)
    assert len(fast["matches"]) == 3005 and len(fast["quarantine"]) == 9
    reasons = set(fast["quarantine"]["reason"])
    assert {"missing value", "wrong value", "self-comparison", "wrong type"} <= reasons


def test_unix_seconds_and_a_second_file_alike_both_ways(tmp_path, monkeypatch):
    rows = pd.DataFrame({"left": ["a", "b", "c", "a"], "right": ["b", "c", "a", "c"],
                         "winner": ["left", "right", "tie", "left"], "tstamp": ["1700000000", "1700000060", "", "x"]})
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    rows.to_csv(one, index=False)
    rows.assign(worker=["w1", "w2", "w3", "w4"]).to_csv(two, index=False)
    fast, slow = _both_ways(tmp_path, [one, two], monkeypatch)
    for table in TABLES:
        pd.testing.assert_frame_equal(fast[table], slow[table], check_dtype=False, obj=table)
    assert str(fast["matches"]["started_at"].dropna().min()) == "2023-11-14 22:13:20"


def test_columnar_helpers_give_what_python_gives():
    import json

    import pyarrow as pa

    cells = ["  a ", "\tb\x1c", "", " \u00a0c", "d\u2003", "plain"]
    found = columnar.stripped(pa.array(cells))
    assert found is None  # an edge Python and Arrow may strip differently: the caller takes pandas' path
    ascii_cells = ["  a ", "\tb\x1c", "", "x y"]
    assert columnar.stripped(pa.array(ascii_cells)).to_pylist() == [c.strip() for c in ascii_cells]
    fields = {"judge": pa.array(["j1", 'q"uote', "\u00fc", ""]), "id": pa.array(["1", "2", "3\n", "4"])}
    expected = [json.dumps({"judge": j, "id": i}) for j, i in zip(*(f.to_pylist() for f in fields.values()))]
    assert columnar.json_objects(fields).to_pylist() == expected
    numbers = columnar.decimals(pa.array(["1", "", "-2.5e3", ".5", "7."]))
    assert np.array_equal(numbers, [1.0, np.nan, -2500.0, 0.5, 7.0], equal_nan=True)
    assert columnar.decimals(pa.array(["1", "inf"])) is None and columnar.decimals(pa.array(["1_0"])) is None
    assert columnar.constant("h\u00e9", 3).to_pylist() == ["h\u00e9"] * 3 and columnar.constant("", 2).to_pylist() == ["", ""]


def test_times_parsed_once_per_distinct_text_are_pandas_own():
    """The arena loader parses each distinct time once (issue 70): the same as pandas' parse of every cell."""
    from referee.io.loaders.arena import _iso_times

    cells = ["2026-01-01T00:00:00Z", None, "x", "2026-01-01T00:00:00+02:00", "2026-01-01 10:00", "",
             "2026-01-01T00:00:00Z", "2026-13-01", "2024-02-29T23:59:59.123456"] * 3
    values = pd.Series(cells, dtype="string[pyarrow]")
    expected = pd.to_datetime(values, errors="coerce", utc=True, format="ISO8601").dt.tz_localize(None)
    pd.testing.assert_series_equal(_iso_times(values), expected)
    empty = pd.Series([None, None], dtype="string[pyarrow]")
    assert _iso_times(empty).isna().all()


@pytest.mark.parametrize("header", [["a", ""], ["a", "b"]])
def test_a_csv_arrow_cannot_read_like_pandas_falls_back(tmp_path, header):
    path = tmp_path / "t.csv"
    path.write_text(",".join(header) + "\n1,2\n3\n", encoding="utf-8")  # a short row: pandas pads, Arrow refuses
    assert columnar.read_csv_text(path, header) is None


def test_known_ids_answer_alike_for_arrow_columns_and_python_sets():
    import pyarrow as pa

    from referee.io.known_ids import COLUMNAR, KnownIds
    from referee.io.loaders.base import LoadResult

    def result(ids, arrow):
        part = pa.table({"match_id": pa.array(ids, pa.string())}) if arrow else [{"match_id": i} for i in ids]
        return LoadResult("f", "h" * 64, "r", {"matches": [part], "results": [], "measures": [], "events": []}, [],
                          len(ids), len(ids))

    big = [f"m{i}" for i in range(COLUMNAR + 10)]
    stored = pa.chunked_array([pa.array(["s1", "s2"])])
    for arrow in (True, False):
        known = KnownIds(stored)
        known.add(result(big, arrow))
        assert len(known.columns) == 1 + arrow  # a large Arrow file stays a column beside the stored ids; rows join the set
        assert known.common(result(["m3", "s2", "new"], False)) == {"m3", "s2"}
        assert known.common(result(big[:5] + [f"x{i}" for i in range(COLUMNAR)], True)) == set(big[:5])
        assert known.unknown({"m7", "zz", "s1"}) == {"zz"}
        known.remove({"m7", "s1"})
        assert known.unknown({"m7", "s1", "m8"}) == {"m7", "s1"}


def _hostile_mapped(tmp_path):
    """Simulated 3-player game files, their drafted mapping, and one file with a line of every kind the mapped
    loader sets aside or must keep exactly."""
    from referee.io.mapping_draft import draft_mapping
    from referee.simulators.benchmark_shapes import points_logs

    logs = tmp_path / "games"
    points_logs(logs, 40, 4, turns=4, talk=1)
    mapping = tmp_path / "games.toml"
    mapping.write_text(draft_mapping([logs]).text, encoding="utf-8")
    odd = [
        '{"game_id": "G999", "type": "move", "player": "Player1_Game999_model-a", "turn": 0, "message": "hi"}',
        '{"game_id": "G999", "type": "move", "player": "Player2_Game999_model-b", "turn": "one"}',  # round as text
        '{"game_id": "G999", "type": "move", "player": "Player2_Game999_model-b", "turn": 1, "turn": 2}',  # repeated key
        '{"game_id": "G999", "type": "move", "player": "Player3_Game999_model-c", "turn": 99999999999999999999}',  # past 64 bits
        '{"game_id": "G999", "type": "move", "player": "Player3_Game999_model-c", "turn": 1.5}',
        '{"game_id": "G999", "type": "move", "player": "Player3_Game999_model-c", "turn": 2, "message": NaN}',
        '{"game_id": "G999", "type" :"move", "player": "Player1_Game999_model-a", "turn": 3, "message": "say \\": ok"}',
        '{"game_id": "G999", "type": "move", "player": "Player1_Game999_model-a", "turn": 4, "message": "\\ud800"}',
        '{"game_id": "G999", "type": "move", "player": ["x"], "turn": 5}',
        '{"game_id": "G999", "type": "move"',  # cut short
        '[1, 2]',
        '{"game_id": "G999", "type": "final", "final_positions": {"Player1_Game999_model-a": 3.5, '
        '"Player2_Game999_model-b": 3.5, "Player3_Game999_model-c": -1e300}}',
    ]
    data = ("\n".join(odd) + "\n").encode("utf-8")
    data = data.replace(b'"hi"', b'"h\xffi"')  # a byte that is not UTF-8
    (logs / "game_hostile.jsonl").write_bytes(data)
    return logs, mapping


def test_events_handed_over_as_rows_are_stored_in_file_order_as_each_file_reads_them(tmp_path, monkeypatch):
    """A mapped game's events reach the store as `Rows`, made Arrow once per batch; a long file's are made Arrow in
    the reader. Between them, the store's events are, row for row and in order, each file's own events table
    (`LoadResult.tables`, its file alone) one file after the other: the batch neither moves nor changes a row."""
    from referee.io.loaders.base import ROWS_ARROW, Rows
    from referee.io.mapping_draft import draft_mapping
    from referee.io.reading import FileReader
    from referee.simulators.benchmark_shapes import points_logs

    logs, long = tmp_path / "games", tmp_path / "long"
    points_logs(logs, 9, 4, turns=3, talk=1)
    points_logs(long, 1, 5, turns=ROWS_ARROW // 3 + 1, talk=1)  # just past the threshold
    text = (long / "game_0000.jsonl").read_text(encoding="utf-8").replace('"game_id": "G0"', '"game_id": "G77"')
    (logs / "game_0004b.jsonl").write_text(text, encoding="utf-8")  # read between game_0004 and game_0005
    mapping = tmp_path / "games.toml"
    mapping.write_text(draft_mapping([logs]).text, encoding="utf-8")
    paths = sorted(logs.glob("*.jsonl"))
    read = [FileReader(runner=str(mapping))(p).result for p in paths]
    kinds = [type(r.parts["events"][0]) for r in read]
    assert kinds.count(Rows) == 9 and kinds[5] is pa.Table  # the long file's events became Arrow in the reader
    expected = pd.concat([r.frame("events").assign(content_hash=r.content_hash) for r in read], ignore_index=True)
    monkeypatch.setattr("referee.io.store.BATCH_FILES", 4)  # three batches: Rows, then Rows around the Arrow piece
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([logs], runner=str(mapping), workers=1)
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    try:
        stored = con.execute("SELECT * FROM events ORDER BY rowid").df()
    finally:
        con.close()
    assert len(stored) == len(expected) > ROWS_ARROW
    for column in expected.columns:
        left, right = stored[column].astype(object), expected[column].astype(object)
        assert left.where(left.notna(), None).tolist() == right.where(right.notna(), None).tolist(), column


def test_mapped_logs_are_stored_alike_staged_direct_and_row_by_row(tmp_path, monkeypatch):
    from referee.io.schema import SchemaError

    from referee.io.staging import Staging

    logs, mapping = _hostile_mapped(tmp_path)
    staged, calls = tmp_path / "staged.duckdb", []
    with monkeypatch.context() as patched:  # batches of 10 files: every one after the first staged on disk
        patched.setattr("referee.io.store.BATCH_FILES", 10)
        real_add = Staging.add
        patched.setattr(Staging, "add", lambda self, table, frame: calls.append(table) or real_add(self, table, frame))
        with Store(staged) as store:
            report = store.ingest([logs], runner=mapping, workers=1)
    assert {"matches", "events", "quarantine", "sources"} <= set(calls)  # the staged path was taken
    with monkeypatch.context() as patched:  # rows written straight into the store, no staging on disk
        patched.setattr("referee.io.store.Staging", lambda path: None)
        direct = tmp_path / "direct.duckdb"
        with Store(direct) as store:
            store.ingest([logs], runner=mapping, workers=1)

    def refuse(*args):
        raise SchemaError("events: forced")

    with monkeypatch.context() as patched:  # every file's events made row dicts, not Arrow columns (`Rows`' fallback)
        patched.setattr("referee.io.loaders.rows.tuples_to_arrow", refuse)
        rows = tmp_path / "rows.duckdb"
        with Store(rows) as store:
            store.ingest([logs], runner=mapping, workers=1)
    first, second, third = _rows(staged), _rows(direct), _rows(rows)
    for table in TABLES:
        pd.testing.assert_frame_equal(first[table], second[table], check_dtype=False, obj=table)
        pd.testing.assert_frame_equal(first[table], third[table], check_dtype=False, obj=table)
    bad = first["quarantine"]
    bad = bad[bad["source_file"].str.endswith("game_hostile.jsonl")]
    found = dict(zip(bad["record"].astype(int), zip(bad["reason"], bad["field"])))
    assert found == {1: ("not UTF-8", None), 2: ("wrong type", "turn"), 3: ("duplicate key", "turn"),
                     4: ("out of range", "turn"), 5: ("wrong type", "turn"), 6: ("wrong type", "message"),
                     8: ("not UTF-8", "message"), 9: ("wrong type", "player"), 10: ("truncated line", None),
                     11: ("wrong type", None)}
    assert report.quarantined == 10 and len(first["matches"]) == 41  # every other line of every file is stored
    kept = first["events"][first["events"]["match_id"] == "G999"]
    assert kept[["seq", "round", "text"]].values.tolist() == [[7, 3, 'say ": ok']]
    ranks = first["results"][first["results"]["match_id"] == "G999"].sort_values("player")["rank"].tolist()
    assert ranks == [1, 1, 3]
    assert not list(tmp_path.glob(".referee-ingest-*"))  # the staged rows leave nothing behind


def test_orjson_is_taken_only_where_it_reads_what_the_strict_standard_parse_reads():
    """`fast_loads` against `json.loads` with duplicate keys refused, over generated texts with the values orjson
    reads differently (integers past 64 bits, repeated keys, spaces before a colon, escaped quotes, NaN)."""
    import json
    import random

    from referee.io.loaders.files import UNREAD, _no_duplicate_keys, fast_loads

    rng = random.Random(7)
    atoms = ['1', '-0', '2.5e3', '9223372036854775807', '18446744073709551615', '18446744073709551616',
             '-9223372036854775809', '1e19', '123456789012345678901234567', '"a\\": b"', '"\\u00e9"', 'true', 'null',
             'NaN', '-Infinity', '"\\ud800"', '0.1234567890123456789']

    def value(depth):
        kind = rng.random()
        if depth > 2 or kind < 0.4:
            return rng.choice(atoms)
        if kind < 0.6:
            return "[" + ", ".join(value(depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        keys = [rng.choice("abc") for _ in range(rng.randint(0, 3))]
        return "{" + ", ".join(f'"{k}"{rng.choice(["", " ", chr(9)])}: {value(depth + 1)}' for k in keys) + "}"

    taken = 0
    for _ in range(3000):
        text = value(0)
        found = fast_loads(text)
        try:
            expected = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        except Exception:  # noqa: BLE001 - a text the strict parse refuses must never be read by orjson
            assert found is UNREAD, text
            continue
        if found is not UNREAD:
            taken += 1
            assert json.dumps(found) == json.dumps(expected) and repr(found) == repr(expected), text
    assert taken > 500  # orjson does read the ordinary texts


def test_ranks_from_scores_are_pandas_min_ranks():
    import math
    import random

    from referee.io.loaders.base import ranks_from_scores

    rng = random.Random(3)
    for _ in range(2000):
        scores = [rng.choice([1.0, 2.0, 3.5, -1.0, -math.inf, 0.0, math.nan]) for _ in range(rng.randint(1, 9))]
        expected = pd.Series(scores, dtype="float64").rank(method="min", ascending=False).tolist()
        found = ranks_from_scores(scores)
        assert all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(found, expected)), scores


def test_an_ingest_checkpoints_its_rows_before_the_store_is_closed(tmp_path):
    """Issue 70: DuckDB checkpointed an ingest's rows when the store was closed, without the ingest's memory
    limit (1.4 GB for 1.75 GB of logs, 0.5 GB while they were read). The ingest now checkpoints them itself: the
    write-ahead log is empty while the store is still open."""
    write_arena(simulate_arena(n_agents=6, n_judgments=3000, seed=1), tmp_path / "a")
    db = tmp_path / "s.duckdb"
    limit = "SELECT current_setting('memory_limit')"
    with Store(db) as store:
        before = store.con.execute(limit).fetchone()[0]
        report = store.ingest([tmp_path / "a" / "logs"])
        wal = Path(f"{db}.wal")
        assert report.accepted == 3000 and (not wal.exists() or wal.stat().st_size == 0)
        assert store.con.execute(limit).fetchone()[0] == before  # the connection's own limit, restored


def test_a_staging_folder_left_by_a_killed_ingest_is_removed_by_the_next(tmp_path):
    import subprocess
    import sys

    from referee.io.staging import PREFIX

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f"{PREFIX}s.duckdb-{gone.stdout.strip()}"  # a process that has ended
    alive = tmp_path / f"{PREFIX}s.duckdb-1"  # init always runs: an ingest still going
    other = tmp_path / f"{PREFIX}t.duckdb-{gone.stdout.strip()}"  # another store's
    for folder in (dead, alive, other):
        folder.mkdir()
        (folder / "events.parquet").write_bytes(b"x")
    rows = pd.DataFrame({"left": ["a", "b"], "right": ["b", "c"], "winner": ["left", "tie"]})
    rows.to_csv(tmp_path / "one.csv", index=False)
    with Store(tmp_path / "s.duckdb") as store:
        assert store.ingest([tmp_path / "one.csv"]).accepted == 2
    assert not dead.exists() and alive.exists() and other.exists()


def _shape(kind: str, folder) -> dict:
    """One of the benchmark's folder shapes (issue 49's rows), small: the ingest options that read it."""
    from referee.io.mapping_draft import draft_mapping
    from referee.simulators import benchmark_shapes
    from referee.simulators.clem import clem_run

    if kind == "clem":
        clem_run(folder, instances=2, experiments=2, seed=3, turns=2, companions=True)
        return {}
    writer = {"seats": benchmark_shapes.seat_logs, "auctions": benchmark_shapes.auction_logs,
              "refused": benchmark_shapes.points_logs}[kind]
    writer(folder, 24, 3)
    if kind == "refused":
        return {}
    mapping = folder.parent / f"{kind}.toml"
    mapping.write_text(draft_mapping([folder]).text, encoding="utf-8")
    return {"runner": mapping}


@pytest.mark.parametrize("kind", ["seats", "auctions", "clem", "refused"])
def test_each_folder_shape_is_stored_alike_staged_direct_and_by_the_standard_parser(tmp_path, monkeypatch, kind):
    """Issue 49's other shapes (6-player and auction logs mapped, a clemcore run with its companion files,
    files no runner reads): batches staged on disk, one batch written straight in, and every record parsed by
    the standard library instead of orjson give the same store, row for row, and the same report of files."""
    from referee.io.loaders.files import UNREAD
    from referee.io.staging import Staging

    folder = tmp_path / kind
    options = _shape(kind, folder)
    ways, files = {}, {}
    patches = {
        "staged": lambda p: p.setattr("referee.io.store.BATCH_FILES", 10),
        "direct": lambda p: p.setattr("referee.io.store.Staging", lambda path: None),
        "standard": lambda p: p.setattr("referee.io.loaders.files.fast_loads", lambda text: UNREAD),
    }
    staged_tables: list[str] = []
    for way, patch in patches.items():
        with monkeypatch.context() as patched:
            patch(patched)
            if way == "staged":
                real_add = Staging.add
                patched.setattr(Staging, "add", lambda self, table, frame: staged_tables.append(table)
                                or real_add(self, table, frame))
            with Store(tmp_path / f"{way}.duckdb") as store:
                report = store.ingest([folder], workers=1, **options)
        ways[way] = _rows(tmp_path / f"{way}.duckdb")
        files[way] = report.files.drop(columns=["seconds"], errors="ignore").sort_values("source_file").reset_index(
            drop=True)
    for table in TABLES:
        pd.testing.assert_frame_equal(ways["staged"][table], ways["direct"][table], check_dtype=False, obj=table)
        pd.testing.assert_frame_equal(ways["staged"][table], ways["standard"][table], check_dtype=False, obj=table)
    pd.testing.assert_frame_equal(files["staged"], files["direct"], check_dtype=False)
    pd.testing.assert_frame_equal(files["staged"], files["standard"], check_dtype=False)
    if kind == "refused":  # no runner reads them: nothing stored, every file named with its reason
        assert ways["staged"]["matches"].empty and len(files["staged"]) == 24
        assert set(files["staged"]["status"]) <= {"refused", "unrecognised", "rejected", "skipped"}, files["staged"]
    else:  # something was stored, and the batched ingest took the staged path
        assert len(ways["staged"]["matches"]) >= 12 and {"matches", "results"} <= set(staged_tables)
    if kind == "clem":  # companions (instance.json, requests.json, experiment.json) are listed, not read as logs
        listed = files["staged"]
        companion = listed["source_file"].str.endswith(("instance.json", "requests.json", "experiment.json"))
        assert companion.sum() == 480 and set(listed.loc[companion, "status"]) == {"companion"}
        assert (listed.loc[companion, "read"] == 0).all() and (listed.loc[~companion, "status"] == "ingested").all()


def _in_order(store_path) -> dict[str, list]:
    """Every table's rows in the order the store holds them (not sorted), without the time of the ingest."""
    con = duckdb.connect(str(store_path), read_only=True)
    try:
        return {table: [tuple(str(v) for v in row) for row in con.execute(
            f"SELECT * EXCLUDE (ingested_at) FROM {table}" if table == "sources" else f"SELECT * FROM {table}").fetchall()]
                for table in TABLES}
    finally:
        con.close()


def test_a_csv_of_many_blocks_is_stored_from_disk_as_the_whole_read_stores_it(tmp_path, monkeypatch):
    """issue 107: an arena CSV larger than a block keeps its accepted rows on disk (`Spilled`, an Arrow stream per
    table and slot) until the store writes them a block at a time. Written straight in (one batch), staged (a batch of
    another file before it) and with a phase set, the store holds every row in the order the whole-file read stores
    it, the same set-aside records, and no spill file is left behind (they wait in the ingest's staging folder beside
    the store; a loader called on its own uses the system's temporary folder)."""
    import tempfile

    from referee.io.loaders import arena
    from referee.io.loaders.spilled import Spilled

    path = _hostile_arena(tmp_path)  # its unreadable time made ISO-shaped: a time column read by blocks
    path.write_text(path.read_text().replace("yesterday", "2026-99-99"))
    other = tmp_path / "other" / "judgments.csv"
    other.parent.mkdir()
    other.write_text("first,second,winner\na,b,first\nb,c,tie\n")
    spill_folder = tmp_path / "spill"
    spill_folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_folder))
    made: list[int] = []
    folders: set[str] = set()
    real_init = Spilled.__init__

    def init(self, table, path, rows, *rest):
        made.append(rows)
        folders.add(Path(path).parent.name)
        real_init(self, table, path, rows, *rest)

    monkeypatch.setattr(Spilled, "__init__", init)

    def stored(name: str, paths: list, batch_files: int) -> dict:
        with monkeypatch.context() as patched:
            patched.setattr("referee.io.store.BATCH_FILES", batch_files)
            with Store(tmp_path / f"{name}.duckdb") as store:
                store.ingest(paths, workers=1, phase="evaluation")
        return _in_order(tmp_path / f"{name}.duckdb")

    whole = {"direct": stored("whole-direct", [path], 250), "staged": stored("whole-staged", [other, path], 1)}
    assert not made  # a file of one block (16 MB) stays in memory
    monkeypatch.setattr(arena, "BLOCK_BYTES", 8192)  # about 40 blocks
    blocks = {"direct": stored("blocks-direct", [path], 250), "staged": stored("blocks-staged", [other, path], 1)}
    # per ingest: matches, two sides of results, two sides of the length measure
    assert made == [3005, 3005, 3005, 3001, 3001] * 2  # a blank or unreadable length is no measure
    # in the ingest's staging folder beside the store, which goes with the ingest
    assert {name.split("duckdb")[0] for name in folders} == {".referee-ingest-blocks-direct.", ".referee-ingest-blocks-staged."}
    assert not list(tmp_path.glob(".referee-ingest-*"))
    for way in ("direct", "staged"):
        for table in TABLES:
            assert blocks[way][table] == whole[way][table], (way, table)
    assert len(whole["direct"]["quarantine"]) == 9
    assert {row[5] for row in whole["direct"]["matches"]} == {"evaluation"}  # the phase reached the rows on disk
    assert not list(spill_folder.iterdir())  # every spill file removed once written
    late = tmp_path / "late.csv"  # ISO times, then Unix seconds blocks later: read whole, nothing left on disk
    late.write_text("first,second,winner,time\n" + "a,b,first,2026-01-01T00:00:00Z\n" * 2000 + "a,b,tie,1700000000\n")
    assert arena._streamed(late, "0" * 64, arena.LoadOptions()) is None
    assert not list(spill_folder.iterdir())


def test_rows_spilled_by_reader_processes_reach_the_store_and_leave_nothing_behind(tmp_path, monkeypatch):
    """A `Spilled` piece made in a reader process is handed to the ingest with its file: the reader's copy lets go of
    it (it would remove the file when the reader exits), the ingest's copy writes and removes it. Three arena CSVs of
    several blocks, read by two reader processes, store what one process reading them stores."""
    import tempfile

    from referee.io.loaders import arena

    sim = simulate_arena(n_agents=8, n_judgments=1200, seed=4, tie_rate=0.1, style_effect=0.2)
    frame = pd.read_csv(write_arena(sim, tmp_path / "sim")["judgments"], dtype=str, keep_default_na=False)
    folder = tmp_path / "logs"
    folder.mkdir()
    for k in range(3):
        frame.iloc[k * 400:(k + 1) * 400].to_csv(folder / f"part{k}.csv", index=False)
    spill_folder = tmp_path / "spill"
    spill_folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_folder))
    monkeypatch.setattr(arena, "BLOCK_BYTES", 4096)
    monkeypatch.setattr("referee.io.reading.PARALLEL_MIN", 2)
    found = {}
    for workers in (1, 2):
        with Store(tmp_path / f"w{workers}.duckdb") as store:
            report = store.ingest([folder], workers=workers)
        assert report.accepted == 1200 and not list(spill_folder.iterdir()), workers
        assert not list(tmp_path.glob(".referee-ingest-*")), workers
        found[workers] = _rows(tmp_path / f"w{workers}.duckdb")
    for table in TABLES:
        pd.testing.assert_frame_equal(found[2][table], found[1][table], check_dtype=False, obj=table)
    assert len(found[2]["results"]) == 2400 and len(found[2]["measures"]) > 0
