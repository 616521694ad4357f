"""Rows an ingest writes, held on disk until its one transaction inserts them.

DuckDB keeps every row a transaction appends in memory until it commits, so an ingest that wrote each batch
of files as it went held the whole folder's rows at once (1.2 GB for 525 MB of logs). A `Staging` instead
appends each batch, conformed to the canonical Arrow schema, to one Parquet file per table in a hidden folder
beside the store; `insert_into` then moves each table into the store with one `INSERT ... SELECT` that DuckDB
streams, inside the ingest's transaction. The store is changed only by that transaction, as before: a killed
ingest leaves the store as it was, and the next ingest into the same store removes the folder it left. The
folder is made when the first rows are staged, or when a reader keeps a large file's rows in it until the store
writes them (`referee.io.loaders.spilled`): an ingest of one batch of small files, written straight in, makes none.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from referee.io.schema import arrow_schema

INSERT_MEMORY = "192MB"  # DuckDB's memory limit while it moves the staged rows in (its default: 80% of the RAM)
# ... and while it inserts a large file's rows read back from disk (`referee.io.loaders.spilled`): the reader holds one
# block beside it, and a million arena judgments' matches took 0.96 s at 192 MB against 0.60 s at 256 MB
SPILLED_MEMORY = "256MB"
PREFIX = ".referee-ingest-"  # the staging folder's name: PREFIX + the store's file name + "-" + the process id


class Staging:
    """Parquet files of canonical rows (one per table), written batch by batch, then inserted into a store."""

    def __init__(self, store_path: Path):
        """Staging for the store file `store_path`, in a folder beside it made on the first `add`; stale folders of
        killed ingests into the same store are removed now."""
        _remove_stale(store_path)
        self.folder = store_path.parent / f"{PREFIX}{store_path.name}-{os.getpid()}"
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._order: list[str] = []

    def add(self, table: str, frame: pa.Table) -> None:
        """Append rows (an Arrow table with the canonical table's columns; text dictionary-encoded or not) to table
        `table`'s staged rows, written in the canonical schema, so that batches of either encoding share one file
        (Parquet encodes repeated text by dictionary itself)."""
        plain = arrow_schema(table)
        if not frame.schema.equals(plain):
            frame = frame.cast(plain)
        writer = self._writers.get(table)
        if writer is None:
            self.folder.mkdir(parents=True, exist_ok=True)  # a large file's spilled rows may be in it already
            writer = self._writers[table] = pq.ParquetWriter(self.folder / f"{table}.parquet", frame.schema,
                                                             compression="snappy")
            self._order.append(table)
        writer.write_table(frame)

    def insert_into(self, con: duckdb.DuckDBPyConnection) -> None:
        """Insert every staged table into the store through `con` (inside the caller's transaction), in the order
        the tables were first staged; the rows keep their staged order."""
        if not self._order:
            return
        with insert_memory(con):  # DuckDB streams the rows within it (spilling if it must)
            for table in self._order:
                self._writers.pop(table).close()
                self._insert(con, table)

    def _insert(self, con: duckdb.DuckDBPyConnection, table: str) -> None:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM read_parquet(?)", [str(self.folder / f"{table}.parquet")])

    def close(self) -> None:
        """Close any open writer and remove the staging folder."""
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
        shutil.rmtree(self.folder, ignore_errors=True)  # the staged tables and any spilled rows left


@contextmanager
def insert_memory(con: duckdb.DuckDBPyConnection, limit: str = INSERT_MEMORY):
    """DuckDB's memory limit at `limit` on `con` for the block, the connection's own limit restored after:
    DuckDB's default by RESET (its setting reads rounded, '18.8 GiB', and setting that text back gave 18.7 GiB),
    a limit set on the connection by its text."""
    read = "SELECT current_setting('memory_limit')"
    ((own,),) = con.execute(read).fetchall()  # fetched whole: DuckDB refuses other work beside an unfinished result
    con.execute(f"SET memory_limit = '{limit}'")
    try:
        yield
    finally:
        con.execute("RESET memory_limit")
        if con.execute(read).fetchall() != [(own,)]:
            con.execute(f"SET memory_limit = '{own}'")


def checkpoint(con: duckdb.DuckDBPyConnection) -> None:
    """Write what the ingest just committed into the store file now, within INSERT_MEMORY: DuckDB otherwise
    checkpoints when the store is closed, holding the committed rows' columns in memory to compress them (1.4 GB
    for 1.75 GB of logs, against 0.5 GB while they were read and inserted)."""
    with insert_memory(con):
        con.execute("CHECKPOINT")


def _remove_stale(store_path: Path) -> None:
    """Remove staging folders beside `store_path` left by ingests into it whose process no longer runs."""
    for folder in store_path.parent.glob(f"{PREFIX}{store_path.name}-*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
