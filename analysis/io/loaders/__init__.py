"""Loaders: one module per runner, one registry. Each module declares its runner as `RUNNER`, a `Runner`
(`runner.py`: its name, detection, loading, the fields it reads, its traits and its own headline number), and
`RUNNERS` (`registry.py`) is every entry the package's modules declare: adding a runner is adding its loader module
with its entry, its format page (data/formats/NAME.md) and its tests. `entry(name)` is the entry of any runner a store names, a mapping file's
(`mapped.RUNNER`, every trait at its default) when no module is registered under the name. A runner nobody wrote a
module for is described by a mapping file instead (`mapped.py`): `resolve("my_runner.toml")`.
"""

from __future__ import annotations

import json

from pathlib import Path

from referee.io.loaders import mapped
from referee.io.loaders.registry import RUNNERS, reserved_runner_name
from referee.io.loaders.base import LoadOptions, LoadResult, NotThisRunner, RecordError
from referee.io.loaders.detect import Detection, detection
from referee.io.loaders.mapped import RunnerMap, read_runner_map
from referee.io.loaders.runner import MATCH_UNIT, Headline, Runner, Tables

DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet", ".eval")

__all__ = ["RUNNERS", "Runner", "Headline", "Tables", "MATCH_UNIT", "entry", "reserved_runner_name", "LoadOptions",
           "LoadResult", "NotThisRunner", "RecordError", "Detection", "detect", "detect_runners", "get", "resolve", "runner_fields", "data_files", "comparison_unit"]


def get(name: str) -> Runner:
    """The runner registered as `name`; raises KeyError listing the known runners."""
    try:
        return RUNNERS[name]
    except KeyError:
        raise KeyError(f"unknown runner {name!r}; known runners: {sorted(RUNNERS)}, or a runner mapping "
                       "file (NAME.toml, data/formats/mapped.md)") from None


def entry(name: str) -> Runner:
    """The entry of the runner a store names `name`: its registered entry, else (a mapping file's runner) the
    mapping format's, whose traits are every default."""
    return RUNNERS.get(name, mapped.RUNNER)


def comparison_unit(name: str) -> str:
    """What one comparison is for runner `name`, in words (its entry's `comparison_unit`)."""
    return entry(name).comparison_unit


def resolve(runner: str | Path) -> Runner | RunnerMap:
    """A built-in runner's entry by name, or the runner described by a mapping file (a path ending in
    .toml); raises KeyError for an unknown name and MappingError for a bad mapping file."""
    text = str(runner)
    if text.lower().endswith(".toml"):
        if not Path(text).is_file():
            raise FileNotFoundError(f"{text}: no such runner mapping file")
        return read_runner_map(text)
    return get(text)


def mapping_columns(runner: str | Path | None, mapping: dict) -> tuple[str, tuple[str, ...] | None, str]:
    """(where, columns, runner name) for `table.check_mapping` of a `--map` / `--mapping` given with `runner`: the
    columns its entry reads (`Runner.columns`: the table and arena runners); with no runner named, the arena
    runner's where every key is one of its columns (detection decides), else the table runner's. Raises as
    `resolve` for an unknown runner or a bad mapping file, and ValueError for a mapping given to a runner that
    reads its own format."""
    entry = resolve(runner) if runner is not None else None
    if entry is None:
        arena = get("arena")
        chosen = arena if mapping and all(k in arena.columns for k in mapping) else get("table")
        return "--map", chosen.columns, chosen.name
    columns = entry.columns if isinstance(entry, Runner) else ()
    if mapping and not columns:
        raise ValueError(f"--map: the {runner} runner reads its own format; --map and --mapping name the columns of "
                         "the table and arena runners")
    return "--map", columns or None, str(runner)


def runner_fields() -> dict[str, dict[str, list[str]]]:
    """For every runner (and mapping files, 'mapped'), the fields each kind of record it reads may carry (its
    entry's `fields`), and for the table and arena runners the canonical columns `--map` can name."""
    return {name: dict(entry.fields) for name, entry in {**RUNNERS, mapped.RUNNER.name: mapped.RUNNER}.items()}


def identity(path: Path) -> str | None:
    """What besides its bytes names a file as a record (a runner's `identity(path)`, e.g. clem's episode folder
    for its byte-identical scores.json), or None: a file is then its bytes alone."""
    for entry in RUNNERS.values():
        found = entry.identity(path) if entry.identity else None
        if found is not None:
            return found
    return None


def file_identity(digest: str, path: Path) -> str:
    """A file's identity in the store (`sources.content_hash`): the sha256 of its bytes, or for a file whose
    runner names it by its place too (`identity`), the sha256 of that digest and the place."""
    import hashlib

    place = identity(path)
    return digest if place is None else hashlib.sha256(f"{digest}:{place}".encode()).hexdigest()


def detect_runners(path: Path, head: str | None = None) -> Detection:
    """Every built-in runner that may have written `path`, best first, with how sure (see `detect.py`);
    `head`, the file's first 64 KiB as text, spares a read when the caller has it."""
    return detection(path, RUNNERS, head)


def detect(path: Path) -> str | None:
    """Name of the runner most likely to have written `path`, or None when no runner recognises it."""
    return detect_runners(path).runner


OWN_OUTPUTS = {"provenance.json": "command", "manifest.json": "files", "truth.json": "generator"}
OWN_MAX_BYTES = 50 << 20  # larger files are never taken for referee's own outputs


def own_outputs(files: list[Path]) -> list[Path]:
    """referee's own output files among `files` (what `referee simulate` and every results folder write beside
    their logs): a `provenance.json` whose command starts with 'referee', a `manifest.json` listing files with
    their sha256, a `truth.json` whose generator is referee. A folder ingest leaves them out as companions."""
    found = []
    for f in files:
        key = OWN_OUTPUTS.get(f.name)
        if key is None or f.stat().st_size > OWN_MAX_BYTES:
            continue
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        value = doc.get(key) if isinstance(doc, dict) else None
        if (key == "command" and isinstance(value, list) and value[:1] == ["referee"]) or (
                key == "generator" and isinstance(value, str) and value.startswith("referee")) or (
                key == "files" and isinstance(value, list) and all(isinstance(e, dict) and "sha256" in e
                                                                   for e in value)):
            found.append(f)
    return found


def data_files(paths: list[str | Path], companions: list[tuple[Path, str]] | None = None) -> list[Path]:
    """Expand files and directories (recursively) into the sorted list of data files to ingest.

    A runner may name files it writes beside its records that hold no results (its `companions(files)`:
    settings, requests, aggregates of the same matches, e.g. clembench's instance.json and raw.csv), and
    referee's own outputs (`own_outputs`: a simulate folder's provenance, manifest and truth) are known too;
    found by expanding a folder, they are left out and appended to `companions` when a list is given. A file named
    directly is always read. Raises FileNotFoundError naming a path that does not exist.
    """
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such file or directory")
        if p.is_dir():
            inside = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in DATA_SUFFIXES)
            beside: dict[Path, str] = {}
            for name, entry in RUNNERS.items():
                if entry.companions:
                    beside.update((f, name) for f in entry.companions(inside))
            beside.update((f, "referee") for f in own_outputs(inside))
            found += [f for f in inside if f not in beside]
            if companions is not None:
                companions += sorted(beside.items())
        else:
            found.append(p)
    return found
