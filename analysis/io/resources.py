"""Where the data that ships with referee is read from: catalogues, formulas, samples, formats.

The top-level `data/` folder of the source tree is installed as the package `referee.shipped` (see
`pyproject.toml`), so a non-editable `pip install` carries it; `shipped(*parts)` finds a file through
`importlib.resources` there, and falls back to the source tree's `data/` in an editable install (where
setuptools maps only the top-level packages).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SOURCE_DATA = Path(__file__).resolve().parents[2] / "data"


def data_root() -> Path:
    """The folder holding referee's shipped data (`catalogues/`, `formulas/`, `formats/`, `sample/` ...)."""
    try:
        root = resources.files("referee.shipped")
    except ModuleNotFoundError:
        return SOURCE_DATA
    path = Path(str(root))
    return path if path.is_dir() else SOURCE_DATA


def shipped(*parts: str) -> Path:
    """The path of a shipped data file or folder, e.g. `shipped("catalogues", "concordia_contest_2024.toml")`.

    Raises FileNotFoundError naming the missing path.
    """
    path = data_root().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path}: not among referee's shipped data")
    return path
