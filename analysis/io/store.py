"""The embedded store: one DuckDB file holding the canonical tables (no server).

`Store(path)` opens or creates it; `Store.ingest(paths, ...)` reads logs through the loaders and writes
them in one transaction (all or nothing), skipping files already ingested (same content hash) and
setting aside duplicate match ids; `Store.table(name)` returns a canonical table as a DataFrame;
`Store.info()` counts what is there.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
from tqdm.auto import tqdm

from analysis.io import loaders
from analysis.io.catalogue import CONTEST_2024, Catalogue, load_catalogue
from analysis.io.loaders.base import (
    DATA_TABLES,
    Frame,
    LoadOptions,
    LoadResult,
    RecordError,
    ResultBuilder,
    drop_matches,
    file_hash,
    frame_match_ids,
    frame_rows,
)
from analysis.io.schema import TABLES, columns, conform, conform_arrow, ddl

log = logging.getLogger(__name__)

DEFAULT_STORE = Path("data/referee.duckdb")
INFO_KEYS = ("agents", "games", "scenarios", "matches", "results", "events", "quarantined")


class IngestError(RuntimeError):
    """Ingest was refused (strict mode with quarantined records); the store was left as it was."""


@dataclass
class IngestReport:
    """What one `Store.ingest` call did.

    files : one row per file (source_file, runner, status, read, accepted, quarantined); status is
        'ingested' or 'already ingested'.
    quarantine : the quarantine rows written by this call.
    warnings : human-readable warnings (catalogue changes, observed-bound fallbacks ...).
    """

    files: pd.DataFrame
    quarantine: pd.DataFrame
    warnings: list[str] = field(default_factory=list)

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

    @staticmethod
    def combine(reports: list["IngestReport"]) -> "IngestReport":
        """One report for several ingest calls (files, quarantine rows and warnings concatenated)."""
        return IngestReport(files=pd.concat([r.files for r in reports], ignore_index=True),
                            quarantine=pd.concat([r.quarantine for r in reports], ignore_index=True),
                            warnings=[w for r in reports for w in r.warnings])

    def as_dict(self) -> dict:
        """`{"read", "accepted", "quarantined", "by_reason"}` as the CLI's `--json` prints it."""
        by_reason = self.quarantine["reason"].value_counts().sort_index()
        return {"read": self.read, "accepted": self.accepted, "quarantined": self.quarantined,
                "by_reason": {str(k): int(v) for k, v in by_reason.items()}}


