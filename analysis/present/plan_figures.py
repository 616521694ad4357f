"""Figures of the contest's stages, calibration and planning: each function takes an already computed table and
returns a matplotlib Figure in referee's style (`referee.present.figures`, whose rules these follow)."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from referee.present.figures import BLUE, GREY, MAX_HEIGHT, MAX_MATRIX, ONE_COLUMN, ORANGE, TWO_COLUMNS, _height, _subplots, styled


@styled
def plot_contest_stages(stages: pd.DataFrame, finalists: list[str]) -> Figure:
    """The finalists' places across the contest's stages (selection Elo, final cross-play Elo, combined Elo).

    stages : `ContestResult.table()` (columns stage, agent, rating, rank). finalists : the agents to draw,
    at most `MAX_MATRIX` (the first ones). Each stage places the finalists 1, 2, ... by rating (ties by name;
    the selection by the agent's place among every agent rated there). Returns a Figure, one column and a
    half wide, each line labelled at both ends.
    """
    shown = list(finalists)[:MAX_MATRIX]
    data = stages[stages["agent"].isin(shown)].copy()
    data = data.sort_values(["stage", "rating", "agent"], ascending=[True, False, True])
    order = [s for s in ("selection", "finals", "combined") if s in set(data["stage"])]
    full = stages[stages["stage"] == "selection"].sort_values(["rating", "agent"], ascending=[False, True])
    place = {("selection", a): i + 1 for i, a in enumerate(full["agent"])}
    for stage in order[1:]:
        ranked = data[data["stage"] == stage]
        place.update({(stage, a): i + 1 for i, a in enumerate(ranked["agent"])})
    fig, ax = _subplots(figsize=(ONE_COLUMN * 1.6, _height(max(len(shown), 4), 1.4)))
    colours = [BLUE, ORANGE, "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
    for i, agent in enumerate(shown):
        xs = [j for j, s in enumerate(order) if (s, agent) in place]
        ys = [place[(order[j], agent)] for j in xs]
        colour = colours[i % len(colours)]
        ax.plot(xs, ys, "o-", color=colour, lw=1.2, ms=3.5)
        if xs:
            ax.annotate(agent, (xs[-1], ys[-1]), xytext=(5, 0), textcoords="offset points", va="center",
                        fontsize=6, color=colour)
            ax.annotate(str(ys[0]), (xs[0], ys[0]), xytext=(-5, 0), textcoords="offset points", va="center",
                        ha="right", fontsize=6, color=colour)
    ax.set_xticks(range(len(order)), [{"selection": "selection\n(all agents)", "finals": "final phase",
                                       "combined": "phases\ncombined"}[s] for s in order])
    ax.set_xlim(-0.4, len(order) - 1 + 0.9)
    ax.invert_yaxis()
    ax.set_ylabel("place by Elo (1 = best)")
    ax.set_title("Finalists from selection to final ranking")
    return fig


@styled
def plot_rank_histograms(ranks: pd.DataFrame, summary: pd.DataFrame, title: str = "") -> Figure:
    """Simulation-based calibration's rank histograms, one panel per parameter group (Talts et al. 2018).

    ranks : one row per (sim, group, element) with rank and draws (`referee.run.scores.calibrate`); summary : group,
    passed, coverage_50, coverage_94, p_uniform. Each panel shows the counts of rank / (draws + 1) in
    `referee.models.calibration.BINS` bins with the grey band a uniform histogram stays inside 99 % of the time, and
    says PASS or FAIL with the coverages. Returns a Figure, two columns wide.
    """
    from referee.models.calibration import BINS, expected_band

    groups = list(summary["group"])
    cols = min(4, len(groups))
    rows = int(np.ceil(len(groups) / cols))
    fig, axes = _subplots(rows, cols, figsize=(TWO_COLUMNS, min(MAX_HEIGHT, 1.7 * rows + 0.6)), squeeze=False)
    for ax, group in zip(axes.flat, groups):
        part = ranks[ranks["group"] == group]
        fraction = part["rank"] / (part["draws"] + 1)
        counts = np.histogram(fraction, bins=BINS, range=(0, 1))[0]
        lo, hi = expected_band(len(part))
        ax.axhspan(lo, hi, color=GREY, alpha=0.3, lw=0)
        ax.axhline(len(part) / BINS, color=GREY, lw=0.8)
        row = summary.set_index("group").loc[group]
        ax.bar((np.arange(BINS) + 0.5) / BINS, counts, width=0.9 / BINS, color=BLUE if row["passed"] else ORANGE)
        ax.set_title(textwrap.shorten(str(group), 22) + (" PASS" if row["passed"] else " FAIL"), fontsize=7)
        ax.set_xticks([0, 0.5, 1])
        ax.tick_params(labelsize=6)
        ax.text(0.02, 0.97, f"cover {row['coverage_50']:.0%} / {row['coverage_94']:.0%}", transform=ax.transAxes,
                fontsize=5.5, va="top")
    for ax in axes.flat[len(groups):]:
        ax.set_visible(False)
    fig.suptitle(title or "Rank histograms (grey: 99% band of a uniform histogram; 50% / 94% HDI coverage)",
                 fontsize=8)
    fig.supxlabel("rank of the true value among the posterior draws (fraction)", fontsize=7)
    return fig


@styled
def plot_power_curve(curve: pd.DataFrame, delta_elo: float, target: float = 0.8, title: str = "") -> Figure:
    """Power to separate two agents `delta_elo` Elo points apart against the number of matches of the current
    design (`referee.run.ratings.plan.power_curve`: matches, power, se, normal), with its Monte Carlo band, the closed
    form for the pair's own comparisons alone (dashed) and the `target` power line. Returns a Figure."""
    fig, ax = _subplots(figsize=(ONE_COLUMN, 2.6))
    m = curve["matches"].to_numpy(float)
    ax.fill_between(m, np.clip(curve["power"] - 1.96 * curve["se"], 0, 1), np.clip(curve["power"] + 1.96 * curve["se"], 0, 1),
                    color=BLUE, alpha=0.2, lw=0)
    ax.plot(m, curve["power"], color=BLUE, marker="o", ms=3, label="simulated (this design)")
    ax.plot(m, curve["normal"], color=GREY, ls="--", lw=1, label="normal approx. (the pair's matches)")
    ax.axhline(target, color=ORANGE, lw=0.8)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("matches (all pairs of the current design)", fontsize=7)
    ax.set_ylabel("power", fontsize=7)
    ax.tick_params(labelsize=6)
    ax.legend(fontsize=6, loc="lower right", frameon=False)
    ax.set_title(title or f"Power to separate two agents {delta_elo:g} Elo apart", fontsize=8)
    return fig


@styled
def plot_plan_benchmark(curves: dict[str, list[list[tuple[int, float]]]], target: float = 0.9,
                        highlight: str = "referee plan") -> Figure:
    """Kendall tau of the estimated order with the truth against matches played, one line per planning rule
    (`benchmarks/plan.py`: rule -> per seed a list of (matches, tau)); the median over seeds on a common grid,
    with the `target` line. Returns a Figure."""
    fig, ax = _subplots(figsize=(ONE_COLUMN * 1.3, 2.8))
    colours = [BLUE, ORANGE, GREY, "#009E73", "#CC79A7", "#D55E00", "#56B4E9"]
    top = max(m for runs in curves.values() for run in runs for m, _ in run)
    grid = np.linspace(0, top, 200)
    for colour, (rule, runs) in zip(colours, curves.items()):
        values = [np.interp(grid, [m for m, _ in run], [t for _, t in run], right=np.nan) for run in runs]
        median = np.nanmedian(np.vstack(values), axis=0)
        ax.plot(grid, median, color=colour, lw=1.6 if rule == highlight else 1, label=rule)
    ax.axhline(target, color=GREY, lw=0.6, ls=":")
    ax.set_xlabel("matches played", fontsize=7)
    ax.set_ylabel("Kendall tau with the truth", fontsize=7)
    ax.tick_params(labelsize=6)
    ax.legend(fontsize=6, frameon=False, loc="lower right")
    ax.set_title("Planning rules against uniform allocation (median of seeds)", fontsize=8)
    return fig
