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
