"""The embedded store: one DuckDB file holding the canonical tables (no server).

`Store(path)` opens or creates it; `Store.ingest(paths, ...)` reads logs through the loaders and writes
them in one transaction (all or nothing; rows inserted in batches of files), skipping files already
ingested (same content hash), replacing a file's earlier contribution on request, and setting aside
duplicate match ids; `Store.table(name)` returns a canonical table as a DataFrame; `Store.info()` counts
what is there.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from referee.io import loaders
from referee.io.known_ids import KnownIds
from referee.io.catalogue import Catalogue, load_catalogue
from referee.io.batch_frames import batch_frames
from referee.io.loaders.base import DATA_TABLES, Frame, LoadResult
from referee.io.loaders.spilled import Spilled
from referee.io.loaders.table import check_mapping
from referee.io.reading import PARALLEL_MIN, FileReader, folder_phases, read_files
from referee.io.schema import (TABLES, SchemaError, arrow_schema, columns, conform, conform_arrow, ddl, empty,
                               rows_to_arrow)
from referee.names import CONTEST_PHASES, DEFAULT_STORE
from referee.io.set_aside import checked, orphan_ids, set_aside_duplicates, set_aside_orphans, set_aside_strays
from referee.io.staging import SPILLED_MEMORY, Staging, checkpoint, insert_memory
from referee.io.store_file import connect, mark, referee_marked
from referee.io.store_queries import StoreQueries, match_folders
from referee.io.store_reads import StoreReads
from referee.models import progress as shows
from referee.names import IngestError, StoreError  # noqa: F401  (defined light, for the command line)

log = logging.getLogger(__name__)

INFO_KEYS = ("agents", "games", "scenarios", "matches", "results", "events", "quarantined")


def _as_arrow(table: str, frame: pd.DataFrame) -> Frame:
    """A conformed frame as an Arrow table of canonical table `table`'s schema, which DuckDB inserts without
    reading Python objects one by one (a million rows of text: seconds saved); the frame itself where Arrow
    cannot convert it."""
    try:
        return pa.Table.from_pandas(frame, schema=arrow_schema(table), preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        return frame


def canonical_arrow(table: str, frame: Frame) -> Frame:
    """Rows of canonical table `table` (a DataFrame or Arrow table) conformed, as Arrow where Arrow can hold them
    (see `_as_arrow`); raises SchemaError."""
    return conform_arrow(table, frame) if isinstance(frame, pa.Table) else _as_arrow(table, conform(table, frame))


def arrow_frame(table: pa.Table) -> pd.DataFrame:
    """A DataFrame of an Arrow table with the dtypes DuckDB's own `.df()` gives (strings as pandas' string
    dtype, a string column with no value at all as object holding None, booleans as pandas' nullable
    boolean where a value is missing, else numpy's), at a third of its cost: DuckDB hands over Arrow columns without copying."""
    frame = table.to_pandas()
    for column, kind in zip(table.column_names, table.schema.types):
        nulls = table.column(column).null_count
        if (pa.types.is_string(kind) or pa.types.is_large_string(kind)) and nulls == len(table):
            frame[column] = pd.Series([None] * len(table), index=frame.index, dtype=object)
        elif pa.types.is_boolean(kind):
            frame[column] = frame[column].astype("boolean" if nulls else bool)
    return frame


QUARANTINE_SAMPLE = 1000  # quarantine rows an IngestReport keeps in memory (the store keeps them all)
BATCH_FILES = 250  # files loaded before their rows are written (one insert per table per batch)
BATCH_ROWS = 2_000_000  # ... or rows, whichever comes first
FILE_STATUSES = ("ingested", "rejected", "already ingested", "companion")


