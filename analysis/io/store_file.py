"""Opening a store file: refusing, before anything is written, whatever is not referee's store.

A referee store is a DuckDB file that carries referee's marker table (`referee_store`, key 'format' =
'referee'). A file that is not a DuckDB database is named by its first bytes (SQLite, Parquet, ZIP ...)
before DuckDB reads it (DuckDB would try to download an extension for SQLite); a DuckDB database of another
application is refused, and left byte for byte as it was; a damaged file (truncated, bit-flipped) is a plain
StoreError naming it. A store an earlier referee wrote, before the marker, is recognised by its tables and
columns (all of them referee's) and marked when opened for writing.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from referee.io.schema import TABLES, columns
from referee.names import StoreError

MARKER = "referee_store"  # the table every referee store carries: (key, value) rows, format = 'referee'
# the first bytes of files that are not DuckDB databases, named in the refusal
FOREIGN_MAGIC = ((b"SQLite format 3\x00", "an SQLite database"), (b"PAR1", "a Parquet file"), (b"PK\x03\x04", "a ZIP archive"),
                 (b"\x1f\x8b", "a gzip file"), (b"\x28\xb5\x2f\xfd", "a zstd file"), (b"%PDF", "a PDF"))


def _file_kind(path: Path) -> str | None:
    """None when `path` is missing, empty or starts like a DuckDB database (its magic 'DUCK' at byte 8); else
    what the file is ('an SQLite database', 'a Parquet file' ..., or 'not a DuckDB database')."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return None
    if not head or head[8:12] == b"DUCK":
        return None
    return next((what for magic, what in FOREIGN_MAGIC if head.startswith(magic)), "not a DuckDB database")


def connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection to `path`, or StoreError saying in plain words why not."""
    if path.is_dir():
        raise StoreError(f"{path}: is a folder, not a store file; give --store a file name such as {path / 'referee.duckdb'}")
    if path.exists() and not path.is_file():  # a FIFO would block the first read, a device never end
        raise StoreError(f"{path}: not a regular file (a device, a FIFO or a socket), not a store file; point --store "
                         "at a new file name or at a store referee wrote")
    kind = _file_kind(path)
    if kind is not None:  # refused before DuckDB reads it (DuckDB would try to load an extension for SQLite)
        raise StoreError(f"{path}: not a referee store: the file is {kind}; point --store at a new file name or at "
                         "a store referee wrote")
    if not read_only:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create the store's folder {path.parent}: {exc.strerror or exc}") from None
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        text = str(exc)
        if "lock" in text.lower():
            pid = re.search(r"PID (\d+)", text)
            raise StoreError(f"{path}: the store is in use by another process{f' (PID {pid.group(1)})' if pid else ''}; "
                             "wait for it to finish (an ingest holds the store until it commits), or use another "
                             "--store") from None
        if "not a valid DuckDB database" in text:
            raise StoreError(f"{path}: not a referee store (the file is not a DuckDB database: empty, truncated or "
                             "another kind of file); point --store at a new file name or at a store referee wrote") from None
        raise StoreError(f"{path}: cannot open the store: {text}") from None
    except duckdb.Error as exc:  # a damaged file: truncated, bit-flipped, written by an incompatible version
        raise StoreError(f"{path}: cannot open the store: the file is damaged or not a DuckDB database "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0]})") from None


def _legacy_store(con: duckdb.DuckDBPyConnection, have: set[str]) -> bool:
    """Whether a store without the marker is one an earlier referee wrote: every table one of referee's, with
    no column referee's schema lacks, and a `sources` table with referee's columns."""
    if "sources" not in have or not have <= set(TABLES):
        return False
    for table in have:
        found = {r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()}
        if not found <= set(columns(table)):
            return False
    return {"source_file", "content_hash", "accepted"} <= {r[0] for r in con.execute("DESCRIBE sources").fetchall()}


def referee_marked(con: duckdb.DuckDBPyConnection, path: Path) -> bool:
    """Whether the open database `con` (at `path`) is referee's: True when it carries the marker, False when it
    is empty or a store an earlier referee wrote (to be marked); StoreError (the connection closed) for another
    application's database or a file that cannot be read."""
    try:
        have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        marked = MARKER in have and ("format", "referee") in set(
            map(tuple, con.execute(f"SELECT key, value FROM {MARKER}").fetchall()))
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"{path}: cannot read the store: the file is damaged ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0]})") from None
    if have and not marked and not _legacy_store(con, have):  # refused before anything is written
        con.close()
        raise StoreError(f"{path}: a DuckDB database of another application (tables "
                         f"{sorted(have)[:5]}{' ...' if len(have) > 5 else ''}, no {MARKER} table); referee will "
                         "not add its tables to it: give --store a new file name")
    return marked


def mark(con: duckdb.DuckDBPyConnection) -> None:
    """Write referee's marker into the open store `con`."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {MARKER} (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute(f"INSERT OR REPLACE INTO {MARKER} VALUES ('format', 'referee')")
