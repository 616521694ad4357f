"""The construct-validity audit's figures, from an `referee.run.social.audit.AuditResult` (its report's words are
`referee.readings.audit_markdown`)."""

from __future__ import annotations

import pandas as pd

from referee.present.figures import plot_decomposition, plot_score_vs_outcome


def audit_figures(result, frame: pd.DataFrame, outcomes: list[str]) -> dict:
    """name -> a function drawing the audit's figures: the score decomposition (with a formula) and the score
    against each judged outcome the data hold (`outcomes`, one panel each; a refused outcome is not drawn)."""
    order = list(frame.sort_values("score", ascending=False)["player"])
    figures = {}
    drawn = [o for o in outcomes if o in frame.columns and frame[o].notna().any()]
    if drawn:
        figures["score_vs_outcome"] = lambda: plot_score_vs_outcome(frame, drawn)
    if "decomposition" in result:
        figures["decomposition"] = lambda: plot_decomposition(result["decomposition"]["table"], order)
    return figures
