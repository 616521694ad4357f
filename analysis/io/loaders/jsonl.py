"""Reading large JSON-lines logs fast, in bounded memory, without losing a line.

`read_jsonl(path, fields)` parses every line into an Arrow table with a `_line` column (1-based line
number) and a list of bad lines. Two paths give the same answer:

- fast: Arrow's multithreaded JSON reader streams the file in blocks against an explicit schema. It is
  used only when it accounts for every line: any parse or type error, an unexpected field, or a row count
  that differs from the number of lines (blank lines, two objects on one line) sends the file down the
  careful path instead;
- careful: one line at a time with Python's json, naming each bad line and field.

Semantic checks (required values, allowed values, NaN) are vectorised afterwards by `split_invalid`, on
the table either path produced.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from tqdm.auto import tqdm

from referee.io.loaders.base import PROBE, RecordError, ResultBuilder, json_lines, parse_time

_BLOCK = 1 << 24  # 16 MiB Arrow read blocks
_BLANK = re.compile(rb"\n[ \t\r]*\n")

_PY_TYPES = {
    pa.int64(): (int,),
    pa.float64(): (int, float),
    pa.string(): (str,),
    pa.bool_(): (bool,),
}


@dataclass
class BadLine:
    """A line set aside while parsing: its number, the error, and the raw text."""

    line: int
    error: RecordError
    raw: str


def count_lines(path: Path) -> tuple[int, bool]:
    """Number of lines in `path` (a last line without newline counts) and whether any line is blank."""
    lines, blank, _ = scan(path)
    return lines, blank


def scan(path: Path) -> tuple[int, bool, bool]:
    """(lines, whether any line is blank, whether the whole file is valid UTF-8 without a byte-order mark),
    in one pass over the bytes."""
    lines, blank, tail = 0, False, b"\n"  # a virtual newline before the first line
    decoder = codecs.getincrementaldecoder("utf-8")()
    valid = True
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            if valid and lines == 0 and tail == b"\n" and block.startswith(b"\xef\xbb\xbf"):
                valid = False  # a byte-order mark: Arrow would read it into the first key
            if valid:
                try:
                    decoder.decode(block)
                except UnicodeDecodeError:
                    valid = False
            lines += block.count(b"\n")
            window = tail + block
            blank = blank or _BLANK.search(window) is not None
            tail = window[window.rfind(b"\n"):]
    if valid:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            valid = False
    last = tail[1:]
    if last:
        lines += 1
        blank = blank or not last.strip()
    return lines, blank, valid


def _fast(path: Path, schema: pa.Schema, progress: bool, total: int) -> pa.Table | None:
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    try:
        reader = pj.open_json(path, read_options=pj.ReadOptions(block_size=_BLOCK), parse_options=options)
        batches = []
        with tqdm(total=total, unit="line", desc=path.name, disable=not progress) as bar:
            for batch in reader:
                batches.append(batch)
                bar.update(batch.num_rows)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    table = pa.Table.from_batches(batches, schema=schema)
    if table.num_rows != total:
        return None
    return table.append_column("_line", pa.array(range(1, total + 1), pa.int64()))


def _careful(path: Path, schema: pa.Schema, progress: bool, total: int) -> tuple[pa.Table, list[BadLine]]:
    names = schema.names
    kinds = {f.name: _PY_TYPES[f.type] for f in schema}
    columns: dict[str, list] = {n: [] for n in names + ["_line"]}
    bad: list[BadLine] = []
    for line in tqdm(json_lines(path), total=total, unit="line", desc=path.name, disable=not progress):
        try:
            obj = _check_line(line.parsed(), kinds)
        except RecordError as exc:
            bad.append(BadLine(line.number, exc, str(line)))
            continue
        for n in names:
            columns[n].append(obj.get(n))
        columns["_line"].append(line.number)
    arrays = [pa.array(columns[n], type=schema.field(n).type) for n in names]
    arrays.append(pa.array(columns["_line"], pa.int64()))
    return pa.Table.from_arrays(arrays, names=names + ["_line"]), bad


def _check_line(obj, kinds: dict[str, tuple]) -> dict:
    if not isinstance(obj, dict):
        raise RecordError("wrong type", None, f"expected a JSON object, got {type(obj).__name__}")
    extra = [k for k in obj if k not in kinds]
    if extra:
        raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of this format")
    for key, value in obj.items():
        if value is None:
            continue
        ok = kinds[key]
        if isinstance(value, bool) and bool not in ok or not isinstance(value, ok):
            want = {(int,): "an integer", (int, float): "a number", (str,): "text", (bool,): "true/false"}[ok]
            raise RecordError("wrong type", key, f"expected {want}, got {value!r}")
        if isinstance(value, float) and math.isnan(value):
            raise RecordError("NaN", key, f"'{key}' is NaN")
        if isinstance(value, float) and value == math.inf:  # -inf is a legal value (the schema's lowest score)
            raise RecordError("infinite", key, f"'{key}' is {value} (too large for a number)")
    return obj


def read_jsonl(path: Path, fields: dict[str, pa.DataType], progress: bool = False) -> tuple[pa.Table, list[BadLine], str]:
    """Parse a JSON-lines file against `fields` (name -> Arrow type among int64, float64, string, bool).

    Returns
    -------
    (table, bad, path_taken): `table` has one row per good line with the given columns plus `_line`
    (1-based line number); `bad` lists the lines set aside (malformed or truncated JSON, not an object,
    unexpected field, wrong type, duplicate key, NaN); `path_taken` is 'fast' or 'careful'.
    Blank lines are skipped and are not records.
    """
    schema = pa.schema(list(fields.items()))
    total, blank, utf8 = scan(path)
    if not blank and utf8:  # Arrow passes bad bytes through: only valid UTF-8 takes the fast path
        table = _fast(path, schema, progress, total)
        if table is not None:
            return (*_nan_lines(path, table, fields), "fast")
    table, bad = _careful(path, schema, progress, total)
    return table, bad, "careful"


def _nan_lines(path: Path, table: pa.Table, fields: dict[str, pa.DataType]) -> tuple[pa.Table, list[BadLine]]:
    """Set aside rows with a NaN or +inf number (1e400 reads as inf), as the careful path does (Arrow's
    reader accepts both; -inf is a legal value)."""
    masks = [(name, pc.or_(is_nan(table[name]), pc.fill_null(pc.equal(table[name], math.inf), False)))
             for name, kind in fields.items() if kind == pa.float64()]
    masks = [(name, m) for name, m in masks if pc.any(m).as_py()]
    if not masks:
        return table, []
    bad_mask = masks[0][1]
    for _, m in masks[1:]:
        bad_mask = pc.or_(bad_mask, m)
    numbers = table.filter(bad_mask)["_line"].to_pylist()
    first_field = {}
    for name, m in reversed(masks):
        for line, value in zip(table.filter(m)["_line"].to_pylist(), table.filter(m)[name].to_pylist()):
            first_field[line] = (name, value)
    wanted, raw = set(numbers), {}
    with open(path, encoding="utf-8", errors="replace") as fh:  # the file is valid UTF-8 on this path
        for number, line in enumerate(fh, start=1):
            if number in wanted:
                raw[number] = line.rstrip("\n")

    def error(name: str, value: float) -> RecordError:
        if math.isnan(value):
            return RecordError("NaN", name, f"'{name}' is NaN")
        return RecordError("infinite", name, f"'{name}' is {value} (too large for a number)")

    bad = [BadLine(n, error(*first_field[n]), raw[n]) for n in numbers]
    return table.filter(pc.invert(bad_mask)), bad


def split_invalid(table: pa.Table, checks: list[tuple[pa.ChunkedArray, str, str | None, str]]
                  ) -> tuple[pa.Table, list[tuple[int, RecordError, dict]]]:
    """Remove rows that fail vectorised checks.

    Parameters
    ----------
    table : rows with a `_line` column.
    checks : (mask, reason, field, detail) tuples, each mask True where the row is bad; the first failing
        check names a row's reason.

    Returns
    -------
    (good rows, [(line, RecordError, row as dict), ...]) for the rows removed.
    """
    if not checks or table.num_rows == 0:
        return table, []
    any_bad = pc.fill_null(checks[0][0], False)
    for mask, *_ in checks[1:]:
        any_bad = pc.or_(any_bad, pc.fill_null(mask, False))
    if not pc.any(any_bad).as_py():
        return table, []
    bad_rows = table.filter(any_bad)
    masks = [pc.fill_null(m, False).filter(any_bad) for m, *_ in checks]
    out = []
    for i, row in enumerate(bad_rows.to_pylist()):
        for (mask, reason, field, detail), m in zip(checks, masks):
            if m[i].as_py():
                out.append((row.pop("_line"), RecordError(reason, field, detail), row))
                break
    return table.filter(pc.invert(any_bad)), out


def is_nan(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Mask of NaN values in a float column (null counts as not NaN)."""
    return pc.fill_null(pc.is_nan(column), False)


