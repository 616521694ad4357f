"""Orchestration of the score models: data from a store, fits, and their files on disk.

`model_scores(store)` is the tidy table the beta regressions and Measurement Layouts read (one row per
(match, agent) of scenario-based matches, with `score_norm` in [0, 1]); `fit_store_layout` fits the Measurement
Layout to it with the contest paper's demands. Files are written by `referee.present.outputs.ResultsFolder.fit`.
"""

from __future__ import annotations

import pandas as pd

from referee.prepare.scores import normalised_scores


def model_scores(store, phases: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(scores, scenarios, scenario_tags) for scenario-based matches (in `phases` when given; all otherwise);
    raises ValueError when there are none."""
    scores = normalised_scores(store, scenarios_only=True, phases=phases)  # its warnings reach the caller
    if scores.empty:
        raise ValueError("the store holds no scenario-based matches (Concordia-style) to model")
    return scores, store.table("scenarios"), store.table("scenario_tags")


def fit_store_layout(scores: pd.DataFrame, scenarios: pd.DataFrame, tags: pd.DataFrame, seed: int = 0, **sampling):
    """The Measurement Layout fitted to `model_scores`' tables: demands from
    `referee.run.predictive.demand_matrix` (negatively correlated tags, substrates, visitor), rows without a
    normalised score left out. sampling : draws, tune, chains, sampler for `referee.models.fit.sample`. Returns
    (LayoutFit, the demand matrix, index scenario)."""
    from referee.run.predictive import demand_matrix, layout_on

    demands = demand_matrix(scores, scenarios, tags)
    return layout_on(scores.dropna(subset=["score_norm"]), demands, seed, sampling), demands
