"""Generic long tables: one row per player per match, as CSV, Parquet or JSONL.

Format: `data/formats/table.md`. Default columns: `match`, `agent`, `score` (required); `player`, `game`,
`scenario`, `variant`, `phase`, `repetition`, `started_at`, `team`, `role`, `rank`, `outcome` (win, loss, tie,
forfeit or aborted) (optional). Other names are
mapped with `mapping` (canonical name -> column in the file), given on the command line
(`--map score=points`) or in a TOML file with a `[columns]` table; `check_mapping` refuses unknown names
with a close-match suggestion. Extra columns declared as measures (`--measure coop=outcome`, or a
`[measures]` table) become `measures` rows of that kind; any other column is kept per row in
`results.attrs`. A row is one record: CSV rows are numbered by file line (header = line 1), JSONL by line,
Parquet by row index from 0.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa

from referee.io.loaders.runner import Runner
from referee.io.loaders.base import (
    PROBE,
    LoadOptions,
    LoadResult,
    NotThisRunner,
    RecordError,
    ResultBuilder,
    suggest,
    json_lines,
    parse_time,
    rank_value,
)
from referee.io.loaders.detect import share
from referee.io.schema import MEASURE_KINDS, OUTCOMES
from referee.names import SEAT_MEASURE
from referee.io.toml_file import read_toml

NAME = "table"
REQUIRED = ("match", "agent", "score")
OPTIONAL = ("player", "game", "scenario", "variant", "phase", "repetition", "started_at", "team", "role", "rank",
            "outcome")
MATCH_LEVEL = ("game", "scenario", "variant", "phase", "repetition")
EXTENSIONS = (".csv", ".parquet", ".jsonl")


def _flat(record: dict) -> bool:
    return len(record) >= 3 and not any(isinstance(v, (dict, list)) for v in record.values())




def sniff(path: Path, head: str, sample: list) -> float:
    """The fallback for tabular files: 1 for CSV and Parquet; for JSON lines, the share of sampled lines
    that are flat objects (no nested values)."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".parquet"):
        return 1.0
    return share(sample, _flat) if suffix == ".jsonl" else 0.0


SEAT_COLUMN = "seat"  # the player's seat or turn order (a number, or text ending in one: 'seat_2'), read as the
# per-player measure `seat` that `referee.prepare.covariates.seats` reads (data/formats/table.md)
SEAT_LIKE = re.compile(r"(?i)(seat|seat[_ ]?(no|number|index|id)|turn[_ ]?order|position|player[_ ]?order|order)")


def seat_number(value) -> float | None:
    """The seat of a `seat` cell: a number as it is, text ending in a number ('seat_2', 'Seat 3', 'p1') that number;
    None for an empty cell; RecordError naming the column for anything else."""
    text = _text(value)
    if text is None:
        return None
    found = re.search(r"(-?\d+(?:\.\d+)?)\s*$", text)
    if found is None:
        raise RecordError("wrong value", SEAT_COLUMN, f"seat {text!r} is not a number and does not end in one")
    return float(found.group(1))


def check_mapping(mapping: dict[str, str], measures: dict[str, str] | None = None, where: str = "--map",
                  columns: tuple[str, ...] | None = None, runner: str = NAME) -> None:
    """Refuse a column mapping that names a column the runner does not read (`columns`: the runner entry's
    `columns`; default the table runner's), reads one file column as two canonical columns (`agent = "score"`
    beside the default `score`), or declares measures of an unknown kind, naming every offender with a
    close-match suggestion (ValueError)."""
    if columns is not None and tuple(columns) != REQUIRED + OPTIONAL:
        problems = [f"'{k}' is not a column the {runner} runner reads{suggest(k, columns)}" for k in mapping
                    if k not in columns]
        if problems:
            raise ValueError(f"{where}: " + "; ".join(problems) + f". Columns that can be mapped: {list(columns)}")
        return
    problems = [f"'{k}' is not a canonical column{suggest(k, REQUIRED + OPTIONAL)}"
                for k in mapping if k not in REQUIRED + OPTIONAL]
    read_from: dict[str, list[str]] = {}
    for canonical in REQUIRED + tuple(k for k in mapping if k in OPTIONAL):
        read_from.setdefault(mapping.get(canonical, canonical), []).append(canonical)
    problems += [f"file column '{column}' would be read as {' and as '.join(names)}"
                 for column, names in read_from.items() if len(names) > 1]
    problems += [f"measure '{name}' has kind '{kind}', not one of {list(MEASURE_KINDS)}{suggest(kind, MEASURE_KINDS)}"
                 for name, kind in (measures or {}).items() if kind not in MEASURE_KINDS]
    clash = [name for name in (measures or {}) if name in mapping.values()]
    problems += [f"column '{c}' is mapped to a canonical column and declared a measure" for c in clash]
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems) + f". Columns that can be mapped: required "
                         f"{list(REQUIRED)}, optional {list(OPTIONAL)}; measure kinds {list(MEASURE_KINDS)}")


