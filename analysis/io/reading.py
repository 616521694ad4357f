"""Reading source files for ingest: hash, detect and load each file, in worker processes when there are many.

`FileReader` is a picklable description of how to read (forced runner, catalogue, table mapping, hashes to
skip, the phase to set); calling it on a path returns a `FileRead` (the file's sha256 and its LoadResult, or None when it is
skipped). `read_files(paths, reader, workers)` yields them in the order of `paths`, from up to `workers`
processes in windows of files, so memory stays bounded whatever the number of files. Nothing here touches
the store: deduplication and writing happen in `store.py`, in one process.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import pyarrow as pa

from referee.io import loaders
from referee.io.catalogue import Catalogue
from referee.io.loaders.base import LoadOptions, LoadResult, NotThisRunner, RecordError, ResultBuilder, hash_and_head
from referee.io.loaders.errors import HEAD_RAW_CAP
from referee.worker_processes import die_with_parent, stop_pool
from referee.io.loaders.detect import read_head, sample_records
from referee.io.loaders.files import is_document
from referee.io.loaders.spilled import Spilled

PARALLEL_MIN = 256  # files: below this, reading in this process beats starting workers
WINDOW = 512  # files handed to the workers at a time (bounds memory: one window of results in flight)


def default_workers(variable: str = "REFEREE_WORKERS") -> int:
    """Worker processes: the environment `variable` if set ($REFEREE_WORKERS for ingest, $REFEREE_REPORT_JOBS for
    the report's sweeps), else the CPUs available, at most 4."""
    if os.environ.get(variable):
        return max(1, int(os.environ[variable]))
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4))


@dataclass
class FileRead:
    """One file read: its path, sha256, the loader's result (None: skipped, already ingested) and how its
    runner was chosen ('forced', or detection's account)."""

    path: Path
    digest: str
    result: LoadResult | None
    detected: str | None


@dataclass
class FileReader:
    """How to read one file (picklable, so worker processes can run it)."""

    runner: str | None = None  # a built-in runner's name or a mapping file's path; None: detect per file
    catalogue: Catalogue | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    measures: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)  # canonical column -> {code: value}
    skip: frozenset[str] = frozenset()  # sha256s not to read
    progress: bool = False
    phase: str | None = None  # every match read is in this phase (overrides what the file or catalogue says)
    score: str | None = None  # which of a runner's scores is the score (Sotopia: a SOTOPIA-EVAL dimension)
    folders: dict[str, str] = field(default_factory=dict)  # file -> the phase its folder is named as (`folder_phases`)
    spill: str | None = None  # where a large file's rows wait for the store (`LoadOptions.spill`)

    def options(self, runner: str) -> LoadOptions:
        """Load options for `runner` (Concordia defaults to the 2024 contest catalogue)."""
        cat = self.catalogue
        default = loaders.entry(runner).default_catalogue
        if cat is None and default is not None:
            cat = default()
        return LoadOptions(catalogue=cat, mapping=self.mapping, measures=self.measures, values=self.values,
                           progress=self.progress, phase=self.phase, score=self.score, spill=self.spill)

    def __call__(self, path: Path) -> FileRead:
        digest, head = hash_and_head(path)  # one read for the digest and the head detection samples
        digest = loaders.file_identity(digest, path)  # byte-identical files of different episodes stay apart
        if digest in self.skip:
            return FileRead(path, digest, None, None)
        named = self.folders.get(str(path)) if self.phase is None else None
        reader = self if named is None else replace(self, phase=named, folders={})
        result, detected = load_file(path, digest, reader, head)
        if reader.phase is not None:
            result.parts["matches"] = [in_phase(part, reader.phase) for part in result.parts["matches"]]
        if named is not None:
            result.notes[f"match(es) read in phase {named!r}, the name of their folder (ingest --phase overrides "
                         "it)"] = sum(len(part) for part in result.parts["matches"])
        return FileRead(path, digest, result, detected)


def folder_phases(roots: list, files: list[Path], names) -> dict[str, str]:
    """file -> phase for the files found inside a folder of `roots` below which a folder is named as a phase
    (`names`, matched without case; the folder nearest the file wins): a contest's `logs/evaluation/...` and
    `logs/cross-play/...` are read in those phases, so one scenario's repetition 0 in each stays two matches."""
    wanted = {n.lower(): n for n in names}
    out = {}
    for root in (Path(r) for r in roots):
        if not root.is_dir():
            continue
        for f in files:
            try:
                inside = f.relative_to(root).parts[:-1]
            except ValueError:
                continue
            found = next((wanted[p.lower()] for p in reversed(inside) if p.lower() in wanted), None)
            if found is not None:
                out.setdefault(str(f), found)
    return out


def in_phase(part, phase: str):
    """A loader's piece of the matches table (row dicts, DataFrame, Arrow table or `Spilled`) with every `phase`
    set."""
    if isinstance(part, Spilled):
        return part.set_constant("phase", phase)
    if isinstance(part, list):
        return [{**row, "phase": phase} for row in part]
    if isinstance(part, pa.Table):
        column = pa.array([phase] * part.num_rows, pa.string())
        index = part.schema.get_field_index("phase")
        return part.set_column(index, "phase", column) if index >= 0 else part.append_column("phase", column)
    return part.assign(phase=phase)


def _mtime(runner: str) -> float | None:
    return Path(runner).stat().st_mtime if runner.lower().endswith(".toml") else None


@functools.lru_cache(maxsize=16)
def _resolved(runner: str, mtime: float | None):
    """`loaders.resolve`, read once per mapping file version (not once per file ingested)."""
    return loaders.resolve(runner)


