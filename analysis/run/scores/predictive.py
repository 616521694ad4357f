"""Demands and the predictive comparison of Measurement Layouts with linear regression, XGBoost and a constant.

`demand_matrix(scores, scenarios, tags)` builds the demands the contest paper used: tags whose presence
correlates negatively with score, one indicator per substrate, and a visitor indicator.

`compare_predictors(scores, demands)` follows figure 7's protocol as k-fold cross-validation over each
agent's scenarios: every (agent, scenario) cell, all its repetitions together, is held out in exactly one of
`folds` folds, so that no test cell leaks into training. In each fold it chooses the demands on the training
rows only (when `demands` is a function of the training rows, as `training_demands` gives), fits on the
training cells (a) the Measurement Layout, (b) a linear regression per agent on the demands, (c) XGBoost per
agent on the same demands, (d) a constant equal to the agent's training mean, and scores them on the held-out
cells. R-squared and RMSE are computed per fold and averaged over folds with their spread (sd), per agent and
pooled; the inclusion rule R^2 >= 0.35 applies to the Measurement Layout's fold average. A final layout fitted
on every cell gives the capability profiles (figure 6).
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from xgboost import XGBRegressor

from referee.run.scores.describe import feature_correlations, scenario_features
from referee.run.executor import Executor, Shared, Task, Then, share, start_tasks
from referee.models.scores.measurement_layout import LayoutFit, fit_layout

R2_THRESHOLD = 0.35
FOLDS = 4  # the paper held out a quarter of each agent's scenarios; four folds test every cell once
PREDICTORS = ("measurement layout", "linear regression", "xgboost", "constant")


def demand_matrix(scores: pd.DataFrame, scenarios: pd.DataFrame, tags: pd.DataFrame,
                  select_on: pd.DataFrame | None = None) -> pd.DataFrame:
    """Binary demands per scenario of `scores` (index scenario): the tags whose presence correlates negatively
    with score in `select_on` (default: `scores` itself; in cross-validation, the training rows only), one
    indicator per substrate, and `visitor`."""
    features = scenario_features(scenarios[scenarios["scenario"].isin(scores["scenario"])], tags)
    rows = scores if select_on is None else select_on
    corr = feature_correlations(rows, features.loc[features.index.isin(rows["scenario"])])["score"]
    tag_names = sorted(tags["tag"].unique())
    negative = [t for t in tag_names if t in corr.index and corr[t] < 0]
    substrates = [c for c in features.columns if c.startswith("substrate: ")]
    demands = features[negative + substrates].copy()
    demands["visitor"] = 1 - features["resident"]
    return demands


@dataclass(frozen=True)
class TrainingDemands:
    """The demands as a function of the training rows (picklable, so sweep tasks can carry it): `demand_matrix`
    over `scenarios` (the catalogue rows of the scored scenarios), its tags chosen on the rows it is given."""

    scenarios: pd.DataFrame
    tags: pd.DataFrame

    def __call__(self, train: pd.DataFrame) -> pd.DataFrame:
        """The demand matrix (index scenario) with tags chosen on `train` (scenario, score_norm)."""
        return demand_matrix(self.scenarios, self.scenarios, self.tags, select_on=train)  # every scenario scored


def training_demands(scores: pd.DataFrame, scenarios: pd.DataFrame, tags: pd.DataFrame) -> TrainingDemands:
    """The demands as a function of the training rows: `demand_matrix` over every scenario of `scores`, its tags
    chosen on the rows it is given (so that held-out cells never choose the demands they are scored on)."""
    return TrainingDemands(scenarios[scenarios["scenario"].isin(scores["scenario"])].reset_index(drop=True),
                           tags.reset_index(drop=True))


def cell_folds(scores: pd.DataFrame, folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """The test fold (0 .. folds-1) of every row: each agent's scenarios are shuffled and dealt in turn into
    the folds, so a fold holds whole (agent, scenario) cells, about 1/folds of each agent's scenarios."""
    if folds < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(scores), int)
    for _, group in scores.groupby("agent"):
        cells = rng.permutation(np.array(sorted(group["scenario"].unique())))
        dealt = {cell: k % folds for k, cell in enumerate(cells)}
        fold[group.index] = group["scenario"].map(dealt).to_numpy()
    return fold


