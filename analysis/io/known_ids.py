"""The match ids an ingest knows (`referee.io.store`): those already stored and those read so far in this
ingest, against which a file's matches are duplicates and its results, measures or events orphans.

A large file's ids (a million judgments) stay an Arrow column, looked up column by column; a small file's join a
Python set. Memory is the ids' bytes, not a Python object per id, unless many small files are checked against
a large column (an ingest of small files into a large store): that column is then made a set once.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from referee.io.loaders.base import LoadResult

COLUMNAR = 50_000  # a file with at least this many matches keeps its ids as an Arrow column


class KnownIds:
    """Known match ids: `stored` (an Arrow text column, e.g. the store's matches.match_id) and what `add`
    brings. `common(result)` and `unknown(ids)` answer the two questions the ingest asks; `remove` forgets ids
    whose source was replaced."""

    def __init__(self, stored: pa.ChunkedArray | pa.Array | None = None):
        self.columns: list[pa.Array] = []
        self.names: set[str] = set()
        self._lookup: pa.Array | None = None
        self._set: set[str] | None = None
        if stored is not None and len(stored):
            self.columns.append(_flat(stored))

    def lookup(self) -> pa.Array:
        """Every id held as Arrow columns, in one array (built once per change)."""
        if self._lookup is None:
            self._lookup = pa.concat_arrays(self.columns) if self.columns else pa.array([], pa.string())
        return self._lookup

    def _known_mask(self, ids: pa.Array) -> pa.Array:
        mask = pc.is_in(ids, value_set=self.lookup())
        if self.names:
            mask = pc.or_(mask, pc.is_in(ids, value_set=pa.array(list(self.names), pa.string())))
        return mask

    def _column_set(self) -> set[str]:
        """The Arrow-held ids as a Python set (built once per change, only when small sets are asked about)."""
        if self._set is None:
            self._set = set(self.lookup().to_pylist())
        return self._set

    def common(self, result: LoadResult) -> set[str]:
        """The ids of `result`'s own matches that are already known (duplicates)."""
        ids = _column(result)
        if ids is None:
            own = result.match_ids("matches")
            found = own & self.names
            return found | (own - found) & self._column_set() if self.columns else found
        return set(pc.unique(ids.filter(self._known_mask(ids))).to_pylist())

    def unknown(self, ids: set[str]) -> set[str]:
        """The ids of `ids` that are not known (orphans)."""
        rest = ids - self.names
        return rest - self._column_set() if rest and self.columns else rest

    def add(self, result: LoadResult) -> None:
        """Know `result`'s own matches from now on."""
        ids = _column(result)
        if ids is None:
            self.names |= result.match_ids("matches")
        else:
            self.columns.append(ids)
            self._lookup = self._set = None

    def remove(self, ids: set[str]) -> None:
        """Forget these ids (their source file is being replaced)."""
        if not ids:
            return
        self.names -= ids
        if self.columns:
            gone = pa.array(list(ids), pa.string())
            self.columns = [c.filter(pc.invert(pc.is_in(c, value_set=gone))) for c in self.columns]
            self._lookup = self._set = None


def _flat(values) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _column(result: LoadResult) -> pa.Array | None:
    """A large result's match ids as one Arrow text column (`LoadResult.match_column`), or None (small, or not
    every part is Arrow)."""
    column = result.match_column
    return column if column is not None and len(column) >= COLUMNAR else None
