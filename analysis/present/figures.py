"""Figures: each function takes an already computed table and returns a matplotlib Figure (never shows it)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def plot_means(table: pd.DataFrame, label: str, value_label: str = "mean normalised score (±1 SE)") -> Figure:
    """Horizontal dot-and-whisker chart of means with ±1 SE, first row on top.

    Parameters
    ----------
    table : output of `analysis.run.describe.mean_se` (columns `label`, `mean`, `se`).
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


def plot_bootstrap_violins(replicates: pd.DataFrame, order: list[str] | None = None) -> Figure:
    """Violins of bootstrap rating distributions, one per agent (COMPACT figure 2).

    replicates : `BootstrapResult.long()` (columns agent, rating). order : agents top to bottom (default:
    by median rating). Returns a Figure.
    """
    medians = replicates.groupby("agent")["rating"].median().sort_values(ascending=False)
    order = order or list(medians.index)
    data = [replicates.loc[replicates["agent"] == a, "rating"].dropna().to_numpy() for a in order]
    fig, ax = plt.subplots(figsize=(6.5, max(2.5, 0.35 * len(order) + 1.0)), layout="constrained")
    positions = list(range(len(order)))[::-1]
    parts = ax.violinplot(data, positions=positions, orientation="horizontal", showmedians=True, widths=0.8)
    for body in parts["bodies"]:
        body.set_facecolor("#7f9fbf")
        body.set_alpha(0.7)
    ax.set_yticks(positions, order)
    ax.set_xlabel("rating (Elo scale), bootstrap replicates")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"Bootstrap distribution of ratings ({replicates['replicate'].nunique()} replicates)")
    return fig


def plot_win_matrices(matrices: dict[str, pd.DataFrame]) -> Figure:
    """Heatmaps of P(row beats column), one panel per matrix (COMPACT figure 1); returns a Figure."""
    k = len(matrices)
    n = max(len(m) for m in matrices.values())
    fig, axes = plt.subplots(1, k, figsize=(max(4.5, 0.45 * n + 2.0) * k, max(4.0, 0.45 * n + 1.5)),
                             layout="constrained", squeeze=False)
    for ax, (label, matrix) in zip(axes[0], matrices.items()):
        image = ax.imshow(matrix.to_numpy(), vmin=0, vmax=1, cmap="RdBu_r")
        ax.set_xticks(range(len(matrix)), matrix.columns, rotation=90)
        ax.set_yticks(range(len(matrix)), matrix.index)
        for i in range(len(matrix)):
            for j in range(len(matrix)):
                if i != j and np.isfinite(matrix.iat[i, j]):
                    ax.text(j, i, f"{matrix.iat[i, j]:.2f}", ha="center", va="center", fontsize=7)
        ax.set_title(f"P(row beats column): {label}")
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8)
    return fig


