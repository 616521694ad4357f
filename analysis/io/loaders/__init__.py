"""Loaders: one module per runner, one registry. Each module exposes `NAME`, `sniff(path, head) -> bool`
and `load(path, content_hash, options) -> LoadResult`; adding a runner means adding a module and one line
to `RUNNERS` below.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from analysis.io.loaders import aoa, arena, compact, concordia, ranked, records, table
from analysis.io.loaders.base import LoadOptions, LoadResult, RecordError

# order matters for detection only through `sniff` specificity: the table runner is the tabular fallback
RUNNERS: dict[str, ModuleType] = {m.NAME: m for m in (concordia, records, aoa, compact, arena, ranked, table)}

DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet")

__all__ = ["RUNNERS", "LoadOptions", "LoadResult", "RecordError", "detect", "get", "data_files"]


def get(name: str) -> ModuleType:
    """The loader module registered as `name`; raises KeyError listing the known runners."""
    try:
        return RUNNERS[name]
    except KeyError:
        raise KeyError(f"unknown runner {name!r}; known runners: {sorted(RUNNERS)}") from None


def _head(path: Path, size: int = 65536) -> str:
    with open(path, "rb") as fh:
        return fh.read(size).decode("utf-8", errors="replace")


def detect(path: Path) -> str | None:
    """Name of the one runner whose `sniff` accepts `path`, or None when none or several do.

    Specific runners win over the generic `table` fallback.
    """
    head = _head(path)
    hits = [name for name, module in RUNNERS.items() if module.sniff(path, head)]
    specific = [h for h in hits if h != table.NAME]
    if len(specific) == 1:
        return specific[0]
    if not specific and hits:
        return hits[0]
    return None


def data_files(paths: list[str | Path]) -> list[Path]:
    """Expand files and directories (recursively) into the sorted list of data files to ingest.

    Raises FileNotFoundError naming a path that does not exist.
    """
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such file or directory")
        if p.is_dir():
            found += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in DATA_SUFFIXES)
        else:
            found.append(p)
    return found
