"""Pairwise arenas: one row per judgment (CSV, Parquet or JSONL).

Canonical columns: `first`, `second` (the two contestants), `winner` (`first`, `second`, `tie`,
`tie-both-bad`, `forfeit-first` / `forfeit-second`: that side forfeited (a disqualification) and loses, stored as a
forfeit; `aborted`: no result (a network error), kept with no score and left out of ratings), optional `judge`,
`prompt`, `time`, `id`. A file that writes the winner as codes maps them in a mapping file's `[values] winner =
{CODE = "first", ...}`. Common spellings are recognised without a
mapping: LLMFAO's `left`/`right`/`worker` with winner `left`/`right`/`tie`; Chatbot Arena's
`model_a`/`model_b`/`judge`/`tstamp` with winner `model_a`/`model_b`/`tie`/`tie (bothbad)`. Anything else
maps with `--map first=COLUMN`.

Each judgment is one match (`{file stem}-{first 8 hex digits of the file's sha256}:{line}`, unique across
folders) with two results: the winner scores 1 and the loser 0; a
tie scores 0.5 each and a both-bad tie 0 each (ranks 1 and 1). `results.role` keeps the position (first or
second); judge and id go to `matches.attrs`, the prompt or category to `matches.game`.

Per-side numbers (answer length, markdown counts: Chatbot Arena's style features) are read from column pairs
whose names differ only in the side: `length_a` / `length_b`, `sum_assistant_a_tokens` /
`sum_assistant_b_tokens`, `len_first` / `len_second` or `len_left` / `len_right`. Each pair becomes a
telemetry measure of each player named without the side (`length`, `sum_assistant_tokens`), which
`referee ratings --covariate style:NAME` (or `measure:NAME`) controls for. A blank cell is no measure; a cell
that is not a finite number (text, NaN, infinity, digit separators) sets its row aside, naming the column.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from referee.io.columnar import (CSV_ERRORS, csv_text_blocks, decimals, json_objects, read_csv_text, series,
                                 stripped)
from referee.io.columnar import table as table_of
from referee.io.loaders.runner import Runner
from referee.io.loaders.base import LoadOptions, LoadResult, RecordError, ResultBuilder, file_key
from referee.io.loaders.spilled import Spill
from referee.io.loaders.table import csv_header, open_rows
from referee.io.schema import SchemaError

NAME = "arena"
ALIASES = {
    "first": ("first", "left", "model_a", "contestant_a"),
    "second": ("second", "right", "model_b", "contestant_b"),
    "winner": ("winner",),
    "judge": ("judge", "worker", "annotator"),
    "prompt": ("prompt", "category", "question_id"),
    "time": ("time", "tstamp", "timestamp"),
    "id": ("id",),
}
WINNERS = {
    "first": "first", "left": "first", "model_a": "first", "a": "first",
    "second": "second", "right": "second", "model_b": "second", "b": "second",
    "tie": "tie", "draw": "tie",
    "tie-both-bad": "tie-both-bad", "tie (bothbad)": "tie-both-bad", "both_bad": "tie-both-bad",
    "bothbad": "tie-both-bad",
    "forfeit-first": "forfeit-first", "forfeit-second": "forfeit-second", "aborted": "aborted",
}
SCORES = {"first": (1.0, 0.0), "second": (0.0, 1.0), "tie": (0.5, 0.5), "tie-both-bad": (0.0, 0.0),
          "forfeit-first": (0.0, 1.0), "forfeit-second": (1.0, 0.0), "aborted": (np.nan, np.nan)}
# how a match ended for each side where the winner says more than who won: a forfeit (a disqualification) loses to
# every other player; an aborted match (a network error) has no result, kept and left out of ratings
OUTCOMES = {"forfeit-first": ("forfeit", "win"), "forfeit-second": ("win", "forfeit"), "aborted": ("aborted", "aborted")}
SIDE_TOKENS = (("a", "b"), ("first", "second"), ("left", "right"))  # how a per-side column names its side


def side_columns(columns: list[str], used: set[str]) -> list[tuple[str, str, str]]:
    """(measure name, first side's column, second side's column) for every pair of `columns` whose names
    differ only in one '_'-separated side token (SIDE_TOKENS), leaving out the columns in `used`."""
    present, pairs = set(columns), []
    for column in columns:
        if column in used:
            continue
        words = column.split("_")
        for first, second in SIDE_TOKENS:
            for k, word in enumerate(words):
                if word.lower() != first or len(words) < 2:
                    continue
                partner = "_".join(words[:k] + [second if word == first else second.upper()] + words[k + 1:])
                if partner in present and partner not in used:
                    pairs.append(("_".join(words[:k] + words[k + 1:]), column, partner))
    return pairs


def _numbers(values) -> tuple[np.ndarray, np.ndarray]:
    """(numbers (NaN where blank), bad mask) of one column's cells (a pandas Series, or an Arrow text column
    read columnar where every cell is blank or a plain decimal): bad where a cell is not blank and not a
    finite number (text, NaN, infinity, a digit separator '1_000', a boolean)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        text = _strip(values)
        number = decimals(text)
        if number is not None:
            return number, ~np.isnan(number) & ~np.isfinite(number)
        values = series(values)
    text = values.astype("string").str.strip()
    blank = (text.isna() | (text == "")).to_numpy(bool)
    number = pd.to_numeric(text.where(~blank), errors="coerce").to_numpy(float)
    separator = text.str.contains("_", regex=False).fillna(False).to_numpy(bool)
    boolean = text.str.lower().isin(["true", "false"]).fillna(False).to_numpy(bool)
    bad = ~blank & (~np.isfinite(number) | separator | boolean)
    return np.where(blank, np.nan, number), bad