@dataclass
class IngestReport:
    """What one `Store.ingest` call did.

    files : one row per file (source_file, runner, detected, status, read, accepted, quarantined, whole);
        `whole` is True for a file set aside whole (unreadable, or no runner's format); status is
        'ingested' (some records accepted), 'rejected' (records read, none accepted: the file is not marked
        as ingested, so a fixed re-run reads it again), 'already ingested', or 'companion' (a file a runner
        writes beside its records with no results of its own, left out of a folder: `loaders.data_files`,
        read 0); `detected` says how the
        runner was chosen and how sure detection was.
    quarantine : the first QUARANTINE_SAMPLE quarantine rows written by this call, and the first of every
        (runner, reason) past them, so that each reason has an example (the store holds all).
    by_reason : quarantined records per (runner, reason), over the whole call.
    warnings : human-readable warnings (catalogue changes, observed-bound fallbacks ...).
    """

    files: pd.DataFrame
    quarantine: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    by_reason: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def read(self) -> int:
        """Records read in this call."""
        return int(self.files["read"].sum())

    @property
    def accepted(self) -> int:
        """Records accepted in this call."""
        return int(self.files["accepted"].sum())

    @property
    def quarantined(self) -> int:
        """Records set aside in this call; read == accepted + quarantined."""
        return int(self.files["quarantined"].sum())

    @property
    def failed_files(self) -> list[str]:
        """Files that could not be read at all, or as any runner's (quarantined whole, record '-')."""
        return self.files.loc[self.files["whole"].astype(bool), "source_file"].tolist()

    @staticmethod
    def combine(reports: list["IngestReport"]) -> "IngestReport":
        """One report for several ingest calls (files, quarantine rows and warnings concatenated)."""
        by_reason: dict[tuple[str, str], int] = {}
        for r in reports:
            for key, n in r.by_reason.items():
                by_reason[key] = by_reason.get(key, 0) + n
        return IngestReport(files=pd.concat([r.files for r in reports], ignore_index=True),
                            quarantine=pd.concat([r.quarantine for r in reports], ignore_index=True),
                            warnings=[w for r in reports for w in r.warnings], by_reason=by_reason)

    def by_runner(self) -> pd.DataFrame:
        """One row per runner and status: files, read, accepted, quarantined (the compact summary)."""
        files = self.files.assign(runner=self.files["runner"].fillna("(none)"))
        return (files.groupby(["runner", "status"], sort=True)
                .agg(files=("source_file", "size"), read=("read", "sum"), accepted=("accepted", "sum"),
                     quarantined=("quarantined", "sum")).reset_index())

    def as_dict(self) -> dict:
        """`{"read", "accepted", "quarantined", "by_reason", "by_runner", "failed_files"}` as `--json` prints it."""
        reasons: dict[str, int] = {}
        for (_, reason), n in sorted(self.by_reason.items()):
            reasons[reason] = reasons.get(reason, 0) + n
        return {"read": self.read, "accepted": self.accepted, "quarantined": self.quarantined,
                "by_reason": reasons, "by_runner": self.by_runner().to_dict("records"),
                "failed_files": self.failed_files}