def read_mapping(path: str | Path) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, str]]]:
    """(column mapping, measures, values) from a TOML file with a `[columns]` table of canonical name = file
    column, an optional `[measures]` table of file column = kind, and an optional `[values]` table of canonical
    name = {the file's code = the canonical value} (a result written as codes: `winner = {winner1st = "first",
    disqualified2nd = "forfeit-second", networkerror = "aborted"}`); the measures checked with `check_mapping`,
    the columns against the runner that reads them (`Store.ingest`). ValueError naming the file and the key."""
    doc = read_toml(path, "column mapping")
    tables = ("columns", "measures", "values")
    unknown = [k for k in doc if k not in tables]
    if unknown:
        raise ValueError(f"{path}: unknown table [{unknown[0]}]{suggest(unknown[0], tables)}; a column mapping has "
                         "[columns], [measures] and [values]")
    columns = {str(k): str(v) for k, v in doc.get("columns", {}).items()}
    measures = {str(k): str(v) for k, v in doc.get("measures", {}).items()}
    values = doc.get("values", {})
    bad = [k for k, v in values.items() if not isinstance(v, dict)]
    if bad:
        raise ValueError(f"{path}: [values] {bad[0]} must be a table of the file's code = the canonical value")
    check_mapping({}, measures, where=str(path))
    return columns, measures, {str(k): {str(a): str(b) for a, b in v.items()} for k, v in values.items()}


def _read_jsonl(path: Path, out: ResultBuilder, need: tuple[str, ...] = ()) -> tuple[pd.DataFrame, list[str]]:
    """The objects of a JSON-lines table and their line numbers (lines that are not objects quarantined into
    `out`). NotThisRunner as soon as the first PROBE objects all lack a column of `need` (an event log, not a
    table: decided from its head, not by reading it all)."""
    rows, labels = [], []
    for line in json_lines(path):
        try:
            obj = line.parsed()
            if not isinstance(obj, dict):
                raise RecordError("wrong type", None, f"line {line.number} is not a JSON object")
        except RecordError as exc:
            out.saw()
            out.quarantine(str(line.number), exc, line)
            continue
        rows.append(obj)
        labels.append(str(line.number))
        if len(rows) == PROBE and need:
            _require_columns(need, list(dict.fromkeys(k for r in rows for k in r)), f"its first {PROBE} records'")
    return pd.DataFrame(rows), labels


def _require_columns(need: tuple[str, ...], have: list[str], where: str) -> None:
    """NotThisRunner naming the columns of `need` (the required ones, as the file names them) not among `have`
    (`where` the columns were seen: 'its', or 'its first 10 records'')."""
    missing = [c for c in need if c not in have]
    if missing:
        named = [f"'{c}'{suggest(c, have)}" for c in missing]
        raise NotThisRunner(f"required columns {', '.join(named)} not in the file ({where} columns: {have}); map "
                            "them with --map if this is a table of results", runner=NAME, reason="missing field",
                            field=missing[0])