def load_file(path: Path, digest: str, reader: FileReader, head: str | None = None) -> tuple[LoadResult, str]:
    """Load one file with the forced runner, or with each detected candidate in turn until one fits;
    returns (result, how the runner was chosen). A file no runner fits is one quarantined record."""
    if reader.runner is not None:
        candidates, detected, keys = [_resolved(reader.runner, _mtime(reader.runner))], "forced", None
    else:
        found = loaders.detect_runners(path, head)
        candidates, detected, keys = [loaders.get(n) for n in found.candidates], found.describe(), found.keys
    tried: list[NotThisRunner] = []
    for module in candidates:
        try:
            return module.load(path, digest, reader.options(module.name)), detected
        except NotThisRunner as exc:
            exc.runner = exc.runner or module.name
            tried.append(exc)
        except Exception as exc:  # noqa: BLE001 - one file never stops the others: it is set aside whole
            return unreadable(path, digest, module.name, exc), detected
    return not_recognised(path, digest, tried, keys, forced=reader.runner is not None, head=head), detected


def unreadable(path: Path, digest: str, runner: str, exc: BaseException) -> LoadResult:
    """The whole file as one quarantined record when its loader failed in a way it did not name (a
    corrupted file of a kind referee does not recognise, or a bug): the other files are read on."""
    reason = "unreadable" if isinstance(exc, OSError) else "loader error"
    detail = (f"the {runner} loader could not read this file ({type(exc).__name__}: {exc}); the file is set aside "
              "whole" + ("" if isinstance(exc, OSError) else "; if the file looks valid, please report this"))
    try:
        return ResultBuilder(path, digest, runner).reject_file(RecordError(reason, None, detail))
    except OSError:
        out = ResultBuilder(path, digest, runner)
        out.saw()
        out.quarantine("-", RecordError(reason, None, detail), "")
        return out.build()


KEYS_SHOWN, KEY_CHARS = 30, 60  # the keys an unknown format's message names (a document keyed by id has thousands)


def not_recognised(path: Path, digest: str, tried: list[NotThisRunner], keys: list[str] | None,
                   forced: bool, head: str | None = None) -> LoadResult:
    """One quarantine record for a whole file that no runner reads, saying what was seen and tried; its raw
    text is the file's first HEAD_RAW_CAP bytes (the file stays at its path, named by its sha256). `head`, the
    file's first bytes as text, spares a read when the caller has them."""
    head = read_head(path) if head is None else head
    if keys is None:
        keys = []
        for record in sample_records(path, head):
            if isinstance(record, dict):
                keys += [k for k in record if k not in keys]
    shown = [k if len(str(k)) <= KEY_CHARS else str(k)[:KEY_CHARS] + "..." for k in keys[:KEYS_SHOWN]]
    more = f" and {len(keys) - KEYS_SHOWN:,} more" if len(keys) > KEYS_SHOWN else ""
    if is_document(path, head) and keys:
        seen = f"valid JSON, no runner's keys: one JSON document whose top-level keys are {shown}{more}"
    else:
        seen = f"keys seen in its first records: {shown}{more}" if keys else "no JSON records seen in its head"
    hint = (f"`referee map {path.parent if path.parent.name else path}` drafts a mapping of these logs (then "
            "`referee ingest --runner MAPPING.toml`; data/formats/mapped.md), or force a built-in runner with --runner "
            f"({', '.join(sorted(loaders.RUNNERS))})")
    if tried and forced:  # the runner the user named: its own fault, with no hint to try another
        error = RecordError(tried[-1].reason, tried[-1].field, f"read as {tried[-1].runner} (as asked): "
                            f"{tried[-1].detail}")
        runner = tried[0].runner
    elif tried:
        error = RecordError("not this runner", tried[-1].field,
                            "tried " + "; ".join(f"{e.runner}: {e.detail}" for e in tried) + f"; {seen}; {hint}")
        runner = None
    else:
        error = RecordError("unknown format", None, f"no runner recognises this file; {seen}; {hint}")
        runner = None
    return ResultBuilder(path, digest, runner).reject_file(error, cap=HEAD_RAW_CAP)


def read_files(paths: list[Path], reader: FileReader, workers: int | None = None) -> Iterator[FileRead]:
    """`reader(path)` for every path, in order: in this process for few files or one worker, else in
    `workers` spawned processes (default `default_workers()`), a window of WINDOW files at a time."""
    workers = default_workers() if workers is None else workers
    if workers <= 1 or len(paths) < PARALLEL_MIN:
        yield from map(reader, paths)
        return
    # fork where there is fork (Linux): workers start at once and need no `__main__` guard in user scripts;
    # they only parse files (never touch DuckDB), and Arrow re-creates its thread pools after a fork
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    chunk = max(1, WINDOW // (4 * workers))
    # every object alive now (the modules imported, the caller's data) is left out of the garbage collector's
    # passes while the files are read: in this process, and in the workers, which fork with them and would
    # otherwise walk them all again at each full collection (and copy the pages they touch)
    gc.freeze()
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=die_with_parent,
                                   initargs=(os.getpid(),))
        try:
            pending = pool.map(reader, paths[:WINDOW], chunksize=chunk)
            for start in range(WINDOW, len(paths), WINDOW):  # keep the next window in flight while this one drains
                upcoming = pool.map(reader, paths[start:start + WINDOW], chunksize=chunk)
                yield from pending
                pending = upcoming
            yield from pending
        except BaseException:  # stopped or failing (or the caller stopped reading): no worker outlives it
            stop_pool(pool)
            raise
        pool.shutdown(wait=True)
    finally:
        gc.unfreeze()