def sniff(path: Path, head: str, sample: list) -> float:
    """1 for a tabular file whose first line names a winner column and a recognised pair of contestants."""
    if path.suffix.lower() not in (".csv", ".jsonl"):
        return 0.0
    first = head.split("\n", 1)[0].lower()
    return float("winner" in first and any(a in first and b in first for a, b in zip(ALIASES["first"], ALIASES["second"])))


def _column(columns: list[str], name: str, mapping: dict[str, str]) -> str | None:
    if name in mapping:
        return mapping[name]
    return next((c for c in ALIASES[name] if c in columns), None)


UNIX_MAX = 1e11  # seconds: a Unix time past the year 5000 is not a time (pandas' range ends in 2262)


ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"  # a cell that begins so is no number


def _time(values: pd.Series) -> pd.Series:
    """Each cell as a time (NaT where it cannot be read, which the caller sets aside by row): a column mostly
    of numbers is Unix seconds, one cell that is not (NaN, 1e30, text) unreadable on its own, never the
    whole column; anything else is ISO 8601. `values`: a pandas Series (a CSV column that is all blank or ISO
    dates, `_dated`, goes to `_iso_times` without this test: none of its cells is a number)."""
    text = values.astype("string").str.strip()
    filled = text.notna() & (text != "")
    numeric = pd.to_numeric(text.where(filled), errors="coerce")
    if numeric.notna().sum() * 2 > filled.sum():
        seconds = numeric.where(np.isfinite(numeric) & (numeric.abs() < UNIX_MAX))
        return pd.to_datetime(seconds, unit="s")
    return _iso_times(values)


def _dated(text) -> bool:
    """Whether every cell of a stripped Arrow text column is blank or begins with an ISO date (`_time` reads such
    a column as ISO 8601 without testing it for Unix seconds)."""
    dated = pc.or_(pc.equal(text, ""), pc.match_substring_regex(text, ISO_DATE))
    return bool(pc.all(pc.fill_null(dated, True)).as_py())


def _iso_times(values: pd.Series) -> pd.Series:
    """Each cell read as ISO 8601 (NaT where it cannot be), each distinct text parsed once (a judgment log
    repeats its times: a million judgments hold far fewer distinct seconds)."""
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    parsed = pd.to_datetime(pd.Series(distinct, dtype=values.dtype), errors="coerce", utc=True,
                            format="ISO8601").dt.tz_localize(None).to_numpy()
    found = np.full(len(values), np.datetime64("NaT"), parsed.dtype if len(parsed) else "datetime64[ns]")
    held = codes >= 0
    found[held] = parsed[codes[held]]
    return pd.Series(found, index=values.index)


def _read(path: Path, content_hash: str) -> tuple[ResultBuilder, pa.Table | None, pd.DataFrame | None, pa.Array]:
    """(builder, every column as Arrow text, the pandas frame where one was read, record labels): a CSV straight
    into Arrow (`referee.io.columnar.read_csv_text`), anything else through `open_rows` with its columns as the
    text pandas makes of them; the table is None when the file was set aside whole."""
    header = _csv_columns(path)
    if header is not None:
        found = read_csv_text(path, header)
        if found is not None:
            return ResultBuilder(path, content_hash, NAME), found, None, _lines(2, found.num_rows)
    out, frame, labels = open_rows(path, content_hash, NAME)
    if frame is None:
        return out, None, None, pa.array([], pa.string())
    frame = frame.reset_index(drop=True)
    text = pa.table({str(c): pa.array(frame[c].astype("string"), pa.string()) for c in frame.columns})
    return out, text, frame, pa.array(labels, pa.string())