class Store(StoreQueries, StoreReads):
    """A DuckDB file holding referee's canonical tables. Use as a context manager or call `close()`."""

    def __init__(self, path: str | Path = DEFAULT_STORE, read_only: bool = False):
        """Open the store at `path` (created when missing unless `read_only`). Raises StoreError when the file
        is in use, is not a DuckDB database, is a folder, or holds another application's tables."""
        self.path = Path(path)
        self.last_ingest: IngestReport | None = None  # the report of the last `ingest` through this store object
        self.con = connect(self.path, read_only)
        marked = referee_marked(self.con, self.path)
        if not read_only:
            for table in TABLES:
                self.con.execute(ddl(table))
                self._add_new_columns(table)
            if not marked:
                mark(self.con)

    def _add_new_columns(self, table: str) -> None:
        """Bring a store written by an older referee up to the schema: add columns it lacks (as NULL)."""
        have = {r[0] for r in self.con.execute(f"DESCRIBE {table}").fetchall()}
        for col in TABLES[table]:
            if col.name not in have:
                self.con.execute(f'ALTER TABLE {table} ADD COLUMN "{col.name}" {col.sql}')

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    # reading -------------------------------------------------------------------------------------
    def table(self, name: str, leave_out: tuple[str, ...] = ()) -> pd.DataFrame:
        """Canonical table `name` as a DataFrame (columns as in `referee.io.schema.TABLES`, but those in
        `leave_out`)."""
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r}; tables: {sorted(TABLES)}")
        cols = ", ".join(f'"{c}"' for c in columns(name) if c not in leave_out)
        try:
            return arrow_frame(self.con.sql(f"SELECT {cols} FROM {name}").to_arrow_table())
        except (duckdb.InternalException, duckdb.SerializationException, duckdb.IOException) as exc:
            raise StoreError(f"{self.path}: cannot read table {name}: the file is damaged "
                             f"({type(exc).__name__}: {str(exc).splitlines()[0]})") from None

    def query(self, sql: str, params: list | None = None) -> pd.DataFrame:
        """Run a read query against the store and return a DataFrame."""
        return self.con.execute(sql, params or []).df()

    def info(self) -> dict[str, int]:
        """Counts: agents, games (distinct game names; a runner whose matches name no game counts as one),
        scenarios, matches, results, events, quarantined."""
        one = lambda sql: int(self.con.execute(sql).fetchall()[0][0])  # noqa: E731 (fetchall: a result left unfinished blocks the next query)
        return {
            "agents": one("SELECT count(DISTINCT agent) FROM results"),
            "games": one("SELECT count(DISTINCT coalesce(game, '(' || runner || ')')) FROM matches"),
            "scenarios": one("SELECT count(DISTINCT scenario) FROM matches"),
            "matches": one("SELECT count(*) FROM matches"),
            "results": one("SELECT count(*) FROM results"),
            "events": one("SELECT count(*) FROM events"),
            "quarantined": one("SELECT count(*) FROM quarantine"),
        }

    def agent_counts(self, limit: int | None = None) -> pd.DataFrame:
        """agent, n (its results), most first (then by name); the first `limit` agents when given."""
        sql = "SELECT agent, count(*) AS n FROM results GROUP BY agent ORDER BY n DESC, agent"
        return self.query(sql + (f" LIMIT {int(limit)}" if limit is not None else ""))

    def event_roles(self) -> pd.DataFrame:
        """Per event type (most events first): type, events, actor, target, value (how many carry each) and rated
        (how many name as actor a player of their match's results): what `referee map --check` shows."""
        return self.query(
            "SELECT e.type, count(*) AS events, count(e.actor) AS actor, count(e.target) AS target, "
            "count(e.value) AS value, count(r.player) AS rated FROM events e LEFT JOIN (SELECT DISTINCT match_id, "
            "player FROM results) r ON r.match_id = e.match_id AND r.player = e.actor GROUP BY e.type "
            "ORDER BY events DESC, e.type")

    def runners(self) -> list[str]:
        """The runners whose matches the store holds, sorted."""
        return sorted(r for (r,) in self.con.execute("SELECT DISTINCT runner FROM matches").fetchall())

    # writing -------------------------------------------------------------------------------------
    def _append(self, table: str, frame: Frame | Spilled) -> None:
        if isinstance(frame, Spilled):
            return self._append_spilled(table, frame)
        if len(frame):
            self._insert(table, canonical_arrow(table, frame))

    def _append_spilled(self, table: str, piece: Spilled) -> None:
        """Insert a spilled piece's rows a block at a time (DuckDB reads the blocks as they come), within DuckDB's
        ingest memory limit where the store is a file (an in-memory store must hold its rows)."""
        limit = insert_memory(self.con, SPILLED_MEMORY) if str(self.path) != ":memory:" else contextlib.nullcontext()
        with limit:
            self._insert(table, pa.RecordBatchReader.from_batches(piece.schema(), piece.batches()))

    def _insert(self, table: str, rows) -> None:
        """Insert `rows` (an Arrow table, a pandas frame or an Arrow batch reader, canonical columns) into `table`, by
        name: a migrated store may order its columns otherwise."""
        self.con.register("_incoming", rows)
        try:
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
        finally:
            self.con.unregister("_incoming")

    def _put_catalogue(self, catalogue: Catalogue, warnings: list[str]) -> None:
        old = self.table("scenarios").set_index("scenario")
        new = catalogue.scenarios.set_index("scenario")
        changed = [s for s in new.index.intersection(old.index)
                   if not old.loc[s].fillna("").astype(str).equals(new.loc[s].fillna("").astype(str))]
        if changed:
            warnings.append(f"catalogue replaces the stored definition of scenarios {changed}")
        names = list(new.index)
        self.con.execute("DELETE FROM scenarios WHERE scenario IN (SELECT unnest(?))", [names])
        self.con.execute("DELETE FROM scenario_tags WHERE scenario IN (SELECT unnest(?))", [names])
        self._append("scenarios", catalogue.scenarios)
        self._append("scenario_tags", catalogue.tags)

    def record_calibration(self, model: str, sims: int, passed: bool, groups_failed: list[str], folder: str | Path,
                           summary: pd.DataFrame) -> None:
        """Add one calibration run (`referee calibrate`) to the `calibrations` table; the report links the latest
        of each model. folder : where the run's files are (stored absolute)."""
        row = {"model": model, "ran_at": datetime.now(timezone.utc).replace(tzinfo=None), "sims": sims,
               "passed": passed, "groups_failed": ", ".join(groups_failed) or None,
               "folder": str(Path(folder).resolve()), "summary": summary.to_json(orient="records")}
        self._append("calibrations", pd.DataFrame([row]))

    def _remove_sources(self, hashes: set[str]) -> set[str]:
        """Delete every row that the source files with these sha256s contributed (data, quarantine,
        sources); returns the match ids that went."""
        if not hashes:
            return set()
        keys = sorted(hashes)
        gone = {r[0] for r in self.con.execute(
            "SELECT match_id FROM matches WHERE content_hash IN (SELECT unnest(?))", [keys]).fetchall()}
        for table in DATA_TABLES + ("quarantine", "sources"):
            self.con.execute(f"DELETE FROM {table} WHERE content_hash IN (SELECT unnest(?))", [keys])
        return gone

    def ingest(
        self,
        paths: list[str | Path],
        runner: str | Path | None = None,
        catalogue: str | Path | Catalogue | None = None,
        mapping: dict[str, str] | None = None,
        measures: dict[str, str] | None = None,
        strict: bool = False,
        replace: bool = False,
        progress: bool | None = None,
        workers: int | None = None,
        phase: str | None = None,
        score: str | None = None,
        values: dict[str, dict[str, str]] | None = None,
    ) -> IngestReport:
        """Read logs into the store, atomically (one transaction; rows written in batches of files).

        Parameters
        ----------
        paths : files or directories (read recursively; .json, .jsonl, .csv, .parquet).
        runner : force one loader: a built-in runner's name (a key of `referee.io.loaders.RUNNERS`) or a
            runner mapping file (`.toml`, `data/formats/mapped.md`); default: detect per file, trying the
            next likely runner when a file's first records do not fit the first.
        catalogue : scenario catalogue (TOML path or Catalogue) to validate scenarios against and store.
            Concordia files default to the 2024 contest catalogue.
        mapping, measures, values : for the table and arena runners: canonical column -> file column (checked
            against the runner's columns), file column -> measure kind, canonical column -> {code: value}.
        strict : raise IngestError, writing nothing, when any record would be quarantined.
        replace : remove each file's earlier contribution (rows, quarantine, sources row; matched by path
            or content) in the same transaction that adds the new one. Without it, a file already ingested
            (same sha256, some records accepted) is skipped; a file none of whose records were accepted is
            always read again, its earlier quarantine replaced.
        progress : show the progress over files (files, records read and set aside so far, the rate): None (the
            default) as `referee.models.progress.mode()` says (the command line: a bar on a terminal, plain lines
            elsewhere, nothing with --quiet; a library call: nothing), True a bar (a notebook widget in Jupyter), False nothing.
        workers : processes that read files when there are many (default: $REFEREE_WORKERS, else the CPUs
            available, at most 4); 1 reads everything in this process.
        phase : the contest phase of every match read (e.g. 'evaluation', 'cross-play'); it overrides what a
            file or the catalogue says. A file already ingested is skipped whatever the phase: re-ingest it
            under another phase with `replace`.
        score : for a runner that records several scores, which one is the score (Sotopia: a SOTOPIA-EVAL
            dimension, default goal; the others stay measures).

        Returns
        -------
        IngestReport with per-file counts (read = accepted + quarantined), the first quarantine rows and the
        quarantine counts by runner and reason.
        """
        mapping, measures = dict(mapping or {}), dict(measures or {})
        # fail early: an unknown runner, a bad mapping file, a column the runner does not read
        check_mapping(mapping, measures, *loaders.mapping_columns(runner, mapping))
        if isinstance(catalogue, (str, Path)):
            catalogue = load_catalogue(catalogue)
        beside: list[tuple[Path, str]] = []
        files = loaders.data_files(paths, beside)
        if score is not None and not score.strip():
            raise ValueError("--score is empty: name the score a runner records several of (Sotopia: a SOTOPIA-EVAL "
                             "dimension, e.g. goal or overall_score)")
        sources = self.con.execute("SELECT source_file, content_hash, accepted FROM sources").df()
        done = set(sources.loc[sources["accepted"] > 0, "content_hash"])
        rejected = set(sources.loc[sources["accepted"] == 0, "content_hash"])
        by_path: dict[str, set[str]] = {}
        for f, h in zip(sources["source_file"], sources["content_hash"]):
            by_path.setdefault(f, set()).add(h)
        known = KnownIds(self.con.sql("SELECT match_id FROM matches").to_arrow_table()["match_id"])
        phases = CONTEST_PHASES + tuple(sorted(set(catalogue.phases.values()))) if catalogue is not None else CONTEST_PHASES
        shown = shows.mode() if progress is None else "notebook" if progress else "off"
        staging = Staging(self.path) if str(self.path) != ":memory:" else None
        reader = FileReader(runner=None if runner is None else str(runner), catalogue=catalogue, mapping=mapping,
                            measures=measures, values=dict(values or {}), skip=frozenset() if replace else frozenset(done),
                            progress=shown in ("bar", "notebook") and len(files) < PARALLEL_MIN, phase=_phase_name(phase), score=score,
                            folders={} if phase is not None else folder_phases(paths, files, phases),
                            spill=None if staging is None else str(staging.folder))
        job = _Ingest(self, reader, staging)
        for path, runner_name in beside:
            job.companion(path, runner_name)
        self.con.execute("BEGIN TRANSACTION")
        try:
            seen: dict[str, Path] = {}  # content hash -> the first file of those bytes in this ingest
            homes: dict[str, str] = {}  # match id -> the folder of the file that holds it, read in this ingest
            reads = read_files(files, reader, workers)
            tracked = shows.track(reads, total=len(files), what="ingest", unit="file", status=job.so_far, show=shown)
            for k, read in enumerate(tracked):
                if read.result is None or read.digest in seen:
                    job.skipped(read.path, seen.get(read.digest))
                    continue
                seen[read.digest] = read.path
                if replace:
                    known.remove(self._remove_sources(by_path.get(str(read.path), set()) | {read.digest}))
                else:  # a file none of whose records were accepted, read again: it left no match to forget
                    job.forget({read.digest} & rejected)
                result = set_aside_duplicates(read.result, known)
                home = loaders.entry(result.runner).home
                if home is not None:  # a runner whose files beside a match take it (clem): kept for its files only
                    result = set_aside_strays(result, home, homes, functools.partial(match_folders, self.con))
                    homes.update(dict.fromkeys(result.match_ids("matches"), str(read.path.parent)))
                known.add(result)
                job.add(result, read.detected, known, last=k == len(files) - 1)
            job.finish(known)
            report = job.report()
            read_by = {r for r in report.files["runner"].dropna() if loaders.entry(r).score_option}
            if score is not None and not read_by:
                report.warnings.append(f"--score {score!r} was not used: no file of this ingest is of a runner that "
                                       "records several scores (Sotopia); each runner's own score was stored")
            if strict and report.quarantined:
                first = report.quarantine["message"].head(5).tolist()
                raise IngestError(f"--strict: {report.quarantined} record(s) would be quarantined; nothing was "
                                  "written. First: " + " | ".join(first))
            if staging is not None:
                staging.insert_into(self.con)
            if catalogue is not None:
                report.warnings += _catalogue_unused(self.con, catalogue, report.files)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        finally:
            if staging is not None:
                staging.close()
        if staging is not None and report.accepted:
            checkpoint(self.con)  # now, within a memory limit, not at close without one
        for w in report.warnings:
            log.warning(w)
        self.last_ingest = report
        return report


