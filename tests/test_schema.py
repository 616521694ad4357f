import math

import pandas as pd
import pytest

from referee.io.schema import TABLES, SchemaError, conform, ddl, empty


def test_every_table_has_ddl_and_empty_frame():
    for name in TABLES:
        assert name in ddl(name)
        assert list(empty(name).columns) == [c.name for c in TABLES[name]]


def test_conform_adds_missing_nullable_columns_and_orders():
    frame = conform("results", pd.DataFrame({"agent": ["a"], "player": ["p"], "match_id": ["m"], "score": [1]}))
    assert list(frame.columns) == [c.name for c in TABLES["results"]]
    assert frame.loc[0, "team"] is None and frame.loc[0, "score"] == 1.0


def test_conform_keeps_negative_infinity():
    frame = conform("results", pd.DataFrame({"match_id": ["m"], "player": ["p"], "agent": ["a"],
                                             "score": [-math.inf]}))
    assert frame.loc[0, "score"] == -math.inf


@pytest.mark.parametrize("frame, needle", [
    (pd.DataFrame({"match_id": [None], "player": ["p"], "agent": ["a"]}), "results.match_id: required value missing at row 0"),
    (pd.DataFrame({"match_id": ["m"], "player": ["p"], "agent": ["a"], "group": ["audience"]}), "not in ['focal', 'background']"),
    (pd.DataFrame({"match_id": ["m"], "player": ["p"], "agent": ["a"], "score": [math.inf]}), "+inf at row 0"),
    (pd.DataFrame({"match_id": ["m"], "player": ["p"], "agent": ["a"], "score": ["x"]}), "cannot cast"),
    (pd.DataFrame({"match_id": ["m"], "player": ["p"], "agent": ["a"], "colour": ["red"]}), "unexpected columns"),
])
def test_conform_rejects(frame, needle):
    with pytest.raises(SchemaError) as err:
        conform("results", frame)
    assert needle in str(err.value)


def test_measure_kind_is_enforced():
    ok = pd.DataFrame({"match_id": ["m"], "name": ["alive"], "value": [1.0], "kind": ["outcome"]})
    assert conform("measures", ok).loc[0, "kind"] == "outcome"
    with pytest.raises(SchemaError):
        conform("measures", ok.assign(kind="vibe"))


def test_a_dictionary_encoded_text_column_is_checked_by_the_values_it_uses_and_stays_encoded():
    """issue 107: a constant column (`columnar.constant`: one text, a byte a row) is kept encoded to the store, and its
    allowed values are checked on the values its codes point to (a dictionary may hold a value no row uses)."""
    import pyarrow as pa

    from referee.io.columnar import constant
    from referee.io.schema import conform_arrow

    rows = {"match_id": pa.array(["m1", "m2", "m3"]), "player": pa.array(["a", "b", "a"]), "name": constant("n", 3),
            "value": pa.array([1.0, 2.0, 3.0])}
    kept = conform_arrow("measures", pa.table({**rows, "kind": constant("telemetry", 3)}))
    assert pa.types.is_dictionary(kept["kind"].type) and pa.types.is_dictionary(kept["name"].type)
    assert kept["kind"].to_pylist() == ["telemetry"] * 3
    with pytest.raises(SchemaError, match="values outside"):
        conform_arrow("measures", pa.table({**rows, "kind": constant("nonsense", 3)}))
    unused = pa.DictionaryArray.from_arrays(pa.array([0, 0, 0], pa.int8()), pa.array(["telemetry", "nonsense"]))
    assert conform_arrow("measures", pa.table({**rows, "kind": unused}))["kind"].to_pylist() == ["telemetry"] * 3


def test_staged_batches_of_either_text_encoding_share_one_file(tmp_path):
    """A multi-batch ingest stages each batch to one Parquet file per table: a batch whose constant columns came
    dictionary-encoded (an Arrow loader's) and one whose came plain (row dicts) are written in one schema and stored
    alike (a Parquet writer refuses a second schema)."""
    import pyarrow as pa

    from referee.io.columnar import constant
    from referee.io.schema import conform_arrow
    from referee.io.staging import Staging
    from referee.io.store import Store

    store = Store(tmp_path / "s.duckdb")
    staging = Staging(tmp_path / "s.duckdb")
    rows = {"match_id": pa.array(["m1"]), "player": pa.array(["a"]), "name": pa.array(["n"]), "value": pa.array([1.0])}
    staging.add("measures", conform_arrow("measures", pa.table({**rows, "kind": constant("telemetry", 1)})))
    staging.add("measures", conform_arrow("measures", pa.table({**rows, "kind": pa.array(["telemetry"])})))
    store.con.execute("BEGIN TRANSACTION")
    staging.insert_into(store.con)
    store.con.execute("COMMIT")
    assert store.query("SELECT kind, count(*) AS n FROM measures GROUP BY kind").to_dict("records") == \
        [{"kind": "telemetry", "n": 2}]
    store.close()


def test_record_labels_from_python_lists_are_what_arrows_cast_writes():
    """`_strings` converts a list of text or of 64-bit whole numbers itself (a 70-line file pays Arrow's per-call cost
    twice); for any list it gives what the Arrow path gives the same values as a tuple: None stays missing in text
    and whole numbers, and is 'None' where the values are converted by str()."""
    import random

    from referee.io.loaders.base import _strings

    rng = random.Random(0)
    pool = [0, -1, 7, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 70, "a", "", None, True, 1.5, float("nan"), "é"]
    for _ in range(3000):
        values = [rng.choice(pool) for _ in range(rng.randint(0, 5))]
        assert _strings(values).to_pylist() == _strings(tuple(values)).to_pylist(), values
