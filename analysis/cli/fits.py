"""`referee fit, compare-predictors, calibrate and describe`: the Bayesian models of scores and their checks. Each
command's parser and what it runs; heavy modules are imported inside the commands, so that `referee --help` starts
at once."""

from __future__ import annotations

import json
from pathlib import Path

from referee.cli.common import (
    _common,
    _count,
    _executor,
    _executor_args,
    _fit_payload,
    _folder,
    _model_data,
    _notes,
    _out_arg,
    _phase_arg,
    _positive_int,
    _sampling,
    _sampling_args,
    _say,
    _seed_arg,
    _store_arg,
    _written,
)
from referee.models.registry import CALIBRATION_FAMILIES as FAMILIES


def cmd_calibrate(args) -> dict:
    from referee.present.plan_figures import plot_rank_histograms
    from referee.run.calibrate import calibrate

    with _executor(args) as executor:
        result = calibrate(args.model, args.sims, seed=args.seed, size=args.size, executor=executor, **_sampling(args))
    folder = _folder(args)
    folder.table("summary", result.summary)
    folder.table("ranks", result.ranks)
    folder.table("fits", result.fits)
    folder.figure("rank_histograms", plot_rank_histograms(
        result.ranks, result.summary, f"{args.model}: rank histograms over {args.sims} simulations "
        "(grey: 99% band of a uniform histogram)"))
    folder.notes(result.notes)
    folder.diagnostics(result.diagnostics)
    folder.close()
    if args.store is not None:
        from referee.io.store import Store

        with Store(args.store) as store:
            store.record_calibration(args.model, args.sims, result.passed, result.diagnostics["groups_failed"],
                                     args.out, result.summary)
    _say(args, result.summary.to_string(index=False))
    _notes(args, result)
    _say(args, f"{args.model}: {'PASSED' if result.passed else 'FAILED'}; wrote {args.out}/")
    if not result.passed:
        args.failure = f"calibration of {args.model} failed for: {', '.join(result.diagnostics['groups_failed'])}"
    return {"model": args.model, "passed": result.passed, "summary": result.summary.to_dict("records"),
            "notes": result.notes, "diagnostics": result.diagnostics, "written": _written(folder)}


def cmd_fit(args) -> dict:
    from referee.models.scores import beta_regression as br
    from referee.present.figures import plot_intervals

    (scores, scenarios, tags), folder = _model_data(args)
    if args.model == "measurement-layout":
        return _fit_layout(args, scores, scenarios, tags, folder)
    common = dict(seed=args.seed, likelihood=args.likelihood, **_sampling(args))
    if args.model == "tag-effects":
        fit = br.fit_tag_effects(scores, tags, scenario_intercepts=args.scenario_intercepts,
                                 agent_intercepts=not args.no_agent_intercepts, structure=args.structure, **common)
        table = fit.table()
        figure = plot_intervals(table, "tag", "Tag coefficients (posterior mean, 94% HDI)", "log-odds effect on score")
    else:
        fit = br.fit_baseline_contrast(scores, args.baseline, **common)
        table = fit.table()
        figure = plot_intervals(table, "agent", f"Log-odds difference from {args.baseline} (mean, 95% HDI)",
                                "log-odds difference")
    folder.fit(fit, figure, args.model, table=table)
    folder.close()
    return _fit_payload(args, fit, table, folder)


def _fit_layout(args, scores, scenarios, tags, folder) -> dict:
    from referee.present.figures import plot_capability_profiles
    from referee.run.score_models import fit_store_layout

    if args.likelihood != "ordered":
        raise ValueError("the Measurement Layout uses the ordered-beta likelihood only; drop --likelihood squeeze")
    fit, demands = fit_store_layout(scores, scenarios, tags, seed=args.seed, **_sampling(args))
    caps = fit.table()  # the capabilities
    figure = plot_capability_profiles(caps, {n: fit.parameters(n) for n in ("base_chance", "sample_size")})
    folder.fit(fit, figure, "measurement-layout", table=caps)
    folder.table("capabilities", caps)
    folder.table("demands", demands, index=True)
    folder.close()
    _say(args, f"demands: {list(demands.columns)}")
    return _fit_payload(args, fit, caps, folder)


