"""Setting aside what one file's result holds but the store must not take: matches already stored or read
earlier in the ingest (duplicates), rows naming a match no file has (orphans), and a result whose rows break the
canonical schema (the file, whole). Each set-aside record keeps its line, field and reason in the quarantine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pyarrow.compute as pc

from referee.io.known_ids import KnownIds
from referee.io.loaders.base import LoadResult, RecordError, ResultBuilder
from referee.io.loaders.parts import drop_matches, frame_rows
from referee.io.loaders.files import raw_lines
from referee.io.loaders.spilled import Spilled
from referee.io.schema import SchemaError


def checked(result: LoadResult) -> LoadResult:
    """`result`, or, when its rows break the canonical schema, the file set aside whole as one record
    naming the column (nothing of it is written; the other files of the batch are)."""
    try:
        result.tables  # conforms every table
        return result
    except SchemaError as exc:
        out = ResultBuilder(Path(result.source_file), result.content_hash, result.runner)
        return out.reject_file(RecordError("invalid value", None, f"a value breaks the canonical schema ({exc}); "
                                           "the file is set aside whole (please report this: the loader should have "
                                           "named the record)"))


def _set_aside(result: LoadResult, bad_ids: set[str], reason: str, why: str) -> LoadResult:
    """Move everything belonging to the matches `bad_ids` from `result`'s tables to its quarantine.

    A match is one record for record-per-match runners; where the result lists its records per match
    (a row per player, a line per event), each of those records is quarantined with its own line.
    """
    if not bad_ids:
        return result
    given = {t: [p.read() if isinstance(p, Spilled) else p for p in ps]  # a piece on disk read once, whole
             for t, ps in result.parts.items()}
    records: list[tuple[str, str, str]] = []  # (record label, match id, raw)
    if result.records is None:
        matches = [m for part in given["matches"] for m in frame_rows(part, bad_ids)]
        for match in matches:
            players = [p for part in given["results"] for p in frame_rows(part, {match["match_id"]})]
            raw = json.dumps({"match": match, "results": players}, default=str)
            records.append((match["record_index"], match["match_id"], raw))
    else:
        rows = frame_rows(result.records, bad_ids)
        text = Path(result.source_file).suffix.lower() in (".csv", ".jsonl")
        lines = raw_lines(result.source_file, {int(r["record"]) for r in rows}) if text else {}
        for r in rows:
            raw = lines.get(int(r["record"])) if text else None
            records.append((r["record"], r["match_id"], raw or json.dumps(r)))
    rows = [{
        "source_file": result.source_file, "content_hash": result.content_hash, "runner": result.runner,
        "record": record, "field": "match_id", "reason": reason,
        "message": f"{result.source_file}, record {record}, field 'match_id': match id {mid!r} {why}",
        "raw": raw} for record, mid, raw in records]
    parts = {t: [drop_matches(p, bad_ids) for p in ps] for t, ps in given.items()}
    kept = None if result.records is None else drop_matches(result.records, bad_ids)
    return LoadResult(result.source_file, result.content_hash, result.runner, parts, result.bad + rows,
                      read=result.read, accepted=result.accepted - len(rows), records=kept)


def set_aside_duplicates(result: LoadResult, known: KnownIds) -> LoadResult:
    """Set aside matches whose id is already stored or was read earlier in this ingest. A file whose one match
    is made of several records (an AoA season: agents, nations, snapshots) is set aside whole when that
    match is a duplicate, so that no record is counted as accepted without being stored."""
    ids = known.common(result)
    if ids and result.records is None and result.accepted > len(result.match_ids("matches")):
        out = ResultBuilder(Path(result.source_file), result.content_hash, result.runner)
        return out.reject_file(RecordError("duplicate match id", "match_id", f"match id {sorted(ids)[0]!r} is already "
                                           "in the store or earlier in this ingest; the file is set aside whole"))
    return _set_aside(result, ids, "duplicate match id", "is already in the store or earlier in this ingest")


def set_aside_strays(result: LoadResult, home: str, homes: dict[str, str],
                     stored_home: Callable[[set[str]], dict[str, str]]) -> LoadResult:
    """Set aside the rows of a file holding no match of its own (a clem scores.json) that name a match stored from
    another folder than its own, where its runner says such a file belongs to the match of the file `home` beside
    it: a copy of a run (its episode files set aside as duplicates) never adds its scores to the original's
    matches a second time. `homes`: match id -> the folder of the file that holds it, read in this ingest;
    `stored_home(ids)`: the same for matches already in the store."""
    if result.records is None or result.match_ids("matches"):
        return result
    ids = set(pc.unique(result.records["match_id"]).to_pylist())
    here = str(Path(result.source_file).parent)
    where = {i: homes[i] for i in ids if i in homes}
    where |= stored_home(ids - set(where))
    strays = {i for i, folder in where.items() if folder != here}
    if not strays:
        return result
    other = where[sorted(strays)[0]]
    return _set_aside(result, strays, "duplicate match id", f"is stored from the {home} of another folder "
                      f"({other}): this file belongs to the {home} beside it, a copy set aside as a duplicate, so "
                      "its rows would count that match a second time")


def orphan_ids(result: LoadResult, known: KnownIds) -> set[str]:
    """Match ids that `result`'s results, measures, events or records name but no known match has."""
    ids = set()
    ids |= known.unknown(result.foreign_ids(("results", "measures", "events")))  # its own matches are known by now
    if result.records is not None:
        ids |= known.unknown(set(pc.unique(result.records["match_id"]).to_pylist()))
    return ids


def set_aside_orphans(result: LoadResult, known: KnownIds) -> LoadResult:
    """Set aside results, measures and events whose match is neither stored nor read in this ingest."""
    return _set_aside(result, orphan_ids(result, known), "unknown match",
                      "names no match in the store or in this ingest")
