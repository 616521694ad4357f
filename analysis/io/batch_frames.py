"""A batch of files' rows as the frames the store writes (`batch_frames`): per canonical table, every file's pieces
(row dicts, DataFrames, Arrow tables, `Rows`) concatenated and conformed once, in file order, each row tagged with its
file's sha256."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from referee.io.columnar import constant
from referee.io.loaders.base import DATA_TABLES, Frame, LoadResult
from referee.io.loaders.rows import Rows, tuple_pieces
from referee.io.loaders.spilled import Spilled
from referee.io.schema import SchemaError, arrow_schema, conform, conform_arrow, rows_to_arrow, unified


def batch_frames(batch: list[LoadResult]) -> list[tuple[str, Frame | Spilled]]:
    """Every row of a batch of files' results (`batch`, LoadResults) as conformed frames, (table, frame) in insert
    order: one per table and kind of part, every row tagged with its file (`content_hash`); a `Spilled` piece (a large
    file's rows on disk, conformed and tagged as they are read) as it is, after the Arrow pieces before it. Raises
    SchemaError (before anything is written)."""
    prepared, schemas = [], {t: arrow_schema(t) for t in DATA_TABLES}
    for table in DATA_TABLES:
        rows, row_tags, frames, tags, arrows = [], [], [], [], []
        given: list[tuple[Rows, str]] = []  # consecutive `Rows` pieces of one column list, made Arrow together

        def settle() -> None:
            """The `Rows` pieces gathered so far as one Arrow table in their place among the Arrow pieces (rows
            as dicts where a value breaks the schema)."""
            if not given:
                return
            try:
                arrows.append(tuple_pieces(table, given))
            except SchemaError:
                for piece, digest in given:
                    rows.extend(piece.dicts())
                    row_tags.extend([digest] * len(piece))
            given.clear()

        for r in batch:
            for part in r.parts[table]:
                if isinstance(part, Rows):
                    if given and given[0][0].names != part.names:
                        settle()
                    given.append((part, r.content_hash))
                    continue
                if isinstance(part, Spilled):  # on disk, conformed: written a block at a time, in its place
                    settle()
                    if arrows:
                        prepared.append((table, _joined(table, arrows)))
                        arrows.clear()
                    prepared.append((table, part.set_constant("content_hash", r.content_hash)))
                elif isinstance(part, list):
                    rows += part
                    row_tags += [r.content_hash] * len(part)
                elif isinstance(part, pa.Table):
                    settle()  # the `Rows` before it keep their place
                    if not part.schema.equals(schemas[table]):  # a loader's own columns: conformed here once
                        part = conform_arrow(table, part)
                    arrows.append(part.set_column(part.schema.get_field_index("content_hash"), "content_hash",
                                                  constant(r.content_hash, part.num_rows)))
                else:
                    frames.append(part)
                    tags.append(np.full(len(part), r.content_hash, dtype=object))
        settle()
        if rows:
            try:  # the fast way: straight to Arrow
                part = rows_to_arrow(table, rows)
                arrows.append(part.set_column(part.schema.get_field_index("content_hash"), "content_hash",
                                              pa.array(row_tags, pa.string())) if table != "matches" else part)
            except SchemaError:  # values pandas would convert (or reject naming the column)
                frames.append(pd.DataFrame(rows))
                tags.append(np.array(row_tags, dtype=object))
        if frames:
            frame = pd.concat(frames, ignore_index=True)
            if table != "matches":
                frame["content_hash"] = np.concatenate(tags)
            prepared.append((table, conform(table, frame)))
        if arrows:
            prepared.append((table, _joined(table, arrows)))
    return prepared


def _joined(table: str, arrows: list[pa.Table]) -> pa.Table:
    """Arrow pieces of one table as one, checked as a whole (one insert per table and batch, not one per file)."""
    return conform_arrow(table, pa.concat_tables(unified(arrows, table)))