def _catalogue_unused(con, catalogue: Catalogue, files: pd.DataFrame) -> list[str]:
    """The warning when a catalogue given to an ingest names none of the scenarios it stored (its tags and
    phases then apply to nothing), or when the matches it stored carry no scenario at all; else nothing."""
    stored = files.loc[files["accepted"] > 0, "source_file"].tolist()
    if not stored:
        return []
    scenarios = con.execute("SELECT DISTINCT scenario FROM matches WHERE source_file IN (SELECT unnest(?))",
                            [stored]).df()["scenario"].dropna().tolist()
    if not scenarios:
        return ["the catalogue was not used: the matches of this ingest name no scenario (their runners record "
                "none), so its tags and phases apply to nothing"]
    if set(scenarios) & set(catalogue.names):
        return []
    shown = ", ".join(repr(s) for s in sorted(scenarios)[:3]) + (" ..." if len(scenarios) > 3 else "")
    return [f"the catalogue names none of the {len(scenarios)} scenario(s) of this ingest ({shown}): its tags and "
            "phases apply to none of them; is it the catalogue of these logs?"]


def _phase_name(phase: str | None) -> str | None:
    """`phase` stripped, or None; ValueError for an empty or non-text phase."""
    if phase is None:
        return None
    if not isinstance(phase, str) or not phase.strip():
        raise ValueError(f"a phase is a non-empty name (e.g. evaluation), got {phase!r}")
    return phase.strip()


