"""Figures: each function takes an already computed table and returns a matplotlib Figure (never shows it).

Every figure is drawn in referee's style (`STYLE`, the shipped `referee.mplstyle`: paper column widths, the
Okabe-Ito colour-blind-safe palette) and reads at any number of agents, 3 to 200 and beyond:

- a listing (one row per agent, scenario, tag) shows at most `MAX_ROWS` rows: the first `MAX_ROWS - 1` in
  the table's order by value, then one grey row summarising the others (their median and range);
- a square matrix of agents shows the first `MAX_MATRIX` of them (the caller's order: by rating) and its
  cells carry numbers only while they are large enough to read;
- heights are capped at `MAX_HEIGHT` inches and widths are one or two paper columns;
- discrete values are drawn with jitter and counts.

`use_style()` applies the same style to a notebook's own figures. `tests/test_figures.py` renders each
figure at 5 and at 150 agents and checks its size and that no two labels overlap.
"""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path

import matplotlib
import matplotlib.style
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

STYLE = Path(__file__).with_name("referee.mplstyle")
ONE_COLUMN = 3.4  # inches: one column of a two-column paper
TWO_COLUMNS = 7.0  # inches: the full text width
MAX_HEIGHT = 9.0  # inches: a page's text height
MAX_ROWS = 40  # rows listed one by one; beyond this the rest are summarised in one row
MAX_MATRIX = 15  # agents shown in a square matrix
ANNOTATE_CELLS = 8  # matrices up to this size carry their numbers in the cells
ROW_HEIGHT = 0.17  # inches per listed row
MAX_POINTS_LABELLED = 25  # scatter points named beside them
BLUE, ORANGE, GREY = "#0072B2", "#E69F00", "#999999"


def use_style() -> None:
    """Apply referee's figure style (`STYLE`) to every later Matplotlib figure of this process."""
    matplotlib.style.use(STYLE)


def styled(plot):
    """Decorator: draw `plot` inside referee's style, whatever the caller's rcParams."""

    @functools.wraps(plot)
    def wrapper(*args, **kwargs):
        with matplotlib.style.context(STYLE):
            return plot(*args, **kwargs)

    return wrapper


def _subplots(*grid, figsize: tuple[float, float], **kwargs):
    """(Figure, axes) like `pyplot.subplots`, but a Figure that pyplot does not hold: it is freed with its last
    reference, so a report holding dozens of figures raises no 'too many figures' warning. Notebooks still
    show it (IPython displays any Figure returned by a cell)."""
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)  # a raster canvas of its own: it can be drawn, measured and saved
    return fig, fig.subplots(*grid, **kwargs)


def _height(rows: int, extra: float = 1.0) -> float:
    return float(min(MAX_HEIGHT, max(2.0, ROW_HEIGHT * rows + extra)))


