"""Orchestration of the score models: data from a store, fits, and their files on disk.

`model_scores(store)` is the tidy table the beta regressions and Measurement Layouts read (one row per
(match, agent) of scenario-based matches, with `score_norm` in [0, 1]); `write_fit(fit, out, figure)`
writes `idata.nc`, `summary.csv`, `diagnostics.json`, `notes.txt` and the figure.
"""

from __future__ import annotations

import pandas as pd

from analysis.prepare.scores import normalised_scores


def model_scores(store, phases: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(scores, scenarios, scenario_tags) for scenario-based matches (in `phases` when given; all otherwise);
    raises ValueError when there are none."""
    scores = normalised_scores(store, scenarios_only=True, phases=phases)  # its warnings reach the caller
    if scores.empty:
        raise ValueError("the store holds no scenario-based matches (Concordia-style) to model")
    return scores, store.table("scenarios"), store.table("scenario_tags")
