"""One writer for every results folder: tables, figures, posteriors, notes, diagnostics, a manifest and
the provenance of what was computed.

`ResultsFolder(out, command=..., seed=..., store=...)` is used by every command and by the report:

- `table(name, frame)` writes `name.csv` (cells neutralised against spreadsheet formula injection, see
  `safe_csv_frame`), sorted by `rank` when the table has one;
- `figure(name, fig)` writes `name.png` and `name.svg`;
- `idata(idata)` writes `idata.nc`; `notes(list)` writes `notes.txt`; `diagnostics(dict)` writes
  `diagnostics.json`; `json(name, obj)` and `text(name, str)` write other declared files;
- `close()` writes `manifest.json` (every file written, with its size and sha256) and `provenance.json`
  (`provenance()`: the command line, seed, referee version, the lock's hash, the numerical stack's
  versions, and the content hashes of the store's inputs).

The folder is checked for writability when opened, before any computation that would fill it.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
import math
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pandas as pd

from referee.io.loaders.base import file_hash as _sha256
from referee.names import referee_version  # noqa: F401

STACK = ("numpy", "pandas", "scipy", "pymc", "pytensor", "arviz", "xarray", "nutpie", "statsmodels", "xgboost",
         "matplotlib", "duckdb", "pyarrow", "scikit-learn")
INJECTION_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
LOCK_NAME = "requirements/lock.txt"


def lock_file() -> Path | None:
    """The committed lock (`requirements/lock.txt`) of the source tree referee runs from, or None when
    referee was installed without its source tree."""
    root = Path(__file__).resolve().parents[2]
    path = root / LOCK_NAME
    return path if path.exists() else None


def json_text(value, indent: int | None = None) -> str:
    """`value` as strict JSON text (`jsonable`: NaN and infinities as null; anything else unknown as its
    text); every JSON referee prints or writes goes through here, so a strict parser reads it all."""
    return json.dumps(jsonable(value), indent=indent, default=str, allow_nan=False)


def jsonable(value):
    """`value` as plain JSON data: numpy scalars to Python, NaN and infinities to None, DataFrames to lists of records,
    paths and times to text; dicts, lists and tuples converted throughout."""
    import numpy as np

    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None  # JSON has no NaN or infinity
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, pd.DataFrame):
        return [{k: jsonable(v) for k, v in row.items()} for row in value.to_dict("records")]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (Path, datetime)):
        return str(value)
    return value


def versions(names: tuple[str, ...] = ("referee",) + STACK) -> dict[str, str | None]:
    """Installed version of referee and of each package of the numerical stack (None when absent)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def store_inputs(store) -> list[dict]:
    """source_file, runner, content_hash of every file ingested into `store` (an `analysis` Store)."""
    sources = store.sources()
    return sources[["source_file", "runner", "content_hash"]].sort_values("source_file").to_dict("records")


def provenance(command: list[str] | None = None, seed: int | None = None, store=None, extra: dict | None = None
               ) -> dict:
    """What produced an output folder: command line (argv), seed, referee and stack versions, the lock's
    path and sha256, Python and platform, the store path and the content hashes of its inputs, UTC time."""
    lock = lock_file()
    stack = versions()
    doc = {
        "command": list(command) if command is not None else list(sys.argv),
        "seed": seed,
        "referee_version": stack["referee"],
        "lock": {"path": LOCK_NAME if lock else None, "sha256": _sha256(lock) if lock else None},
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": stack,
        "created_utc": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
    }
    if store is not None:
        doc["store"] = str(store.path)
        doc["inputs"] = store_inputs(store)
    if extra:
        doc.update(extra)
    return doc


def safe_cell(value):
    """A value as a spreadsheet shows it safely: text starting with =, +, -, @, tab or carriage return gets
    a leading apostrophe (OWASP's advice against CSV formula injection); numbers are left as they are."""
    if isinstance(value, str) and value.startswith(INJECTION_PREFIXES):
        return "'" + value
    return value