def listed(table: pd.DataFrame, value: str, k: int = MAX_ROWS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split a listing for display: (shown, others).

    table : one row per item; value : the column to order by (descending). With at most `k` rows every row
    is shown in the table's own order; with more, the `k - 1` rows of highest `value` are shown and the rest
    are returned as `others` (drawn as one summary row).
    """
    if len(table) <= k:
        return table, table.iloc[0:0]
    ordered = table.sort_values(value, ascending=False, kind="stable")
    return ordered.iloc[: k - 1], ordered.iloc[k - 1:]


def _others_row(ax, y: float, values: pd.Series) -> None:
    """One grey row: the others' median (dot) and range (bar), labelled with how many they are."""
    values = values.dropna()
    if values.empty:
        return
    ax.plot([values.min(), values.max()], [y, y], color=GREY, linewidth=3, solid_capstyle="butt", alpha=0.6)
    ax.plot([values.median()], [y], "o", color=GREY)


def _row_labels(ax, y, labels, others: int, what: str = "others") -> None:
    labels = [str(v) for v in labels]
    if others:
        y = list(y) + [-1]
        labels = labels + [f"{others} {what} (median, range)"]
    ax.set_yticks(y, labels)


@styled
def plot_means(table: pd.DataFrame, label: str, value_label: str = "mean normalised score (±1 SE)") -> Figure:
    """Horizontal dot-and-whisker chart of means with ±1 SE, first row on top.

    Parameters
    ----------
    table : output of `referee.run.scores.describe.mean_se` (columns `label`, `mean`, `se`), in display order.
    label : the column naming the rows (e.g. 'agent').
    value_label : x-axis title (say the unit and the interval).

    Returns
    -------
    matplotlib Figure, two columns wide, at most `MAX_ROWS` rows (the others summarised in one row).
    """
    shown, others = listed(table, "mean")
    fig, ax = _subplots(figsize=(TWO_COLUMNS * 0.75, _height(len(shown) + bool(len(others)))))
    y = list(range(len(shown)))[::-1]
    ax.errorbar(shown["mean"], y, xerr=shown["se"].fillna(0.0), fmt="o", color=BLUE, ecolor="#7fb2d9")
    if len(others):
        _others_row(ax, -1, others["mean"])
    _row_labels(ax, y, shown[label], len(others), f"other {label}s")
    ax.set_xlabel(value_label)
    ax.set_xlim(-0.02, 1.02)
    ax.grid(axis="x")
    ax.set_title(f"Mean score per {label}")
    return fig


@styled
def plot_bootstrap_violins(replicates: pd.DataFrame, order: list[str] | None = None) -> Figure:
    """Violins of bootstrap rating distributions, one per agent (COMPACT figure 2).

    replicates : `BootstrapResult.long()` (columns agent, replicate, rating on the Elo scale). order : agents
    top to bottom (default: by median rating). Beyond `MAX_ROWS` agents the top ones are drawn and the
    others' replicates pooled into one grey violin. Returns a Figure.
    """
    medians = replicates.groupby("agent")["rating"].median()
    order = list(order or medians.sort_values(ascending=False).index)
    shown, rest = order, []
    if len(order) > MAX_ROWS:
        shown, rest = order[: MAX_ROWS - 1], order[MAX_ROWS - 1:]
    by_agent = {a: g["rating"].dropna().to_numpy() for a, g in replicates.groupby("agent")}
    data = [by_agent.get(a, np.array([np.nan])) for a in shown]
    labels = list(shown)
    if rest:
        data.append(np.concatenate([by_agent[a] for a in rest if a in by_agent]))
        labels.append(f"{len(rest)} other agents (pooled)")
    data = [d if len(d) else np.array([np.nan]) for d in data]
    fig, ax = _subplots(figsize=(TWO_COLUMNS * 0.75, _height(len(labels))))
    positions = list(range(len(labels)))[::-1]
    finite = [(p, d) for p, d in zip(positions, data) if np.isfinite(d).any()]
    parts = ax.violinplot([d[np.isfinite(d)] for _, d in finite], positions=[p for p, _ in finite],
                          orientation="horizontal", showmedians=True, widths=0.8)
    for body in parts["bodies"]:
        body.set_facecolor("#7fb2d9")
        body.set_alpha(0.8)
    if rest:
        parts["bodies"][-1].set_facecolor(GREY)
    ax.set_yticks(positions, labels)
    ax.set_xlabel("rating (Elo scale)")
    ax.grid(axis="x")
    ax.set_title(f"Bootstrap ratings ({replicates['replicate'].nunique()} replicates)")
    return fig


NEVER_MET = "#d0d0d0"  # the grey of a pair never compared in a win-probability matrix


@styled
def plot_win_matrices(matrices: dict[str, pd.DataFrame]) -> Figure:
    """Heatmaps of P(row beats column), one panel per matrix (COMPACT figure 1).

    matrices : label -> square DataFrame (agents in rating order, best first). The first `MAX_MATRIX` agents
    are shown; cells carry their value while the matrix has at most `ANNOTATE_CELLS` agents; pairs never
    compared (NaN) are grey and hatched, named in a legend, so that they never read as 0.5 (white); the
    diagonal is grey. Returns a Figure two columns wide.
    """
    from matplotlib.patches import Patch, Rectangle

    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad=NEVER_MET)
    unmet = False
    k = len(matrices)
    n_all = max(len(m) for m in matrices.values())
    n = min(n_all, MAX_MATRIX)
    cols = min(k, 2)
    rows = -(-k // cols)
    side = min((TWO_COLUMNS - 0.8) / cols, (MAX_HEIGHT - 0.5) / rows)
    fig, axes = _subplots(rows, cols, figsize=(TWO_COLUMNS, min(MAX_HEIGHT, side * rows + 0.5)), squeeze=False)
    font = 7 if n <= ANNOTATE_CELLS else 6
    for panel, (ax, (label, matrix)) in enumerate(zip(axes.ravel(), matrices.items())):
        matrix = matrix.iloc[:n, :n]
        values = matrix.to_numpy(float)
        image = ax.imshow(values, vmin=0, vmax=1, cmap=cmap)
        for i, j in zip(*np.nonzero(~np.isfinite(values))):
            if i != j:
                unmet = True
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="////", edgecolor="#7a7a7a",
                                       linewidth=0))
        ax.set_xticks(range(len(matrix)), matrix.columns, rotation=90, fontsize=font)
        # a panel beside another names its rows only when they differ from its neighbour's
        same = panel % cols and list(matrix.index) == list(list(matrices.values())[panel - 1].index[:n])
        ax.set_yticks(range(len(matrix)), [] if same else matrix.index, fontsize=font)
        if len(matrix) <= ANNOTATE_CELLS:
            for i in range(len(matrix)):
                for j in range(len(matrix)):
                    if i != j and np.isfinite(matrix.iat[i, j]):
                        ax.text(j, i, f"{matrix.iat[i, j]:.2f}", ha="center", va="center", fontsize=5)
        shown = f" (top {n} of {n_all})" if n < n_all else ""
        ax.set_title(f"{label}{shown}", fontsize=8)
    for ax in axes.ravel()[k:]:
        ax.set_visible(False)
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.6, label="P(row beats column)")
    if unmet:
        fig.legend(handles=[Patch(facecolor=NEVER_MET, hatch="////", edgecolor="#7a7a7a", label="never met")],
                   loc="lower right", fontsize=7, frameon=False)
    return fig