def csv_header(path: Path) -> list[str]:
    """The first row of a CSV file as `csv.reader` reads it ([] for an empty file); UnicodeDecodeError and
    csv.Error as they come."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return next(csv.reader(fh), [])


def read_rows(path: Path, out: ResultBuilder, need: tuple[str, ...] = ()) -> tuple[pd.DataFrame, list[str]]:
    """Rows of a CSV (as text), Parquet or JSONL file and their record labels (CSV/JSONL line, Parquet row).

    Malformed JSONL lines are quarantined into `out` as they are met; raises RecordError for an empty or
    malformed file.
    """
    suffix = path.suffix.lower()
    if suffix not in EXTENSIONS:
        raise RecordError("not this runner", None, f"expected a CSV, Parquet or JSONL file, got '{suffix}'")
    if suffix == ".jsonl":
        return _read_jsonl(path, out, need)
    if path.stat().st_size == 0:
        raise RecordError("empty file", None, "the file is empty")
    if suffix == ".parquet":
        try:
            frame = pd.read_parquet(path)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise RecordError("malformed Parquet", None, f"{type(exc).__name__}: {exc}") from exc
        return frame, [str(i) for i in range(len(frame))]
    try:
        header = csv_header(path)
        twice = sorted({h for h in header if header.count(h) > 1})
        if twice:
            raise RecordError("duplicate column", twice[0], f"column '{twice[0]}' appears {header.count(twice[0])} "
                              "times in the header")
        try:
            frame, stopped = _csv_frame(path), None
        except pd.errors.ParserError as exc:
            frame, stopped = None, exc
        frame = _without_cut_row(path, out, frame)
        if frame is None:
            raise stopped
    except UnicodeDecodeError as exc:
        raise RecordError("not UTF-8", None, f"byte {exc.object[exc.start]:#04x} at offset {exc.start} is not "
                          "UTF-8 text") from exc
    except pd.errors.EmptyDataError as exc:
        raise RecordError("empty file", None, "the file has no header") from exc
    except (pd.errors.ParserError, csv.Error) as exc:
        raise RecordError("malformed CSV", None, str(exc).strip()) from exc
    return frame, [str(i + 2) for i in range(len(frame))]


CUT_TAIL = 64 << 10  # bytes at a CSV's end read to find a last row cut short


def _csv_frame(source) -> pd.DataFrame:
    """A CSV (path or bytes buffer) as text cells, as every table runner reads it; raises pandas' errors."""
    return pd.read_csv(source, dtype=str, keep_default_na=False, on_bad_lines="error", encoding="utf-8-sig")


def _without_cut_row(path: Path, out: ResultBuilder, frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """`frame` (None: pandas stopped on the file) without a last row that was cut short, set aside in `out` as
    'truncated line': the file ends without a line end, and either pandas stopped inside the cut row (an open
    quote: the rows before it are read) or padded it with blanks (fewer cells than the header). None when
    pandas stopped and the file is malformed elsewhere."""
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - CUT_TAIL))
        tail = fh.read()
    if tail.endswith(b"\n") or b"\n" not in tail:
        return frame
    cut = tail.rsplit(b"\n", 1)[1]
    if frame is None:
        data = path.read_bytes()
        try:
            frame = _csv_frame(io.BytesIO(data[: len(data) - len(cut)]))
        except (pd.errors.ParserError, UnicodeDecodeError):
            return None
    elif len(next(csv.reader([cut.decode("utf-8", "replace")]), [])) < len(frame.columns):
        frame = frame.iloc[:-1]
    else:
        return frame
    out.saw()
    out.quarantine(str(len(frame) + 2), RecordError("truncated line", None, "the last row is cut short (the file "
                                                    "ends inside it, without a line end)"),
                   cut.decode("utf-8", "replace"))
    return frame


def open_rows(path: Path, content_hash: str, runner: str) -> tuple[ResultBuilder, pd.DataFrame | None, list[str]]:
    """Start a loader of one table file: its ResultBuilder and `read_rows`' frame and labels; the frame is None
    when the file cannot be read as a table (then it is set aside whole in the builder, ready to build)."""
    out = ResultBuilder(path, content_hash, runner)
    try:
        frame, labels = read_rows(path, out)
    except RecordError as exc:
        out.reject_file(exc)
        return out, None, []
    return out, frame, labels


CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _text(value) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _name(value, field: str) -> str | None:
    """A match, agent or player name: `_text`, but a control character anywhere (a leading TAB or carriage
    return would be stripped silently and merge two names) is a RecordError naming `field`."""
    if isinstance(value, str) and CONTROL.search(value):
        raise RecordError("wrong value", field, f"the name {value!r} holds a control character")
    return _text(value)


def number_cell(value, name: str, allow_neg_inf: bool) -> float | None:
    """One table cell as a number: blank is None; a bool, text that is not a number (digit separators such as
    '1_000' included), NaN, +inf (and -inf unless `allow_neg_inf`) raise RecordError naming the column `name`."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise RecordError("wrong type", name, f"expected a number, got {value!r}")
    if isinstance(value, str) and "_" in value:  # Python reads '1_000' as 1000; no table means that
        raise RecordError("wrong type", name, f"expected a number, got {value!r} (digit separators are not read)")
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise RecordError("wrong type", name, f"expected a number, got {value!r}") from exc
    if math.isnan(number):
        raise RecordError("NaN", name, f"{name} is NaN")
    if math.isinf(number) and (number > 0 or not allow_neg_inf):
        raise RecordError("infinite", name, f"{name} is {number}")
    return number


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one long table into canonical tables; bad rows are quarantined with their line and column.

    A JSON-lines file without the required columns raises NotThisRunner (it is likely an event log, which
    a mapping cannot fix); a CSV or Parquet file without them is quarantined whole, naming every missing
    column and the columns it has."""
    out = ResultBuilder(path, content_hash, NAME, many_records_per_match=True)
    source = {name: options.mapping.get(name, name) for name in REQUIRED + OPTIONAL}
    try:
        frame, labels = read_rows(path, out, tuple(source[c] for c in REQUIRED))
    except RecordError as exc:
        return out.reject_file(exc)
    measures = dict(options.measures)
    missing = [source[c] for c in REQUIRED if source[c] not in frame.columns]
    absent = [m for m in measures if m not in frame.columns]
    if (missing or absent) and len(frame):
        have = [str(c) for c in frame.columns]
        if missing and path.suffix.lower() == ".jsonl":
            _require_columns(tuple(missing + absent), have, "its")
        named = [f"'{c}'{suggest(c, have)}" for c in missing + absent]
        detail = (f"{'required column' if missing else 'declared measure'}s {', '.join(named)} not in the file "
                  f"(its columns: {have})")
        return out.reject_file(RecordError("missing field", (missing + absent)[0], detail + "; map them with --map "
                                           "CANONICAL=COLUMN or declare measures with --measure COLUMN=KIND"))
    seat_column = SEAT_COLUMN if SEAT_COLUMN in frame.columns and SEAT_COLUMN not in measures \
        and SEAT_COLUMN not in source.values() else None
    known = {source[c] for c in REQUIRED + OPTIONAL} | set(measures) | ({seat_column} - {None})
    extra = [c for c in frame.columns if c not in known]
    unused = [c for c in extra if SEAT_LIKE.fullmatch(str(c))]
    if unused:
        out.note(f"column(s) {unused} look like a seat or turn order but are not read as one: name the column "
                 f"'{SEAT_COLUMN}' (its number, e.g. 'seat_2' -> 2) for `--covariate seat` and the board's seat effect")
    records = frame.to_dict("records")
    seen_players: set[tuple[str, str]] = set()
    match_meta: dict[str, dict] = {}
    match_players: dict[str, list[dict]] = {}
    measure_rows: list[dict] = []
    record_labels: list[tuple[str, str]] = []
    for label, record in zip(labels, records):
        out.saw()
        try:
            values = {c: record.get(source[c]) for c in REQUIRED + OPTIONAL}
            for c, codes in options.values.items():  # a column written as codes (`[values] outcome = {...}`)
                if c in values and _text(values[c]) is not None:
                    values[c] = codes.get(_text(values[c]), values[c])
            for c in ("match", "agent"):
                if _text(values[c]) is None:
                    raise RecordError("missing value", source[c], f"'{source[c]}' is empty")
            outcome = (_text(values["outcome"]) or "").lower() or None
            if outcome is not None and outcome not in OUTCOMES:
                raise RecordError("wrong value", source["outcome"], f"outcome {values['outcome']!r} is not one of {list(OUTCOMES)}")
            score = number_cell(values["score"], source["score"], allow_neg_inf=True)
            if score is None and outcome != "aborted":  # an aborted game has no result to score: kept as aborted
                raise RecordError("missing value", source["score"], f"'{source['score']}' is empty")
            rank = number_cell(values["rank"], source["rank"], allow_neg_inf=False)
            rank = None if rank is None else rank_value(rank, source["rank"])
            match_id, agent = _name(values["match"], source["match"]), _name(values["agent"], source["agent"])
            player = _name(values["player"], source["player"]) or agent
            if (match_id, player) in seen_players:
                raise RecordError("player listed twice", source["player"] if source["player"] in frame.columns
                                  else source["agent"], f"player {player!r} appears twice in match {match_id!r}")
            meta = {c: _text(values[c]) for c in MATCH_LEVEL}
            meta["started_at"] = parse_time(_text(values["started_at"]), source["started_at"])
            if options.catalogue is not None and meta["scenario"] is not None \
                    and meta["scenario"] not in options.catalogue.names:
                raise RecordError("unknown scenario", source["scenario"],
                                  f"scenario {meta['scenario']!r} is not in the catalogue")
            earlier = match_meta.get(match_id)
            if earlier is not None:
                for c in MATCH_LEVEL + ("started_at",):
                    if earlier[c] != meta[c]:
                        raise RecordError("inconsistent", source[c],
                                          f"match {match_id!r} has {c} {earlier[c]!r} on earlier rows, {meta[c]!r} here")
            row_measures = [(name, number_cell(record.get(name), name, allow_neg_inf=False), kind)
                            for name, kind in measures.items()]
            if seat_column is not None:
                row_measures.append((SEAT_MEASURE, seat_number(record.get(seat_column)), "telemetry"))
        except RecordError as exc:
            out.quarantine(label, exc, json.dumps(record, default=str))
            continue
        out.passed()
        seen_players.add((match_id, player))
        match_meta.setdefault(match_id, dict(meta, record_index=label))
        attrs = {c: record[c] for c in extra if _text(record[c]) is not None}
        match_players.setdefault(match_id, []).append(
            {"match_id": match_id, "player": player, "agent": agent, "team": _text(values["team"]),
             "role": _text(values["role"]), "score": score, "rank": rank, "outcome": outcome,
             "attrs": json.dumps(attrs, default=str) if attrs else None})
        measure_rows += [{"match_id": match_id, "player": player, "name": name, "value": value, "kind": kind}
                         for name, value, kind in row_measures if value is not None]
        record_labels.append((match_id, label))
    out.add_records([m for m, _ in record_labels], [lab for _, lab in record_labels])
    matches = [
        dict(meta, match_id=mid, runner=NAME, n_players=len(match_players[mid]), source_file=str(path),
             content_hash=content_hash)
        for mid, meta in match_meta.items()
    ]
    results = [row for rows in match_players.values() for row in rows]
    frame_results = frame_matches = None
    if results:
        frame_results = pd.DataFrame(results)
        if frame_results["rank"].isna().all():
            frame_results["rank"] = frame_results.groupby("match_id")["score"].rank(method="min", ascending=False)
        frame_matches = pd.DataFrame(matches)
    out.accept_bulk(len(record_labels), results=frame_results, matches=frame_matches,
                    measures=pd.DataFrame(measure_rows) if measure_rows else None)
    return out.build()


# the tabular fallback: detection tries it after every specific runner that fits
RUNNER = Runner(NAME, sniff, load, {"required (--map)": list(REQUIRED), "optional (--map)": list(OPTIONAL),
                                    "extra columns": ["--measure COLUMN=KIND, else kept in results.attrs"]},
                fallback=True, columns=REQUIRED + OPTIONAL)