def plot_intervals(table: pd.DataFrame, label: str, title: str, xlabel: str, reference: float | None = 0.0) -> Figure:
    """Posterior means with HDI bars (columns `label`, `mean`, `hdi_low`, `hdi_high`), first row on top,
    with a dashed reference line (contest figures 2 and 3 right). Returns a Figure."""
    n = len(table)
    fig, ax = plt.subplots(figsize=(6.5, max(2.0, 0.32 * n + 1.0)), layout="constrained")
    y = list(range(n))[::-1]
    lower = table["mean"] - table["hdi_low"]
    upper = table["hdi_high"] - table["mean"]
    ax.errorbar(table["mean"], y, xerr=[lower, upper], fmt="o", color="#1f4e79", ecolor="#7f9fbf", capsize=3,
                markersize=4)
    if reference is not None:
        ax.axvline(reference, color="#888", linestyle="--", linewidth=1)
    ax.set_yticks(y, table[label].astype(str))
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_correlation_heatmap(matrix: pd.DataFrame, title: str = "Pearson correlations") -> Figure:
    """Heatmap of a square correlation matrix (contest figure 5); returns a Figure."""
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.42 * n + 2.5), max(4.5, 0.42 * n + 2.0)), layout="constrained")
    image = ax.imshow(matrix.to_numpy(), vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(n), matrix.columns, rotation=90)
    ax.set_yticks(range(n), matrix.index)
    for i in range(n):
        for j in range(n):
            ax.text(j, i, f"{matrix.iat[i, j]:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title(title)
    return fig


def plot_capability_profiles(capabilities: pd.DataFrame, extras: dict[str, pd.DataFrame]) -> Figure:
    """One panel per demand (plus base chance and sample size): each agent's posterior mean and 94% HDI
    (contest figure 6). capabilities : agent, demand, mean, hdi_low, hdi_high; extras : name -> agent,
    mean, hdi_low, hdi_high. Returns a Figure."""
    panels = [(d, g) for d, g in capabilities.groupby("demand", sort=False)] + list(extras.items())
    cols = 4
    rows = -(-len(panels) // cols)
    agents = sorted(capabilities["agent"].unique())
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 0.28 * len(agents) * rows + 1.2 * rows),
                             layout="constrained", squeeze=False)
    for ax, (name, table) in zip(axes.ravel(), panels):
        table = table.set_index("agent").reindex(agents)
        y = list(range(len(agents)))[::-1]
        ax.errorbar(table["mean"], y, xerr=[table["mean"] - table["hdi_low"], table["hdi_high"] - table["mean"]],
                    fmt="o", markersize=3, color="#1f4e79", ecolor="#7f9fbf", capsize=2)
        ax.set_yticks(y, agents, fontsize=7)
        ax.set_title(str(name), fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    return fig


def plot_predictor_comparison(per_agent: pd.DataFrame) -> Figure:
    """Grouped bars of test R^2 (top) and RMSE (bottom) per agent and predictor (contest figure 7)."""
    agents = sorted(per_agent["agent"].unique())
    predictors = list(dict.fromkeys(per_agent["predictor"]))
    fig, axes = plt.subplots(2, 1, figsize=(max(6.5, 0.8 * len(agents) + 2), 6.0), layout="constrained", sharex=True)
    width = 0.8 / len(predictors)
    for k, predictor in enumerate(predictors):
        table = per_agent[per_agent["predictor"] == predictor].set_index("agent").reindex(agents)
        x = [i + (k - (len(predictors) - 1) / 2) * width for i in range(len(agents))]
        axes[0].bar(x, table["r2"], width, label=predictor)
        axes[1].bar(x, table["rmse"], width, label=predictor)
    axes[0].axhline(0.35, color="#888", linestyle="--", linewidth=1)
    axes[0].set_ylabel("test R²")
    axes[1].set_ylabel("test RMSE")
    axes[1].set_xticks(range(len(agents)), agents, rotation=45, ha="right")
    axes[0].legend(fontsize=8, ncols=2)
    return fig


def plot_decomposition(parts: pd.DataFrame, order: list[str]) -> Figure:
    """Stacked bars of each player's score components (negative parts below zero); returns a Figure.

    parts : columns player, component, value (`models.validity.decompose`); order : players left to right.
    """
    table = parts.pivot_table(index="player", columns="component", values="value", aggfunc="sum").reindex(order)
    fig, ax = plt.subplots(figsize=(max(6.5, 0.55 * len(order) + 2), 4.5), layout="constrained")
    pos = np.zeros(len(table))
    neg = np.zeros(len(table))
    for component in table.columns:
        values = table[component].fillna(0.0).to_numpy()
        bottom = np.where(values >= 0, pos, neg)
        ax.bar(range(len(table)), values, bottom=bottom, label=component)
        pos += np.clip(values, 0, None)
        neg += np.clip(values, None, 0)
    ax.axhline(0, color="#444", linewidth=0.8)
    ax.set_xticks(range(len(table)), table.index, rotation=45, ha="right")
    ax.set_ylabel("points")
    ax.set_title("Score decomposition")
    ax.legend(fontsize=8)
    return fig


def plot_score_vs_outcome(frame: pd.DataFrame, outcome: str, label: str = "player", colour: str = "role") -> Figure:
    """Scatter of recorded score against an outcome, points labelled and coloured by role; returns a Figure."""
    data = frame.dropna(subset=[outcome, "score"])
    fig, ax = plt.subplots(figsize=(6.5, 4.5), layout="constrained")
    for name, group in data.groupby(data[colour].fillna("(none)").astype(str)):
        ax.scatter(group[outcome], group["score"], label=name, s=30)
        if len(data) <= 40:
            for _, row in group.iterrows():
                ax.annotate(str(row[label]), (row[outcome], row["score"]), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
    ax.set_xlabel(outcome)
    ax.set_ylabel("recorded score")
    ax.legend(fontsize=8, title=colour)
    ax.set_title(f"Score against {outcome}")
    return fig


def plot_similarity_blocks(matrix: pd.DataFrame, title: str = "Socio-cognitive similarity") -> Figure:
    """COMPACT figure 4: Pearson correlations between (agent, category) metric vectors, rows grouped by
    agent with lines between agents' blocks. matrix : square, MultiIndex (agent, category). Returns a Figure."""
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(7.5, 6.5), layout="constrained")
    image = ax.imshow(matrix.to_numpy(float), vmin=-1, vmax=1, cmap="RdBu_r", interpolation="nearest")
    agents = matrix.index.get_level_values(0)
    edges = [k for k in range(1, n) if agents[k] != agents[k - 1]]
    for k in edges:
        ax.axhline(k - 0.5, color="black", lw=0.6)
        ax.axvline(k - 0.5, color="black", lw=0.6)
    starts = [0] + edges
    ends = edges + [n]
    centres = [(s + e - 1) / 2 for s, e in zip(starts, ends)]
    ax.set_xticks(centres, [agents[s] for s in starts], rotation=90)
    ax.set_yticks(centres, [agents[s] for s in starts])
    fig.colorbar(image, ax=ax, shrink=0.8, label="Pearson r")
    ax.set_title(title)
    return fig


def plot_consistency(summary: pd.DataFrame) -> Figure:
    """COMPACT figure 5: mean correlation per comparison with its bootstrap interval.
    summary : comparison, mean_r, low, high. Returns a Figure."""
    fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(summary) + 1.4), layout="constrained")
    y = np.arange(len(summary))
    ax.errorbar(summary["mean_r"], y, xerr=[summary["mean_r"] - summary["low"], summary["high"] - summary["mean_r"]],
                fmt="o", capsize=3)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, summary["comparison"])
    ax.invert_yaxis()
    ax.set_xlabel("mean Pearson r between metric vectors (95% bootstrap interval over matches)")
    return fig


def plot_roc_curves(curves: dict[str, pd.DataFrame], aucs: dict[str, float]) -> Figure:
    """COMPACT figure 6: out-of-fold ROC curves. curves : model -> fpr, tpr; aucs : model -> mean fold AUC."""
    fig, ax = plt.subplots(figsize=(5.5, 5.0), layout="constrained")
    for model, curve in curves.items():
        ax.plot(curve["fpr"], curve["tpr"], label=f"{model} (AUC {aucs.get(model, float('nan')):.2f})")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.legend(fontsize=7, loc="lower right")
    return fig
