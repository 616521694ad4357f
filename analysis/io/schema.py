"""The canonical trace schema: the one vocabulary every loader writes and every analysis reads.

Documented for people in `data/SCHEMA.md`; this module is the enforcing copy. Each table is a list of
`Column` (name, DuckDB type, nullable, allowed values). `conform(name, frame)` returns the frame with
exactly the table's columns, in order, with the right dtypes, or raises `SchemaError` naming the
column and the first offending row. Loaders call it before anything reaches the store, so a loader bug
cannot write a malformed table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from referee.models.registry import DIRECTIONS
from referee.names import MEASURE_KINDS, OUTCOMES  # (one source, light)

GROUPS = ("focal", "background")
EVENT_STATUSES = ("accepted", "rejected")
MODES = ("resident", "visitor")
# how a player's match ended, where the runner says: a forfeit (illegal move, timeout) is not a plain loss, and
# an aborted match has no result (referee.prepare.comparisons: forfeits lose by default, aborted matches are
# left out and counted)


@dataclass(frozen=True)
class Column:
    """One column of a canonical table: name, DuckDB type, whether NULL is allowed, allowed values."""

    name: str
    sql: str
    nullable: bool = True
    allowed: tuple[str, ...] | None = None


TABLES: dict[str, tuple[Column, ...]] = {
    # one row per match (episode, simulation run)
    "matches": (
        Column("match_id", "VARCHAR", nullable=False),
        Column("runner", "VARCHAR", nullable=False),
        Column("game", "VARCHAR"),  # game or substrate
        Column("scenario", "VARCHAR"),
        Column("variant", "VARCHAR"),  # semantic framing or other variant
        Column("phase", "VARCHAR"),  # development / evaluation / cross-play ...
        Column("repetition", "VARCHAR"),  # repetition index or seed, as text (Concordia stores a string)
        Column("n_players", "INTEGER", nullable=False),
        Column("communication", "BOOLEAN"),
        Column("started_at", "TIMESTAMP"),
        Column("source_file", "VARCHAR", nullable=False),
        Column("content_hash", "VARCHAR", nullable=False),  # sha256 of the source file
        Column("record_index", "VARCHAR", nullable=False),  # record index or line within the source
        Column("attrs", "JSON"),  # everything else the record carried, kept verbatim
    ),
    # scenario catalogue
    "scenarios": (
        Column("scenario", "VARCHAR", nullable=False),
        Column("game", "VARCHAR"),
        Column("mode", "VARCHAR", allowed=MODES),
        Column("background", "VARCHAR"),
        Column("phase", "VARCHAR"),  # the contest phase the scenario belongs to (development, evaluation), if any
        Column("score_min", "DOUBLE"),  # theoretical bounds of the raw score; NULL when unknown
        Column("score_max", "DOUBLE"),
        Column("description", "VARCHAR"),
    ),
    "scenario_tags": (
        Column("scenario", "VARCHAR", nullable=False),
        Column("tag", "VARCHAR", nullable=False),
    ),
    # one row per player per match
    "results": (
        Column("match_id", "VARCHAR", nullable=False),
        Column("player", "VARCHAR", nullable=False),  # slot or character name, unique within the match
        Column("agent", "VARCHAR", nullable=False),  # the evaluated policy, submission or model
        Column("group", "VARCHAR", allowed=GROUPS),
        Column("team", "VARCHAR"),  # nation, coalition
        Column("role", "VARCHAR"),  # role or secret assignment (mission, character role)
        Column("score", "DOUBLE"),  # raw score; -inf allowed (Concordia), NaN never
        Column("rank", "DOUBLE"),  # 1 = best; ties share the lower rank
        Column("outcome", "VARCHAR", allowed=OUTCOMES),  # win / loss / tie / forfeit / aborted, where known
        Column("attrs", "JSON"),
        Column("content_hash", "VARCHAR"),  # sha256 of the source file (set by the store)
    ),
    # per-player measures in long form
    "measures": (
        Column("match_id", "VARCHAR", nullable=False),
        Column("player", "VARCHAR"),  # NULL for a match-level measure
        Column("name", "VARCHAR", nullable=False),
        Column("value", "DOUBLE", nullable=False),
        Column("kind", "VARCHAR", nullable=False, allowed=MEASURE_KINDS),
        Column("other", "VARCHAR"),  # the other player of a dyadic measure (e.g. the influenced player)
        Column("round", "BIGINT"),  # the round the measure refers to; NULL for the whole match
        Column("rater", "VARCHAR"),  # for judge ratings: the judge (model or person)
        Column("direction", "VARCHAR", allowed=DIRECTIONS),  # an outcome's better way, where its runner declares it
        Column("content_hash", "VARCHAR"),  # sha256 of the source file (set by the store)
    ),
    # events in long form
    "events": (
        Column("match_id", "VARCHAR", nullable=False),
        Column("seq", "BIGINT", nullable=False),
        Column("round", "BIGINT"),  # round or tick
        Column("time", "TIMESTAMP"),
        Column("stage", "VARCHAR"),  # communicate / predict / act / vote ...
        Column("actor", "VARCHAR"),
        Column("type", "VARCHAR", nullable=False),
        Column("target", "VARCHAR"),
        Column("text", "VARCHAR"),
        Column("value", "DOUBLE"),
        Column("status", "VARCHAR", allowed=EVENT_STATUSES),
        Column("reason", "VARCHAR"),
        Column("content_hash", "VARCHAR"),  # sha256 of the source file (set by the store)
    ),
    # every record that was read and set aside, with why
    "quarantine": (
        Column("source_file", "VARCHAR", nullable=False),
        Column("content_hash", "VARCHAR"),
        Column("runner", "VARCHAR"),
        Column("record", "VARCHAR", nullable=False),  # record index, line number, or '-' for the whole file
        Column("field", "VARCHAR"),
        Column("reason", "VARCHAR", nullable=False),  # short category, e.g. 'missing field'
        Column("message", "VARCHAR", nullable=False),  # the full human-readable message
        Column("raw", "VARCHAR"),  # the record as read, so nothing is lost
    ),
    # LLM-judge calls (`referee judge`): the answer cache (by `key`) and the token ledger; never an API key
    "judgments": (
        Column("key", "VARCHAR", nullable=False),  # sha256 of (rubric, version, model, system, prompt)
        Column("rubric", "VARCHAR", nullable=False),
        Column("version", "BIGINT", nullable=False),
        Column("model", "VARCHAR", nullable=False),
        Column("match_id", "VARCHAR"),
        Column("player", "VARCHAR"),
        Column("other", "VARCHAR"),
        Column("round", "BIGINT"),
        Column("status", "VARCHAR", nullable=False, allowed=("ok", "malformed", "failed")),
        Column("answer", "VARCHAR"),  # the raw answer text (kept for malformed answers too)
        Column("parsed", "JSON"),  # the checked answer fields (ok only)
        Column("reason", "VARCHAR"),  # why it is malformed or failed
        Column("tokens_in", "BIGINT"),
        Column("tokens_out", "BIGINT"),
        Column("calls", "BIGINT"),  # chat-completion calls this item took in this run (HTTP retries included)
        Column("asked_at", "TIMESTAMP", nullable=False),
    ),
    # one row per calibration run (`referee calibrate --store`): the report links each model's latest
    "calibrations": (
        Column("model", "VARCHAR", nullable=False),
        Column("ran_at", "TIMESTAMP", nullable=False),
        Column("sims", "BIGINT", nullable=False),
        Column("passed", "BOOLEAN", nullable=False),
        Column("groups_failed", "VARCHAR"),  # comma-separated parameter groups that failed
        Column("folder", "VARCHAR", nullable=False),  # where its files went (absolute)
        Column("summary", "JSON"),  # the per-group summary table as records
    ),
    # one row per ingested source file: idempotence and provenance
    "sources": (
        Column("source_file", "VARCHAR", nullable=False),
        Column("content_hash", "VARCHAR", nullable=False),
        Column("runner", "VARCHAR"),
        Column("read", "BIGINT", nullable=False),
        Column("accepted", "BIGINT", nullable=False),
        Column("quarantined", "BIGINT", nullable=False),
        Column("ingested_at", "TIMESTAMP", nullable=False),
    ),
}

_PANDAS_DTYPES = {
    "VARCHAR": "object",
    "JSON": "object",
    "DOUBLE": "float64",
    "INTEGER": "Int64",
    "BIGINT": "Int64",
    "BOOLEAN": "boolean",
    "TIMESTAMP": "datetime64[us]",
}


class SchemaError(ValueError):
    """A table does not satisfy the canonical schema (a loader bug, not bad user input)."""


def focal(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of a `results` table that are rated players: group `focal`, or no group (a runner that names
    none); a `background` player (a scripted partner, a built-in agent) is never rated."""
    return results[results["group"].isna() | (results["group"] == "focal")]


