"""Every figure at 5 and at 150 agents: within two paper columns by 9 inches, nothing cut off, no two labels
overlapping (`tests.figure_checks`), and the content still there (top agents listed, others summarised)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from referee.present import figures as F
from tests.figure_checks import figure_problems

SIZES = (5, 150)


def _names(n: int) -> list[str]:
    # real model names are long: provider/model-version
    return [f"provider-{i % 7}/model-{i:03d}-2025-instruct" for i in range(n)]


def _intervals(n, rng, label="agent"):
    mean = np.sort(rng.normal(0, 1, n))[::-1]
    return pd.DataFrame({label: _names(n), "mean": mean, "hdi_low": mean - 0.5, "hdi_high": mean + 0.5})


def _matrix(n, rng):
    names = _names(n)
    strength = np.sort(rng.normal(0, 1, n))[::-1]
    p = 1 / (1 + np.exp(-(strength[:, None] - strength[None, :])))
    np.fill_diagonal(p, np.nan)
    return pd.DataFrame(p, index=names, columns=names)


def build(kind: str, n: int) -> plt.Figure:
    """The figure `kind` drawn from synthetic inputs with `n` agents."""
    rng = np.random.default_rng(n)
    names = _names(n)
    if kind == "means":
        mean = np.sort(rng.uniform(0, 1, n))[::-1]
        return F.plot_means(pd.DataFrame({"agent": names, "mean": mean, "se": 0.03, "n": 10}), "agent")
    if kind == "violins":
        reps = pd.DataFrame({"agent": np.repeat(names, 200), "replicate": np.tile(np.arange(200), n),
                             "rating": np.repeat(rng.normal(1000, 100, n), 200) + rng.normal(0, 30, 200 * n)})
        return F.plot_bootstrap_violins(reps)
    if kind == "win_matrices":
        return F.plot_win_matrices({"fitted": _matrix(n, rng), "observed": _matrix(n, rng)})
    if kind == "intervals":
        return F.plot_intervals(_intervals(n, rng), "agent", "Difference from the baseline (95% HDI)",
                                "log-odds difference")
    if kind == "correlations":
        values = rng.normal(size=(50, n))
        return F.plot_correlation_heatmap(pd.DataFrame(values, columns=names).corr(), "correlations")
    if kind == "capabilities":
        caps = pd.concat([_intervals(n, rng).assign(demand=d) for d in ("persuasion", "negotiation", "coordination",
                                                                       "deception", "planning")])
        return F.plot_capability_profiles(caps, {"base_chance": _intervals(n, rng), "sample_size": _intervals(n, rng)})
    if kind == "predictors":
        per = pd.DataFrame([{"agent": a, "predictor": p, "r2": rng.uniform(-0.2, 0.9), "rmse": rng.uniform(0.1, 0.3)}
                            for a in names for p in ("layout", "linear", "xgboost", "constant")])
        return F.plot_predictor_comparison(per)
    if kind == "decomposition":
        parts = pd.DataFrame([{"player": a, "component": c, "value": rng.normal(10, 20)}
                              for a in names for c in ("build", "trade", "war", "penalty")])
        return F.plot_decomposition(parts, names)
    if kind == "score_vs_outcome":
        rows = 20 * n if n > 5 else n  # 150 agents: 3,000 player-matches on 5 outcome values
        frame = pd.DataFrame({"player": [f"p{i}" for i in range(rows)], "score": rng.normal(50, 10, rows),
                              "outcome": rng.integers(0, 5, rows).astype(float), "role": None})
        return F.plot_score_vs_outcome(frame, "outcome")
    if kind == "similarity":
        idx = pd.MultiIndex.from_product([names, ["competitive", "cooperative", "mixed"]])
        values = rng.normal(size=(20, len(idx)))
        return F.plot_similarity_blocks(pd.DataFrame(np.corrcoef(values.T), index=idx, columns=idx))
    if kind == "consistency":
        return F.plot_consistency(pd.DataFrame({"comparison": ["intra-agent", "inter-agent", "intra-category"],
                                                "mean_r": [0.6, 0.1, 0.3], "low": [0.5, 0.0, 0.2],
                                                "high": [0.7, 0.2, 0.4]}))
    if kind == "roc":
        curve = pd.DataFrame({"fpr": np.linspace(0, 1, 20), "tpr": np.linspace(0, 1, 20) ** 0.5})
        return F.plot_roc_curves({"metrics": curve, "ratings": curve, "both": curve},
                                 {"metrics": 0.7, "ratings": 0.6, "both": 0.75})
    if kind == "cycles":  # names cycle in threes: every triad of consecutive names is a cycle
        from referee.present.game_figures import plot_cycles

        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        payoffs = pd.DataFrame([{"agent": a, "opponent": b, "win_rate": w, "comparisons": 20}
                                for a, b in pairs for w in (0.75,)] + [{"agent": b, "opponent": a, "win_rate": 0.25,
                                                                        "comparisons": 20} for a, b in pairs])
        cycles = pd.DataFrame([{"first": names[i], "second": names[i + 1], "third": names[i + 2], "strength": 3.0 - i}
                               for i in range(min(n - 2, 10))])
        return plot_cycles(cycles, payoffs)
    raise KeyError(kind)


KINDS = ["means", "violins", "win_matrices", "intervals", "correlations", "capabilities", "predictors",
         "decomposition", "score_vs_outcome", "similarity", "consistency", "roc", "cycles"]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_figure_reads_at_any_number_of_agents(kind, n):
    fig = build(kind, n)
    try:
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)


def test_the_checks_catch_overlap_and_cut_titles():
    """The checks can fail: the old drafts' faults are found."""
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_yticks(range(150), [f"agent {i}" for i in range(150)])  # 150 labels on 3 inches
    ax.set_title("a title far too long for its figure " * 4)
    problems = figure_problems(fig)
    plt.close(fig)
    assert any("overlap" in p for p in problems) and any("cut off" in p for p in problems)
    tall = plt.figure(figsize=(6.5, 60))
    assert any("exceeds" in p for p in figure_problems(tall))
    plt.close(tall)


def test_long_listings_show_the_top_and_summarise_the_rest():
    fig = build("means", 150)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    plt.close(fig)
    assert len(labels) == F.MAX_ROWS
    assert labels[0] == _names(150)[0] and labels[-1] == f"{150 - F.MAX_ROWS + 1} other agents (median, range)"
    fig = build("win_matrices", 150)
    assert [len(ax.get_xticklabels()) for ax in fig.axes[:2]] == [F.MAX_MATRIX] * 2
    assert f"top {F.MAX_MATRIX} of 150" in fig.axes[0].get_title()
    plt.close(fig)


def test_discrete_outcomes_carry_their_counts_and_no_empty_legend():
    fig = build("score_vs_outcome", 150)
    ax = fig.axes[0]
    counts = sorted(t.get_text() for t in ax.texts if t.get_text().startswith("n="))
    assert len(counts) == 5 and sum(int(c[2:].replace(",", "")) for c in counts) == 3000
    assert ax.get_legend() is None  # no "role: (none)"
    plt.close(fig)


def test_the_style_ships_with_the_package_and_uses_a_colour_blind_safe_palette():
    import matplotlib as mpl

    assert F.STYLE.exists()
    with plt.style.context(F.STYLE):
        cycle = [c.lower().lstrip("#") for c in mpl.rcParams["axes.prop_cycle"].by_key()["color"]]
    okabe_ito = {"0072b2", "e69f00", "009e73", "d55e00", "cc79a7", "56b4e9", "f0e442", "000000"}
    assert set(cycle) == okabe_ito
