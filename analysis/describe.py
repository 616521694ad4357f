"""Descriptive summaries of normalised scores: means with standard errors by agent, scenario or any column."""

from __future__ import annotations

import numpy as np
import pandas as pd


def mean_se(scores: pd.DataFrame, by: str, value: str = "score_norm") -> pd.DataFrame:
    """Mean and standard error of `value` per level of `by`.

    Parameters
    ----------
    scores : tidy table with columns `by` and `value` (e.g. `analysis.scores.normalised_scores`).
    by : grouping column (e.g. 'agent', 'scenario').
    value : the numeric column to summarise; NaN rows are dropped.

    Returns
    -------
    DataFrame with columns `by`, `mean`, `se` (sample sd / sqrt(n); NaN for n = 1), `n`, sorted by
    decreasing mean.
    """
    data = scores[[by, value]].dropna()
    grouped = data.groupby(by)[value]
    table = pd.DataFrame({"mean": grouped.mean(), "sd": grouped.std(ddof=1), "n": grouped.size()})
    table["se"] = table["sd"] / np.sqrt(table["n"])
    table = table.drop(columns="sd").reset_index()[[by, "mean", "se", "n"]]
    return table.sort_values("mean", ascending=False, kind="stable").reset_index(drop=True)
