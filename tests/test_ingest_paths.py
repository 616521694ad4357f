"""The columnar ingest path against the row-wise one (issue 49): the same inputs, read both ways, give the same
store (every row of every table, the same quarantine records, reasons and messages)."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
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
