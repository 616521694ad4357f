"""End-to-end jobs built from the pieces: logs -> store -> normalised scores -> report.

`build_report(store, out, ingest_report=None)` writes the HTML report for a store; `run_demo(out)`
ingests the bundled samples into a fresh store under `out` and writes `out/index.html`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from analysis.report import Section, ingest_section, runners_section, scores_section, store_section, write_report
from analysis.scores import normalised_scores
from analysis.store import IngestReport, Store

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "data" / "sample"


def build_report(store: Store, out: str | Path, ingest_report: IngestReport | None = None,
                 title: str = "referee report") -> Path:
    """Write `out/index.html` (and figures) for everything in `store`; returns the index path.

    Sections: the ingest summary (when `ingest_report` is given), the store's contents and catalogue, a
    per-runner overview, and normalised scores per agent and per scenario (for matches with a scenario).
    """
    sections: list[Section] = []
    if ingest_report is not None:
        sections.append(ingest_section(ingest_report))
    sections.append(store_section(store))
    if store.info()["results"]:
        sections.append(runners_section(store))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = normalised_scores(store, scenarios_only=True)
    if len(scores):
        sections.append(scores_section(scores, [str(w.message) for w in caught]))
    return write_report(sections, out, title=title)


# (logs, catalogue) per bundled sample; see data/sample/README.md
SAMPLES = [
    (SAMPLE / "concordia" / "logs", SAMPLE / "concordia" / "catalogue.toml"),
    (SAMPLE / "aoa_eval01" / "season.json", None),
    (SAMPLE / "aoa_sim" / "logs", None),
    (SAMPLE / "compact" / "logs", None),
    (SAMPLE / "arena" / "logs", None),
    (SAMPLE / "ranked" / "logs", None),
]


def run_demo(out: str | Path = "reports/demo", store: str | Path | None = None) -> Path:
    """The main job on the bundled sample data: a fresh store (default `out/demo.duckdb`), ingest of every
    bundled sample (`SAMPLES`, one per runner), and the report `out/index.html`; returns its path.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if store is not None and Path(store).exists():
        raise FileExistsError(f"{store}: the demo writes a fresh store; choose a path that does not exist")
    db = Path(store) if store else out / "demo.duckdb"
    for stale in (db, db.with_name(db.name + ".wal")):
        stale.unlink(missing_ok=True)
    with Store(db) as demo:
        reports = [demo.ingest([logs], catalogue=catalogue) for logs, catalogue in SAMPLES]
        return build_report(demo, out, IngestReport.combine(reports), title="referee demo: the bundled samples")