def cmd_compare_predictors(args) -> dict:
    from referee.present.figures import (
        plot_capability_profiles,
        plot_predictor_comparison,
    )
    from referee.run.predictive import compare_predictors, training_demands

    (scores, scenarios, tags), folder = _model_data(args)
    with _executor(args) as executor:
        comp = compare_predictors(scores, training_demands(scores, scenarios, tags), folds=args.folds, seed=args.seed,
                                  executor=executor, **_sampling(args))
    folder.table("per_agent", comp.per_agent)
    folder.table("pooled", comp.pooled)
    folder.table("predictions", comp.predictions)
    folder.table("fold_diagnostics", comp.fold_diagnostics)
    folder.table("fold_demands", comp.demands)
    folder.figure("comparison", plot_predictor_comparison(comp.per_agent))
    included = comp.included_agents()
    caps = comp.layout.capabilities()
    if included:
        extras = {n: comp.layout.parameters(n).loc[lambda t: t["agent"].isin(included)]
                  for n in ("base_chance", "sample_size")}
        folder.figure("profiles", plot_capability_profiles(caps[caps["agent"].isin(included)], extras))
    folder.notes(comp.layout.notes)
    folder.diagnostics(comp.layout.diagnostics)
    folder.close()
    _say(args, comp.pooled.to_string(index=False))
    _say(args, comp.per_agent.pivot(index="agent", columns="predictor", values="r2").to_string())
    _say(args, f"agents reaching test R^2 >= 0.35 with the Measurement Layout: {included or 'none'}")
    _notes(args, comp.layout)
    _say(args, f"layout diagnostics: {json.dumps(comp.layout.diagnostics)}")
    return {"pooled": comp.pooled.to_dict("records"), "included": included, "diagnostics": comp.layout.diagnostics,
            "notes": comp.layout.notes, "written": _written(folder)}


def cmd_describe(args) -> dict:
    from referee.present.figures import plot_correlation_heatmap, plot_means
    from referee.run.describe import feature_correlations, mean_se, scenario_features

    (scores, scenarios, tags), folder = _model_data(args)
    by_agent, by_scenario = mean_se(scores, "agent"), mean_se(scores, "scenario")
    corr = feature_correlations(scores, scenario_features(scenarios, tags))
    folder.table("mean_by_agent", by_agent)
    folder.table("mean_by_scenario", by_scenario)
    folder.table("correlations", corr, index=True)
    folder.figure("mean_by_agent", plot_means(by_agent, "agent"))
    folder.figure("mean_by_scenario", plot_means(by_scenario, "scenario"))
    folder.figure("correlations", plot_correlation_heatmap(corr, "Score, tags, substrates and resident status"))
    folder.close()
    _say(args, by_agent.to_string(index=False))
    _say(args, f"wrote {args.out}/mean_by_agent.*, mean_by_scenario.*, correlations.*")
    return {"mean_by_agent": by_agent.to_dict("records"), "written": _written(folder)}


def add_parsers(sub) -> None:
    """Add the parsers of calibrate, fit, compare-predictors, describe to the subparsers `sub`."""
    p = sub.add_parser("calibrate", help="simulation-based calibration of a Bayesian model (Talts et al. 2018): "
                       "rank histograms and HDI coverage per parameter group")
    p.add_argument("model", choices=list(FAMILIES))
    p.add_argument("--sims", type=_positive_int, default=100, help="simulations (default 100)")
    p.add_argument("--size", type=_count, default=0, help="design size: 0 the smallest, each step adds agents")
    p.add_argument("--store", type=Path, help="record the run in this store; its report links each model's latest")
    _sampling_args(p)
    _executor_args(p)
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("fit", help="Bayesian beta regressions and Measurement Layouts of normalised scores")
    p.add_argument("model", choices=["tag-effects", "baseline-contrast", "measurement-layout"])
    _store_arg(p)
    _phase_arg(p)
    p.add_argument("--baseline", default="rational_agent", help="baseline agent for baseline-contrast")
    _sampling_args(p)
    p.add_argument("--likelihood", choices=["ordered", "squeeze"], default="ordered",
                   help="ordered beta (default) or the Smithson-Verkuilen squeeze (beta regressions only)")
    p.add_argument("--scenario-intercepts", action="store_true", help="tag-effects: add scenario intercepts")
    p.add_argument("--no-agent-intercepts", action="store_true", help="tag-effects: leave out agent intercepts")
    p.add_argument("--structure", choices=["identified", "paper"], default="identified",
                   help="tag-effects: 'identified' (default) gives agent slopes only to tags present in and absent "
                   "from at least 3 scenarios; 'paper' gives every tag agent slopes, as the contest paper")
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("compare-predictors", help="Measurement Layout vs linear regression, XGBoost and a constant")
    _store_arg(p)
    _phase_arg(p)
    p.add_argument("--folds", type=_positive_int, default=4,
                   help="folds over each agent's scenarios (default 4: every cell held out once, a quarter at a "
                        "time); R^2 and RMSE are averaged over folds")
    _sampling_args(p)
    _seed_arg(p)
    _executor_args(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_compare_predictors)

    p = sub.add_parser("describe", help="descriptive figures: means by agent and scenario, correlation heatmap")
    _store_arg(p)
    _phase_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_describe)
