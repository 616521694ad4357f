"""The top of the job table: the two jobs that compose the others (`referee report`, `referee paper`) and the
whole table (`JOBS`: the analyses of `referee.run.job_table` and these two), which the command line, the notebook
API and `referee.__init__` read.

The report (`referee.reporting`) and the papers (`referee.papers`) run the analysis jobs of `referee.run.job_table`;
the jobs that run them live here, above both, so that no import runs up the layers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from referee.papers import PAPERS
from referee.run.job_table import JOBS as ANALYSES
from referee.run.job_table import NO_MODELS, Job
from referee.run.options import SAMPLING_OPTIONS, SEED, Option, agent_list, path, sampling

if TYPE_CHECKING:  # at run time each job imports it: `import referee` loads no numerical stack
    from referee.result import PaperJobResult, ReportJobResult

COMPOSING = (
    Job("report", "referee.composing:report", "write the HTML report for a store", (
        Option("out", Path("reports/latest"), "the report's folder (default reports/latest)", type=path),
        NO_MODELS, SEED) + SAMPLING_OPTIONS, folder=False),
    Job("paper", "referee.composing:paper", "a seed paper's numbered figures and tables, made by the paper's "
        "own protocol, with manifest.json listing every number and how it was made", (
            Option("paper", None, "; ".join(f"{n} ({p.title})" for n, p in PAPERS.items()), choices=tuple(PAPERS),
                   positional="1", required=True),
            Option("out", None, "the paper's folder (figures, tables, manifest.json)", type=path, required=True),
            Option("finalists", None, "concordia: Tables 8-12's finalists (default the paper's: top five by "
                   "evaluation Elo plus rational_agent)", type=agent_list, metavar="A,B,..."),
            Option("no_models", False, "concordia: skip the Bayesian fits (Figures 2, 3 right, 6, 7), listed in the "
                   "manifest as not made", flag=True),
            Option("runner", None, "compact: whose matches (default the store's runner that writes COMPACT's "
                                   "metrics, `compact`)"),
            Option("match", None, "aoa: the season's match id (default the first aoa season)"),
            SEED) + SAMPLING_OPTIONS, folder=False),
)
JOBS: dict[str, Job] = {**ANALYSES, **{j.name: j for j in COMPOSING}}


def report(store, out=Path("reports/latest"), no_models: bool = False, seed: int = 0, **options) -> ReportJobResult:
    """The HTML report of everything in the store (`referee report`), written to folder `out`; with `no_models`
    the Bayesian fits are skipped (a quick report). Fields: `index`, the path of its index.html."""
    from referee.reporting import build_report
    from referee.result import ReportJobResult

    index = build_report(store, out, fit_models=not no_models, seed=seed, sampling=sampling(options) or None)
    return ReportJobResult("report", {}, fields={"index": str(index)}, lines=[f"wrote {index}"])


def paper(store, paper: str, out, finalists: list[str] | None = None, no_models: bool = False,
          runner: str | None = None, match: str | None = None, seed: int = 0, **options) -> PaperJobResult:
    """A seed paper's numbered figures and tables made by its own protocol (`referee paper`;
    `referee.papers.PAPERS`), written to folder `out` with manifest.json listing every item and how it was made
    (or why not). The main table lists the items. Fields: made, not_made."""
    import pandas as pd

    from referee.models.registry import implementation
    from referee.papers.items import PaperWriter
    from referee.result import PaperJobResult
    from referee.present.outputs import ResultsFolder

    spec = PAPERS[paper]
    offered = {"finalists": finalists, "models": not no_models, "sampling": sampling(options), "runner": runner,
               "match": match, "seed": seed}
    writer = PaperWriter(ResultsFolder(out, seed=seed, store=store), paper)
    protocol, notes = implementation(spec.make)(store, writer, **{k: offered[k] for k in spec.options})
    manifest = writer.close(paper, protocol, notes)
    items = pd.DataFrame([{"number": i["number"], "made": bool(i["files"]), "files": ", ".join(i["files"]),
                           "reason": i.get("reason") or ""} for i in manifest["items"]])
    return PaperJobResult("paper", {"items": items}, notes, fields={"made": manifest["made"],
                                                             "not_made": manifest["not_made"],
                                                             "written": [str(p) for p in writer.folder.files]},
                  lines=[f"wrote {out}/manifest.json: {manifest['made']} item(s) made, {manifest['not_made']} not "
                         "made (each with its reason)"], value=manifest)