def not_in(column: pa.ChunkedArray, allowed: tuple[str, ...]) -> pa.ChunkedArray:
    """Mask of non-null values outside `allowed`."""
    return pc.and_(pc.is_valid(column), pc.invert(pc.is_in(column, value_set=pa.array(list(allowed)))))


def dump_row(row: dict) -> str:
    """A parsed row back as JSON text (for the quarantine's raw column)."""
    return json.dumps({k: v for k, v in row.items() if v is not None}, default=str)


def _python_time(text: str | None) -> datetime | None:
    try:
        return parse_time(text, "time")
    except RecordError:
        return None


def parse_times(column: pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """ISO 8601 strings to naive UTC timestamps (us); returns (times, mask of unparseable non-null values).

    Vectorised when the whole column parses (all with a zone, or all without); value by value otherwise.
    """
    for kind in (pa.timestamp("us", tz="UTC"), pa.timestamp("us")):
        try:
            times = pc.cast(column, kind).cast(pa.timestamp("us"))
            return times, pa.chunked_array([pa.array([False] * len(column), pa.bool_())])
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
    values = column.to_pylist()
    parsed = [_python_time(v) for v in values]
    bad = [v is not None and p is None for v, p in zip(values, parsed)]
    return pa.array(parsed, pa.timestamp("us")), pa.array(bad, pa.bool_())


def repeated_keys(table: pa.Table, keys: list[str]) -> pa.Array:
    """Line numbers (`_line`) of rows whose `keys` values already appeared on an earlier line."""
    if table.num_rows < 2:
        return pa.array([], pa.int64())
    order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in keys] + [("_line", "ascending")])
    ordered = table.take(order).combine_chunks()
    same = None
    for k in keys:
        col = ordered[k].combine_chunks()
        eq = pc.fill_null(pc.equal(col.slice(1), col.slice(0, len(col) - 1)), False)
        same = eq if same is None else pc.and_(same, eq)
    return pc.filter(ordered["_line"].combine_chunks().slice(1), same)


