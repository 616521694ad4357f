"""Generic long tables: CSV, Parquet, JSONL, column mappings, and bad rows named by line and column."""

import json

import pandas as pd
import pytest

import referee

from referee.io.loaders import detect, table
from referee.io.loaders.base import LoadOptions, file_hash

GOOD = pd.DataFrame({
    "match": ["m1", "m1", "m1", "m2", "m2"],
    "agent": ["a", "b", "c", "a", "b"],
    "score": [3.0, 1.0, 3.0, 0.0, 2.0],
    "game": ["chess", "chess", "chess", "go", "go"],
    "model_family": ["x", "y", "z", "x", "y"],
})


def load(path, **mapping):
    return table.load(path, file_hash(path), LoadOptions(mapping=mapping))


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_formats_give_the_same_tables(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    if suffix == ".csv":
        GOOD.to_csv(path, index=False)
    elif suffix == ".parquet":
        GOOD.to_parquet(path)
    else:
        GOOD.to_json(path, orient="records", lines=True)
    assert detect(path) == "table"
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (5, 5, 0)
    m = result.tables["matches"].set_index("match_id")
    assert m.loc["m1", "n_players"] == 3 and m.loc["m2", "game"] == "go"
    r = result.tables["results"].set_index(["match_id", "player"])
    assert r.loc[("m1", "a"), "rank"] == 1.0 and r.loc[("m1", "c"), "rank"] == 1.0 and r.loc[("m1", "b"), "rank"] == 3.0
    assert json.loads(r.loc[("m1", "b"), "attrs"]) == {"model_family": "y"}


def test_mapping(tmp_path):
    path = tmp_path / "t.csv"
    GOOD.rename(columns={"score": "points", "agent": "model"}).to_csv(path, index=False)
    result = load(path)
    assert result.quarantined == 1 and result.quarantine.iloc[0].field == "agent"
    assert "--map" in result.quarantine.iloc[0].message
    result = load(path, score="points", agent="model")
    assert result.accepted == 5


def test_mapping_file(tmp_path):
    path = tmp_path / "map.toml"
    path.write_text('[columns]\nscore = "points"\n')
    assert table.read_mapping(path) == ({"score": "points"}, {}, {})
    path.write_text('[columns]\ncolour = "points"\n')
    with pytest.raises(ValueError, match=f"{path}: 'colour' is not a canonical column"):  # the runner's columns
        referee.ingest([str(tmp_path / "x.csv")], store=str(tmp_path / "s.duckdb"), mapping=str(path))


def test_bad_rows_are_named_by_line_and_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(
        "match,agent,score,game\n"
        "m1,a,1,chess\n"      # line 2 ok
        "m1,b,,chess\n"       # 3 missing score
        "m1,c,abc,chess\n"    # 4 wrong type
        "m1,d,nan,chess\n"    # 5 NaN
        "m1,a,2,chess\n"      # 6 player twice
        ",e,1,chess\n"        # 7 missing match
        "m1,f,1,go\n"         # 8 conflicting game
        "m2,a,-inf,go\n"      # 9 ok (-inf allowed)
    )
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (8, 2, 6)
    got = list(zip(result.quarantine.record, result.quarantine.reason, result.quarantine.field))
    assert got == [("3", "missing value", "score"), ("4", "wrong type", "score"), ("5", "NaN", "score"),
                   ("6", "player listed twice", "agent"), ("7", "missing value", "match"),
                   ("8", "inconsistent", "game")]
    assert result.quarantine.iloc[0].message.startswith(f"{path}, record 3, field 'score'")


def test_bad_jsonl_lines_and_empty_files(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"match": "m", "agent": "a", "score": 1}\n{"match": "m", "agent"\n[1, 2]\n')
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (3, 1, 2)
    assert list(result.quarantine.record) == ["2", "3"]
    empty = tmp_path / "e.csv"
    empty.write_text("")
    result = load(empty)
    assert (result.read, result.quarantined) == (1, 1) and result.quarantine.iloc[0].reason == "empty file"
    ragged = tmp_path / "r.csv"
    ragged.write_text("match,agent,score\nm,a,1\nm,b,2,9,9\n")
    result = load(ragged)
    assert result.quarantine.iloc[0].reason == "malformed CSV" and "line 3" in result.quarantine.iloc[0].message


def test_a_score_with_digit_separators_is_quarantined_not_read_as_a_thousand(tmp_path, capsys):
    """Issue 39: `1_000` was read as 1000 (Python's float accepts the separator; no results table means it)."""
    from referee.cli import main

    path = tmp_path / "sep.csv"
    path.write_text("match,agent,score\nm1,a,1_000\nm1,b,2\nm2,a,1\nm2,b,0\n")
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (4, 3, 1)
    row = result.quarantine.iloc[0]
    assert (row.record, row.reason, row.field) == ("2", "wrong type", "score") and "1_000" in row.message
    assert main(["ingest", str(path), "--store", str(tmp_path / "s.duckdb"), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["quarantined"] == 1


@pytest.mark.parametrize("content, needle", [(None, "no such column mapping file"),
                                             (b"[columns]\nagent = \"\xff\"\n", "not UTF-8"),
                                             (b"[columns\n", "invalid TOML")])
def test_a_column_mapping_that_cannot_be_read_is_named(tmp_path, content, needle):
    """Issue 39: a missing or non-UTF-8 --mapping file ended in a bare '[Errno 2]' or a decoding trace."""
    from referee.io.loaders.table import read_mapping

    path = tmp_path / "columns.toml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=needle) as err:
        read_mapping(path)
    assert str(path) in str(err.value)