@dataclass
class Comparison:
    """The k-fold predictive comparison (module docstring).

    per_agent : agent, predictor, r2, r2_sd, rmse, rmse_sd, folds (fold means and sds over the folds that test
    the agent), n_test; pooled : predictor, r2, r2_sd, rmse, rmse_sd, folds, n_test; predictions : every row
    with its fold and one column per predictor (each row predicted once, by the fold that held it out);
    layout : figure 6's profiles: the final layout fitted on every cell, or (profiles='training') the one test
    fold's layout, fitted on its training cells; fold_diagnostics : each fold's
    layout convergence; demands : the demands chosen in each fold (fold, demand)."""

    per_agent: pd.DataFrame
    pooled: pd.DataFrame
    predictions: pd.DataFrame
    layout: LayoutFit
    fold_diagnostics: pd.DataFrame = field(default_factory=pd.DataFrame)
    demands: pd.DataFrame = field(default_factory=pd.DataFrame)

    def included_agents(self) -> list[str]:
        """Agents whose Measurement Layout reaches a fold-average test R^2 >= 0.35 (the paper's rule for the
        profiles it showed)."""
        ml = self.per_agent[self.per_agent["predictor"] == "measurement layout"]
        return sorted(ml.loc[ml["r2"] >= R2_THRESHOLD, "agent"])


