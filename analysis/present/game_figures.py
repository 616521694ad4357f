"""Figures of the game-theoretic rankings (`referee.run.ratings.game_theory`): each function takes an already computed
table and returns a matplotlib Figure in referee's style (`referee.present.figures`, whose rules these follow)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from referee.present.figures import BLUE, ONE_COLUMN, TWO_COLUMNS, _subplots, styled

MAX_CYCLES = 6  # cyclic triads drawn, strongest first


@styled
def plot_cycles(cycles: pd.DataFrame, payoffs: pd.DataFrame, k: int = MAX_CYCLES) -> Figure:
    """The strongest cyclic triads, one small triangle each: an arrow from each agent to the one it beats,
    labelled with its win rate.

    cycles : `GameRanking.cycles` (first, second, third, strength), strongest first; the first `k` are drawn.
    payoffs : `GameRanking.payoffs` (agent, opponent, win_rate, comparisons). Returns a Figure up to two
    columns wide, three triangles per row; ValueError when there is no cycle to draw."""
    shown = cycles.head(k)
    if not len(shown):
        raise ValueError("no cyclic triad: nothing to draw")
    rate = payoffs.set_index(["agent", "opponent"])
    columns = min(3, len(shown))
    rows = int(np.ceil(len(shown) / columns))
    fig, axes = _subplots(rows, columns, figsize=(ONE_COLUMN if columns == 1 else TWO_COLUMNS, 2.3 * rows),
                          squeeze=False)
    corners = np.array([[0.0, 1.0], [-0.87, -0.5], [0.87, -0.5]])
    for ax, cycle in zip(axes.ravel(), shown.itertuples(index=False)):
        names = [cycle.first, cycle.second, cycle.third]
        for i in range(3):
            start, end = corners[i], corners[(i + 1) % 3]
            tail, head = start + 0.22 * (end - start), end - 0.22 * (end - start)
            ax.annotate("", xy=head, xytext=tail, arrowprops={"arrowstyle": "-|>", "color": BLUE, "lw": 1.2})
            won = rate.loc[(names[i], names[(i + 1) % 3])]
            middle = (start + end) / 2 * 1.8  # the edge's midpoint, pushed outward past the arrow
            ax.text(*middle, f"{won['win_rate']:.2f}\n(n={int(won['comparisons'])})", ha="center", va="center",
                    fontsize=6)
        for name, (x, y) in zip(names, corners):
            ax.text(x, y, name if len(name) <= 18 else name[:17] + "…", ha="center", va="center", fontsize=7,
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "0.6", "lw": 0.5})
        ax.set_title(f"strength {cycle.strength:.2f}", fontsize=7)
        ax.set_xlim(-1.5, 1.5)
        ax.set_ylim(-1.15, 1.3)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_axis_off()
    fig.suptitle("Strongest cycles (arrow: beats; win rate, n)", fontsize=8)
    return fig
