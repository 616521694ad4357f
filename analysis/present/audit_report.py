"""The construct-validity audit's figures, from an `referee.run.social.audit.AuditResult` (its report's words are
`referee.readings.audit_markdown`)."""

from __future__ import annotations

import pandas as pd

from referee.present.figures import plot_decomposition, plot_score_vs_outcome


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
