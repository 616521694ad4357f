"""Scenario catalogues: which game/substrate, mode, background population, demand tags and theoretical score
bounds each scenario has. Stored as TOML (`data/catalogues/*.toml`), one table per scenario:

    [scenarios.haggling_0]
    game = "haggling"
    background = "rational_agent"
    mode = "resident"            # or "visitor"
    phase = "development"        # optional: the contest phase whose matches play this scenario
    tags = ["negotiation"]
    score_min = 0.0              # optional theoretical bounds of the raw score
    score_max = 10.0

Reading gives a `Catalogue` of two canonical tables (`scenarios`, `scenario_tags`).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from referee.io.resources import shipped
from referee.io.schema import MODES, conform
from referee.names import CatalogueError  # noqa: F401  (defined light, for the command line)
from referee.io.toml_file import read_toml

CONTEST_2024 = shipped("catalogues", "concordia_contest_2024.toml")  # tags from the Concordia 1.8.9 code
CONTEST_2024_PAPER = shipped("catalogues", "concordia_contest_2024_paper.toml")  # the paper's Table 1 tags
# the scenarios Concordia 1.8.0-1.8.8 defined that the contest's 1.8.9 list does not (its result files name them)
CONCORDIA_EARLIER = shipped("catalogues", "concordia_1.8.0_scenarios.toml")

_KEYS = {"game", "background", "mode", "phase", "tags", "score_min", "score_max", "description"}


@dataclass(frozen=True)
class Catalogue:
    """A scenario catalogue as canonical tables.

    scenarios : one row per scenario (columns of the canonical `scenarios` table).
    tags : one row per (scenario, tag).
    """

    scenarios: pd.DataFrame
    tags: pd.DataFrame

    @cached_property
    def names(self) -> frozenset[str]:
        """The scenario names in the catalogue (computed once)."""
        return frozenset(self.scenarios["scenario"])

    @cached_property
    def games(self) -> dict[str, str | None]:
        """scenario -> game/substrate (computed once)."""
        return dict(zip(self.scenarios["scenario"], self.scenarios["game"]))

    @cached_property
    def phases(self) -> dict[str, str]:
        """scenario -> contest phase, for the scenarios whose entry names one (computed once)."""
        if "phase" not in self.scenarios.columns:
            return {}
        known = self.scenarios[self.scenarios["phase"].notna()]
        return dict(zip(known["scenario"], known["phase"]))


def _number(path: Path, name: str, key: str, value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise CatalogueError(f"{path}: scenario {name!r}, key {key!r}: expected a number, got {value!r}")
    return float(value)


def load_catalogue(path: str | Path) -> Catalogue:
    """Read a TOML scenario catalogue.

    Parameters
    ----------
    path : a TOML file with a `[scenarios.NAME]` table per scenario (see the module docstring).

    Returns
    -------
    Catalogue with canonical `scenarios` and `scenario_tags` tables.

    Raises
    ------
    CatalogueError naming the file, scenario and key for invalid TOML, unknown keys, a mode other than
    resident/visitor, a phase that is not a name, non-numeric bounds, or score_min >= score_max.
    """
    path = Path(path)
    doc = read_toml(path, "catalogue", CatalogueError)
    table = doc.get("scenarios")
    if not isinstance(table, dict) or not table:
        raise CatalogueError(f"{path}: no [scenarios.NAME] tables")
    rows, tags = [], []
    for name, entry in table.items():
        unknown = set(entry) - _KEYS
        if unknown:
            raise CatalogueError(f"{path}: scenario {name!r}: unknown keys {sorted(unknown)}")
        mode = entry.get("mode")
        if mode is not None and mode not in MODES:
            raise CatalogueError(f"{path}: scenario {name!r}, key 'mode': {mode!r} is not one of {MODES}")
        lo = _number(path, name, "score_min", entry.get("score_min"))
        hi = _number(path, name, "score_max", entry.get("score_max"))
        if (lo is None) != (hi is None):
            raise CatalogueError(f"{path}: scenario {name!r}: give both score_min and score_max or neither")
        if lo is not None and not lo < hi:
            raise CatalogueError(f"{path}: scenario {name!r}: score_min {lo} is not below score_max {hi}")
        phase = entry.get("phase")
        if phase is not None and (not isinstance(phase, str) or not phase.strip()):
            raise CatalogueError(f"{path}: scenario {name!r}, key 'phase': expected a phase name, got {phase!r}")
        entry_tags = entry.get("tags", [])
        if not isinstance(entry_tags, list) or not all(isinstance(t, str) for t in entry_tags):
            raise CatalogueError(f"{path}: scenario {name!r}, key 'tags': expected a list of strings")
        rows.append(
            {
                "scenario": name,
                "game": entry.get("game"),
                "mode": mode,
                "background": entry.get("background"),
                "phase": phase,
                "score_min": lo,
                "score_max": hi,
                "description": entry.get("description"),
            }
        )
        tags.extend({"scenario": name, "tag": t} for t in entry_tags)
    return Catalogue(
        scenarios=conform("scenarios", pd.DataFrame(rows)),
        tags=conform("scenario_tags", pd.DataFrame(tags, columns=["scenario", "tag"])),
    )


def _toml_value(value) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(float(value))


def write_catalogue(catalogue: Catalogue, path: str | Path, header: str = "") -> Path:
    """Write `catalogue` as TOML to `path` (the format `load_catalogue` reads); returns the path."""
    path = Path(path)
    lines = [f"# {line}" for line in header.splitlines()]
    tags = catalogue.tags.groupby("scenario")["tag"].apply(list).to_dict()
    for row in catalogue.scenarios.to_dict("records"):
        lines += ["", f"[scenarios.{json.dumps(row['scenario'])}]"]
        for key in ("game", "background", "mode", "phase", "score_min", "score_max", "description"):
            if row[key] is not None and not (isinstance(row[key], float) and math.isnan(row[key])):
                lines.append(f"{key} = {_toml_value(row[key])}")
        lines.append(f"tags = {_toml_value(tags.get(row['scenario'], []))}")
    path.write_text("\n".join(lines).lstrip("\n") + "\n", encoding="utf-8")
    return path


@functools.cache
def contest_catalogue() -> Catalogue:
    """The 2024 contest catalogue (read once per process)."""
    return load_catalogue(CONTEST_2024)


@functools.cache
def earlier_catalogue() -> Catalogue:
    """Concordia's scenarios of 1.8.0-1.8.8 that the contest's list lacks (read once per process)."""
    return load_catalogue(CONCORDIA_EARLIER)
