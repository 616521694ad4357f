"""Orchestration of the score models: data from a store, fits, and their files on disk.

`model_scores(store)` is the tidy table the beta regressions and Measurement Layouts read (one row per
(match, agent) of scenario-based matches, with `score_norm` in [0, 1]); `fit_store_layout` fits the Measurement
Layout to it with the contest paper's demands. Files are written by `referee.present.outputs.ResultsFolder.fit`.
"""

from __future__ import annotations

import pandas as pd

from referee.prepare.scores import normalised_scores


def model_scores(store, phases: list[str] | None = None, runner: str | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(scores, scenarios, scenario_tags) for scenario-based matches (of `runner` and in `phases` when given; all
    otherwise); raises ValueError when there are none, or when they come from several runners and none was
    chosen."""
    matches = store.matches()
    runners = sorted(matches.loc[matches["scenario"].notna(), "runner"].dropna().unique())
    if runner is None and len(runners) > 1:  # a scenario's demands, tags and score bounds are its runner's own
        raise ValueError(f"the store's scenario-based matches come from runners {runners}: choose one with --runner "
                         "(a model of scenario demands reads one runner's scenarios)")
    scores = normalised_scores(store, scenarios_only=True, phases=phases, runner=runner,
                               matches=matches)  # its warnings reach the caller
    if scores.empty:
        raise ValueError("the store holds no scenario-based matches (Concordia-style) to model"
                         + (f" of runner {runner!r}" if runner is not None else ""))
    return scores, store.scenarios(), store.scenario_tags()


def fit_store_layout(scores: pd.DataFrame, scenarios: pd.DataFrame, tags: pd.DataFrame, seed: int = 0, **sampling):
    """The Measurement Layout fitted to `model_scores`' tables: demands from
    `referee.run.scores.predictive.demand_matrix` (negatively correlated tags, substrates, visitor), rows without a
    normalised score left out. sampling : draws, tune, chains, sampler for `referee.models.fit.sample`. Returns
    (LayoutFit, the demand matrix, index scenario)."""
    from referee.run.scores.predictive import demand_matrix, layout_on

    demands = demand_matrix(scores, scenarios, tags)
    return layout_on(scores.dropna(subset=["score_norm"]), demands, seed, sampling), demands


def tag_effects(scores, scenarios, tags, seed, likelihood, baseline, scenario_intercepts, agent_intercepts, structure,
                **sampling):
    """`fit tag-effects` (`referee.run.scores.score_registry.SCORE_MODELS`): (the fit, its tables, lines to print): the tag
    coefficients (log-odds effects on the score)."""
    from referee.models.scores.beta_regression import fit_tag_effects

    found = fit_tag_effects(scores, tags, scenario_intercepts=scenario_intercepts, agent_intercepts=agent_intercepts,
                            structure=structure, seed=seed, likelihood=likelihood, **sampling)
    return found, _fit_tables(found, found.table()), []


def baseline_contrast(scores, scenarios, tags, seed, likelihood, baseline, scenario_intercepts, agent_intercepts,
                      structure, **sampling):
    """`fit baseline-contrast`: each agent's log-odds difference from `baseline`."""
    from referee.models.scores.beta_regression import fit_baseline_contrast

    found = fit_baseline_contrast(scores, baseline, seed=seed, likelihood=likelihood, **sampling)
    return found, _fit_tables(found, found.table()), []


def measurement_layout(scores, scenarios, tags, seed, likelihood, baseline, scenario_intercepts, agent_intercepts,
                       structure, **sampling):
    """`fit measurement-layout`: the capabilities (the main table) and the demands."""
    found, demands = fit_store_layout(scores, scenarios, tags, seed=seed, **sampling)
    caps = found.table()
    tables = {**_fit_tables(found, caps), "capabilities": caps,
              "demands": demands.rename_axis("scenario").reset_index()}
    return found, tables, [f"demands: {list(demands.columns)}"]


def _fit_tables(found, table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """A fit's tables as `referee fit` writes them: `table`, and `summary` when the fit has one."""
    summary = getattr(found, "summary", None)
    return {"table": table, **({"summary": summary} if isinstance(summary, pd.DataFrame) else {})}
