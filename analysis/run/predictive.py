"""Demands and the predictive comparison of Measurement Layouts with linear regression, XGBoost and a constant.

`demand_matrix(scores, scenarios, tags)` builds the demands the contest paper used: tags whose presence
correlates negatively with score, one indicator per substrate, and a visitor indicator.

`compare_predictors(scores, demands)` splits (agent, scenario) cells into train and test (every repetition
of a cell on the same side, so no test cell leaks into training), fits on the training cells (a) the
Measurement Layout, (b) a linear regression per agent on the demands, (c) XGBoost per agent on the same
demands, (d) a constant equal to the agent's training mean, and reports per agent and pooled the test
R-squared and RMSE (contest figure 7), with which agents reach the inclusion threshold R^2 >= 0.35.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from xgboost import XGBRegressor

from analysis.run.describe import feature_correlations, scenario_features
from models.scores.measurement_layout import LayoutFit, fit_layout

R2_THRESHOLD = 0.35
PREDICTORS = ("measurement layout", "linear regression", "xgboost", "constant")


def demand_matrix(scores: pd.DataFrame, scenarios: pd.DataFrame, tags: pd.DataFrame) -> pd.DataFrame:
    """Binary demands per scenario (index scenario): negatively correlated tags, substrates, `visitor`."""
    features = scenario_features(scenarios[scenarios["scenario"].isin(scores["scenario"])], tags)
    corr = feature_correlations(scores, features)["score"]
    tag_names = sorted(tags["tag"].unique())
    negative = [t for t in tag_names if t in corr.index and corr[t] < 0]
    substrates = [c for c in features.columns if c.startswith("substrate: ")]
    demands = features[negative + substrates].copy()
    demands["visitor"] = 1 - features["resident"]
    return demands


def split_cells(scores: pd.DataFrame, test_share: float = 0.25, seed: int = 0) -> np.ndarray:
    """True for rows in the test set: whole (agent, scenario) cells, a `test_share` of each agent's cells."""
    rng = np.random.default_rng(seed)
    test = np.zeros(len(scores), bool)
    for agent, group in scores.groupby("agent"):
        cells = np.array(sorted(group["scenario"].unique()))
        k = max(1, int(round(test_share * len(cells))))
        chosen = set(rng.choice(cells, size=k, replace=False))
        test[group.index[group["scenario"].isin(chosen)]] = True
    return test


@dataclass
class Comparison:
    """Per-agent and pooled test metrics, the test predictions, and the layout fitted on training cells."""

    per_agent: pd.DataFrame  # agent, predictor, r2, rmse, n_test
    pooled: pd.DataFrame  # predictor, r2, rmse, n_test
    predictions: pd.DataFrame  # the test rows with one column per predictor
    layout: LayoutFit

    def included_agents(self) -> list[str]:
        """Agents whose Measurement Layout reaches test R^2 >= 0.35 (whose profiles the paper showed)."""
        ml = self.per_agent[self.per_agent["predictor"] == "measurement layout"]
        return sorted(ml.loc[ml["r2"] >= R2_THRESHOLD, "agent"])


def _metrics(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    rows = []
    for key, group in (frame.groupby(keys) if keys else [((), frame)]):
        for predictor in PREDICTORS:
            y, p = group["score_norm"].to_numpy(), group[predictor].to_numpy()
            r2 = r2_score(y, p) if len(y) > 1 and np.var(y) > 0 else np.nan
            row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
            row.update(predictor=predictor, r2=r2, rmse=float(np.sqrt(mean_squared_error(y, p))), n_test=len(y))
            rows.append(row)
    return pd.DataFrame(rows)


def compare_predictors(scores: pd.DataFrame, demands: pd.DataFrame, test_share: float = 0.25, seed: int = 0,
                       **sampling) -> Comparison:
    """Fit the four predictors on training cells and score them on held-out cells (module docstring).

    scores : agent, scenario, score_norm (one row per (match, agent)); demands : `demand_matrix(...)`.
    sampling : draws, tune, chains, sampler for the layout (default: `fit_layout`'s, which converge).
    """
    data = scores.dropna(subset=["score_norm"]).reset_index(drop=True)
    X = demands.reindex(data["scenario"]).to_numpy(float)
    test = split_cells(data, test_share, seed)
    train = ~test
    layout = fit_layout(data.loc[train, "agent"], X[train], data.loc[train, "score_norm"].to_numpy(),
                        list(demands.columns), seed=seed, **sampling)
    out = data.loc[test, ["agent", "scenario", "score_norm"]].copy()
    out["measurement layout"] = layout.predict(list(out["agent"]), X[test])
    for col in ("linear regression", "xgboost", "constant"):
        out[col] = np.nan
    for agent in sorted(data["agent"].unique()):
        tr = train & (data["agent"] == agent).to_numpy()
        te = test & (data["agent"] == agent).to_numpy()
        if not te.any():
            continue
        y = data.loc[tr, "score_norm"].to_numpy()
        rows = out.index[out["agent"] == agent]
        out.loc[rows, "constant"] = y.mean()
        out.loc[rows, "linear regression"] = np.clip(LinearRegression().fit(X[tr], y).predict(X[te]), 0, 1)
        booster = XGBRegressor(n_estimators=60, max_depth=2, learning_rate=0.2, random_state=seed, n_jobs=1)
        out.loc[rows, "xgboost"] = np.clip(booster.fit(X[tr], y).predict(X[te]), 0, 1)
    return Comparison(_metrics(out, ["agent"]), _metrics(out, []), out.reset_index(drop=True), layout)
