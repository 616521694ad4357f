"""A large file's rows of one canonical table held on disk until the store writes them (`Spill` writes, `Spilled` is
the piece a loader hands over).

A loader that reads a file block by block (a million arena judgments, `referee.io.loaders.arena`) would otherwise hold
every block's rows until the file is done and the store has written them: 300 MB beside DuckDB's own insert for a
71 MB CSV. A `Spill` instead conforms each block's rows to the canonical schema (`conform_arrow`: the same checks the
store makes) and appends them to an Arrow IPC stream; the store reads the stream back a block at a time as it writes
(`referee.io.store`), so that a file's rows are in memory one block at a time. The rows keep their order.

The ingest has them written into its staging folder beside the store (`referee.io.staging`: on the store's disk, not
a temporary folder that may be memory, and removed with the folder however the ingest ends); a loader called on its
own writes them to the system's temporary folder. The store's batch tags the rows with their file's sha256
(`content_hash`) as they are read back (`referee.io.batch_frames`), one dictionary-encoded value, as it does for
Arrow pieces.

A `Spilled` owns its file: the file is removed by `release()` (the store, once the rows are written), or when the
object is collected (a loader's result a caller dropped). A `Spilled` sent from a reader process to the ingest hands
its file over: the receiving copy owns it.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Iterator
from concurrent.futures import Executor, Future

import pyarrow as pa

from referee.io.columnar import constant
from referee.io.schema import arrow_schema, conform_arrow

PREFIX = "referee-spill-"  # the spill files' names


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class Spilled:
    """`rows` rows of canonical table `table` in the Arrow IPC stream at `path` (canonical columns, text columns
    dictionary-encoded where the loader gave them so), with the columns in `constants` (name -> one text value, e.g.
    the file's content hash or an ingest's phase) set on every row as it is read.
    `own`: every match id of these rows is a match of the same file (a results or measures piece made beside its
    matches), so the ingest need not look for them among other files' matches."""

    def __init__(self, table: str, path: str, rows: int, constants: dict[str, str], own: bool):
        self.table, self.path, self.rows, self.own = table, path, rows, own
        self.constants = dict(constants)
        self._owner = weakref.finalize(self, _unlink, path)

    def __len__(self) -> int:
        return self.rows

    def __getstate__(self) -> dict:
        """Pickled (a reader process hands its result over): the file now belongs to the copy that is unpickled."""
        self._owner.detach()
        return {k: v for k, v in self.__dict__.items() if k != "_owner"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._owner = weakref.finalize(self, _unlink, self.path)

    def set_constant(self, name: str, value: str) -> "Spilled":
        """Set column `name` to `value` on every row as the rows are read (this piece changed, and returned)."""
        self.constants[name] = value
        return self

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The rows a block at a time, as the canonical table's columns in their order (the constants set)."""
        names = [field.name for field in arrow_schema(self.table)]
        with pa.OSFile(self.path, "rb") as source:
            for batch in pa.ipc.open_stream(source):
                columns = {name: batch.column(name) for name in batch.schema.names}
                for name, value in self.constants.items():
                    columns[name] = constant(value, batch.num_rows)
                yield pa.RecordBatch.from_pydict({name: columns[name] for name in names})

    def schema(self) -> pa.Schema:
        """The schema of the batches `batches` yields."""
        with pa.OSFile(self.path, "rb") as source:
            written = pa.ipc.open_stream(source).schema
        found = {field.name: field for field in written}
        for name, value in self.constants.items():
            found[name] = pa.field(name, constant(value, 0).type)  # as `batches` makes the column
        return pa.schema([found[field.name] for field in arrow_schema(self.table)])

    def read(self) -> pa.Table:
        """Every row as one Arrow table (for the rare paths that need the whole piece: a duplicate match set aside, a
        loader's result read in a test)."""
        return pa.Table.from_batches(list(self.batches()), self.schema())

    def match_ids(self) -> pa.ChunkedArray:
        """The match_id column alone, read a block at a time."""
        with pa.OSFile(self.path, "rb") as source:
            chunks = [batch.column("match_id") for batch in pa.ipc.open_stream(source)]
        return pa.chunked_array(chunks, pa.string())

    def release(self) -> None:
        """Remove the file (the rows are written, or will never be)."""
        self._owner()


class Spill:
    """Writes blocks of one canonical table's rows (Arrow tables, the loader's own columns) to a `Spilled` piece in
    `folder` (the ingest's staging folder beside the store, which the ingest removes however it ends; None: the
    system's temporary folder). `own`: see `Spilled`. `writer`: a one-thread executor that writes the blocks while
    the caller reads on (Arrow writes without holding the GIL; the blocks of every spill given the same executor are
    written in the order they were appended), or None to write each block before `append` returns."""

    def __init__(self, table: str, own: bool = False, writer: Executor | None = None, folder: str | None = None):
        self.table, self.own, self.rows, self.folder = table, own, 0, folder
        self._thread = writer
        self._pending: Future | None = None
        self._writer: pa.ipc.RecordBatchStreamWriter | None = None
        self._sink: pa.OSFile | None = None
        self._path: str | None = None
        self._schema: pa.Schema | None = None

    def append(self, rows: pa.Table) -> None:
        """Conform a block of rows (SchemaError as `conform_arrow` raises it) and write it after the blocks before."""
        if not rows.num_rows:
            return
        rows = conform_arrow(self.table, rows)
        self.rows += rows.num_rows
        if self._thread is None:
            return self._write(rows)
        if self._pending is not None:
            self._pending.result()  # one block in flight per spill: memory stays a block's
        self._pending = self._thread.submit(self._write, rows)

    def _write(self, rows: pa.Table) -> None:
        if self._writer is None:
            if self.folder is not None:
                os.makedirs(self.folder, exist_ok=True)
            handle, self._path = tempfile.mkstemp(prefix=PREFIX, suffix=f"-{self.table}.arrows", dir=self.folder)
            os.close(handle)
            self._schema = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), pa.string()))  # room for any count
                                      if pa.types.is_dictionary(f.type) else f for f in rows.schema])
            self._sink = pa.OSFile(self._path, "wb")
            self._writer = pa.ipc.new_stream(self._sink, self._schema)
        if not rows.schema.equals(self._schema):  # text encoded otherwise in this block: as the first block's
            rows = rows.cast(self._schema)
        self._writer.write_table(rows)

    def _settle(self) -> None:
        """Wait for the block in flight (its error, if any, raised here) and close the file."""
        try:
            if self._pending is not None:
                self._pending.result()
        finally:
            self._pending = None
            if self._writer is not None:
                self._writer.close()
                self._sink.close()
                self._writer = self._sink = None

    def close(self) -> Spilled | None:
        """The piece written (None when no rows were): the file is complete and owned by the piece."""
        self._settle()
        if self._path is None:
            return None
        return Spilled(self.table, self._path, self.rows, {}, self.own)

    def discard(self) -> None:
        """Close and remove what was written (the file is read whole or set aside instead)."""
        try:
            self._settle()
        finally:
            if self._path is not None:
                _unlink(self._path)
