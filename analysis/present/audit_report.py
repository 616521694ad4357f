"""The construct-validity audit as a reader sees it: `audit.md` (a verdict per check, PASS/FAIL/INFO or NOT RUN with
why) and its figures, from an `referee.run.audit.AuditResult`."""

from __future__ import annotations

import pandas as pd

from referee.models.validity.checks import CHECK_TITLES
from referee.present.figures import plot_decomposition, plot_score_vs_outcome


def audit_markdown(result) -> str:
    """The audit's report (audit.md) for `result` (an `referee.run.audit.AuditResult`): the verdict, then each
    check with PASS, FAIL, INFO or NOT RUN and its reading, then the notes."""
    lines = [f"# Construct-validity audit{': ' + result['formula'] if result.get('formula') else ''}", "",
             f"**Verdict:** {result.verdict}", "",
             f"{result['players']} players; outcome measures: {', '.join(result['outcomes'])}. PASS and FAIL mark the "
             "checks against the outcome (3-6), the reproduction and the spectator check; INFO sections describe.", ""]
    for key, title in CHECK_TITLES.items():
        if key in result:
            check = result[key]
            mark = {True: "PASS", False: "FAIL", None: "INFO"}[check.get("passed")]
            lines += [f"## {title} ({mark})", "", check["verdict"], ""]
        else:
            lines += [f"## {title} (NOT RUN)", "", f"Not run: {result.get('skipped', {}).get(key, 'no data for it')}.", ""]
    if result.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    return "\n".join(lines)


def audit_figures(result, frame: pd.DataFrame, outcome: str) -> dict:
    """name -> a function drawing the audit's figures: the score decomposition (with a formula) and the score
    against `outcome` (when the data hold it)."""
    order = list(frame.sort_values("score", ascending=False)["player"])
    figures = {}
    if outcome in frame.columns and frame[outcome].notna().any():
        figures["score_vs_outcome"] = lambda: plot_score_vs_outcome(frame, outcome)
    if "decomposition" in result:
        figures["decomposition"] = lambda: plot_decomposition(result["decomposition"]["table"], order)
    return figures