class _Ingest:
    """One ingest call's running state: loaded files waiting to be written, counts, and the report rows."""

    def __init__(self, store: Store, reader: FileReader, staging: Staging | None = None):
        self.store, self.reader = store, reader
        # where a batch's rows go: staged on disk until the transaction inserts them (bounded memory), or
        # straight into the store (an in-memory store)
        self.staging = staging
        self.flushed = 0  # batches written so far
        self.rows: list[dict] = []
        self.batch: list[LoadResult] = []
        self.pending: list[LoadResult] = []  # results naming matches not seen yet (a later file may hold them)
        self.batch_rows = 0
        self.catalogues: list[Catalogue] = [] if reader.catalogue is None else [reader.catalogue]
        self.written_catalogues: list[Catalogue] = []
        self.warnings: list[str] = []
        self.notes: dict[str, int] = {}  # caveat -> records stored with it, over every file
        self.sample: list[dict] = []
        self.sampled = 0
        self.by_reason: dict[tuple[str, str], int] = {}
        self.read = self.accepted = self.quarantined = 0  # records over the files added so far
        self.forgotten: set[str] = set()  # sha256s of files set aside before, whose old rows go before the next write
        self.now = datetime.now(timezone.utc).replace(tzinfo=None)

    def so_far(self) -> str:
        """The records of the files read so far, for the progress display."""
        return f"{self.read:,} records read, {self.accepted:,} accepted, {self.quarantined:,} set aside"

    def skipped(self, path: Path, same_as: Path | None = None) -> None:
        """Record a file already ingested (not read again): in the store, or earlier in this ingest as `same_as`,
        a file of the same bytes in another folder (the first one read is kept, and the report names it)."""
        self.rows.append({"source_file": str(path), "runner": None,
                          "detected": None if same_as is None else f"the same bytes as {same_as}",
                          "status": "already ingested", "read": 0, "accepted": 0, "quarantined": 0, "whole": False})

    def companion(self, path: Path, runner: str) -> None:
        """Record a file that `runner` left out as a companion (settings or aggregates beside its records)."""
        self.rows.append({"source_file": str(path), "runner": runner, "detected": "beside its records",
                          "status": "companion", "read": 0, "accepted": 0, "quarantined": 0, "whole": False})

    def forget(self, hashes: set[str]) -> None:
        """Remove what the files of these sha256s left in the store (a quarantine and sources row: files none of whose
        records were accepted) before the next batch is written: one delete per table for the batch, not per file
        (2,000 rejected files read again with a mapping took 12 s of deletes, one file at a time)."""
        self.forgotten |= hashes

    def add(self, result: LoadResult, detected: str, known: KnownIds, last: bool = False) -> None:
        """Queue one file's result (`last`: the ingest's last file); results naming unknown matches wait until
        every file is read."""
        checked = self.reader.options(result.runner).catalogue  # the catalogue the file was checked against
        if checked is not None and all(checked is not c for c in self.catalogues):
            self.catalogues.append(checked)
        for text, n in result.notes.items():
            self.notes[text] = self.notes.get(text, 0) + n
        self.read, self.accepted = self.read + result.read, self.accepted + result.accepted
        self.quarantined += result.quarantined
        orphans = orphan_ids(result, known)
        (self.pending if orphans else self.batch).append(result)
        self.rows.append({"source_file": result.source_file, "runner": result.runner, "detected": detected,
                          "status": None, "read": 0, "accepted": 0, "quarantined": 0, "whole": False})
        self.batch_rows += sum(len(p) for ps in result.parts.values() for p in ps) + result.quarantined
        if len(self.batch) >= BATCH_FILES or self.batch_rows >= BATCH_ROWS:
            self.flush(last=last and not self.pending)

    def write(self, table: str, frame: Frame | Spilled, direct: bool = False) -> None:
        """Write rows of one table: staged on disk until the transaction inserts them (memory bounded by a batch,
        not by the folder), or straight into the store: `direct` (an ingest of one batch: nothing to bound, and
        staging it would only copy it twice), an in-memory store, or rows Arrow cannot hold. A `Spilled` piece is
        removed from disk once its rows are written."""
        if isinstance(frame, Spilled):  # a large file's rows on disk: copied a block at a time, then removed
            if self.staging is None or direct:
                self.store._append(table, frame)
            else:
                for block in frame.batches():
                    self.staging.add(table, pa.Table.from_batches([block]))
            return frame.release()
        if self.staging is None or not len(frame) or direct:
            return self.store._append(table, frame)
        frame = canonical_arrow(table, frame)
        if isinstance(frame, pa.Table):
            self.staging.add(table, frame)
        else:
            self.store._append(table, frame)

    def finish(self, known: KnownIds) -> None:
        """Set aside what still names no known match, and write everything left."""
        self.batch += [set_aside_orphans(r, known) for r in self.pending]
        self.pending = []
        self.flush(last=True)

    def flush(self, last: bool = False) -> None:
        """Write the queued results: one insert per table (pandas and Arrow parts apart). `last`: no batch follows,
        so one that is also the first goes straight into the store."""
        store, direct = self.store, last and not self.flushed
        if self.forgotten:  # before anything of this batch is written: a file read again writes the same sha256
            store._remove_sources(self.forgotten)
            self.forgotten = set()
        for cat in self.catalogues:
            if all(cat is not c for c in self.written_catalogues):
                store._put_catalogue(cat, self.warnings)
                self.written_catalogues.append(cat)
        if not self.batch:
            return
        # what the loaders freed goes back to the system before DuckDB takes its own (a million arena judgments:
        # 160 MB that Arrow's allocator would otherwise keep through the write)
        pa.default_memory_pool().release_unused()
        try:
            prepared = batch_frames(self.batch)
        except SchemaError:  # some file's rows break the schema: find it, set it aside whole, write the rest
            self.batch = [checked(r) for r in self.batch]
            prepared = batch_frames(self.batch)
        for table, frame in prepared:
            self.write(table, frame, direct)
        status = {}
        quarantine = [row for r in self.batch for row in r.bad]
        if quarantine:
            self.write("quarantine", rows_to_arrow("quarantine", quarantine), direct)
        self.write("sources", direct=direct, frame=pd.DataFrame([{
            "source_file": r.source_file, "content_hash": r.content_hash, "runner": r.runner, "read": r.read,
            "accepted": r.accepted, "quarantined": r.quarantined, "ingested_at": self.now} for r in self.batch]))
        for r in self.batch:
            whole = r.read == 1 and r.accepted == 0 and len(r.bad) == 1 and r.bad[0]["record"] == "-"
            ingested = r.accepted or (r.read == 0 and r.notes)  # a file with no records, noted (a cancelled log)
            status[r.source_file] = {"status": "ingested" if ingested else "rejected", "read": r.read,
                                     "accepted": r.accepted, "quarantined": r.quarantined, "runner": r.runner,
                                     "whole": whole}
            room = max(QUARANTINE_SAMPLE - self.sampled, 0)
            self.sample += r.bad[:room]
            self.sampled += len(r.bad[:room])
            for k, row in enumerate(r.bad):
                key = (r.runner or "(none)", row["reason"])
                if key not in self.by_reason and k >= room:
                    self.sample.append(row)  # every reason keeps an example, past the sample's size too
                self.by_reason[key] = self.by_reason.get(key, 0) + 1
        for row in self.rows:
            if row["status"] is None and row["source_file"] in status:
                row.update(status[row["source_file"]])
        self.batch, self.batch_rows = [], 0
        self.flushed += 1

    def report(self) -> IngestReport:
        """The IngestReport of everything written."""
        return IngestReport(
            files=pd.DataFrame(self.rows, columns=["source_file", "runner", "detected", "status", "read",
                                                   "accepted", "quarantined", "whole"]),
            quarantine=conform("quarantine", pd.DataFrame(self.sample, columns=columns("quarantine")))
            if self.sample else empty("quarantine"),
            warnings=self.warnings + [f"{n:,} {text}" for text, n in self.notes.items()], by_reason=self.by_reason)
