"""The pieces a loader hands over for one canonical table (`Part`: a DataFrame, an Arrow table, row dicts, `Rows`,
or `Spilled`, a large file's rows on disk), and what the ingest asks of any of them: its match ids, its rows of some
matches or without them, every piece of a table conformed as one."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from referee.io.loaders.rows import Rows, rows_part
from referee.io.loaders.spilled import Spilled
from referee.io.schema import SchemaError, conform, conform_arrow, empty, rows_to_arrow

Frame = pd.DataFrame | pa.Table
Part = pd.DataFrame | pa.Table | list | Rows | Spilled

COLUMNAR_ROWS = 1000  # a list of row dicts this long becomes an Arrow table where the loader built it
ROWS_ARROW = 128  # ... and a `Rows` piece this long: 266 events of six-player logs as tuples held 120 MB more in the
# writer than as Arrow (3,988 files: 524 MB against 398), where 73 events of three-player logs saved 0.25 ms a file


def columnar_part(table: str, part: Part) -> Part:
    """A long list of row dicts as the canonical Arrow table (made in the reader process, where it costs no
    writer time, and far smaller to hand over and to hold than the dicts); the list itself where it is short
    or a value breaks the schema (the store's own conversion then names it)."""
    if isinstance(part, Rows):
        return rows_part(table, part) if len(part) >= ROWS_ARROW else part
    if not isinstance(part, list) or len(part) < COLUMNAR_ROWS:
        return part
    try:
        return rows_to_arrow(table, part)
    except SchemaError:
        return part


def match_chunks(part: "pa.Table | Spilled") -> list[pa.Array]:
    """The match_id column of an Arrow or spilled piece, as its chunks."""
    return (part.match_ids() if isinstance(part, Spilled) else part["match_id"]).chunks


def same_buffers(chunk: pa.Array) -> tuple:
    """What makes two Arrow arrays the same values without reading them: their buffers, offset and length."""
    return (tuple(b.address if b is not None else None for b in chunk.buffers()), chunk.offset, len(chunk))


def part_match_ids(part: Part) -> set:
    """The distinct match ids of a part's rows."""
    if isinstance(part, list):
        return {r["match_id"] for r in part}
    if isinstance(part, Rows):
        return set(part.column("match_id"))
    if isinstance(part, Spilled):
        return set(pc.unique(part.match_ids()).to_pylist())
    if isinstance(part, pa.Table):
        return set(pc.unique(part["match_id"]).to_pylist())
    return set(part["match_id"].unique().tolist())


def conform_parts(table: str, parts: list[Part]) -> Frame:
    """Concatenate pieces of one canonical table and conform them once: a DataFrame, or an Arrow table
    when any piece is Arrow; the canonical empty frame when there are none."""
    parts = [rows_part(table, p) if isinstance(p, Rows) else p.read() if isinstance(p, Spilled) else p for p in parts]
    rows = [r for p in parts if isinstance(p, list) for r in p]
    frames = [p for p in parts if isinstance(p, pd.DataFrame) and len(p)]
    if rows:
        frames.append(pd.DataFrame(rows))
    frame = conform(table, pd.concat(frames, ignore_index=True)) if frames else empty(table)
    arrow = [conform_arrow(table, p) for p in parts if isinstance(p, pa.Table) and p.num_rows]
    if not arrow:
        return frame
    if len(frame):
        arrow.append(conform_arrow(table, pa.Table.from_pandas(frame, preserve_index=False)))
    return pa.concat_tables(arrow)


def drop_matches(frame: Part, ids: set[str]) -> Part:
    """`frame` without the rows whose match_id is in `ids` (DataFrame, Arrow table, list of row dicts or `Rows`)."""
    if isinstance(frame, list):
        return [r for r in frame if r["match_id"] not in ids]
    if isinstance(frame, Rows):
        at = frame.names.index("match_id")
        return Rows(frame.names, [r for r in frame.rows if r[at] not in ids])
    if isinstance(frame, pa.Table):
        return frame.filter(pc.invert(pc.is_in(frame["match_id"], value_set=pa.array(sorted(ids), pa.string()))))
    return frame[~frame["match_id"].isin(ids)].reset_index(drop=True)


def frame_rows(frame: Part, ids: set[str]) -> list[dict]:
    """The rows of `frame` whose match_id is in `ids`, as dicts."""
    if isinstance(frame, list):
        return [r for r in frame if r["match_id"] in ids]
    if isinstance(frame, Rows):
        return [r for r in frame.dicts() if r["match_id"] in ids]
    if isinstance(frame, pa.Table):
        return frame.filter(pc.is_in(frame["match_id"], value_set=pa.array(sorted(ids), pa.string()))).to_pylist()
    return frame[frame["match_id"].isin(ids)].to_dict("records")