def _strip(values) -> pa.Array:
    """`str.strip()` of a text column: columnar, or through pandas where the two could differ."""
    found = stripped(values)
    return found if found is not None else pa.array(series(values).str.strip(), pa.string())


def _not_text(values: pd.Series) -> np.ndarray:
    """Which cells of a column read from JSON hold a value that is not text (and not missing)."""
    return values.map(lambda v: v is not None and v == v and not isinstance(v, str)).to_numpy(bool)


def _nested(values: pd.Series) -> np.ndarray:
    """Which cells of a column read from JSON hold a list or an object."""
    return values.map(lambda v: isinstance(v, (list, dict))).to_numpy(bool)


def _mask(values) -> np.ndarray:
    return pc.fill_null(values, False).to_numpy(zero_copy_only=False).astype(bool)


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one file of pairwise judgments; bad rows are quarantined by line and column. A CSV is read a block of
    rows at a time (`_streamed`: a million judgments in a bounded share of memory), anything else whole."""
    streamed = _streamed(path, content_hash, options)
    if streamed is not None:
        return streamed
    out, table, frame, labels = _read(path, content_hash)
    if table is None:
        return out.build()
    held: list[list] = []
    later = _Kept()
    if not _block(out, table, frame, labels, options, path, content_hash, held, later):
        return out.build()
    _finish(out, held, later)
    return out.build()


BLOCK_BYTES = 1 << 24  # a CSV is read and stored 16 MB at a time (about 240,000 arena judgments)


class _NotStreamable(Exception):
    """A block whose column-wide decision (how its times read) could differ from the whole file's."""


def _streamed(path: Path, content_hash: str, options: LoadOptions) -> LoadResult | None:
    """A CSV read block by block (`BLOCK_BYTES`) into the same rows, set aside for the same reasons and in the same
    order as the whole file read at once, the accepted rows of a file of several blocks kept on disk
    (`referee.io.loaders.spilled`) until the store writes them; None where the file is not a CSV Arrow reads alike
    (`read_csv_text`), or a block could read otherwise than the whole file (its times not all ISO 8601: the
    column-wide test for Unix seconds), or its rows break the canonical schema: the caller reads it whole."""
    header = _csv_columns(path)
    if header is None:
        return None
    out, held, first = ResultBuilder(path, content_hash, NAME), [], 2
    try:
        reader = csv_text_blocks(path, header, BLOCK_BYTES)
    except CSV_ERRORS:
        return None
    if reader is None:
        return None
    later = _Kept(spill=path.stat().st_size > BLOCK_BYTES, folder=options.spill)
    try:
        for table in _tables(reader, header):
            labels = _lines(first, table.num_rows)
            first += table.num_rows
            if not _block(out, table, None, labels, options, path, content_hash, held, later, streaming=True):
                for _ in reader:  # set aside whole for a missing column, unless a later block is no CSV at all
                    pass
                later.discard()
                return out.build()
        _finish(out, held, later)
    except (*CSV_ERRORS, _NotStreamable, SchemaError):
        later.discard()
        return None
    except BaseException:
        later.discard()
        raise
    later.close()
    return out.build()


class _Kept:
    """The rows `_block` accepts, per table and slot (matches: one; results: one per side; measures: one per side
    column), kept in the order `_finish` hands them over: in memory as Arrow tables, or, with `spill`, on disk in
    `folder` (`Spill`: a file of many blocks holds one block in memory at a time)."""

    def __init__(self, spill: bool = False, folder: str | None = None):
        self.spill, self.folder = spill, folder
        self.slots: dict[str, list] = {"matches": [], "results": [], "measures": []}
        # the spills' writes, on a thread of this read's own (made here: a thread does not survive a reader's fork)
        self.writer = ThreadPoolExecutor(1, thread_name_prefix="referee-spill") if spill else None

    def add(self, table: str, slot: int, rows: pa.Table) -> None:
        """Append a block's rows of `table` to its `slot` (SchemaError from a spill: a value breaks the schema)."""
        slots = self.slots[table]
        while len(slots) <= slot:
            slots.append(Spill(table, own=table != "matches", writer=self.writer, folder=self.folder) if self.spill
                         else [])
        slots[slot].append(rows)

    def parts(self, table: str) -> list:
        """`table`'s pieces, slot by slot: one Arrow table per slot, or the slots' `Spilled` pieces."""
        if not self.spill:
            return [pa.concat_tables(rows) for rows in self.slots[table] if rows]
        return [piece for piece in (spill.close() for spill in self.slots[table]) if piece is not None]

    def close(self) -> None:
        """Stop the writing thread (every spill closed or discarded by now)."""
        if self.writer is not None:
            self.writer.shutdown()

    def discard(self) -> None:
        """Remove what was spilled (the file is read whole or set aside instead)."""
        try:
            for slots in self.slots.values() if self.spill else ():
                for spill in slots:
                    spill.discard()
        finally:
            self.close()


