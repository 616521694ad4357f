"""What every loader shares: the result shape, the record-level error, and file reading helpers.

A loader turns one source file into a `LoadResult`: canonical tables (matches, results, measures,
events) plus quarantine rows for everything it set aside, with `read == accepted + quarantined`
counted in records (one JSON object, one table row, one line). A file that cannot be read at all
counts as one record, quarantined with the field left empty.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from referee.io.catalogue import Catalogue
from referee.io.schema import arrow_schema, columns, conform, empty
from referee.io.loaders.parts import (  # noqa: F401  (re-exported: the store and the loaders take them from here)
    COLUMNAR_ROWS, ROWS_ARROW, Frame, Part, Rows, Spilled, columnar_part, conform_parts, drop_matches, frame_rows,
    match_chunks, part_match_ids, same_buffers)
from referee.models.registry import suggest  # noqa: F401  (re-exported for the loaders)
from referee.io.loaders.errors import (  # noqa: F401  (re-exported: every loader imports them from here)
    DATA_TABLES, FILE_RAW_CAP, FORMAT_REASONS, INT64, PROBE, RAW_CAP, NotThisRunner, RecordError, _way,
    storable_text, whole_number)
from referee.io.loaders.files import (  # noqa: F401
    Line, check_record, file_hash, file_key, file_text, hash_and_head, json_error, json_lines, parse_json_line,
    read_json, record_fault)
from referee.io.loaders.appended import Unread

@dataclass
class LoadOptions:
    """What a loader may need besides the file: a scenario catalogue, for the table runner a column mapping
    and the extra columns to read as measures (column -> kind), and the phase the matches belong to."""

    catalogue: Catalogue | None = None
    mapping: dict[str, str] = field(default_factory=dict)  # canonical column -> file column (table runner)
    measures: dict[str, str] = field(default_factory=dict)  # file column -> measure kind (table runner)
    values: dict[str, dict[str, str]] = field(default_factory=dict)  # canonical column -> {code: value} (table, arena)
    progress: bool = False
    phase: str | None = None  # the contest phase every match read belongs to (ingest --phase)
    score: str | None = None  # which of a runner's several scores is the score (ingest --score; Sotopia's dimension)
    spill: str | None = None  # the folder a large file's rows wait in (the ingest's staging folder beside the store)


@dataclass
class LoadResult:
    """A loader's output for one source file.

    parts : per canonical table (matches, results, measures, events), the pieces the loader handed over,
        not yet conformed (the store concatenates a whole batch of files and conforms once).
    tables : the same, conformed to the canonical schema (computed on first use): DataFrames, except that
        tables with Arrow pieces (large event logs) come as Arrow tables.
    bad : quarantine rows (dicts with the quarantine table's columns), one per record set aside.
    quarantine : the same as a canonical DataFrame (computed on first use).
    read, accepted : record counts; quarantined = read - accepted.
    """

    source_file: str
    content_hash: str
    runner: str
    parts: dict[str, list[Part]]
    bad: list[dict]
    read: int
    accepted: int
    records: pa.Table | None = None  # (match_id, record) per accepted record; None: one record per match
    notes: dict[str, int] = field(default_factory=dict)  # what the loader stored with a caveat -> how many records
    _tables: dict[str, Frame] | None = field(default=None, repr=False)
    _quarantine: pd.DataFrame | None = field(default=None, repr=False)
    _ids: dict[str, set[str]] = field(default_factory=dict, repr=False)

    @property
    def quarantine(self) -> pd.DataFrame:
        """The quarantine rows as a canonical DataFrame (conformed on first use)."""
        if self._quarantine is None:
            self._quarantine = conform("quarantine", pd.DataFrame(self.bad, columns=columns("quarantine"))) \
                if self.bad else empty("quarantine")
        return self._quarantine

    @property
    def tables(self) -> dict[str, Frame]:
        """The canonical tables (conformed on first use; see the class docstring)."""
        if self._tables is None:
            self._tables = {t: conform_parts(t, self.parts.get(t, [])) for t in DATA_TABLES}
        return self._tables

    def frame(self, table: str) -> pd.DataFrame:
        """One canonical table (`tables`) as a DataFrame, an Arrow table converted (its text as text, also where
        a column came dictionary-encoded: `referee.io.columnar.constant`)."""
        found = self.tables[table]
        return found.cast(arrow_schema(table)).to_pandas() if isinstance(found, pa.Table) else found

    def match_ids(self, table: str) -> set[str]:
        """The distinct match ids in one table's parts (kept: a result's parts do not change)."""
        if table not in self._ids:
            ids: set[str] = set()
            for part in self.parts.get(table, []):
                ids |= part_match_ids(part)
            self._ids[table] = ids
        return self._ids[table]

    def foreign_ids(self, tables: tuple[str, ...]) -> set[str]:
        """The distinct match ids of these tables' parts that none of this result's own matches has: found
        column by column where every part is an Arrow table (a million judgments: no Python set of them)."""
        parts, own = [p for t in tables for p in self.parts.get(t, [])], self.parts.get("matches", [])
        if not all(isinstance(p, (pa.Table, Spilled)) for p in parts + own):
            return set().union(*(self.match_ids(t) for t in tables)) - self.match_ids("matches")
        parts = [p for p in parts if not (isinstance(p, Spilled) and p.own)]  # made beside this file's matches
        same = {same_buffers(c) for p in own if isinstance(p, pa.Table) for c in p["match_id"].chunks}
        chunks = [c for p in parts for c in match_chunks(p) if same_buffers(c) not in same]  # the very same column
        if not chunks:
            return set()
        named = pa.chunked_array(chunks, pa.string())
        outside = pc.invert(pc.is_in(named, value_set=self.match_column))
        return set(pc.unique(named.filter(outside)).to_pylist())

    @functools.cached_property
    def match_column(self) -> pa.Array | None:
        """This result's own match ids as one Arrow text column (made once), where every matches part is an
        Arrow table or `Spilled`; None otherwise."""
        own = self.parts.get("matches", [])
        if not own:
            return pa.array([], pa.string())
        if not all(isinstance(p, (pa.Table, Spilled)) for p in own):
            return None
        return pa.concat_arrays([c.cast(pa.string()) for p in own for c in match_chunks(p)])

    @property
    def quarantined(self) -> int:
        """Records set aside (always equal to the quarantine table's length)."""
        return len(self.bad)


class LoaderCountError(RuntimeError):
    """A loader lost track of records: read != accepted + quarantined for one file (a bug in referee)."""


class ResultBuilder:
    """The one way a loader accepts rows and sets records aside while it walks a file, then builds a LoadResult.

    A loader says how many records it read from the source (`saw`), and hands each of them either to
    `accept` / `accept_bulk` (rows for the canonical tables) or to `quarantine` (with its reason). The
    builder keeps the counts; `build` raises LoaderCountError when read != accepted + quarantined.
    """

    def __init__(self, path: Path, content_hash: str, runner: str, many_records_per_match: bool = False,
                 sequential: bool = True):
        self._records: list[pa.Table] | None = [] if many_records_per_match else None
        self._sequential = sequential  # records are accepted or quarantined in file order (probe as they come)
        self._first: list[tuple[str, str | None] | None] = []  # outcome of the first PROBE records
        self._raw_kept = 0
        self._example = ""  # the first set-aside record's detail, quoted when the file turns out not to fit
        self.path = path
        self.content_hash = content_hash
        self.runner = runner
        self._rows: dict[str, list[dict]] = {t: [] for t in DATA_TABLES}
        self._parts: dict[str, list[Part]] = {t: [] for t in DATA_TABLES}
        self._bad: list[dict] = []
        self.match_ids: set[str] = set()
        self._read = 0
        self._accepted = 0
        self._notes: dict[str, int] = {}

    @property
    def read(self) -> int:
        """Records read from the source so far (as declared by `saw`)."""
        return self._read

    @property
    def accepted(self) -> int:
        """Records accepted so far."""
        return self._accepted

    def saw(self, n: int = 1) -> None:
        """Declare `n` more records read from the source (each must then be accepted or quarantined)."""
        self._read += int(n)

    def accept_bulk(self, records: int, **tables: "Frame") -> None:
        """Accept `records` records at once whose rows are given per canonical table (DataFrames, Arrow
        tables or lists of row dicts, e.g. `matches=..., results=..., events=...`)."""
        for name, frame in tables.items():
            if name not in DATA_TABLES:
                raise KeyError(f"unknown table {name!r}; tables: {DATA_TABLES}")
            if frame is None or len(frame) == 0:
                continue
            self._parts[name].append(frame)
        self._accepted += int(records)

    def note(self, text: str, n: int = 1) -> None:
        """Count a record stored with a caveat the user should hear of (e.g. 'Inspect sample(s) no scorer ran
        on: stored without a score'); the ingest reports each caveat once with its count over all files."""
        self._notes[text] = self._notes.get(text, 0) + n

    def passed(self) -> None:
        """Note that the next record in file order passed its checks (a sequential loader that hands its rows
        over later with `accept_bulk` calls this per record, so that the format probe sees file order)."""
        if self._sequential:
            self._probe(None)

    def _probe(self, error: RecordError | None) -> None:
        if len(self._first) < PROBE:
            self._first.append(None if error is None else (error.reason, error.field))
            if len(self._first) == PROBE:
                self.check_format(self._first, PROBE)

    def check_format(self, first: list[tuple[str, str | None] | None], total: int) -> None:
        """Raise NotThisRunner when the first records of the file (`first`: None for an accepted record, else
        (reason, field), in file order) number min(PROBE, total) and all failed the same way with a reason
        in FORMAT_REASONS: the file is in another format, and saying so once beats one line per record."""
        need = min(PROBE, total)
        if need < 1 or len(first) < need:
            return
        head = [None if o is None else _way(*o) for o in first[:need]]
        if all(o is not None for o in head) and len(set(head)) == 1 and head[0][0] in FORMAT_REASONS:
            reason, field = head[0]
            example = self._example
            raise NotThisRunner(
                f"its first {need} record(s) all fail the {self.runner} format the same way ({reason}"
                + (f" '{field}'" if field else "") + (f": {example}" if example else "") + ")",
                runner=self.runner, reason=reason, field=field)

    def quarantine(self, record: str, error: RecordError, raw: Any) -> None:
        """Set one record aside with its reason; `raw` is kept as text, up to RAW_CAP characters per source
        file in all (past the cap the text says where the record is in the source, so nothing is lost).
        In sequential mode, raises NotThisRunner when the file's first PROBE records all failed alike."""
        self._example = self._example or error.detail
        text = raw if isinstance(raw, str) else raw.text if isinstance(raw, Unread) else _dump(raw)
        text = _kept_text(text)  # storable, whatever came in
        if record != "-":
            text = text.rstrip("\r\n")  # a record's line without its line end; a whole file kept as it was
        text = self._capped(text, record)
        where = f"{self.path}, record {record}" + (f", field '{error.field}'" if error.field else "")
        self._bad.append(
            {
                "source_file": str(self.path),
                "content_hash": self.content_hash,
                "runner": self.runner,
                "record": str(record),
                "field": error.field,
                "reason": error.reason,
                "message": f"{where}: {error.detail}",
                "raw": text,
            }
        )
        if self._sequential:
            self._probe(error)

    def _capped(self, text: str, record: str) -> str:
        room = max(RAW_CAP - self._raw_kept, 0)
        if len(text) <= room:
            self._raw_kept += len(text)
            return text
        self._raw_kept = RAW_CAP
        return (text[:room] + f"[... {len(text) - room} more characters not kept: quarantine keeps at most "
                f"{RAW_CAP >> 20} MiB of raw text per source file; see record {record} of the source file]")

    def accept(self, rows: dict[str, list[dict]], record: str, raw: Any) -> None:
        """Accept one record's rows, keyed by table name; a match id repeated within the file is quarantined."""
        ids = {m["match_id"] for m in rows.get("matches", [])}
        repeated = ids & self.match_ids
        if repeated:
            mid = sorted(repeated)[0]
            self.quarantine(record, RecordError("duplicate match id", "match_id",
                                                f"match id {mid!r} appears earlier in this file"), raw)
            return
        self.match_ids |= ids
        for table, table_rows in rows.items():
            self._rows[table].extend(table_rows)
        self._accepted += 1
        if self._sequential:
            self._probe(None)

    def accept_records(self, records, parse: Callable[[Any], dict[str, list[dict]]],
                       match_id: Callable[[dict, str], str]) -> None:
        """Walk match records, one match each: `records` is a list (labelled by index from 0) or an iterable of
        (label, raw) pairs; `parse(raw)` gives the record's rows or raises RecordError (quarantined with its
        raw text; any other exception it raises is that record's 'invalid value', `unforeseen`);
        `match_id(match_row, label)` names the match, which every row then carries."""
        pairs = enumerate(records) if isinstance(records, list) else records
        for label, record in pairs:
            label = str(label)
            self.saw()
            try:
                check_record(record)
                rows = parse(record)
            except RecordError as exc:
                self.quarantine(label, exc, record)
                continue
            except Exception as exc:  # noqa: BLE001 - the one guard: whatever one record raises costs it alone
                self.quarantine(label, unforeseen(exc), record)
                continue
            match = rows["matches"][0]
            mid = match_id(match, label)
            match.update(match_id=mid, source_file=str(self.path), content_hash=self.content_hash,
                         record_index=label)
            for table, table_rows in rows.items():
                if table != "matches":
                    for row in table_rows:
                        row["match_id"] = mid
            self.accept(rows, label, record)

    def reject_file(self, error: RecordError, cap: int = FILE_RAW_CAP) -> LoadResult:
        """The whole file is one bad record (unreadable, empty, another runner's): quarantine it, its first
        `cap` bytes as raw text (the file itself stays at its path, named by its sha256), and finish."""
        self.saw(1)
        self._sequential = False  # one record: nothing to probe
        size = self.path.stat().st_size if self.path.exists() else 0
        if size > cap:
            error = RecordError(error.reason, error.field, error.detail + f" (raw text kept: the first "
                                f"{cap >> 10} KiB of {size:,} bytes)")
        self.quarantine("-", error, file_text(self.path, cap))
        return self.build()

    def add_records(self, match_ids, labels) -> None:
        """Note which match each accepted record (line or row label) belongs to (row-per-record runners)."""
        self._records.append(pa.table({"match_id": _strings(match_ids), "record": _strings(labels)}))

    def build(self, empty: str | None = None) -> LoadResult:
        """The LoadResult of everything collected, every table conformed to the canonical schema. `empty`:
        what a file of this runner that holds no records legitimately is (a cancelled Inspect log), noted
        instead of set aside.

        Raises NotThisRunner when a file of fewer than PROBE records had every record fail alike (see
        `check_format`), and LoaderCountError when read != accepted + quarantined."""
        if self._read == 0 and empty:
            self.note(empty)
        elif self._read == 0:  # nothing but blank lines or an empty container: still one record, set aside
            self._sequential = False
            self.saw(1)
            self.quarantine("-", RecordError("empty file", None, "the file holds no records"), file_text(self.path))
        if self._sequential and len(self._first) < PROBE and self._accepted == 0:
            self.check_format(self._first, self._read)
        if self._read != self._accepted + len(self._bad):
            raise LoaderCountError(f"{self.path}: the {self.runner} loader read {self._read} records but accepted "
                                   f"{self._accepted} and set aside {len(self._bad)}; please report this bug")
        parts = {t: [columnar_part(t, p) for p in self._parts[t] + ([self._rows[t]] if self._rows[t] else [])]
                 for t in DATA_TABLES}
        return LoadResult(
            source_file=str(self.path),
            content_hash=self.content_hash,
            runner=self.runner,
            parts=parts,
            bad=self._bad,
            read=self._read,
            accepted=self._accepted,
            notes=dict(self._notes),
            records=None if self._records is None else (
                pa.concat_tables(self._records) if self._records
                else pa.table({"match_id": pa.array([], pa.string()), "record": pa.array([], pa.string())})),
        )


def _strings(values) -> pa.ChunkedArray | pa.Array:
    """Values as an Arrow text column: all text or all whole numbers converted in Arrow, anything else by str(). A
    list of Python text or of 64-bit whole numbers is converted as it is (what Arrow's cast writes, without its
    per-call cost: a file of 70 lines pays it twice)."""
    if type(values) is list:
        if all(type(v) is str for v in values):
            return pa.array(values, pa.string())
        if all(type(v) is int and INT64[0] <= v <= INT64[1] for v in values):
            return pa.array([str(v) for v in values], pa.string())
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        try:
            values = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            return pa.array([str(v) for v in values], pa.string())
        if not (pa.types.is_string(values.type) or pa.types.is_integer(values.type) or pa.types.is_null(values.type)):
            return pa.array([str(v) for v in values.to_pylist()], pa.string())
    return values.cast(pa.string())


def _dump(raw: Any) -> str:
    """A set-aside record as text: its JSON, else its repr, else (nested past the stack) a sentence saying so."""
    for write in (lambda: json.dumps(raw, ensure_ascii=False, allow_nan=True, default=str), lambda: repr(raw)):
        try:
            return write()
        except (TypeError, ValueError):
            continue
        except RecursionError:
            break
    return "(a value nested too deep to write out)"


def require(record: dict, name: str, kinds: tuple[type, ...], what: str) -> Any:
    """Return `record[name]`, raising RecordError when it is missing or not of the given types."""
    if name not in record:
        raise RecordError("missing field", name, f"required field '{name}' is missing")
    value = record[name]
    if isinstance(value, bool) and bool not in kinds:
        raise RecordError("wrong type", name, f"expected {what}, got {value!r}")
    if not isinstance(value, kinds):
        raise RecordError("wrong type", name, f"expected {what}, got {type(value).__name__} {value!r}")
    return value


def is_number(value: Any, finite: bool = False) -> bool:
    """Whether `value` is a JSON number as Python reads one (an int or a float, not a bool); with `finite`, a
    finite one (not NaN, not an infinity)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not finite or math.isfinite(value)


def score_value(value: Any, name: str, allow_neg_inf: bool = True) -> float:
    """A raw score as float: a number, finite or (if allowed) -inf; NaN, +inf, a whole number past the store's
    64 bits (`errors.whole_number`: as every whole number a record carries) and non-numbers raise, naming
    `name`, so that the caller sets that value aside alone."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError("wrong type", name, f"expected a number, got {type(value).__name__} {value!r}")
    if isinstance(value, int):
        whole_number(value, name)
    value = float(value)
    if math.isnan(value):
        raise RecordError("NaN", name, "score is NaN")
    if math.isinf(value) and (value > 0 or not allow_neg_inf):
        raise RecordError("infinite", name, f"score is {value}")
    return value


RANK_MAX = 2**31 - 1  # a rank counts players: past this it is not a rank of any match a runner plays


def rank_value(value: Any, name: str) -> float:
    """A runner's own rank of a player (1 = best, ties share the better rank, as the store holds them): a whole
    number from 1 to RANK_MAX as float; RecordError naming `name` for anything else (text, NaN, an infinity, 0,
    1.5, 1e30)."""
    rank = score_value(value, name, allow_neg_inf=False)
    if not 1 <= rank <= RANK_MAX or not rank.is_integer():
        raise RecordError("wrong value", name, f"a rank is a whole number from 1 (best), got {value!r}")
    return rank


def unforeseen(exc: Exception) -> RecordError:
    """A record's fault the loader did not name (a value of a type its format never holds there): the record's
    own quarantine reason, so that it never costs the records beside it."""
    return RecordError("invalid value", None, f"the record could not be read ({type(exc).__name__}: {exc}); it is "
                       "set aside alone")


def _kept_text(text: str) -> str:
    """A set-aside record's text as the store can hold it: a byte the decoder escaped, or a lone surrogate a
    JSON escape made, becomes U+FFFD."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def parse_time(value: Any, field: str) -> datetime | None:
    """An ISO 8601 time (with 'Z' or an offset, or naive UTC) as a naive UTC datetime; None stays None.

    Raises RecordError('wrong type', field) for anything else.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError("wrong type", field, f"expected an ISO 8601 time, got {value!r}")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RecordError("wrong type", field, f"expected an ISO 8601 time, got {value!r}") from exc
    try:
        return moment.astimezone(timezone.utc).replace(tzinfo=None) if moment.tzinfo else moment
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00: before the first moment a time can hold, in UTC
        raise RecordError("out of range", field, f"the time {value!r} is outside the years 1-9999 once read as "
                          "UTC") from None


def ranks_from_scores(scores: list[float]) -> list[float]:
    """Competition ranks (1 = highest score, ties share the best rank) for one match's scores: 1 + how many
    scores are higher, as floats; a NaN score has a NaN rank and counts for no one (pandas'
    `rank(method="min", ascending=False)`)."""
    ordered = sorted(s for s in scores if s == s)
    return [float(len(ordered) - bisect.bisect_right(ordered, s) + 1) if s == s else math.nan for s in scores]


Sniffer = Callable[[Path, str], bool]


def given_id(value: object, field: str) -> str | None:
    """A match id a record names (`field`): None where it names none, else its text (an integer id as its
    digits); RecordError for anything else (an object, a list, a boolean, an empty text), which would make a
    match id such as "{'a': 1}"."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str) and not value.strip()):
        raise RecordError("wrong type", field, f"expected a match id (text or a whole number), got {value!r}")
    return str(value).strip()


def load_match_lines(path: Path, content_hash: str, runner: str, parse: Callable[[Any], dict[str, list[dict]]],
                     prefix: str = "") -> LoadResult:
    """Read a JSON-lines file of one match per line: `parse(record)` gives the line's rows (its match row may
    carry `given_id`) or raises RecordError, and the line is quarantined by number and field. The match id is
    prefix + the given id, else prefix + 'file key:line'."""
    out = ResultBuilder(path, content_hash, runner)
    if path.stat().st_size == 0:
        return out.reject_file(RecordError("empty file", None, "the file is empty"))

    def match_id(match: dict, label: str) -> str:
        given = match.pop("given_id", None)
        return f"{prefix}{given}" if given is not None else f"{prefix}{file_key(path, content_hash)}:{label}"

    out.accept_records(((line.number, line) for line in json_lines(path)), lambda line: parse(line.parsed()),
                       match_id)
    return out.build()
