"""Generic long tables: one row per player per match, as CSV, Parquet or JSONL.

Default columns: `match`, `agent`, `score` (required); `player`, `game`, `scenario`, `team`, `rank`,
`phase`, `repetition` (optional). Other names are mapped with `mapping` (canonical name -> column in the
file), given on the command line (`--map score=points`) or in a TOML file with a `[columns]` table. Any
other column is kept per row in `results.attrs`. A row is one record: CSV rows are numbered by file
line (header = line 1), JSONL by line, Parquet by row index from 0.
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pandas as pd

from analysis.io.loaders.base import LoadOptions, LoadResult, RecordError, ResultBuilder

NAME = "table"
REQUIRED = ("match", "agent", "score")
OPTIONAL = ("player", "game", "scenario", "team", "rank", "phase", "repetition")
MATCH_LEVEL = ("game", "scenario", "phase", "repetition")
EXTENSIONS = (".csv", ".parquet", ".jsonl")


def sniff(path: Path, head: str) -> bool:
    """True for CSV, Parquet and JSONL files (the table runner is the fallback for tabular files)."""
    return path.suffix.lower() in EXTENSIONS


def read_mapping(path: str | Path) -> dict[str, str]:
    """Column mapping from a TOML file with a `[columns]` table of canonical name = file column."""
    doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    columns = doc.get("columns", {})
    unknown = set(columns) - set(REQUIRED) - set(OPTIONAL)
    if unknown:
        raise ValueError(f"{path}: [columns] names unknown canonical columns {sorted(unknown)}")
    return {str(k): str(v) for k, v in columns.items()}


def _read_jsonl(path: Path, out: ResultBuilder) -> tuple[pd.DataFrame, list[str]]:
    rows, labels = [], []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise RecordError("wrong type", None, f"line {number} is not a JSON object")
            except json.JSONDecodeError as exc:
                out.saw()
                out.quarantine(str(number), RecordError("malformed JSON", None, f"{exc.msg} at column {exc.colno}"), line)
                continue
            except RecordError as exc:
                out.saw()
                out.quarantine(str(number), exc, line)
                continue
            rows.append(obj)
            labels.append(str(number))
    return pd.DataFrame(rows), labels


def read_rows(path: Path, out: ResultBuilder) -> tuple[pd.DataFrame, list[str]]:
    """Rows of a CSV (as text), Parquet or JSONL file and their record labels (CSV/JSONL line, Parquet row).

    Malformed JSONL lines are quarantined into `out` as they are met; raises RecordError for an empty or
    malformed file.
    """
    suffix = path.suffix.lower()
    if suffix not in EXTENSIONS:
        raise RecordError("not this runner", None, f"expected a CSV, Parquet or JSONL file, got '{suffix}'")
    if suffix == ".jsonl":
        return _read_jsonl(path, out)
    if path.stat().st_size == 0:
        raise RecordError("empty file", None, "the file is empty")
    if suffix == ".parquet":
        frame = pd.read_parquet(path)
        return frame, [str(i) for i in range(len(frame))]
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, on_bad_lines="error")
    except pd.errors.EmptyDataError as exc:
        raise RecordError("empty file", None, "the file has no header") from exc
    except pd.errors.ParserError as exc:
        raise RecordError("malformed CSV", None, str(exc).strip()) from exc
    return frame, [str(i + 2) for i in range(len(frame))]


def _text(value) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _number(value, name: str, allow_neg_inf: bool) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise RecordError("wrong type", name, f"expected a number, got {value!r}")
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
    """Read one long table into canonical tables; bad rows are quarantined with their line and column."""
    out = ResultBuilder(path, content_hash, NAME, many_records_per_match=True)
    try:
        frame, labels = read_rows(path, out)
    except RecordError as exc:
        return out.reject_file(exc)
    source = {name: options.mapping.get(name, name) for name in REQUIRED + OPTIONAL}
    missing = [source[c] for c in REQUIRED if source[c] not in frame.columns]
    if missing and len(frame):
        return out.reject_file(RecordError("missing field", missing[0],
                                           f"required column '{missing[0]}' is not in the file (columns: "
                                           f"{list(frame.columns)}); map it with --map"))
    known = {source[c] for c in REQUIRED + OPTIONAL}
    extra = [c for c in frame.columns if c not in known]
    records = frame.to_dict("records")
    seen_players: set[tuple[str, str]] = set()
    match_meta: dict[str, dict] = {}
    match_players: dict[str, list[dict]] = {}
    record_labels: list[tuple[str, str]] = []
    for label, record in zip(labels, records):
        out.saw()
        try:
            values = {c: record.get(source[c]) for c in REQUIRED + OPTIONAL}
            for c in ("match", "agent"):
                if _text(values[c]) is None:
                    raise RecordError("missing value", source[c], f"'{source[c]}' is empty")
            score = _number(values["score"], source["score"], allow_neg_inf=True)
            if score is None:
                raise RecordError("missing value", source["score"], f"'{source['score']}' is empty")
            rank = _number(values["rank"], source["rank"], allow_neg_inf=False)
            match_id, agent = _text(values["match"]), _text(values["agent"])
            player = _text(values["player"]) or agent
            if (match_id, player) in seen_players:
                raise RecordError("player listed twice", source["player"] if source["player"] in frame.columns
                                  else source["agent"], f"player {player!r} appears twice in match {match_id!r}")
            meta = {c: _text(values[c]) for c in MATCH_LEVEL}
            if options.catalogue is not None and meta["scenario"] is not None \
                    and meta["scenario"] not in options.catalogue.names:
                raise RecordError("unknown scenario", source["scenario"],
                                  f"scenario {meta['scenario']!r} is not in the catalogue")
            earlier = match_meta.get(match_id)
            if earlier is not None:
                for c in MATCH_LEVEL:
                    if earlier[c] != meta[c]:
                        raise RecordError("inconsistent", source[c],
                                          f"match {match_id!r} has {c} {earlier[c]!r} on earlier rows, {meta[c]!r} here")
        except RecordError as exc:
            out.quarantine(label, exc, json.dumps(record, default=str))
            continue
        seen_players.add((match_id, player))
        match_meta.setdefault(match_id, dict(meta, record_index=label))
        attrs = {c: record[c] for c in extra if _text(record[c]) is not None}
        match_players.setdefault(match_id, []).append(
            {"match_id": match_id, "player": player, "agent": agent, "team": _text(values["team"]),
             "score": score, "rank": rank, "attrs": json.dumps(attrs, default=str) if attrs else None})
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
    out.accept_bulk(len(record_labels), results=frame_results, matches=frame_matches)
    return out.build()
