"""The jobs on normalised scores and the models' own checks (`referee fit, compare-predictors, describe, calibrate,
plan`; `referee.fit(...)` and so on): each one function from a store and typed options
(`referee.run.job_table.JOBS`) to a `Result`. Scores are per-scenario normalised, in [0, 1]."""

from __future__ import annotations

import contextlib
import json

from referee.run.executor import sweep_executor
from referee.run.options import sampling
from referee.result import CalibrateJobResult, FitJobResult, PowerJobResult, PredictorsJobResult, Result
from referee.run.scores.score_models import model_scores
from referee.run.stored import selected_tables


def fit(store, model: str, baseline: str = "rational_agent", likelihood: str | None = None,
        scenario_intercepts: bool = False, no_agent_intercepts: bool = False, structure: str = "identified",
        effects: str = "crossed", interaction: bool = False, compare: bool = False, measure: str | None = None,
        task: str | None = None, item: str | None = None, runner: str | None = None, phase: list[str] | None = None,
        seed: int = 0, **options) -> FitJobResult:
    """A Bayesian model of scores (`referee fit`): `model` one of `referee.run.scores.score_registry.SCORE_MODELS`: of
    normalised scores (tag effects, the baseline contrast against `baseline`, the Measurement Layout) or of
    per-sample outcomes (pass-fail, graded: `effects` the ladder step, `interaction` agent x task, `compare`
    the PSIS-LOO/WAIC ladder, `measure` a measure to read instead of the score, `task` and `item` the match
    columns that are the task and the item: default the game and the scenario, said in the output). `likelihood`
    (beta regressions
    only): 'ordered' (default) or 'squeeze'; an outcome model asked for one is refused. What a model needs (catalogue
    tags, the baseline agent, pass/fail or graded scores) is checked before any compile or draw. The main table
    is the model's; the posterior is `result.idata`."""
    from referee.run.scores.score_registry import SCORE_MODELS

    spec = SCORE_MODELS[model]
    if likelihood is not None and likelihood not in spec.likelihoods:
        offered = (f"uses the {' or '.join(spec.likelihoods)} likelihood only" if spec.likelihoods else
                   f"chooses its likelihood by its name; --likelihood {likelihood} is for the beta regressions")
        raise ValueError(f"{model} {offered}: drop --likelihood {likelihood}")
    if spec.data == "outcomes":
        from referee.prepare.outcomes import ITEM_COLUMN, TASK_COLUMN, sample_outcomes
        from referee.run.scores.outcome_models import stated_stderr
        from referee.run.ratings.runner_numbers import stored_tables

        matches, results = store.matches(), store.results()
        outcomes = sample_outcomes(matches, results, store.measures() if measure else None, runner, measure,
                                   phase, task=task or TASK_COLUMN, item=item or ITEM_COLUMN)
        stated = stated_stderr(stored_tables(store, matches[matches["match_id"].isin(outcomes["sample"])], results))
        found, tables, lines = spec.run(outcomes, stated, seed=seed, effects=effects, interaction=interaction,
                                        compare=compare, **sampling(options))
        fields = {"model": model, "effects": effects, "interaction": interaction, **outcomes.attrs["roles"]}
        return FitJobResult("fit", tables, found.notes, found.diagnostics, fields=fields, lines=lines, value=found,
                            drawn={"figure": spec.figure})
    if compare or interaction or measure or task or item or effects != "crossed":
        raise ValueError(f"--effects, --interaction, --compare, --measure, --task and --item are for the outcome "
                         f"models (pass-fail, graded), not {model}")
    likelihood = likelihood or spec.likelihoods[0]
    scores, scenarios, tags = model_scores(store, phase, runner)
    check_score_inputs(spec, scores, tags, baseline)
    found, tables, lines = spec.run(scores, scenarios, tags, seed=seed, likelihood=likelihood, baseline=baseline,
                                    scenario_intercepts=scenario_intercepts, agent_intercepts=not no_agent_intercepts,
                                    structure=structure, **sampling(options))
    return FitJobResult("fit", tables, found.notes, found.diagnostics, fields={"model": model, "baseline": baseline},
                        lines=lines, value=found, drawn={"figure": spec.figure})


def check_score_inputs(spec, scores, tags, baseline: str) -> None:
    """ValueError, before any compile or draw, when the store lacks what the score model `spec` needs: catalogue
    tags on the scored scenarios (tag-effects, the Measurement Layout), the baseline agent (baseline-contrast),
    two agents."""
    if scores["agent"].nunique() < 2:
        raise ValueError(f"{spec.name} needs two or more agents; the scores have {scores['agent'].nunique()}")
    if spec.needs_tags:
        tagged = set(tags["scenario"]) & set(scores["scenario"]) if len(tags) else set()
        if not tagged:
            raise ValueError(f"{spec.name} models scores by the scenarios' tags, and none of the "
                             f"{scores['scenario'].nunique()} scored scenario(s) has any: ingest with --catalogue "
                             "FILE naming each scenario's tags (or fit pass-fail / graded, which need none)")
    if spec.needs_baseline and baseline not in set(scores["agent"]):
        raise ValueError(f"baseline agent {baseline!r} is not among the scored agents "
                         f"({', '.join(sorted(scores['agent'].unique())[:8])}): name one with --baseline")


