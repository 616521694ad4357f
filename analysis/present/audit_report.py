"""The construct-validity audit written out: `audit.json`, `audit.md` (a verdict per check, PASS/FAIL/INFO or NOT
RUN with why), `checks.csv`, notes, diagnostics and its figures, from an `referee.run.audit.AuditResult`."""

from __future__ import annotations

import pandas as pd

from referee.models.validity.checks import CHECK_TITLES
from referee.present.figures import plot_decomposition, plot_score_vs_outcome
from referee.present.outputs import ResultsFolder


def write_audit(result, frame: pd.DataFrame, folder: ResultsFolder, outcome: str) -> dict:
    """Write, for `result` (an `referee.run.audit.AuditResult`), audit.json, audit.md, checks.csv, notes.txt, diagnostics.json and the figures (decomposition,
    score vs outcome) into the results folder; returns the paths by role."""
    paths = {"json": folder.json("audit", result.checks), "markdown": folder.path("audit.md")}
    paths["checks"] = folder.table("checks", result.table())
    paths["notes"] = folder.notes(result.notes)
    paths["diagnostics"] = folder.diagnostics(result.diagnostics)
    titles = CHECK_TITLES
    lines = [f"# Construct-validity audit{': ' + result['formula'] if result.get('formula') else ''}", "",
             f"**Verdict:** {result['summary']['verdict']}", "",
             f"{result['players']} players; outcome measures: {', '.join(result['outcomes'])}. PASS and FAIL mark the "
             "checks against the outcome (3-6), the reproduction and the spectator check; INFO sections describe.", ""]
    for key, title in titles.items():
        if key in result:
            check = result[key]
            mark = {True: "PASS", False: "FAIL", None: "INFO"}[check.get("passed")]
            lines += [f"## {title} ({mark})", "", check["verdict"], ""]
        else:
            lines += [f"## {title} (NOT RUN)", "", f"Not run: {result.get('skipped', {}).get(key, 'no data for it')}.", ""]
    if result.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    paths["markdown"].write_text("\n".join(lines))
    order = list(frame.sort_values("score", ascending=False)["player"])
    if "decomposition" in result:
        paths["decomposition"] = folder.figure("decomposition", plot_decomposition(result["decomposition"]["table"],
                                                                                     order))
    if outcome in frame.columns and frame[outcome].notna().any():
        paths["score_vs_outcome"] = folder.figure("score_vs_outcome", plot_score_vs_outcome(frame, outcome))
    return paths
