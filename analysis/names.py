"""Names, errors and defaults of the data layer, in one light module (no pandas, no DuckDB): what the command
line needs before any heavy import, and what the io modules define their errors and constants from.

The exception classes are the ones `referee.io.store`, `referee.io.catalogue` and `referee.io.loaders.mapped`
raise (they re-export them).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

DEFAULT_STORE = Path("data/referee.duckdb")
MEASURE_KINDS = ("outcome", "telemetry", "component", "judge")
SEAT_MEASURE = "seat"  # the per-player measure holding a player's seat or turn order (referee.prepare.covariates)
OUTCOMES = ("win", "loss", "tie", "forfeit", "aborted")
NO_INFORMATION = "no information"  # the status of an agent whose comparisons say nothing of its strength
NEVER_COMPARED = f"{NO_INFORMATION}: no comparison with another agent"  # (`referee.run.ratings.rating_labels`)
CONTEST_PHASES = ("development", "evaluation", "cross-play")  # the Concordia contest's phases (its paper, section 2)
SELECTION, FINAL = CONTEST_PHASES[1], CONTEST_PHASES[2]  # the phase that selects the finalists, the one they play


class IngestError(RuntimeError):
    """Ingest was refused (strict mode with quarantined records); the store was left as it was."""


class StoreError(RuntimeError):
    """The store cannot be opened: in use by another process, not a DuckDB file, a folder, or another
    application's database. The message names the file and what to do."""


class CatalogueError(ValueError):
    """A catalogue file is malformed; the message names the file, the scenario and the key."""


class MappingError(ValueError):
    """A runner mapping file is malformed; the message names the file and the key."""


HANDLED = (IngestError, StoreError, CatalogueError, MappingError, FileNotFoundError, FileExistsError, ValueError,
           KeyError)  # what the command line reports as a plain error (exit 1), never a traceback


def referee_version() -> str:
    """referee's installed version, or '(not installed)' when run from a source tree never installed."""
    try:
        return metadata.version("referee")
    except metadata.PackageNotFoundError:
        return "(not installed)"