def columns(table: str) -> list[str]:
    """Column names of canonical table `table`, in order."""
    return [c.name for c in TABLES[table]]


_EMPTY: dict[str, pd.DataFrame] = {}


def empty(table: str) -> pd.DataFrame:
    """An empty DataFrame with canonical table `table`'s columns and dtypes (a fresh copy each call)."""
    if table not in _EMPTY:
        _EMPTY[table] = conform(table, pd.DataFrame({c: [] for c in columns(table)}))
    return _EMPTY[table].copy()


def _as_object(values: pd.Series) -> pd.Series:
    out = values.astype(object)
    return out.where(pd.notna(out), None)


def conform(table: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Check `frame` against canonical table `table` and return it with exact columns and dtypes.

    Parameters
    ----------
    table : name of a canonical table (a key of `TABLES`).
    frame : DataFrame holding at least the table's non-nullable columns; missing nullable columns are
        added as NULL; extra columns raise.

    Returns
    -------
    DataFrame with the table's columns in order, cast to their dtypes (text as Python objects with None
    for NULL).

    Raises
    ------
    SchemaError naming the table, column and first offending row when a required value is missing, a
    value is outside the allowed set, a DOUBLE is NaN or +inf, or a value cannot be cast.
    """
    spec = TABLES[table]
    extra = set(frame.columns) - {c.name for c in spec}
    if extra:
        raise SchemaError(f"{table}: unexpected columns {sorted(extra)}")
    out = {}
    n = len(frame)
    for col in spec:
        values = frame[col.name] if col.name in frame.columns else pd.Series([None] * n, index=frame.index)
        dtype = _PANDAS_DTYPES[col.sql]
        try:
            if dtype == "object":
                values = _as_object(values)
                # one vectorised look at the kinds held (pandas' C type inference), a pass per value only when
                # something other than text is there
                if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
                    values = values.map(lambda v: None if v is None else str(v))
            elif dtype == "float64":
                values = pd.to_numeric(values.astype(object), errors="raise").astype("float64")
            else:
                values = values.astype(dtype)
        except (ValueError, TypeError) as exc:
            raise SchemaError(f"{table}.{col.name}: cannot cast to {col.sql}: {exc}") from exc
        missing = values.isna()
        if col.sql == "DOUBLE":
            posinf = np.isposinf(values.to_numpy())
            if posinf.any():
                row = int(np.flatnonzero(posinf)[0])
                raise SchemaError(f"{table}.{col.name}: +inf at row {row}")
        if not col.nullable and missing.any():
            row = int(np.flatnonzero(missing.to_numpy())[0])
            raise SchemaError(f"{table}.{col.name}: required value missing at row {row}")
        if col.allowed is not None:
            outside = ~values.isna() & ~values.isin(col.allowed)
            if outside.any():
                row = int(np.flatnonzero(outside.to_numpy())[0])
                raise SchemaError(
                    f"{table}.{col.name}: {values.iloc[row]!r} at row {row} not in {list(col.allowed)}"
                )
        out[col.name] = values.reset_index(drop=True)
    return pd.DataFrame(out, columns=[c.name for c in spec])


def ddl(table: str) -> str:
    """The `CREATE TABLE IF NOT EXISTS` statement for canonical table `table` (DuckDB dialect)."""
    cols = ", ".join(
        f'"{c.name}" {c.sql}{"" if c.nullable else " NOT NULL"}' for c in TABLES[table]
    )
    return f"CREATE TABLE IF NOT EXISTS {table} ({cols})"


_ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "JSON": pa.string(),
    "DOUBLE": pa.float64(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
}


def conform_arrow(table: str, frame: pa.Table) -> pa.Table:
    """`conform` for Arrow tables (large event logs stay columnar): same checks, Arrow types out.

    Missing nullable columns are added as nulls; extra columns, missing required values, values outside
    the allowed set and +inf raise SchemaError.
    """
    spec = TABLES[table]
    extra = set(frame.column_names) - {c.name for c in spec}
    if extra:
        raise SchemaError(f"{table}: unexpected columns {sorted(extra)}")
    arrays = []
    for col in spec:
        kind = _ARROW_TYPES[col.sql]
        if col.name in frame.column_names:
            try:
                values = frame[col.name]
                # text kept dictionary-encoded where it came so (a constant column: `columnar.constant`)
                if not (_encoded_text(values.type) and col.sql == "VARCHAR"):
                    values = values.cast(kind)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise SchemaError(f"{table}.{col.name}: cannot cast to {col.sql}: {exc}") from exc
        else:
            values = pa.chunked_array([pa.nulls(frame.num_rows, kind)])
        if not col.nullable and values.null_count:
            raise SchemaError(f"{table}.{col.name}: required value missing")
        if col.allowed is not None and not _within(values, col.allowed):
            raise SchemaError(f"{table}.{col.name}: values outside {list(col.allowed)}")
        if col.sql == "DOUBLE" and pc.any(pc.equal(values, float("inf"))).as_py():
            raise SchemaError(f"{table}.{col.name}: +inf")
        arrays.append(values)
    return pa.Table.from_arrays(arrays, names=[c.name for c in spec])


def _within(values: pa.ChunkedArray, allowed) -> bool:
    """Whether every value of a column is in `allowed` (nulls pass); a dictionary-encoded column by the values its
    codes point to, never decoded (a constant 'telemetry' on two million measures is one value)."""
    if _encoded_text(values.type):
        used = [chunk.dictionary.take(pc.unique(chunk.indices).drop_null()) for chunk in values.chunks]
        values = pa.chunked_array(used, values.type.value_type)
    return not pc.any(pc.invert(pc.is_in(pc.drop_null(values), value_set=pa.array(allowed)))).as_py()


def _encoded_text(kind: pa.DataType) -> bool:
    return pa.types.is_dictionary(kind) and pa.types.is_string(kind.value_type)


def unified(tables: list[pa.Table], table: str) -> list[pa.Table]:
    """Conformed Arrow tables of canonical table `table` made one schema: a text column that is dictionary-encoded
    in some and plain in others (`conform_arrow`) is decoded in all, so that they concatenate."""
    if len({t.schema for t in tables}) <= 1:
        return tables
    plain = arrow_schema(table)
    mixed = [f.name for f in plain if len({t.schema.field(f.name).type for t in tables}) > 1]
    return [t.cast(pa.schema([plain.field(f.name) if f.name in mixed else f for f in t.schema])) for t in tables]


def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of canonical table `table` (column names and types, in order)."""
    return pa.schema([(c.name, _ARROW_TYPES[c.sql]) for c in TABLES[table]])


