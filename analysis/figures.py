"""Figures: each function takes an already computed table and returns a matplotlib Figure (never shows it)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def plot_means(table: pd.DataFrame, label: str, value_label: str = "mean normalised score (±1 SE)") -> Figure:
    """Horizontal dot-and-whisker chart of means with ±1 SE, first row on top.

    Parameters
    ----------
    table : output of `analysis.describe.mean_se` (columns `label`, `mean`, `se`).
    label : the column naming the rows (e.g. 'agent').
    value_label : x-axis title.

    Returns
    -------
    matplotlib Figure, about 6 inches wide and 0.3 inch per row.
    """
    n = len(table)
    fig, ax = plt.subplots(figsize=(6.5, max(2.0, 0.3 * n + 1.0)), layout="constrained")
    y = list(range(n))[::-1]
    ax.errorbar(table["mean"], y, xerr=table["se"].fillna(0.0), fmt="o", color="#1f4e79", ecolor="#7f9fbf",
                capsize=3, markersize=4)
    ax.set_yticks(y, table[label].astype(str))
    ax.set_xlabel(value_label)
    ax.set_xlim(-0.02, 1.02)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"Mean score per {label}")
    return fig