def _lines(first: int, n: int) -> pa.Array:
    """The record labels of n CSV rows from file line `first` on (the header is line 1), as `read_rows` numbers them."""
    return pc.cast(pa.array(np.arange(first, first + n)), pa.string())


def _csv_columns(path: Path) -> list[str] | None:
    """The header of a CSV file Arrow may read (a .csv, not empty, its column names distinct), else None."""
    if path.suffix.lower() != ".csv" or not path.stat().st_size:
        return None
    header = csv_header(path)
    return header if len(set(header)) == len(header) else None


def _tables(reader, header: list[str]):
    """The blocks of a CSV reader as Arrow tables; a file of a header alone is one block of no rows, so that its
    columns are checked as one read of the whole file checks them."""
    found = False
    for batch in reader:
        found = True
        yield pa.Table.from_batches([batch])
    if not found:
        yield pa.table({h: pa.array([], pa.string()) for h in header})


def _finish(out: ResultBuilder, held: list[list], later: _Kept) -> None:
    """What `_block` kept for the end, in the order one read of the whole file gives: the matches, the results (every
    first contestant, then every second) and the measures (per side column, every row), then the rows set aside,
    reason by reason in the order they are tested, each reason's rows in file order."""
    for table in ("matches", "results", "measures"):
        for piece in later.parts(table):
            out.accept_bulk(0, **{table: piece})
    for rows in held:
        for label, error, raw in rows:
            out.quarantine(label, error, raw)