OPEN_END = 400.0  # Elo points: how long plot_ratings draws an interval's open end


def plot_ratings(table: pd.DataFrame, ranked_first: bool = False) -> Figure:
    """Each agent's rating with its 95 % interval (a rating table: agent, rating, lower, upper), best on top;
    an open end (an agent that never won or never lost) is drawn OPEN_END Elo points long and named in the
    title. ranked_first : the table is a board (`block` column): its ranked agents in rank order on top, the
    provisional ones below them, marked, so that an agent with a handful of matches never leads the figure.
    Returns a Figure."""
    rated = table[table["rating"].notna()]
    if ranked_first and "block" in rated.columns:
        ranked = rated["block"] == "ranked"
        rated = pd.concat([rated[ranked], rated[~ranked].sort_values("rating", ascending=False)])
        rated = rated.assign(agent=np.where(ranked.reindex(rated.index), rated["agent"].astype(str),
                                            rated["agent"].astype(str) + " (provisional)"),
                             rating=rated["rating"])
        # the figure keeps the board's order: a descending key from it
        rated = rated.assign(order=np.arange(len(rated), 0, -1))
    else:
        rated = rated.sort_values("rating", ascending=False)
    lower, upper = rated["lower"].to_numpy(float), rated["upper"].to_numpy(float)
    rating = rated["rating"].to_numpy(float)
    open_ends = int((~np.isfinite(lower) & ~np.isnan(lower)).sum() + (~np.isfinite(upper) & ~np.isnan(upper)).sum())
    frame = pd.DataFrame({"agent": rated["agent"].astype(str).to_numpy(), "mean": rating,
                          "hdi_low": np.where(np.isneginf(lower), rating - OPEN_END, lower),
                          "hdi_high": np.where(np.isposinf(upper), rating + OPEN_END, upper)})
    title = "Ratings with 95 % intervals" + (f" ({open_ends} open end(s) drawn {OPEN_END:.0f} Elo points long)"
                                              if open_ends else "")
    order = rated["order"].to_numpy(float) if "order" in rated.columns else None
    return plot_intervals(frame, "agent", title, "rating (Elo scale)", reference=None, order=order)


