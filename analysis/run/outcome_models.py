"""`referee fit pass-fail` and `referee fit graded`: hierarchical models of per-sample outcomes from a store, their
tables (agents, tasks, accuracy raw beside pooled and the runner's own standard error, priors, summary) and, with
`compare`, the PSIS-LOO / WAIC comparison of the ladder agent -> agent + task -> crossed.

Each is registered in `referee.models.registry.SCORE_MODELS` (data 'outcomes'): called as (outcomes, stated,
seed, effects, interaction, compare, **sampling) -> (fit, tables, lines), `outcomes` from
`referee.prepare.outcomes.sample_outcomes`, `stated` the runner's own standard errors (agent, task,
runner_stderr) or None.
"""

from __future__ import annotations

import pandas as pd

from referee.prepare.outcomes import outcome_kind


def pass_fail(outcomes, stated, seed, effects, interaction, compare, **sampling):
    """Bernoulli outcomes with a logit link (fitted as binomial counts per (agent, item))."""
    return _fit(outcomes, stated, "pass-fail", seed, effects, interaction, compare, sampling)


def graded(outcomes, stated, seed, effects, interaction, compare, **sampling):
    """Graded outcomes (e.g. Inspect's C/P/I, a judge's 1-5) with an ordered logistic."""
    return _fit(outcomes, stated, "graded", seed, effects, interaction, compare, sampling)


def check_kind(outcomes: pd.DataFrame, likelihood: str) -> None:
    """ValueError before any compile or draw when the scores are not what `likelihood` models."""
    kind = outcome_kind(outcomes["y"])
    if kind is None:
        raise ValueError(f"the scores take {outcomes['y'].nunique()} distinct values: they are continuous, not "
                         "pass/fail or graded; model them with tag-effects or baseline-contrast (normalised scores)")
    if likelihood == "pass-fail" and kind != "pass-fail":
        raise ValueError(f"pass-fail needs every score 0 or 1; these take {sorted(outcomes['y'].unique())[:7]}: "
                         "fit them with `referee fit graded`")


def _fit(outcomes, stated, likelihood, seed, effects, interaction, compare, sampling):
    from referee.models.scores.outcome_glm import LADDER, cell_table, check_outcomes, compare_ladder, fit_outcomes

    check_kind(outcomes, likelihood)
    check_outcomes(outcomes, effects, likelihood)
    found = fit_outcomes(outcomes, effects=effects, interaction=interaction, likelihood=likelihood, seed=seed,
                         **sampling)
    accuracy = cell_table(found, outcomes)
    if stated is not None and len(stated):
        accuracy = accuracy.merge(stated, on=["agent", "task"], how="left")
    tables = {"table": found.table(), "tasks": found.tasks, "accuracy": accuracy, "priors": found.priors,
              "summary": found.summary}
    lines = [f"{len(outcomes)} scored samples, {outcomes['agent'].nunique()} agents, {outcomes['task'].nunique()} "
             f"tasks, {outcomes['item'].nunique()} items" + (f" ({outcomes.attrs['unscored']} without a score left "
                                                             "out)" if outcomes.attrs.get("unscored") else "")]
    if compare:
        fits = {name: found if (name == effects and not interaction) else
                fit_outcomes(outcomes, effects=name, likelihood=likelihood, seed=seed, **sampling) for name in LADDER}
        if interaction or effects not in LADDER:
            fits[f"{effects}+interaction" if interaction else effects] = found
        for name, fit in fits.items():
            if fit is not found:
                found.notes += [f"{name}: {n}" for n in fit.notes if n.startswith("ConvergenceWarning")]
        comparison, notes = compare_ladder(fits)
        tables["compare"] = comparison
        found.notes[:0] = notes
        lines.append(notes[0])
    return found, tables, lines