def _block(out: ResultBuilder, table: pa.Table, frame: pd.DataFrame | None, labels: pa.Array, options: LoadOptions,
           path: Path, content_hash: str, held: list[list], later: _Kept, streaming: bool = False) -> bool:
    """One block of judgments (`table`, every column Arrow text; `frame` the pandas rows where they came from JSON;
    `labels` their record labels) into `out`: the good rows counted as accepted (their matches, results and measures
    added to `later`, one slot per side and per side column), the others appended to `held` (one list per reason, in
    the order the reasons are tested); `_finish` hands both over. False when the file was set aside whole (a column
    missing).
    `streaming`: raise _NotStreamable where this block's times are not all ISO 8601."""
    names = table.column_names
    cols = {name: _column(names, name, options.mapping) for name in ALIASES}
    for name in ("first", "second", "winner"):
        if cols[name] is None or cols[name] not in names:
            out.reject_file(RecordError("missing field", cols[name] or name,
                                        f"no '{name}' column (looked for {list(ALIASES[name])}); map it with --map"))
            return False
    text = {k: _strip(table[c]) for k, c in cols.items() if c is not None and c in names}
    if options.values.get("winner"):  # the file's codes read as winners (`[values] winner = {winner1st = "first"}`)
        codes = options.values["winner"]
        text["winner"] = pa.array(series(text["winner"]).map(lambda v: codes.get(v, v)), pa.string())
    keys = list(WINNERS)
    code = pc.index_in(pc.utf8_lower(text["winner"]), value_set=pa.array(keys))
    empty = {k: _mask(pc.or_(pc.is_null(text[k]), pc.equal(text[k], ""))) for k in ("first", "second", "winner")}
    reasons = [
        (empty["first"], "missing value", cols["first"], "the first contestant is empty"),
        (empty["second"], "missing value", cols["second"], "the second contestant is empty"),
        (empty["winner"], "missing value", cols["winner"], "the winner is empty"),
        (_mask(pc.is_null(code)), "wrong value", cols["winner"], f"winner must be one of {sorted(set(WINNERS))}"),
        (_mask(pc.equal(text["first"], text["second"])), "self-comparison", cols["second"],
         "both contestants are the same"),
    ]
    raw = {c: table[c] if frame is None else frame[c] for c in names}  # a CSV's columns stay Arrow text
    if frame is not None:  # JSON: a contestant is named by text (a number or an object is no model's name)
        for side in ("first", "second"):
            reasons.insert(0, (_not_text(frame[cols[side]]), "wrong type", cols[side],
                               "a contestant is named by text"))
        for name in ("judge", "prompt", "id", "time"):  # one value each: a list or an object sets its row aside
            column = cols[name]
            if column in names:
                nested = _nested(frame[column])
                if nested.any():
                    reasons.insert(2, (nested, "wrong type", column, f"the {name} is one value, not a list or an "
                                       "object"))
                    raw[column] = frame[column].where(~nested, None)
    times = None
    if cols["time"] in names:  # a CSV's column all blank or ISO dates is not tested for Unix seconds
        dated = frame is None and _dated(text["time"])
        if streaming and not dated:
            raise _NotStreamable  # Unix seconds or not is decided over the whole column
        column = series(raw[cols["time"]]) if frame is None else raw[cols["time"]]
        times = _iso_times(column) if dated else _time(column)
    if times is not None:
        given = (_mask(pc.is_valid(table[cols["time"]])) if frame is None
                 else frame[cols["time"]].notna().to_numpy(bool))
        reasons.append((given & times.isna().to_numpy(bool), "wrong type", cols["time"], "unreadable time"))
    sides = side_columns(names, {c for c in cols.values() if c is not None})
    numbers = {}
    for _, *pair in sides:
        for column in pair:
            numbers[column], bad_cells = _numbers(raw[column])
            reasons.append((bad_cells, "wrong type", column, "a per-side measure must be a finite number"))
    bad = np.zeros(table.num_rows, bool)
    held += [[] for _ in range(len(reasons) - len(held))]
    for (mask, reason, field, detail), kept_aside in zip(reasons, held):
        mask = mask & ~bad
        found = np.flatnonzero(mask)
        rows = (table.take(pa.array(found)).to_pandas() if frame is None else frame.iloc[found]) if len(found) else None
        for k, i in enumerate(found):
            row = rows.iloc[k]
            value = row.get(field) if field in names else None
            error = RecordError(reason, field, f"{detail} (got {value!r})")
            kept_aside.append((labels[i].as_py(), error, row.to_json()))
        bad |= mask
    out.saw(table.num_rows)
    good = np.flatnonzero(~bad)
    if len(good):
        take = pa.array(good)
        kept = (lambda column: column) if len(good) == table.num_rows else (lambda column: column.take(take))
        match_ids = pc.binary_join_element_wise(
            pa.scalar(f"{file_key(path, content_hash)}:"), kept(labels), "")
        chosen = kept(code).to_numpy(zero_copy_only=False)
        scores = np.array([SCORES[WINNERS[k]] for k in keys])[chosen]
        ended = np.array([OUTCOMES.get(WINNERS[k], (None, None)) for k in keys], dtype=object)[chosen]
        extra = [k for k in ("judge", "id") if k in text]
        matches = table_of({
            "match_id": match_ids, "runner": NAME, "game": kept(text["prompt"]) if "prompt" in text else None,
            "n_players": np.full(len(good), 2, np.int32),
            "started_at": times.to_numpy()[good] if times is not None else None,
            "source_file": str(path), "content_hash": content_hash, "record_index": kept(labels),
            "attrs": json_objects({k: kept(text[k]) for k in extra}) if extra else None})
        later.add("matches", 0, matches)
        tie = scores[:, 0] == scores[:, 1]
        for side, col in ((0, "first"), (1, "second")):
            rank = np.where(tie, 1.0, np.where(scores[:, side] > scores[:, 1 - side], 1.0, 2.0))
            rank = np.where(np.isnan(scores[:, side]), np.nan, rank)  # an aborted match has no rank
            who = kept(text[col])
            later.add("results", side, table_of({"match_id": match_ids, "player": who, "agent": who, "role": col,
                                                 "score": scores[:, side], "rank": rank,
                                                 "outcome": pa.array(ended[:, side].tolist(), pa.string())}))
        columns = [(name, col, column) for name, first, second in sides
                   for col, column in (("first", first), ("second", second))]
        for k, (name, col, column) in enumerate(columns):
            value = numbers[column][good]
            present = ~np.isnan(value)
            ids, who = match_ids, kept(text[col])
            if not present.all():  # (a full column keeps the very arrays: no copy, and known as this file's own ids)
                ids, who, value = ids.filter(pa.array(present)), who.filter(pa.array(present)), value[present]
            later.add("measures", k, table_of({"match_id": ids, "player": who, "name": name, "value": value,
                                               "kind": "telemetry"}))
        out.accept_bulk(len(good))
    return True


RUNNER = Runner(NAME, sniff, load, {f"{name} (--map {name}=COLUMN), recognised as": list(aliases)
                                    for name, aliases in ALIASES.items()}, columns=tuple(ALIASES))
