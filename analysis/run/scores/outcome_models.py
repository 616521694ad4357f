"""`referee fit pass-fail` and `referee fit graded`: hierarchical models of per-sample outcomes from a store, their
tables (agents, tasks, accuracy raw beside pooled and the runner's own standard error, priors, summary) and, with
`compare`, the PSIS-LOO / WAIC comparison of the ladder agent -> agent + task -> crossed.

Each is registered in `referee.run.scores.score_registry.SCORE_MODELS` (data 'outcomes'): called as (outcomes, stated,
seed, effects, interaction, compare, **sampling) -> (fit, tables, lines), `outcomes` from
`referee.prepare.outcomes.sample_outcomes`, `stated` the runner's own standard errors (`stated_stderr`).
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


def stated_stderr(tables) -> pd.DataFrame:
    """The runner's own stated standard error of each agent's headline per task, where its output states one and
    one log holds the pair (Inspect's header `stderr`; `referee.run.ratings.runner_numbers.HEADLINES`): agent, task,
    runner_stderr. `tables`: `referee.run.ratings.runner_numbers.Tables` of the modelled matches."""
    from referee.run.ratings.runner_numbers import runner_numbers

    numbers = runner_numbers(tables)
    stated = numbers[numbers["headline"].astype(bool) & numbers["task"].notna() & numbers["stated_stderr"].notna()]
    one = stated.groupby(["agent", "task"])["stated_stderr"].agg(["size", "first"]).reset_index()
    one = one[one["size"] == 1]
    return pd.DataFrame({"agent": one["agent"].astype(str), "task": one["task"].astype(str),
                         "runner_stderr": one["first"].astype(float)})


def check_kind(outcomes: pd.DataFrame) -> None:
    """ValueError before any compile or draw when the scores are continuous: neither pass/fail nor graded (the
    model checks the rest, `referee.models.scores.outcome_glm.check_outcomes`)."""
    if outcome_kind(outcomes["y"]) is None:
        raise ValueError(f"the scores take {outcomes['y'].nunique()} distinct values: they are continuous, not "
                         "pass/fail or graded; model them with tag-effects or baseline-contrast (normalised scores)")


def _fit(outcomes, stated, likelihood, seed, effects, interaction, compare, sampling):
    from referee.models.scores.outcome_glm import LADDER, cell_table, compare_ladder, fit_outcomes

    check_kind(outcomes)
    found = fit_outcomes(outcomes, effects=effects, interaction=interaction, likelihood=likelihood, seed=seed,
                         **sampling)
    accuracy = cell_table(found)
    if len(stated):
        accuracy = accuracy.merge(stated, on=["agent", "task"], how="left")
    tables = {"table": found.table(), "tasks": found.tasks, "accuracy": accuracy, "priors": found.priors,
              "summary": found.summary}
    lines = [f"{len(outcomes)} scored samples, {outcomes['agent'].nunique()} agents, {outcomes['task'].nunique()} "
             f"tasks, {outcomes['item'].nunique()} items" + (f" ({outcomes.attrs['unscored']} without a score left "
                                                             "out)" if outcomes.attrs.get("unscored") else "")
             + _roles_said(outcomes.attrs.get("roles"))]
    shared, total = outcomes.attrs.get("shared", (0, 0))
    if shared:  # players of one match are not independent samples of the agents' pass rates
        found.notes.append(f"{shared:,} of {total:,} matches seat several agents (a head-to-head store): each player's "
                           "outcome is fitted as a sample of its own, as if the players' outcomes did not depend on "
                           "each other; for such matches `referee ratings` compares the players within the match")
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


def _roles_said(roles: dict | None) -> str:
    """Which match columns were read as the task and the item, and whether that is the default."""
    if not roles:
        return ""
    default = roles == {"task": "game", "item": "scenario"}
    return (f"; task = the match's {roles['task']}, item = its {roles['item']}"
            + (" (the default; --task and --item name others)" if default else ""))
