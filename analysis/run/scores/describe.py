"""Descriptive summaries of normalised scores: means with standard errors by agent, scenario or any column."""

from __future__ import annotations

import numpy as np
import pandas as pd


def mean_se(scores: pd.DataFrame, by: str, value: str = "score_norm") -> pd.DataFrame:
    """Mean and standard error of `value` per level of `by`.

    Parameters
    ----------
    scores : tidy table with columns `by` and `value` (e.g. `referee.prepare.scores.normalised_scores`).
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


def scenario_features(scenarios: pd.DataFrame, tags: pd.DataFrame) -> pd.DataFrame:
    """Binary scenario-level features: one column per tag, per substrate (`substrate: NAME`) and `resident`.

    Parameters: canonical `scenarios` and `scenario_tags`. Returns a DataFrame indexed by scenario.
    """
    tag_part = pd.crosstab(tags["scenario"], tags["tag"]).clip(upper=1)
    sub = pd.get_dummies(scenarios.set_index("scenario")["game"].dropna(), prefix="substrate", prefix_sep=": ").astype(int)
    resident = (scenarios.set_index("scenario")["mode"] == "resident").astype(int).rename("resident")
    features = pd.concat([tag_part, sub, resident], axis=1).fillna(0).astype(int)
    return features.loc[features.index.isin(scenarios["scenario"])]


def feature_correlations(scores: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    """Pearson correlation matrix of the normalised score and the scenario features (contest figure 5).

    scores : scenario, score_norm; features : `scenario_features(...)`. Returns a square DataFrame whose
    first row/column is `score`; constant features are dropped (their correlation is undefined).
    """
    joined = scores[["scenario", "score_norm"]].dropna().join(features, on="scenario").drop(columns="scenario")
    joined = joined.rename(columns={"score_norm": "score"})
    joined = joined.loc[:, joined.std() > 0]
    return joined.corr(method="pearson")


def ranking_alignment(first: pd.Series, second: pd.Series) -> dict:
    """How closely two orderings of the same agents agree (the contest paper, section 9.4: Elo "closely
    aligns" with the ranking by mean normalised score).

    first, second : one value per agent (index: agent; higher = better), e.g. Elo ratings and mean scores;
    only agents in both count. Returns agents (n), kendall_tau (tau-b, ties allowed), spearman_rho, and
    top_agree (whether both put the same agent first); NaN correlations with fewer than 3 agents.
    """
    from scipy.stats import kendalltau, spearmanr

    both = pd.concat([first.rename("a"), second.rename("b")], axis=1, join="inner").dropna()
    n = len(both)
    if n < 3:
        return {"agents": n, "kendall_tau": float("nan"), "spearman_rho": float("nan"), "top_agree": None}
    return {"agents": n, "kendall_tau": float(kendalltau(both["a"], both["b"]).statistic),
            "spearman_rho": float(spearmanr(both["a"], both["b"]).statistic),
            "top_agree": bool(both["a"].idxmax() == both["b"].idxmax())}


def scores_by(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(mean normalised score per agent, per scenario) with standard errors (`mean_se`); a row without a
    scenario is counted under its game."""
    return mean_se(scores, "agent"), mean_se(scores.assign(scenario=scores["scenario"].fillna(scores["game"])),
                                             "scenario")