def _metrics(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """R^2 and RMSE per fold (and per `keys`), then their mean and sd over folds."""
    rows = []
    for key, group in frame.groupby(keys + ["fold"]):
        key = key if isinstance(key, tuple) else (key,)
        for predictor in PREDICTORS:
            y, p = group["score_norm"].to_numpy(), group[predictor].to_numpy()
            r2 = r2_score(y, p) if len(y) > 1 and np.var(y) > 0 else np.nan
            row = dict(zip(keys + ["fold"], key))
            row.update(predictor=predictor, r2=r2, rmse=float(np.sqrt(mean_squared_error(y, p))), n_test=len(y))
            rows.append(row)
    per_fold = pd.DataFrame(rows)
    out = per_fold.groupby(keys + ["predictor"], sort=False).agg(
        r2=("r2", "mean"), r2_sd=("r2", "std"), rmse=("rmse", "mean"), rmse_sd=("rmse", "std"),
        folds=("fold", "nunique"), n_test=("n_test", "sum")).reset_index()
    return out


def compare_predictors(scores: pd.DataFrame, demands: pd.DataFrame | Callable[[pd.DataFrame], pd.DataFrame],
                       folds: int = FOLDS, seed: int = 0, executor: Executor | None = None,
                       test_folds: list[int] | None = None, profiles: str = "all", **sampling) -> Comparison:
    """Cross-validate the four predictors over each agent's scenarios (module docstring), one sweep task per
    fold and one for the final layout (`executor`: where they run, `referee.run.executor`; the same result
    on any: fold k's layout is seeded seed + k). `start_comparison(...).finish()`.

    scores : agent, scenario, score_norm (one row per (match, agent)). demands : a demand matrix (index
    scenario) used in every fold, or a function of the training rows returning one (`training_demands`: the
    paper's tags chosen on training rows only; picklable when the folds run elsewhere). folds : how many folds
    (each cell tested once). test_folds : only these folds are held out and scored (e.g. [0]: the contest
    paper's one train/test split, about 1/folds of each agent's cells tested; default every fold). profiles :
    where the layout of figure 6's profiles (`Comparison.layout`) is learned: 'all' (a final layout on every
    cell) or 'training' (the layout of the one test fold's training cells, as the contest paper learned its
    profiles; needs exactly one test fold). sampling : draws, tune, chains, sampler for the layouts (default:
    `fit_layout`'s, which converge).
    """
    return start_comparison(scores, demands, folds, seed, executor, test_folds, profiles, **sampling).finish()


def comparison_of(profiles: str, found: list) -> Comparison:
    """The `Comparison` made of the results of `start_comparison`'s tasks (each fold's, then with profiles 'all'
    the final layout's)."""
    parts, final = (found[:-1], found[-1]) if profiles == "all" else (found, found[0][3])
    predictions = pd.concat([p[0] for p in parts]).sort_index()  # the rows of the folds scored
    diagnostics = [p[1] for p in parts]
    chosen = [row for p in parts for row in p[2]]
    return Comparison(_metrics(predictions, ["agent"]), _metrics(predictions, []), predictions.reset_index(drop=True),
                      final, pd.DataFrame(diagnostics), pd.DataFrame(chosen))


def start_comparison(scores: pd.DataFrame, demands: pd.DataFrame | Callable[[pd.DataFrame], pd.DataFrame],
                     folds: int = FOLDS, seed: int = 0, executor: Executor | None = None,
                     test_folds: list[int] | None = None, profiles: str = "all", **sampling) -> Then:
    """`compare_predictors`'s fits started where `executor` runs them, returning at once (the options are
    checked first): with local processes or Dask the folds are fitted while this process goes on; `finish()`
    gives the `Comparison`."""
    if profiles not in ("all", "training"):
        raise ValueError(f"profiles must be 'all' or 'training', got {profiles!r}")
    if profiles == "training" and (test_folds is None or len(test_folds) != 1):
        raise ValueError("profiles='training' learns the profiles on the training cells of one split: give one "
                         f"test fold (test_folds=[k]), got {test_folds}")
    data = scores.dropna(subset=["score_norm"]).reset_index(drop=True)[["agent", "scenario", "score_norm"]]
    data["fold"] = cell_folds(data, folds, seed)
    shared = share(executor, "scores", data)
    tasks = [Task(f"predictive-fold-{k}", predictive_fold, (shared, k, demands, seed, sampling))
             for k in (range(folds) if test_folds is None else test_folds) if (data["fold"] == k).any()]
    if profiles == "all":
        tasks.append(Task("final-layout", final_layout, (shared, demands, seed, sampling)))
    return Then(start_tasks(tasks, executor, "predictive folds"), functools.partial(comparison_of, profiles))


def predictive_fold(shared: Shared, k: int, demands, seed: int, sampling: dict
                    ) -> tuple[pd.DataFrame, dict, list, LayoutFit]:
    """One fold of `compare_predictors` (a sweep task): the four predictors fitted on the other folds' rows of
    `shared` (agent, scenario, score_norm, fold) and applied to fold k's. Returns (fold k's rows with one column
    per predictor, index as in the shared rows; the layout's diagnostics with `fold`; the demands chosen; the
    layout fitted on the training rows)."""
    data = shared.load()
    test, train = (data["fold"] == k).to_numpy(), (data["fold"] != k).to_numpy()
    D = demands(data[train]) if callable(demands) else demands
    X = D.reindex(data["scenario"]).to_numpy(float)
    chosen = [{"fold": k, "demand": d} for d in D.columns]
    layout = fit_layout(data.loc[train, "agent"], X[train], data.loc[train, "score_norm"].to_numpy(),
                        list(D.columns), seed=seed + k, **sampling)
    out = data.loc[test, ["agent", "scenario", "score_norm"]].assign(fold=k)
    out["measurement layout"] = layout.predict(list(out["agent"]), X[test])
    for agent, rows in out.groupby("agent").groups.items():
        tr = train & (data["agent"] == agent).to_numpy()
        te = test & (data["agent"] == agent).to_numpy()
        y = data.loc[tr, "score_norm"].to_numpy()
        out.loc[rows, "constant"] = y.mean()
        out.loc[rows, "linear regression"] = np.clip(LinearRegression().fit(X[tr], y).predict(X[te]), 0, 1)
        booster = XGBRegressor(n_estimators=60, max_depth=2, learning_rate=0.2, random_state=seed, n_jobs=1)
        out.loc[rows, "xgboost"] = np.clip(booster.fit(X[tr], y).predict(X[te]), 0, 1)
    return out, dict(fold=k, **layout.diagnostics), chosen, layout


def final_layout(shared: Shared, demands, seed: int, sampling: dict) -> LayoutFit:
    """The layout fitted on every row of `shared` (figure 6's profiles; a sweep task of `compare_predictors`)."""
    data = shared.load()
    return layout_on(data, demands(data) if callable(demands) else demands, seed, sampling)


def layout_on(data: pd.DataFrame, demands: pd.DataFrame, seed: int, sampling: dict) -> LayoutFit:
    """The Measurement Layout fitted to the rows `data` (agent, scenario, score_norm) with the demand matrix
    `demands` (index scenario, one 0/1 column per demand); sampling : draws, tune, chains, sampler."""
    return fit_layout(data["agent"], demands.reindex(data["scenario"]).to_numpy(float), data["score_norm"].to_numpy(),
                      list(demands.columns), seed=seed, **sampling)
