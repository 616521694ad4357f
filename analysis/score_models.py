"""Orchestration of the score models: data from a store, fits, and their files on disk.

`model_scores(store)` is the tidy table the beta regressions and Measurement Layouts read (one row per
(match, agent) of scenario-based matches, with `score_norm` in [0, 1]); `write_fit(fit, out, figure)`
writes `idata.nc`, `summary.csv`, `diagnostics.json`, `notes.txt` and the figure.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from analysis.scores import normalised_scores


def model_scores(store) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(scores, scenarios, scenario_tags) for scenario-based matches; raises ValueError when there are none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = normalised_scores(store, scenarios_only=True)
    if scores.empty:
        raise ValueError("the store holds no scenario-based matches (Concordia-style) to model")
    return scores, store.table("scenarios"), store.table("scenario_tags")


def write_fit(fit, out: str | Path, figure: Figure | None = None, figure_name: str = "figure.png") -> dict[str, Path]:
    """Write a `models.beta_regression.FitResult` (or any fit with idata, summary, diagnostics, notes) to `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"idata": out / "idata.nc", "summary": out / "summary.csv", "diagnostics": out / "diagnostics.json",
             "notes": out / "notes.txt"}
    fit.idata.to_netcdf(paths["idata"])
    fit.summary.to_csv(paths["summary"], index=False)
    paths["diagnostics"].write_text(json.dumps(fit.diagnostics, indent=1) + "\n")
    paths["notes"].write_text("\n".join(fit.notes) + "\n")
    if figure is not None:
        paths["figure"] = out / figure_name
        figure.savefig(paths["figure"], dpi=150)
    return paths
