"""A loader's piece of a table given as tuples (`Rows`), and pieces of many files made Arrow at once (`tuple_pieces`):
the short pieces of many small files (a mapped game's events) cost a fraction to hand from a reader process and to
convert once per batch, against an Arrow table per file."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from referee.io.schema import SchemaError, tuples_to_arrow


@dataclass(frozen=True)
class Rows:
    """A piece of one canonical table as tuples of the columns `names`, in that order (the table's other columns
    NULL): rows a loader builds as tuples, handed over as they are and made into Arrow by the store once per batch
    of files (`referee.io.store`), not once per file. For the short pieces of many small files (a mapped game's
    events): one conversion of a batch costs a fraction of one per file, and tuples cost less to hand from a reader
    process than an Arrow table. A piece of ROWS_ARROW rows or more is made Arrow in the reader
    (`loaders.parts.columnar_part`): as tuples, long pieces cost the writer more memory than they save time."""

    names: tuple[str, ...]
    rows: list[tuple]

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list:
        """The values of column `name`, one per row."""
        at = self.names.index(name)
        return [row[at] for row in self.rows]

    def arrow(self, table: str) -> pa.Table:
        """The rows as canonical table `table` in Arrow (`tuples_to_arrow`: SchemaError for a value of the wrong
        type)."""
        return tuples_to_arrow(table, self.names, self.rows)

    def dicts(self) -> list[dict]:
        """The rows as dicts of column -> value."""
        return [dict(zip(self.names, row)) for row in self.rows]


def rows_part(table: str, part: Rows) -> pa.Table | list[dict]:
    """`part` as canonical table `table` in Arrow, or as row dicts where a value breaks the schema (the store then
    converts it as pandas would, or names it)."""
    try:
        return part.arrow(table)
    except SchemaError:
        return part.dicts()


def tuple_pieces(table: str, pieces: list[tuple[Rows, str]]) -> pa.Table:
    """`Rows` pieces of canonical table `table` (every piece with the same column names), each with the sha256 of
    its file, as one Arrow table whose `content_hash` is each row's file's (the matches table keeps its own). One
    typed array per column for the whole batch (`tuples_to_arrow`); SchemaError where a value breaks the schema."""
    names = pieces[0][0].names
    found = tuples_to_arrow(table, names, [row for piece, _ in pieces for row in piece.rows])
    if table == "matches" and "content_hash" in names:
        return found
    which = np.repeat(np.arange(len(pieces)), [len(piece) for piece, _ in pieces])
    digests = pc.take(pa.array([digest for _, digest in pieces], pa.string()), pa.array(which))
    return found.set_column(found.schema.get_field_index("content_hash"), "content_hash", digests)