@styled
def plot_intervals(table: pd.DataFrame, label: str, title: str, xlabel: str, reference: float | None = 0.0,
                   order=None) -> Figure:
    """Posterior means with interval bars (columns `label`, `mean`, `hdi_low`, `hdi_high`), first row on top,
    with a dashed reference line (contest figures 2 and 3 right). Beyond `MAX_ROWS` rows the ones of highest
    mean (or of highest `order`, an array beside the rows) are drawn and the others summarised in one grey
    row. Say the interval in `title` or the caption. Returns a Figure."""
    shown, others = listed(table if order is None else table.assign(_order=order),
                           "mean" if order is None else "_order")
    fig, ax = _subplots(figsize=(TWO_COLUMNS * 0.75, _height(len(shown) + bool(len(others)))))
    y = list(range(len(shown)))[::-1]
    lower = (shown["mean"] - shown["hdi_low"]).clip(lower=0)
    upper = (shown["hdi_high"] - shown["mean"]).clip(lower=0)
    ax.errorbar(shown["mean"], y, xerr=[lower, upper], fmt="o", color=BLUE, ecolor="#7fb2d9")
    if len(others):
        _others_row(ax, -1, others["mean"])
    if reference is not None:
        ax.axvline(reference, color="#666", linestyle="--", linewidth=0.8)
    _row_labels(ax, y, shown[label], len(others), f"other {label}s")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x")
    return fig


def _thinned_ticks(positions: list[float], labels: list[str], room: float, font: float) -> tuple[list, list]:
    """Every m-th tick so that labels `font` points tall fit in `room` inches without overlapping."""
    if not positions:
        return [], []
    per = room / len(positions)
    step = max(1, int(np.ceil((font / 72 * 1.3) / max(per, 1e-9))))
    return positions[::step], labels[::step]


@styled
def plot_correlation_heatmap(matrix: pd.DataFrame, title: str = "Pearson correlations") -> Figure:
    """Heatmap of a square correlation matrix (contest figure 5); cells carry their value up to
    `ANNOTATE_CELLS` * 1.5 rows, and labels are thinned so that they never overlap. Returns a Figure."""
    n = len(matrix)
    side = min(TWO_COLUMNS - 1.0, max(3.0, 0.3 * n + 1.5))
    fig, ax = _subplots(figsize=(side + 1.0, side))
    image = ax.imshow(matrix.to_numpy(float), vmin=-1, vmax=1, cmap="RdBu_r")
    font = 7 if n <= 30 else 6
    positions, labels = _thinned_ticks(list(range(n)), [str(c) for c in matrix.columns], side - 1.2, font)
    ax.set_xticks(positions, labels, rotation=90, fontsize=font)
    positions, labels = _thinned_ticks(list(range(n)), [str(c) for c in matrix.index], side - 1.2, font)
    ax.set_yticks(positions, labels, fontsize=font)
    if n <= ANNOTATE_CELLS * 1.5:
        for i in range(n):
            for j in range(n):
                if np.isfinite(matrix.iat[i, j]):
                    ax.text(j, i, f"{matrix.iat[i, j]:.2f}", ha="center", va="center", fontsize=4.5)
    fig.colorbar(image, ax=ax, shrink=0.8, label="Pearson r")
    ax.set_title(title)
    return fig


