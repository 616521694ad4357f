"""Columnar building blocks for loaders that read whole tables at once (`referee.io.loaders.arena`,
`referee.io.loaders.table`): a CSV read straight into Arrow text columns, Python's own `str.strip` and
`json.dumps` done per column, and canonical rows handed to the store as Arrow tables (no Python object per
value). Each function gives exactly what the row-by-row code it replaces gives, or says it cannot (None), so
that a loader falls back to that code for the file; `tests/test_ingest_paths.py` compares the two paths.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what Python's str.strip removes among ASCII characters
PLAIN_JSON = r"^[\x20\x21\x23-\x5b\x5d-\x7e]*$"  # text json.dumps writes as it is (printable ASCII, no " or \)


CSV_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError)  # Arrow cannot read it alike


def _text_options(header: list[str]) -> dict | None:
    """Arrow's CSV options that read every column of `header` as text, blanks as "", or None where pandas would
    read the header otherwise (a blank name: pandas renames it)."""
    if not header or any(not h.strip() for h in header):
        return None
    return {"parse_options": pacsv.ParseOptions(newlines_in_values=True),
            "convert_options": pacsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                    strings_can_be_null=False, quoted_strings_can_be_null=False)}


def read_csv_text(path: Path, header: list[str]) -> pa.Table | None:
    """Every column of a CSV file as Arrow text, blanks as "" (what `pandas.read_csv(dtype=str,
    keep_default_na=False)` gives), or None where the two readers could differ: a header name that is blank
    (pandas renames it), a row of another width (pandas pads or fails), text that is not UTF-8 (pandas names the
    byte). `header` is the file's first row as `csv.reader` reads it."""
    options = _text_options(header)
    if options is None:
        return None
    try:
        return pacsv.read_csv(path, read_options=pacsv.ReadOptions(block_size=1 << 24), **options)
    except CSV_ERRORS:
        return None


def csv_text_blocks(path: Path, header: list[str], block_bytes: int):
    """`read_csv_text` a block of about `block_bytes` at a time: an Arrow CSV reader (iterate it for record
    batches), or None where the header rules Arrow out. A row Arrow cannot read alike raises one of CSV_ERRORS when
    its block is read, which the caller takes as `read_csv_text`'s None."""
    options = _text_options(header)
    if options is None:
        return None
    return pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=block_bytes), **options)


def stripped(values) -> pa.Array | None:
    """`str.strip()` of every cell of an Arrow text column (nulls stay null), or None where a cell begins or
    ends with a non-ASCII character (Python strips some of those, Unicode's trim others)."""
    values = pa.chunked_array([values]) if isinstance(values, pa.Array) else values
    out = pc.utf8_trim(values, ASCII_SPACE)
    if not pc.all(pc.string_is_ascii(out)).as_py() and \
            pc.any(pc.match_substring_regex(out, r"^[^\x00-\x7f]|[^\x00-\x7f]$")).as_py():
        return None
    return out.combine_chunks()


DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"  # a number both pandas and Arrow read alike


def decimals(values) -> np.ndarray | None:
    """An Arrow text column (already stripped) as float64, NaN for "", when every other cell is a plain decimal
    number (`DECIMAL`): Arrow's cast and pandas' `to_numeric` give the same, correctly rounded, doubles then;
    None when some cell is anything else (text, 'inf', 'nan', '1_000'), for the caller's pandas path."""
    values = pa.chunked_array([values]) if isinstance(values, pa.Array) else values
    blank = pc.equal(values, "")
    plain = pc.or_(blank, pc.match_substring_regex(values, DECIMAL))
    if not pc.all(pc.fill_null(plain, False)).as_py():
        return None
    number = pc.cast(pc.if_else(blank, pa.scalar(None, pa.string()), values), pa.float64())
    return number.to_numpy().astype(float)


def series(values: pa.Array) -> pd.Series:
    """An Arrow text column as the pandas string Series the row-wise code works on."""
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([values]) if isinstance(values, pa.Array)
                                                else values))


def json_objects(fields: dict[str, pa.Array]) -> pa.Array:
    """One JSON object per row, `json.dumps({name: value, ...})` byte for byte, of text columns, a missing value
    (null: a JSON line without the key) left out of its row's object: joined as text where every value is there and
    plain printable ASCII, by `json.dumps` for the other rows."""
    names = list(fields)
    parts = []
    for k, name in enumerate(names):
        parts += [pa.scalar(("{" if k == 0 else ", ") + json.dumps(name) + ': "'), fields[name], pa.scalar('"')]
    parts.append(pa.scalar("}"))
    joined = pc.binary_join_element_wise(*parts, "")
    plain = np.ones(len(joined), bool)
    for name in names:
        plain &= pc.fill_null(pc.match_substring_regex(fields[name], PLAIN_JSON), False).to_numpy(zero_copy_only=False)
    if plain.all():
        return joined
    out = joined.to_numpy(zero_copy_only=False).astype(object)
    columns = {name: fields[name].to_pylist() for name in names}
    for i in np.flatnonzero(~plain):
        out[i] = json.dumps({name: columns[name][i] for name in names if columns[name][i] is not None})
    return pa.array(out, pa.string())


def constant(value, n: int, kind: pa.DataType | None = None) -> pa.Array:
    """`value` n times as an Arrow array: text dictionary-encoded (one copy of the text and n int8 zeros, a byte a
    row: a file's 64-character hash on each of two million rows would be 128 MB written out; the store keeps the
    encoding, `referee.io.schema.conform_arrow`, and DuckDB reads it as text)."""
    if isinstance(value, str):
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), pa.array([value], pa.string()))
    return pa.repeat(pa.scalar(value, kind), n)


def table(columns: dict) -> pa.Table:
    """An Arrow table of columns given as Arrow arrays, numpy arrays (NaN and NaT as null, as the store's
    pandas path reads them) or scalars repeated to the table's length."""
    n = next(len(v) for v in columns.values() if not np.isscalar(v) and v is not None)
    arrays = {}
    for name, value in columns.items():
        if isinstance(value, (pa.Array, pa.ChunkedArray)):
            arrays[name] = value
        elif value is None or np.isscalar(value):
            arrays[name] = constant(value, n) if value is not None else pa.nulls(n)
        else:
            arrays[name] = pa.array(value, from_pandas=True)
    return pa.table(arrays)