def read_records(path: Path, content_hash: str, runner: str, fields: dict[str, pa.DataType], progress: bool = False
                 ) -> tuple[ResultBuilder, pa.Table | None]:
    """Start a JSON-lines loader: a `ResultBuilder` (one record per line) and `read_jsonl`'s good rows (with
    `_line`), the bad lines already quarantined into the builder and every line counted as read. The table
    is None when the file is empty (then quarantined whole, and the builder is ready to build)."""
    out = ResultBuilder(path, content_hash, runner, many_records_per_match=True, sequential=False)
    if path.stat().st_size == 0:
        out.reject_file(RecordError("empty file", None, "the file is empty"))
        return out, None
    out.check_format(probe(path, fields), PROBE)  # another runner's file is refused before it is read whole
    table, bad, _ = read_jsonl(path, fields, progress=progress)
    for b in bad:
        out.quarantine(str(b.line), b.error, b.raw)
    if bad:  # the first lines of the file, in order: None for a good line, (reason, field) for a bad one
        good = table["_line"].slice(0, PROBE).to_pylist()
        first = sorted([(b.line, (b.error.reason, b.error.field)) for b in bad[:PROBE]] + [(g, None) for g in good])
        out.check_format([o for _, o in first[:PROBE]], table.num_rows + len(bad))
    out.saw(table.num_rows + len(bad))
    return out, table


def probe(path: Path, fields: dict[str, pa.DataType]) -> list[tuple[str, str | None] | None]:
    """How the first PROBE non-blank lines of a JSON-lines file fare against `fields` (None: the line fits;
    else (reason, field) as the careful path would set it aside), reading no further than those lines."""
    kinds = {name: _PY_TYPES[kind] for name, kind in fields.items()}
    found: list[tuple[str, str | None] | None] = []
    for line in json_lines(path):
        try:
            _check_line(line.parsed(), kinds)
            found.append(None)
        except RecordError as exc:
            found.append((exc.reason, exc.field))
        if len(found) >= PROBE:
            break
    return found


def with_times(table: pa.Table, field: str) -> tuple[pa.Table, list[tuple[int, RecordError, dict]]]:
    """Parse ISO 8601 column `field` into a `_t` timestamp column; rows with an unreadable time are removed
    and returned as (line, error, row) like `split_invalid`."""
    times, bad = parse_times(table[field])
    good, invalid = split_invalid(table.append_column("_t", times),
                                  [(bad, "wrong type", field, "expected an ISO 8601 time")])
    for _, _, row in invalid:
        row.pop("_t", None)
    return good, invalid


def quarantine_rows(out, invalid: list[tuple[int, RecordError, dict]]) -> None:
    """Quarantine rows removed by `split_invalid` / `with_times` into the builder `out`, by line."""
    for line, error, row in invalid:
        out.quarantine(str(line), error, dump_row(row))


def screen(out, table: pa.Table, checks: list, time_field: str, earlier: list | None = None) -> pa.Table:
    """The rows of `table` that pass every check (`split_invalid`) and whose `time_field` parses (into
    `_t`, `with_times`); the others, and any `earlier` removed rows, are quarantined into the builder `out`."""
    good, invalid = split_invalid(table, checks)
    good, bad_times = with_times(good, time_field)
    quarantine_rows(out, (earlier or []) + invalid + bad_times)
    return good