@styled
def plot_capability_profiles(capabilities: pd.DataFrame, extras: dict[str, pd.DataFrame]) -> Figure:
    """One panel per demand (plus base chance and sample size): each agent's posterior mean and 94% HDI
    (contest figure 6). capabilities : agent, demand, mean, hdi_low, hdi_high; extras : name -> agent,
    mean, hdi_low, hdi_high. Beyond `MAX_ROWS` agents, those of highest mean capability (over demands)
    are drawn. Returns a Figure."""
    panels = [(d, g) for d, g in capabilities.groupby("demand", sort=False)] + list(extras.items())
    average = capabilities.groupby("agent")["mean"].mean().sort_values(ascending=False)
    agents = sorted(average.index[: MAX_ROWS])
    cols = 4
    rows = -(-len(panels) // cols)
    height = min(MAX_HEIGHT, rows * (ROW_HEIGHT * len(agents) + 0.7))
    fig, axes = _subplots(rows, cols, figsize=(TWO_COLUMNS, height), squeeze=False, sharey=True)
    y = list(range(len(agents)))[::-1]
    for ax, (name, table) in zip(axes.ravel(), panels):
        table = table.set_index("agent").reindex(agents)
        ax.errorbar(table["mean"], y, xerr=[(table["mean"] - table["hdi_low"]).clip(lower=0),
                                            (table["hdi_high"] - table["mean"]).clip(lower=0)],
                    fmt="o", markersize=2.5, color=BLUE, ecolor="#7fb2d9")
        ax.set_title(textwrap.fill(str(name), 24), fontsize=7)
        ax.tick_params(axis="x", labelsize=6)
    for row in axes:
        row[0].set_yticks(y, agents, fontsize=6 if len(agents) > 20 else 7)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    n_all = capabilities["agent"].nunique()
    if n_all > len(agents):
        fig.suptitle(f"the {len(agents)} agents of highest mean capability, of {n_all}", fontsize=8)
    return fig


@styled
def plot_predictor_comparison(per_agent: pd.DataFrame) -> Figure:
    """Test R^2 (top) and RMSE (bottom) per agent and predictor (contest figure 7): grouped bars for up to
    `MAX_MATRIX` agents, else one jittered point per agent in a column per predictor, with the median.
    per_agent : agent, predictor, r2, rmse. Returns a Figure."""
    agents = sorted(per_agent["agent"].unique())
    predictors = list(dict.fromkeys(per_agent["predictor"]))
    fig, axes = _subplots(2, 1, figsize=(TWO_COLUMNS, 5.5), sharex=True)
    if len(agents) <= MAX_MATRIX:
        width = 0.8 / len(predictors)
        for k, predictor in enumerate(predictors):
            table = per_agent[per_agent["predictor"] == predictor].set_index("agent").reindex(agents)
            x = [i + (k - (len(predictors) - 1) / 2) * width for i in range(len(agents))]
            axes[0].bar(x, table["r2"], width, label=predictor)
            axes[1].bar(x, table["rmse"], width, label=predictor)
        axes[1].set_xticks(range(len(agents)), agents, rotation=90)
    else:
        rng = np.random.default_rng(0)
        for k, predictor in enumerate(predictors):
            table = per_agent[per_agent["predictor"] == predictor]
            jitter = k + rng.uniform(-0.25, 0.25, len(table))
            for ax, column in zip(axes, ("r2", "rmse")):
                ax.plot(jitter, table[column], "o", markersize=2, alpha=0.5, label=predictor if column == "r2" else None)
                ax.plot([k - 0.3, k + 0.3], [table[column].median()] * 2, color="black", linewidth=1.2)
        axes[1].set_xticks(range(len(predictors)), [f"{p}\n({per_agent['agent'].nunique()} agents)" for p in predictors])
    axes[0].axhline(0.35, color="#666", linestyle="--", linewidth=0.8)
    axes[0].set_ylabel("test R²")
    axes[1].set_ylabel("test RMSE (normalised score)")
    axes[0].legend(ncols=len(predictors), loc="lower left", bbox_to_anchor=(0, 1.0))
    return fig


@styled
def plot_decomposition(parts: pd.DataFrame, order: list[str]) -> Figure:
    """Stacked bars of each player's score components (negative parts below zero); returns a Figure.

    parts : columns player, component, value (`referee.models.validity.decompose`); order : players left to right
    (best first). Beyond `MAX_MATRIX` players the first ones are drawn and the others' mean is one grey-labelled
    bar.
    """
    table = parts.pivot_table(index="player", columns="component", values="value", aggfunc="sum").reindex(order)
    if len(table) > MAX_MATRIX:
        head, rest = table.iloc[: MAX_MATRIX - 1], table.iloc[MAX_MATRIX - 1:]
        table = pd.concat([head, rest.mean().to_frame(f"mean of {len(rest)} others").T])
    fig, ax = _subplots(figsize=(TWO_COLUMNS, 4.0))
    pos = np.zeros(len(table))
    neg = np.zeros(len(table))
    for component in table.columns:
        values = table[component].fillna(0.0).to_numpy()
        bottom = np.where(values >= 0, pos, neg)
        ax.bar(range(len(table)), values, bottom=bottom, label=component)
        pos += np.clip(values, 0, None)
        neg += np.clip(values, None, 0)
    ax.axhline(0, color="#444", linewidth=0.8)
    ax.set_xticks(range(len(table)), [str(i) for i in table.index], rotation=90)
    ax.set_ylabel("points (score component)")
    ax.set_title("Score decomposition")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


DISCRETE_LEVELS = 12  # an outcome with at most this many distinct, repeated values is drawn as jittered columns


def label_points(ax, xs, ys, labels, fontsize: float = 6) -> int:
    """Name scatter points without overlap: each label tries four places around its point and is left out
    when all four would overlap text already drawn or leave the axes. Returns how many were placed."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    taken = [t.get_window_extent(renderer) for t in ax.texts]
    placed = 0
    for x, y, label in zip(xs, ys, labels):
        for dx, dy, ha in ((3, 3, "left"), (3, -9, "left"), (-3, 3, "right"), (-3, -9, "right")):
            text = ax.annotate(str(label), (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize, ha=ha)
            box = text.get_window_extent(renderer)
            fits = inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
            if fits and not any(box.overlaps(other) for other in taken):
                taken.append(box)
                placed += 1
                break
            text.remove()
    return placed


@styled
def plot_score_vs_outcome(frame: pd.DataFrame, outcome: str | list[str], label: str = "player",
                          colour: str = "role") -> Figure:
    """Recorded score against one outcome or several (a list: one panel each, side by side, the outcomes the
    audit judged); returns a Figure.

    A discrete outcome (at most `DISCRETE_LEVELS` distinct values, each seen twice on average) is drawn as one
    jittered column per value, evenly spaced, with its median and its count (n) above; a continuous one as a
    scatter whose transparency falls with the number of points. Points are coloured by `colour` only when
    that column has values, and named (by `label`, `label_points`) when there are at most
    `MAX_POINTS_LABELLED`.
    """
    outcomes = [outcome] if isinstance(outcome, str) else list(outcome)
    if not outcomes:
        raise ValueError("no outcome to draw the score against")
    fig, axes = _subplots(1, len(outcomes), figsize=(TWO_COLUMNS * (0.75 if len(outcomes) == 1 else 1.0), 4.0),
                          squeeze=False, sharey=True)
    labelled = []
    for i, (name, ax) in enumerate(zip(outcomes, axes[0])):
        labelled.append(_score_against(ax, frame, name, label, colour, legend=i == len(outcomes) - 1))
        if i:
            ax.set_ylabel("")
    if any(labelled):
        fig.canvas.draw()  # the layout must be final before labels are measured
        for ax, named in zip(axes[0], labelled):
            if named:
                label_points(ax, *zip(*named))
    return fig


def _score_against(ax, frame: pd.DataFrame, outcome: str, label: str, colour: str, legend: bool) -> list:
    """One panel of `plot_score_vs_outcome` on `ax`; returns the points to name ([(x, y, name)], empty when there
    are too many to name)."""
    data = frame.dropna(subset=[outcome, "score"])
    groups = [("all", data)]
    if colour in data.columns and data[colour].notna().any():
        groups = list(data.groupby(data[colour].fillna("(none)").astype(str)))
    alpha = float(np.clip(30 / max(len(data), 1) ** 0.5, 0.08, 0.9))
    levels = np.sort(data[outcome].unique())
    discrete = len(levels) <= DISCRETE_LEVELS and len(data) >= 2 * len(levels)
    position = {level: i for i, level in enumerate(levels)}
    rng = np.random.default_rng(0)
    named = []
    for name, group in groups:
        x = group[outcome].to_numpy(float)
        if discrete:
            x = np.array([position[v] for v in group[outcome]]) + rng.uniform(-0.3, 0.3, len(x))
        ax.scatter(x, group["score"], s=12 if len(data) < 200 else 4, alpha=alpha,
                   label=name if len(groups) > 1 else None, linewidths=0)
        named += list(zip(x, group["score"], group[label] if label in group.columns else [""] * len(x)))
    if discrete:
        top = ax.get_xaxis_transform()  # x in data, y in axes fractions: the counts sit above the plot
        for i, level in enumerate(levels):
            at = data.loc[data[outcome] == level, "score"]
            ax.plot([i - 0.35, i + 0.35], [at.median()] * 2, color="black", linewidth=1.2)
            ax.text(i, 1.01, f"n={len(at):,}", transform=top, ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(levels)), [f"{v:g}" for v in levels])
    ax.set_xlabel(outcome)
    ax.set_ylabel("recorded score (points)")
    if len(groups) > 1 and legend:
        ax.legend(title=colour, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"Score against {outcome}" + (" (jittered; bar = median)" if discrete else ""), pad=14)
    return named if named and len(data) <= MAX_POINTS_LABELLED else []


@styled
def plot_similarity_blocks(matrix: pd.DataFrame, title: str = "Socio-cognitive similarity") -> Figure:
    """COMPACT figure 4: Pearson correlations between (agent, category) metric vectors, rows grouped by
    agent with lines between agents' blocks; agent labels are thinned so that they never overlap.
    matrix : square, MultiIndex (agent, category). Returns a Figure."""
    n = len(matrix)
    fig, ax = _subplots(figsize=(TWO_COLUMNS * 0.85, TWO_COLUMNS * 0.75))
    image = ax.imshow(matrix.to_numpy(float), vmin=-1, vmax=1, cmap="RdBu_r", interpolation="nearest")
    agents = matrix.index.get_level_values(0)
    edges = [k for k in range(1, n) if agents[k] != agents[k - 1]]
    if len(edges) <= 40:
        for k in edges:
            ax.axhline(k - 0.5, color="black", lw=0.5)
            ax.axvline(k - 0.5, color="black", lw=0.5)
    starts = [0] + edges
    ends = edges + [n]
    centres = [(s + e - 1) / 2 for s, e in zip(starts, ends)]
    names = [str(agents[s]) for s in starts]
    font = 7 if len(names) <= 30 else 6
    positions, labels = _thinned_ticks(centres, names, TWO_COLUMNS * 0.6, font)
    ax.set_xticks(positions, labels, rotation=90, fontsize=font)
    ax.set_yticks(positions, labels, fontsize=font)
    fig.colorbar(image, ax=ax, shrink=0.8, label="Pearson r")
    ax.set_title(title)
    return fig


@styled
def plot_consistency(summary: pd.DataFrame, interval: str = "95% bootstrap interval") -> Figure:
    """COMPACT figure 5: mean correlation per comparison with its interval (`interval` names it on the axis,
    e.g. '±1 SEM over pairs', the paper's error bars).
    summary : comparison, mean_r, low, high. Returns a Figure."""
    fig, ax = _subplots(figsize=(TWO_COLUMNS * 0.85, _height(len(summary), 1.4)))
    y = np.arange(len(summary))
    ax.errorbar(summary["mean_r"], y, xerr=[(summary["mean_r"] - summary["low"]).clip(lower=0),
                                            (summary["high"] - summary["mean_r"]).clip(lower=0)],
                fmt="o", color=BLUE)
    ax.axvline(0, color="#666", lw=0.8)
    ax.set_yticks(y, summary["comparison"])
    ax.invert_yaxis()
    ax.set_xlabel(f"mean Pearson r of metric vectors ({interval})")
    return fig


@styled
def plot_roc_curves(curves: dict[str, pd.DataFrame], aucs: dict[str, float]) -> Figure:
    """COMPACT figure 6: out-of-fold ROC curves. curves : model -> fpr, tpr; aucs : model -> mean fold AUC.
    Returns a Figure one column wide."""
    fig, ax = _subplots(figsize=(ONE_COLUMN + 0.6, ONE_COLUMN + 0.3))
    for model, curve in curves.items():
        ax.plot(curve["fpr"], curve["tpr"], label=f"{model} (AUC {aucs.get(model, float('nan')):.2f})")
    ax.plot([0, 1], [0, 1], color="#666", lw=0.8, ls="--")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.legend(loc="lower right")
    return fig