def predictors(store, folds: int = 4, runner: str | None = None, phase: list[str] | None = None, seed: int = 0,
               **options) -> PredictorsJobResult:
    """The Measurement Layout against linear regression, XGBoost and a constant (`referee compare-predictors`,
    contest figure 7), cross-validated over each agent's scenarios (of `runner`, in `phase`): `pooled` (the main
    table), `per_agent`, the predictions and each fold's diagnostics and demands. `start_predictors(...).finish()`."""
    return start_predictors(store, folds, runner, phase, seed, **options).finish()


def predictors_result(comp) -> PredictorsJobResult:
    """The `compare-predictors` job's result made of its `Comparison`: `pooled` (the main table), `per_agent`, the
    predictions and each fold's diagnostics and demands."""
    included = comp.included_agents()
    tables = {"pooled": comp.pooled, "per_agent": comp.per_agent, "predictions": comp.predictions,
              "fold_diagnostics": comp.fold_diagnostics, "fold_demands": comp.demands}
    lines = [comp.per_agent.pivot(index="agent", columns="predictor", values="r2").to_string(),
             f"agents reaching test R^2 >= 0.35 with the Measurement Layout: {included or 'none'}",
             f"layout diagnostics: {json.dumps(comp.layout.diagnostics)}"]
    return PredictorsJobResult("compare-predictors", tables, list(comp.layout.notes), dict(comp.layout.diagnostics),
                               fields={"included": included}, lines=lines, value=comp)


def start_predictors(store, folds: int = 4, runner: str | None = None, phase: list[str] | None = None, seed: int = 0,
                     **options):
    """`predictors` started: the scores read from `store` now and the folds' fits begun in the sweep's executor
    (`jobs`, `scheduler`: local processes or Dask run them while the caller goes on; in-process, they run at
    `finish()`, which gives the job's result and closes the executor)."""
    from referee.run.executor import Then
    from referee.run.scores.predictive import start_comparison, training_demands

    scores, scenarios, tags = model_scores(store, phase, runner)
    held = contextlib.ExitStack()
    executor = held.enter_context(sweep_executor(options))
    try:
        started = start_comparison(scores, training_demands(scores, scenarios, tags), folds=folds, seed=seed,
                                   executor=executor, **sampling(options))
    except BaseException:
        held.close()
        raise
    return Then(started, predictors_result, close=held.close)


def describe(store, runner: str | None = None, phase: list[str] | None = None) -> Result:
    """Descriptive tables (`referee describe`) of the scenario-based matches (of `runner`, in `phase`): the mean
    normalised score per agent and per scenario with ±1 SE over matches, the correlations of score, tags,
    substrates and resident status, and `scores`, the normalised scores themselves (one row per (match, agent);
    `score_norm` in [0, 1])."""
    from referee.run.scores.describe import feature_correlations, mean_se, scenario_features

    scores, scenarios, tags = model_scores(store, phase, runner)
    by_agent, by_scenario = mean_se(scores, "agent"), mean_se(scores, "scenario")
    corr = feature_correlations(scores, scenario_features(scenarios, tags))
    return Result("describe", {"mean_by_agent": by_agent, "mean_by_scenario": by_scenario,
                               "correlations": corr.rename_axis("feature").reset_index(), "scores": scores})


def calibrate(store, model: str, sims: int = 100, size: int = 0, out=None, seed: int = 0, **options) -> CalibrateJobResult:
    """Simulation-based calibration of a Bayesian model (`referee calibrate`; Talts et al. 2018): rank
    histograms and HDI coverage per parameter group. With a store, the run is recorded in it (its report links
    each model's latest, in folder `out`). `failure` says which groups failed."""
    from referee.run.scores.calibrate import calibrate as run_calibration

    with sweep_executor(options) as executor:
        result = run_calibration(model, sims, seed=seed, size=size, executor=executor, **sampling(options))
    failed = result.diagnostics["groups_failed"]
    if store is not None:
        store.record_calibration(model, sims, result.passed, failed, out or "", result.summary)
    return CalibrateJobResult("calibrate", {"summary": result.summary, "ranks": result.ranks, "fits": result.fits}, result.notes,
                  result.diagnostics, fields={"model": model, "sims": sims, "passed": result.passed},
                  lines=[f"{model}: {'PASSED' if result.passed else 'FAILED'}"], value=result,
                  failure=None if result.passed else f"calibration of {model} failed for: {', '.join(failed)}")