def safe_csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every text cell (and column name) passed through `safe_cell`."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(safe_cell)
    out.columns = [safe_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out


def rank_sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` sorted by its rank column (`rank`, or the contest tables' `Rank`) within any `method` and `game`
    grouping, unranked rows last; unchanged when it has no rank column."""
    rank = next((c for c in ("rank", "Rank") if c in frame.columns), None)
    if rank is None:
        return frame
    keys = [k for k in ("method", "game") if k in frame.columns] + [rank]
    return frame.sort_values(keys, kind="stable", na_position="last")


def write_csv(frame: pd.DataFrame, path: str | Path, index: bool = False) -> Path:
    """Write `frame` as CSV, injection-safe (`safe_csv_frame`), sorted by rank (`rank_sorted`). Returns the
    path."""
    path = Path(path)
    safe_csv_frame(rank_sorted(frame)).to_csv(path, index=index)
    return path


def check_writable(out: str | Path) -> Path:
    """Create folder `out` (and parents) and prove it is writable; raises ValueError naming it otherwise (an
    empty name too: it would write into the current folder unasked)."""
    if not str(out).strip():
        raise ValueError("--out is empty: name the results folder (e.g. --out reports/run1)")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".referee-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    return out


COMMAND: ContextVar[list[str] | None] = ContextVar("command", default=None)  # the command line being run, if any


class ResultsFolder:
    """A results folder being written; see the module docstring. Use as a context manager or call close()."""

    def __init__(self, out: str | Path, command: list[str] | None = None, seed: int | None = None, store=None,
                 extra: dict | None = None):
        self.out = check_writable(out)
        self.files: list[Path] = []
        self._provenance = provenance(command if command is not None else COMMAND.get(), seed, store, extra)

    def __enter__(self) -> "ResultsFolder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def path(self, name: str) -> Path:
        """The path of a declared file `name` inside the folder (creating sub-folders); listed in the manifest."""
        path = self.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path not in self.files:
            self.files.append(path)
        return path

    def table(self, name: str, frame: pd.DataFrame, index: bool = False) -> Path:
        """Write `name.csv` (injection-safe, rank-sorted)."""
        return write_csv(frame, self.path(f"{name}.csv"), index=index)

    def figure(self, name: str, fig, vector: bool = True, dpi: int = 150) -> Path:
        """Write a matplotlib Figure as `name.png` (150 dpi) and, with `vector` (the default), `name.svg` for
        print; then close it. Returns the PNG's path."""
        import matplotlib.pyplot as plt

        png = self.path(f"{name}.png")
        fig.savefig(png, dpi=dpi, bbox_inches="tight")
        if vector:
            fig.savefig(self.path(f"{name}.svg"), bbox_inches="tight")
        plt.close(fig)
        return png

    def idata(self, idata, name: str = "idata") -> Path:
        """Write InferenceData as `name.nc`."""
        path = self.path(f"{name}.nc")
        idata.to_netcdf(str(path))
        return path

    def notes(self, notes: list[str]) -> Path:
        """Write `notes.txt`, one note per line (an empty file when there are none)."""
        path = self.path("notes.txt")
        path.write_text("".join(f"{n}\n" for n in notes))
        return path

    def diagnostics(self, diagnostics: dict) -> Path:
        """Write `diagnostics.json`."""
        return self.json("diagnostics", diagnostics)

    def json(self, name: str, obj) -> Path:
        """Write `name.json` (indented; converted by `jsonable`)."""
        path = self.path(f"{name}.json")
        path.write_text(json_text(obj, indent=1) + "\n")
        return path

    def text(self, name: str, text: str) -> Path:
        """Write a text file `name` (give the suffix)."""
        path = self.path(name)
        path.write_text(text)
        return path

    def fit(self, fit, figure=None, figure_name: str = "figure", table: pd.DataFrame | None = None
            ) -> dict[str, Path]:
        """Write a `referee.models.fit.FitResult`: its table (`table.csv`; `table` when the caller already has
        `fit.table()`), summary (`summary.csv` when it has one), diagnostics, notes, idata (when Bayesian)
        and an optional figure. Returns the paths by role."""
        table = fit.table() if table is None else table
        paths = {"table": self.table("table", table), "diagnostics": self.diagnostics(fit.diagnostics),
                 "notes": self.notes(fit.notes)}
        summary = getattr(fit, "summary", None)
        if isinstance(summary, pd.DataFrame):
            paths["summary"] = self.table("summary", summary)
        if fit.idata is not None:
            paths["idata"] = self.idata(fit.idata)
        if figure is not None:
            paths["figure"] = self.figure(figure_name, figure)
        return paths

    def close(self, extra: dict | None = None) -> dict:
        """Write provenance.json and manifest.json (`extra`'s keys, e.g. a paper's items, then `files`: every
        file written with its size and SHA-256); returns the manifest."""
        prov = self.path("provenance.json")
        prov.write_text(json_text(self._provenance, indent=1) + "\n")
        manifest_path = self.out / "manifest.json"
        manifest = {**jsonable(extra or {}),
                    "files": [{"name": p.relative_to(self.out).as_posix(), "bytes": p.stat().st_size,
                               "sha256": _sha256(p)} for p in self.files if p.exists()]}
        manifest_path.write_text(json_text(manifest, indent=1) + "\n")
        return manifest