class Store:
    """A DuckDB file holding referee's canonical tables. Use as a context manager or call `close()`."""

    def __init__(self, path: str | Path = DEFAULT_STORE, read_only: bool = False):
        self.path = Path(path)
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(str(self.path), read_only=read_only)
        if not read_only:
            for table in TABLES:
                self.con.execute(ddl(table))

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    # reading -------------------------------------------------------------------------------------
    def table(self, name: str) -> pd.DataFrame:
        """Canonical table `name` as a DataFrame (columns as in `analysis.io.schema.TABLES`)."""
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r}; tables: {sorted(TABLES)}")
        cols = ", ".join(f'"{c}"' for c in columns(name))
        return self.con.execute(f"SELECT {cols} FROM {name}").df()

    def query(self, sql: str, params: list | None = None) -> pd.DataFrame:
        """Run a read query against the store and return a DataFrame."""
        return self.con.execute(sql, params or []).df()

    def info(self) -> dict[str, int]:
        """Counts: agents, games, scenarios, matches, results, events, quarantined."""
        one = lambda sql: int(self.con.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "agents": one("SELECT count(DISTINCT agent) FROM results"),
            "games": one("SELECT count(DISTINCT game) FROM matches"),
            "scenarios": one("SELECT count(DISTINCT scenario) FROM matches"),
            "matches": one("SELECT count(*) FROM matches"),
            "results": one("SELECT count(*) FROM results"),
            "events": one("SELECT count(*) FROM events"),
            "quarantined": one("SELECT count(*) FROM quarantine"),
        }

    # writing -------------------------------------------------------------------------------------
    def _append(self, table: str, frame: Frame) -> None:
        if len(frame):
            frame = conform_arrow(table, frame) if isinstance(frame, pa.Table) else conform(table, frame)
            self.con.register("_incoming", frame)
            try:
                self.con.execute(f"INSERT INTO {table} SELECT * FROM _incoming")
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

    def ingest(
        self,
        paths: list[str | Path],
        runner: str | None = None,
        catalogue: str | Path | Catalogue | None = None,
        mapping: dict[str, str] | None = None,
        strict: bool = False,
        progress: bool = False,
    ) -> IngestReport:
        """Read logs into the store, atomically.

        Parameters
        ----------
        paths : files or directories (read recursively; .json, .jsonl, .csv, .parquet).
        runner : force one loader (a key of `analysis.io.loaders.RUNNERS`); default: detect per file.
        catalogue : scenario catalogue (TOML path or Catalogue) to validate scenarios against and store.
            Concordia files default to the 2024 contest catalogue.
        mapping : canonical column -> file column, for the table runner.
        strict : raise IngestError, writing nothing, when any record would be quarantined.
        progress : show a progress bar over files.

        Returns
        -------
        IngestReport with per-file counts (read = accepted + quarantined) and the quarantine rows.
        """
        if runner is not None:
            loaders.get(runner)
        if isinstance(catalogue, (str, Path)):
            catalogue = load_catalogue(catalogue)
        files = loaders.data_files(paths)
        done = set(self.con.execute("SELECT content_hash FROM sources").df()["content_hash"])
        known_ids = set(self.con.execute("SELECT match_id FROM matches").df()["match_id"])
        results: list[LoadResult] = []
        rows, warnings = [], []
        catalogues: list[Catalogue] = []
        for path in tqdm(files, desc="ingest", unit="file", disable=not progress or len(files) < 2):
            digest = file_hash(path)
            if digest in done:
                rows.append({"source_file": str(path), "runner": None, "status": "already ingested",
                             "read": 0, "accepted": 0, "quarantined": 0})
                continue
            done.add(digest)
            name = runner or loaders.detect(path)
            if name is None:
                result = _unrecognised(path, digest)
            else:
                cat = catalogue
                if cat is None and name == "concordia":
                    cat = load_catalogue(CONTEST_2024)
                if cat is not None and all(cat is not c for c in catalogues):
                    catalogues.append(cat)
                options = LoadOptions(catalogue=cat, mapping=mapping or {}, progress=progress)
                result = loaders.get(name).load(path, digest, options)
            result = _set_aside_duplicates(result, known_ids)
            known_ids |= set(result.tables["matches"]["match_id"])
            results.append(result)
        results = [_set_aside_orphans(r, known_ids) for r in results]
        rows += [{"source_file": r.source_file, "runner": r.runner, "status": "ingested", "read": r.read,
                  "accepted": r.accepted, "quarantined": r.quarantined} for r in results]
        report = IngestReport(
            files=pd.DataFrame(rows, columns=["source_file", "runner", "status", "read", "accepted", "quarantined"]),
            quarantine=pd.concat([r.quarantine for r in results], ignore_index=True) if results
            else conform("quarantine", pd.DataFrame(columns=columns("quarantine"))),
            warnings=warnings,
        )
        if strict and report.quarantined:
            first = report.quarantine["message"].head(5).tolist()
            raise IngestError(f"--strict: {report.quarantined} record(s) would be quarantined; nothing was "
                              "written. First: " + " | ".join(first))
        self._write(results, catalogues, warnings)
        for w in warnings:
            log.warning(w)
        return report

    def _write(self, results: list[LoadResult], catalogues: list[Catalogue], warnings: list[str]) -> None:
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        self.con.execute("BEGIN TRANSACTION")
        try:
            for cat in catalogues:
                self._put_catalogue(cat, warnings)
            for result in results:
                for table in DATA_TABLES:
                    self._append(table, result.tables[table])
                self._append("quarantine", result.quarantine)
                self._append("sources", pd.DataFrame([{
                    "source_file": result.source_file, "content_hash": result.content_hash,
                    "runner": result.runner, "read": result.read, "accepted": result.accepted,
                    "quarantined": result.quarantined, "ingested_at": now}]))
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise


def _unrecognised(path: Path, digest: str) -> LoadResult:
    out = ResultBuilder(path, digest, None)
    out.saw()
    raw = path.read_bytes()[:1_000_000].decode("utf-8", errors="replace")
    out.quarantine("-", RecordError("unknown format", None,
                                    f"no runner recognises this file; force one with --runner "
                                    f"({', '.join(sorted(loaders.RUNNERS))})"), raw)
    return out.build()


def _raw_lines(path: str, numbers: set[int]) -> dict[int, str]:
    """The text of the given 1-based lines of a text file (for quarantining records by line)."""
    found = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if number in numbers:
                found[number] = line.rstrip("\n")
    return found


def _set_aside(result: LoadResult, bad_ids: set[str], reason: str, why: str) -> LoadResult:
    """Move everything belonging to the matches `bad_ids` from `result`'s tables to its quarantine.

    A match is one record for record-per-match runners; where the result lists its records per match
    (a row per player, a line per event), each of those records is quarantined with its own line.
    """
    if not bad_ids:
        return result
    records: list[tuple[str, str, str]] = []  # (record label, match id, raw)
    if result.records is None:
        for match in frame_rows(result.tables["matches"], bad_ids):
            players = frame_rows(result.tables["results"], {match["match_id"]})
            raw = json.dumps({"match": match, "results": players}, default=str)
            records.append((match["record_index"], match["match_id"], raw))
    else:
        rows = frame_rows(result.records, bad_ids)
        text = Path(result.source_file).suffix.lower() in (".csv", ".jsonl")
        lines = _raw_lines(result.source_file, {int(r["record"]) for r in rows}) if text else {}
        for r in rows:
            raw = lines.get(int(r["record"])) if text else None
            records.append((r["record"], r["match_id"], raw or json.dumps(r)))
    rows = [{
        "source_file": result.source_file, "content_hash": result.content_hash, "runner": result.runner,
        "record": record, "field": "match_id", "reason": reason,
        "message": f"{result.source_file}, record {record}, field 'match_id': match id {mid!r} {why}",
        "raw": raw} for record, mid, raw in records]
    tables = {t: drop_matches(f, bad_ids) for t, f in result.tables.items()}
    kept = None if result.records is None else drop_matches(result.records, bad_ids)
    quarantine = conform("quarantine", pd.concat([result.quarantine, pd.DataFrame(rows)], ignore_index=True))
    return LoadResult(result.source_file, result.content_hash, result.runner, tables, quarantine,
                      read=result.read, accepted=result.accepted - len(rows), records=kept)


def _set_aside_duplicates(result: LoadResult, known_ids: set[str]) -> LoadResult:
    """Set aside matches whose id is already stored or was read earlier in this ingest."""
    ids = set(result.tables["matches"]["match_id"]) & known_ids
    return _set_aside(result, ids, "duplicate match id", "is already in the store or earlier in this ingest")


def _set_aside_orphans(result: LoadResult, known_ids: set[str]) -> LoadResult:
    """Set aside results, measures and events whose match is neither stored nor read in this ingest."""
    ids = set()
    for table in ("results", "measures", "events"):
        ids |= set(frame_match_ids(result.tables[table]).unique()) - known_ids
    if result.records is not None:
        ids |= set(frame_match_ids(result.records).unique()) - known_ids
    return _set_aside(result, ids, "unknown match", "names no match in the store or in this ingest")