def rows_to_arrow(table: str, rows: list[dict]) -> pa.Table:
    """Row dicts of canonical table `table` as a conformed Arrow table (missing keys are NULL).

    Raises SchemaError for a key that is not a column, or a value of the wrong type."""
    extra = set().union(*map(dict.keys, rows)) - {c.name for c in TABLES[table]}
    if extra:
        raise SchemaError(f"{table}: unexpected columns {sorted(extra)}")
    try:
        frame = pa.Table.from_pylist(rows, schema=arrow_schema(table))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        raise SchemaError(f"{table}: {exc}") from exc
    return conform_arrow(table, frame)


def tuples_to_arrow(table: str, names: tuple[str, ...], rows: list[tuple]) -> pa.Table:
    """Rows of canonical table `table` given as tuples of the columns `names` (in that order; the table's
    other columns are NULL), as an Arrow table of the table's schema: one typed array per column, no dict per
    row. The values are typed, not checked (required values, allowed values): the store checks each batch it
    writes with `conform_arrow`, and names the file whose rows break it.

    Raises SchemaError for a name that is not a column, or a value of the wrong type."""
    schema = arrow_schema(table)
    extra = set(names) - set(schema.names)
    if extra:
        raise SchemaError(f"{table}: unexpected columns {sorted(extra)}")
    given = dict(zip(names, zip(*rows))) if rows else {}
    try:
        arrays = [pa.array(given[f.name], f.type) if f.name in given else pa.nulls(len(rows), f.type)
                  for f in schema]
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        raise SchemaError(f"{table}: {exc}") from exc
    return pa.Table.from_arrays(arrays, schema=schema)