def plan(store, budget: int = 20, target: str = "adjacent:0.95", rule: str = "c-optimal", players: int = 2,
         power: bool = False, delta: float = 50.0, pair: str | None = None, sims: int = 200,
         scenarios: int | None = None, profiles: bool = False, model: str = "tag-effects", posterior=None,
         repeats: int = 1, demand: str | None = None, runner: str | None = None, phase: list[str] | None = None,
         parallel: bool = False, where: list[str] | None = None, seed: int = 0, **options) -> Result:
    """Which matches to run next, and how many (`referee plan`): a plan of `budget` matches by `rule` toward
    `target`; with `power`, the power curve to separate two agents `delta` Elo points apart; with `scenarios`,
    the N scenarios that would most shrink what `model` now knows least."""
    from referee.run.scores.score_registry import SCORE_MODELS

    if not SCORE_MODELS[model].layout and (posterior or repeats != 1 or demand):
        raise ValueError("--posterior, --repeats and --demand are for --scenarios N --model measurement-layout")
    if scenarios:
        return _scenario_plan(store, scenarios, profiles, model, posterior, repeats, demand, phase, seed, options,
                              runner)
    from referee.prepare.comparisons import comparable_agents, comparisons_from_tables
    from referee.run.ratings.plan import plan as plan_matches, power_curve

    matches, results, notes = selected_tables(store, runner, phase, where)
    comparisons = comparisons_from_tables(matches, results)
    if comparisons.empty:
        raise ValueError("no comparisons in the selected matches: ingest some first, or check --runner / --where")
    if power:
        curve = power_curve(comparisons, delta, pair=tuple(pair.split(",", 1)) if pair else None, sims=sims, seed=seed)
        enough = curve[curve["power"] >= 0.8]
        notes.append(f"about {int(enough['matches'].iloc[0])} matches of the current design separate two agents "
                     f"{delta:g} Elo apart with 80 % power" if len(enough) else
                     f"80 % power is not reached within {int(curve['matches'].max())} matches")
        return PowerJobResult("plan", {"power": curve}, notes, fields={"delta": delta})
    result = plan_matches(comparisons, budget, target=target, rule=rule, players=players, seed=seed,
                          agents=comparable_agents(matches, results))
    counts = result.matches["rule"].value_counts().to_dict()
    notes.append(f"{len(result.matches)} matches proposed for target {target} by {rule}: "
                 + ", ".join(f"{n} {k}" for k, n in counts.items()))
    return Result("plan", {"plan": result.matches, "ratings": result.ratings}, notes, value=result)


def _scenario_plan(store, n, profiles, model, posterior, repeats, demand, phase, seed, options,
                   runner: str | None = None) -> Result:
    """`plan --scenarios N`: the scenarios (tag profiles) that would most shrink the tag coefficients now least
    known (`referee.models.scores.scenario_design`), or with the Measurement Layout the capabilities now least
    known (`referee.run.scores.scenario_plan`), from `posterior` (an idata.nc `referee fit measurement-layout` wrote,
    or its folder) or a layout fitted now."""
    from referee.run.scores.score_registry import SCORE_MODELS

    scores, scenarios, tags = model_scores(store, phase, runner)
    if SCORE_MODELS[model].layout:
        return _layout_plan(scores, scenarios, tags, n, profiles, posterior, repeats, demand, seed, options)
    from referee.models.scores.scenario_design import next_scenarios

    candidates = sorted(set(scenarios["scenario"]) - set(scores["scenario"]))
    table = next_scenarios(scores, tags, candidates, n, profiles=profiles)
    if table.empty:
        raise ValueError("no candidate scenario: every catalogue scenario is played; add --profiles for "
                         "hypothetical tag profiles")
    note = (f"{len(table)} scenario(s) proposed from {len(candidates)} unplayed catalogue scenario(s)"
            + (" and hypothetical profiles" if profiles else "") + "; sd on the logit scale of the mean score, "
            "by a normal approximation of the tag-effects model (scenario-level information)")
    return Result("plan", {"scenarios": table}, [note])


def _layout_plan(scores, scenarios, tags, n, profiles, posterior, repeats, demand, seed, options) -> Result:
    from pathlib import Path

    from referee.models.scores.layout_design import layout_draws
    from referee.run.scores.scenario_plan import layout_scenario_plan

    notes = []
    if posterior:
        import arviz as az
        from referee.models.fit import diagnose
        from referee.models.scores.measurement_layout import DIAGNOSED

        given = Path(posterior)
        path = given / "idata.nc" if given.is_dir() else given
        if not path.is_file():
            raise ValueError(f"--posterior {posterior}: no such file (give the idata.nc that `referee fit "
                             "measurement-layout` wrote, or its folder)")
        idata = az.from_netcdf(str(path))
        draws = layout_draws(idata)  # a clear error for a posterior that is not a layout's, before diagnosing it
        diagnostics = diagnose(idata, DIAGNOSED)  # warns when not converged
        notes.append(f"Capabilities' posterior read from {path} (diagnostics {json.dumps(diagnostics)}).")
    else:
        from referee.run.scores.score_models import fit_store_layout

        fitted, _ = fit_store_layout(scores, scenarios, tags, seed=seed, **sampling(options))
        draws = layout_draws(fitted.idata)
        notes += fitted.notes + [f"Measurement Layout fitted now (diagnostics {json.dumps(fitted.diagnostics)})."]
    table, planned = layout_scenario_plan(scores, scenarios, tags, draws, n, repeats=repeats, profiles=profiles,
                                          target=demand, seed=seed)
    return Result("plan", {"scenarios": table}, notes + planned)
