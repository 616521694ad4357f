"""The `referee` command line. Every command is a thin wrapper over a documented function:
ingest -> `Store.ingest`, info -> `Store.info`, simulate -> `analysis.simulate`, report ->
`analysis.pipeline.build_report`, demo -> `analysis.pipeline.run_demo`.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from analysis import loaders
from analysis.catalogue import CONTEST_2024, CatalogueError, load_catalogue
from analysis.loaders.table import read_mapping
from analysis.store import DEFAULT_STORE, IngestError, Store


def _store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", type=Path, default=DEFAULT_STORE, help=f"DuckDB store file (default {DEFAULT_STORE})")


def _mapping(pairs: list[str], path: Path | None) -> dict[str, str]:
    mapping = read_mapping(path) if path else {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"--map takes CANONICAL=COLUMN, got {pair!r}")
        mapping[key.strip()] = value.strip()
    return mapping


def cmd_ingest(args) -> int:
    mapping = _mapping(args.map, args.mapping)
    with Store(args.store) as store:
        report = store.ingest(args.paths, runner=args.runner, catalogue=args.catalogue, mapping=mapping,
                              strict=args.strict, progress=not args.json)
    if args.json:
        print(json.dumps(report.as_dict()))
    else:
        print(report.files.to_string(index=False))
        totals = report.as_dict()
        print(f"\nread {totals['read']} = accepted {totals['accepted']} + quarantined {totals['quarantined']}")
        for reason, n in totals["by_reason"].items():
            print(f"  quarantined, {reason}: {n}")
        for message in report.quarantine["message"].head(10):
            print(f"  {message}")
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_info(args) -> int:
    if not args.store.exists():
        raise FileNotFoundError(f"{args.store}: no store here; run `referee ingest` first")
    with Store(args.store, read_only=True) as store:
        info = store.info()
    if args.json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            print(f"{key:>12}  {value}")
    return 0


def cmd_simulate(args) -> int:
    from analysis import simulate

    if args.runner == "concordia":
        catalogue = load_catalogue(args.catalogue or CONTEST_2024)
        sim = simulate.simulate_concordia(catalogue, n_agents=args.agents, repetitions=args.repetitions,
                                          seed=args.seed, model=args.model)
        paths = simulate.write_concordia(sim, args.out)
    elif args.runner == "aoa":
        sim = simulate.simulate_aoa(n_agents=args.agents, n_nations=args.nations, seed=args.seed,
                                    validity=args.validity, event_scale=args.event_scale)
        paths = simulate.write_aoa(sim, args.out)
    elif args.runner == "compact":
        sim = simulate.simulate_compact(n_agents=args.agents, n_games=args.games, seed=args.seed)
        paths = simulate.write_compact(sim, args.out)
    elif args.runner == "arena":
        sim = simulate.simulate_arena(n_agents=args.agents, n_judgments=args.judgments, seed=args.seed)
        paths = simulate.write_arena(sim, args.out)
    else:
        sim = simulate.simulate_ranked(n_agents=args.agents, n_games=args.games, seed=args.seed)
        paths = simulate.write_ranked(sim, args.out)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _comparisons(args):
    from analysis.comparisons import comparisons_from_tables

    with Store(args.store, read_only=True) as store:
        matches, results = store.table("matches"), store.table("results")
    matches = _one_runner(matches, args.runner)
    return comparisons_from_tables(matches, results[results["match_id"].isin(matches["match_id"])],
                                   parallel=args.parallel)


def _one_runner(matches, runner):
    runners = sorted(matches["runner"].unique())
    if runner is None and len(runners) > 1:
        raise ValueError(f"the store holds matches of runners {runners}; choose one with --runner")
    if runner is not None:
        if runner not in runners:
            raise ValueError(f"no matches of runner {runner!r} in the store (runners: {runners})")
        matches = matches[matches["runner"] == runner]
    if matches.empty:
        raise ValueError("the store holds no matches; run `referee ingest` first")
    return matches


def cmd_ratings(args) -> int:
    from analysis.figures import plot_bootstrap_violins
    from analysis.ratings import rate

    comparisons = _comparisons(args)
    result = rate(comparisons, args.method, bootstrap=args.bootstrap, by=args.by, prior=args.prior, dims=args.dims,
                  k=args.k, seed=args.seed, draws=args.draws, tune=args.tune, chains=args.chains, sampler=args.sampler)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result.table.to_csv(args.out, index=False)
    print(result.table.to_string(index=False))
    if "kendall_tau" in result.extra:
        tau = result.extra["kendall_tau"]
        tau.to_csv(args.out.with_name(args.out.stem + "_kendall_tau.csv"), index=False)
        print(f"\nKendall tau of each game's ranking against the global one (mean {tau['kendall_tau'].mean():.2f}):")
        print(tau.to_string(index=False))
    if result.bootstrap is not None and args.by is None:
        figure = args.out.with_suffix(".png")
        plot_bootstrap_violins(result.bootstrap.long()).savefig(figure, dpi=150)
        print(f"wrote {figure}")
    if "idata" in result.extra:
        result.extra["idata"].to_netcdf(args.out.with_suffix(".nc"))
    print(f"wrote {args.out}")
    return 0


def cmd_ratings_cv(args) -> int:
    from analysis.figures import plot_win_matrices
    from analysis.ratings_cv import cross_validate, summarise_cv, win_matrix

    comparisons = _comparisons(args)
    lo, _, hi = args.dims.partition("-")
    dims = range(int(lo), int(hi or lo) + 1)
    cv = cross_validate(comparisons, folds=args.folds, dims=dims, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    cv.to_csv(args.out / "cv_folds.csv", index=False)
    summary = summarise_cv(cv)
    summary.to_csv(args.out / "cv_auc.csv", index=False)
    print(summary.to_string(index=False))
    if args.split and args.split not in comparisons.columns:
        raise ValueError(f"--split takes a match attribute among {['communication', 'game', 'kind']}")
    plot_win_matrices(win_matrix(comparisons, args.split)).savefig(args.out / "win_probability.png", dpi=150)
    print(f"wrote {args.out}/cv_auc.csv, cv_folds.csv, win_probability.png")
    return 0


def cmd_rank(args) -> int:
    import pandas as pd

    from analysis.comparisons import ballots_from_tables
    from models.voting import METHODS, PreferenceProfile

    with Store(args.store, read_only=True) as store:
        matches, results = store.table("matches"), store.table("results")
    matches = _one_runner(matches, args.runner)
    ballots = ballots_from_tables(matches, results[results["match_id"].isin(matches["match_id"])])
    profile = PreferenceProfile.from_ballots(ballots)
    methods = list(METHODS) if args.method == "all" else [args.method]
    tables = [METHODS[m](profile, seed=args.seed).assign(method=m) for m in methods]
    table = pd.concat(tables, ignore_index=True).sort_values(["method", "rank"])
    columns = ["method", "agent", "score", "rank"] if args.method == "all" else ["agent", "score", "rank"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table[columns].to_csv(args.out, index=False)
    print(table[columns].to_string(index=False))
    print(f"wrote {args.out}")
    return 0


def cmd_fit(args) -> int:
    from analysis.figures import plot_intervals
    from analysis.score_models import model_scores, write_fit
    from models import beta_regression as br

    with Store(args.store, read_only=True) as store:
        scores, scenarios, tags = model_scores(store)
    common = dict(draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed, sampler=args.sampler,
                  likelihood=args.likelihood)
    if args.model == "measurement-layout":
        return _fit_layout(args, scores, scenarios, tags)
    if args.model == "tag-effects":
        fit = br.fit_tag_effects(scores, tags, scenario_intercepts=args.scenario_intercepts,
                                 agent_intercepts=not args.no_agent_intercepts, **common)
        table = br.tag_table(fit)
        figure = plot_intervals(table, "tag", "Tag coefficients (posterior mean, 94% HDI)", "log-odds effect on score")
    else:
        fit = br.fit_baseline_contrast(scores, args.baseline, **common)
        table = br.contrast_table(fit)
        figure = plot_intervals(table, "agent", f"Log-odds difference from {args.baseline} (mean, 95% HDI)",
                                "log-odds difference")
    paths = write_fit(fit, args.out, figure, f"{args.model}.png")
    print(table.to_string(index=False))
    for note in fit.notes:
        print(f"note: {note}")
    print(f"diagnostics: {json.dumps(fit.diagnostics)}")
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _fit_layout(args, scores, scenarios, tags) -> int:
    from analysis.figures import plot_capability_profiles
    from analysis.predictive import demand_matrix
    from analysis.score_models import write_fit
    from models.measurement_layout import fit_layout

    demands = demand_matrix(scores, scenarios, tags)
    data = scores.dropna(subset=["score_norm"])
    fit = fit_layout(data["agent"], demands.reindex(data["scenario"]).to_numpy(float), data["score_norm"].to_numpy(),
                     list(demands.columns), draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed,
                     sampler=args.sampler)
    caps = fit.capabilities()
    figure = plot_capability_profiles(caps, {n: fit.parameters(n) for n in ("base_chance", "sample_size")})
    paths = write_fit(fit, args.out, figure, "measurement-layout.png")
    caps.to_csv(Path(args.out) / "capabilities.csv", index=False)
    demands.to_csv(Path(args.out) / "demands.csv")
    print(caps.to_string(index=False))
    print(f"demands: {list(demands.columns)}")
    print(f"diagnostics: {json.dumps(fit.diagnostics)}")
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def cmd_compare_predictors(args) -> int:
    from analysis.figures import plot_capability_profiles, plot_predictor_comparison
    from analysis.predictive import compare_predictors, demand_matrix
    from analysis.score_models import model_scores

    with Store(args.store, read_only=True) as store:
        scores, scenarios, tags = model_scores(store)
    demands = demand_matrix(scores, scenarios, tags)
    comp = compare_predictors(scores, demands, test_share=args.test_share, seed=args.seed, draws=args.draws,
                              tune=args.tune, sampler=args.sampler, chains=args.chains)
    args.out.mkdir(parents=True, exist_ok=True)
    comp.per_agent.to_csv(args.out / "per_agent.csv", index=False)
    comp.pooled.to_csv(args.out / "pooled.csv", index=False)
    comp.predictions.to_csv(args.out / "predictions.csv", index=False)
    plot_predictor_comparison(comp.per_agent).savefig(args.out / "comparison.png", dpi=150)
    included = comp.included_agents()
    caps = comp.layout.capabilities()
    if included:
        extras = {n: comp.layout.parameters(n).loc[lambda t: t["agent"].isin(included)] for n in ("base_chance", "sample_size")}
        plot_capability_profiles(caps[caps["agent"].isin(included)], extras).savefig(args.out / "profiles.png", dpi=150)
    print(comp.pooled.to_string(index=False))
    print(comp.per_agent.pivot(index="agent", columns="predictor", values="r2").to_string())
    print(f"agents reaching test R^2 >= 0.35 with the Measurement Layout: {included or 'none'}")
    print(f"layout diagnostics: {json.dumps(comp.layout.diagnostics)}")
    print(f"wrote {args.out}/per_agent.csv, pooled.csv, predictions.csv, comparison.png" + (", profiles.png" if included else ""))
    return 0


def cmd_audit(args) -> int:
    from analysis.audit import audit_frame, default_outcomes, formula_from, run_audit, write_audit

    with Store(args.store, read_only=True) as store:
        frame, events = audit_frame(store, runner=args.runner, match=args.match)
        outcomes = args.outcome or default_outcomes(frame, store.table("measures"))
    missing = [o for o in outcomes if o not in frame.columns]
    if missing:
        raise ValueError(f"outcome measure(s) {missing} not in the data; available: "
                         f"{sorted(c for c in frame.columns if frame[c].dtype.kind in 'fi')}")
    formula = formula_from(args.formula, frame) if args.formula else None
    telemetry = args.telemetry or ("universal" if "universal" in frame.columns else None)
    result = run_audit(frame, events, formula, outcomes, args.group_by or [], telemetry, top_k=args.top_k,
                       seed=args.seed, bayes=not args.no_bayes)
    paths = write_audit(result, frame, args.out, outcomes[0])
    print(paths["markdown"].read_text())
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def cmd_describe(args) -> int:
    from analysis.describe import feature_correlations, mean_se, scenario_features
    from analysis.figures import plot_correlation_heatmap, plot_means
    from analysis.score_models import model_scores

    with Store(args.store, read_only=True) as store:
        scores, scenarios, tags = model_scores(store)
    args.out.mkdir(parents=True, exist_ok=True)
    by_agent, by_scenario = mean_se(scores, "agent"), mean_se(scores, "scenario")
    corr = feature_correlations(scores, scenario_features(scenarios, tags))
    by_agent.to_csv(args.out / "mean_by_agent.csv", index=False)
    by_scenario.to_csv(args.out / "mean_by_scenario.csv", index=False)
    corr.to_csv(args.out / "correlations.csv")
    plot_means(by_agent, "agent").savefig(args.out / "mean_by_agent.png", dpi=150)
    plot_means(by_scenario, "scenario").savefig(args.out / "mean_by_scenario.png", dpi=150)
    plot_correlation_heatmap(corr, "Score, tags, substrates and resident status").savefig(
        args.out / "correlations.png", dpi=150)
    print(by_agent.to_string(index=False))
    print(f"wrote {args.out}/mean_by_agent.*, mean_by_scenario.*, correlations.*")
    return 0


def cmd_report(args) -> int:
    from analysis.pipeline import build_report

    with Store(args.store, read_only=True) as store:
        index = build_report(store, args.out, fit_models=not args.no_models)
    print(f"wrote {index}")
    return 0


def cmd_demo(args) -> int:
    from analysis.pipeline import run_demo

    index = run_demo(args.out, store=args.store, fit_models=not args.no_models, draws=args.draws)
    print(f"wrote {index}")
    return 0


def _sampling_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--draws", type=int, default=1000, help="draws per chain (default 1000)")
    p.add_argument("--tune", type=int, default=1000, help="tuning steps per chain (default 1000)")
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--sampler", choices=["auto", "pymc", "nutpie"], default="auto",
                   help="auto: nutpie when installed, else PyMC's NUTS")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser for all referee commands."""
    parser = argparse.ArgumentParser(prog="referee", description="Bayesian analysis of multi-agent gameplay traces.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and warnings")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="read match logs into the store")
    p.add_argument("paths", nargs="+", help="files or directories (read recursively)")
    p.add_argument("--runner", choices=sorted(loaders.RUNNERS), help="force a loader instead of detecting per file")
    _store_arg(p)
    p.add_argument("--catalogue", type=Path, help="scenario catalogue TOML (Concordia default: the 2024 contest's)")
    p.add_argument("--map", action="append", default=[], metavar="CANONICAL=COLUMN",
                   help="table runner: take a canonical column from another column name (repeatable)")
    p.add_argument("--mapping", type=Path, help="table runner: TOML file with a [columns] table of mappings")
    p.add_argument("--strict", action="store_true", help="fail, writing nothing, if any record is quarantined")
    p.add_argument("--json", action="store_true", help="print one JSON object of counts")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("info", help="count what the store holds")
    _store_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object of counts")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("simulate", help="write simulated logs from known parameters (plus truth.json)")
    sim = p.add_subparsers(dest="runner", required=True)
    runners = {
        "concordia": ("Concordia contest results", 8),
        "aoa": ("an Age-of-Agents season: season.json and events.jsonl", 12),
        "compact": ("communicate-predict-act games (JSON lines)", 6),
        "arena": ("pairwise arena judgments (CSV)", 10),
        "ranked": ("ranked multiplayer games (JSON lines) with per-turn logs", 8),
    }
    for name, (text, agents) in runners.items():
        c = sim.add_parser(name, help=text)
        c.add_argument("--agents", type=int, default=agents, help=f"number of agents (default {agents})")
        c.add_argument("--seed", type=int, default=0)
        c.add_argument("--out", type=Path, required=True, help="folder: logs/ and truth.json are written there")
        c.set_defaults(func=cmd_simulate)
        if name == "concordia":
            c.add_argument("--repetitions", type=int, default=3, help="repetitions per agent and scenario (default 3)")
            c.add_argument("--catalogue", type=Path, help="scenarios to simulate (default: the 2024 contest's)")
            c.add_argument("--model", choices=["additive", "layout"], default="additive",
                           help="generative model: additive logit effects (default) or a Measurement Layout")
        if name == "aoa":
            c.add_argument("--nations", type=int, default=8, help="governed nations (default 8)")
            c.add_argument("--validity", type=float, default=0.0,
                           help="0..1: how strongly activity (and so the score) tracks the nation outcome")
            c.add_argument("--event-scale", type=float, default=1.0, help="multiply every counter (grow the event log)")
        if name in ("compact", "ranked"):
            c.add_argument("--games", type=int, default=60, help="number of games (default 60)")
        if name == "arena":
            c.add_argument("--judgments", type=int, default=2000, help="number of judgments (default 2000)")

    from analysis.ratings import METHODS as RATING_METHODS
    from models.voting import METHODS as VOTING_METHODS

    def _data_args(p):
        _store_arg(p)
        p.add_argument("--runner", help="use this runner's matches (required when the store holds several)")
        p.add_argument("--parallel", action="store_true",
                       help="add COMPACT's parallel-game comparisons (same game and size, identical opponents)")
        p.add_argument("--seed", type=int, default=0)

    p = sub.add_parser("ratings", help="rate agents: Elo, Bradley-Terry (scalar, per-game, multidimensional, Bayesian)")
    _data_args(p)
    p.add_argument("--method", choices=RATING_METHODS, required=True)
    p.add_argument("--bootstrap", type=int, default=0, metavar="N",
                   help="resample matches N times (COMPACT used 200) for percentile and rank intervals")
    p.add_argument("--by", choices=["game"], help="ratings per game")
    p.add_argument("--prior", action="store_true", help="Bradley-Terry MAP with Normal(0, (400 Elo)^2) priors")
    p.add_argument("--dims", type=int, default=2, help="dimensions for bt-md (1-7; default 2)")
    p.add_argument("--k", type=float, default=32.0, help="K factor for online-elo (default 32)")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--sampler", choices=["pymc", "nutpie"], default="pymc")
    p.add_argument("--out", type=Path, required=True, help="CSV: agent, rating, lower, upper, rank")
    p.set_defaults(func=cmd_ratings)

    p = sub.add_parser("ratings-cv", help="cross-validated ROC-AUC of rating models; win-probability heatmap")
    _data_args(p)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--dims", default="1-7", help="dimension range for bt-md, e.g. 1-7 or 2")
    p.add_argument("--split", help="a match attribute to split the heatmap by (e.g. communication)")
    p.add_argument("--out", type=Path, required=True, help="folder for cv_auc.csv, cv_folds.csv, win_probability.png")
    p.set_defaults(func=cmd_ratings_cv)

    p = sub.add_parser("rank", help="voting-as-evaluation: one ballot per (scenario, repetition) or match")
    _data_args(p)
    p.add_argument("--method", choices=list(VOTING_METHODS) + ["all"], required=True)
    p.add_argument("--out", type=Path, required=True, help="CSV: agent, score, rank (and method with 'all')")
    p.set_defaults(func=cmd_rank)

    p = sub.add_parser("fit", help="Bayesian beta regressions of normalised scores")
    p.add_argument("model", choices=["tag-effects", "baseline-contrast", "measurement-layout"])
    _store_arg(p)
    p.add_argument("--baseline", default="rational_agent", help="baseline agent for baseline-contrast")
    _sampling_args(p)
    p.add_argument("--likelihood", choices=["ordered", "squeeze"], default="ordered",
                   help="ordered beta (default) or the Smithson-Verkuilen squeeze")
    p.add_argument("--scenario-intercepts", action="store_true", help="tag-effects: add scenario intercepts")
    p.add_argument("--no-agent-intercepts", action="store_true", help="tag-effects: leave out agent intercepts")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("compare-predictors", help="Measurement Layout vs linear regression, XGBoost and a constant")
    _store_arg(p)
    p.add_argument("--test-share", type=float, default=0.25, help="share of each agent's scenarios held out")
    _sampling_args(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=cmd_compare_predictors)

    p = sub.add_parser("audit", help="construct-validity audit of a score against ground-truth outcomes")
    _store_arg(p)
    p.add_argument("--formula", type=Path, help="scoring formula TOML (e.g. data/formulas/aoa_eval01.toml)")
    p.add_argument("--outcome", action="append", metavar="NAME",
                   help="outcome measure (repeatable; default: the data's outcome measures, else 'win')")
    p.add_argument("--group-by", action="append", metavar="NAME",
                   help="column that, with the outcomes, defines an identical outcome (e.g. team)")
    p.add_argument("--telemetry", help="process-telemetry column to report beside the outcome (default: universal)")
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--runner", help="audit this runner's matches")
    p.add_argument("--match", help="audit one match (e.g. aoa:eval01)")
    p.add_argument("--no-bayes", action="store_true", help="skip the Bayesian regression in the assignment-luck check")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("describe", help="descriptive figures: means by agent and scenario, correlation heatmap")
    _store_arg(p)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=cmd_describe)

    p = sub.add_parser("report", help="write the HTML report for a store")
    _store_arg(p)
    p.add_argument("--out", type=Path, default=Path("reports/latest"))
    p.add_argument("--no-models", action="store_true", help="skip the Bayesian fits (a quick report)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("demo", help="ingest the bundled sample data and write the demo report")
    p.add_argument("--out", type=Path, default=Path("reports/demo"))
    p.add_argument("--store", type=Path, help="store file to create afresh (default OUT/demo.duckdb)")
    p.add_argument("--no-models", action="store_true", help="skip the Bayesian fits (a quick report)")
    p.add_argument("--draws", type=int, default=1000, help="draws (and tuning steps) per chain for the Bayesian fits")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `referee` command; returns the exit code (0 ok, 1 error, 2 usage)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        return args.func(args)
    except (IngestError, CatalogueError, FileNotFoundError, FileExistsError, ValueError, KeyError) as exc:
        print(f"referee {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
