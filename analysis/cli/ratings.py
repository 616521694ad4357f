"""`referee ratings, compare, ratings-cv, rank and contest`: who is better, by how much, and how sure. Each command's
parser and what it runs; heavy modules are imported inside the commands, so that `referee --help` starts at once."""

from __future__ import annotations

import math
from pathlib import Path

from referee.cli.common import (
    _common,
    _count,
    _data_args,
    _dims_range,
    _excluded,
    _executor,
    _executor_args,
    _notes,
    _open_store,
    _out_arg,
    _positive_float,
    _positive_int,
    _prior_sd,
    _sampling,
    _sampling_args,
    _say,
    _seed_arg,
    _store_arg,
    _stored_comparisons,
    _stored_tables,
    _written,
)
from referee.models.registry import DEFAULT_TAU_ELO, GAME_METHODS, RATING_METHODS, VOTING_METHODS, methods_with
from referee.models.registry import MIN_BALLOTS as VOTING_MIN


def cmd_ratings(args) -> dict:
    import pandas as pd
    from referee.prepare.comparisons import (
        ComparisonBudgetError,
        comparable_agents,
        comparisons_and_agents,
        require_comparisons,
        win_counts,
        with_resample,
    )
    from referee.present.figures import plot_bootstrap_violins
    from referee.run.rating_labels import parse_anchor
    from referee.run.ratings import STREAMABLE, rate, rate_counts
    from referee.run.runner_numbers import stored_runner_numbers

    method = args.method
    if args.ties == "davidson":
        if method not in ("bt", "bt-davidson"):
            raise ValueError(f"--ties davidson models ties in Bradley-Terry (--method bt), not in {method}")
        method = "bt-davidson"
    anchor = parse_anchor(args.anchor) if args.anchor else None
    matches, results, folder = _stored_tables(args)
    excluded = _excluded(args, matches, results)
    if args.covariate:
        return _covariate_ratings(args, method, matches, results, folder, excluded)
    if args.by not in (None, "game"):
        return _sliced_ratings(args, method, matches, results, folder, excluded, anchor)
    streamed = method in STREAMABLE and not (args.bootstrap or args.by or args.parallel or anchor)
    try:
        comparisons, agents = comparisons_and_agents(matches, results, parallel=args.parallel,
                                                     scripted=args.rate_scripted)
    except ComparisonBudgetError:
        if not streamed:
            raise
        # too many to list: bt and elo need only the win counts, streamed
        comparisons, agents = None, comparable_agents(matches, results, scripted=args.rate_scripted)
    if comparisons is None:
        names, wins, ties = win_counts(matches, results, scripted=args.rate_scripted)
        result = rate_counts(wins, ties, names, method, prior=args.prior, agents=agents)
    else:
        require_comparisons(comparisons, matches, results)
        comparisons, resampled = with_resample(comparisons, matches, args.resample)
        if resampled and not args.bootstrap:
            resampled = f"--resample {args.resample} has no effect without --bootstrap"
        with _executor(args) as executor:
            result = rate(comparisons, method, bootstrap=args.bootstrap, by=args.by, prior=args.prior,
                          dims=args.dims, k=args.k, tau_elo=args.per_game_prior_sd, seed=args.seed, agents=agents,
                          executor=executor, anchor=anchor, **_sampling(args))
        if resampled:
            result.notes.append(resampled)
    with _open_store(args) as store:
        result.ratings, said = stored_runner_numbers(store, result.table(), matches, results)
    result.notes += said
    ratings = result.table()
    folder.table("ratings", ratings)
    _say(args, ratings.to_string(index=False))
    if "ties" in result.extra:
        ties = result.extra["ties"]
        folder.table("ties", pd.DataFrame([ties]))
        _say(args, f"\nDavidson's tie parameter nu = {ties['nu']:.3f} (se {ties['nu_se']:.3f}): two equal agents tie "
                   f"with probability {ties['tie_probability_equal']:.3f}; observed tie rate "
                   f"{ties['observed_tie_rate']:.3f}")
    if "kendall_tau" in result.extra:
        from referee.present.readings import kendall_reading

        tau = result.extra["kendall_tau"]
        folder.table("kendall_tau", tau)
        _say(args, f"\nKendall tau of each game's ranking against the global one "
                   f"({kendall_reading(tau['kendall_tau'].mean(), args.per_game_prior_sd)}):")
        _say(args, tau.to_string(index=False))
    if result.bootstrap is not None and args.by is None:
        folder.figure("bootstrap", plot_bootstrap_violins(result.bootstrap.long()))
    if result.idata is not None:
        folder.idata(result.idata)
    notes = result.notes + excluded
    folder.notes(notes)
    folder.diagnostics(result.diagnostics)
    folder.close()
    _notes(args, result)
    _say(args, f"wrote {args.out}/ratings.csv and {len(folder.files) - 1} more files")
    return {"method": method, "diagnostics": result.diagnostics, "notes": notes, "ties": result.extra.get("ties"),
            "ratings": ratings.to_dict("records"), "written": _written(folder)}


def _sliced_ratings(args, method: str, matches, results, folder, excluded: list[str], anchor) -> dict:
    """`referee ratings --by tag|role|scenario|phase`: one leaderboard per slice, each rated on its own slice's
    matches, in one table with the slice sizes."""
    import pandas as pd
    from referee.prepare.comparisons import comparisons_and_agents, with_resample
    from referee.prepare.membership import agents_in
    from referee.prepare.slices import slices
    from referee.run.ratings import rate

    with _open_store(args) as store:
        tags = store.table("scenario_tags")
    tables, sizes, notes = [], [], list(excluded)
    with _executor(args) as executor:
        for name, m, r in slices(matches, results, tags, args.by):
            comparisons, compared = comparisons_and_agents(m, r, parallel=args.parallel)
            row = {"slice": name, "matches": len(m), "comparisons": len(comparisons),
                   "agents": len(agents_in(comparisons)) if len(comparisons) else 0}
            sizes.append(row)
            if row["agents"] < 2:
                notes.append(f"slice {name}: fewer than two agents compared, no leaderboard")
                continue
            comparisons, _ = with_resample(comparisons, m, args.resample)
            held = anchor if anchor and anchor[0] in agents_in(comparisons) else None
            if anchor and held is None:
                notes.append(f"slice {name}: {anchor[0]} did not play in it, so its scale is not anchored")
            try:
                result = rate(comparisons, method, bootstrap=args.bootstrap, prior=args.prior, k=args.k,
                              dims=args.dims, tau_elo=args.per_game_prior_sd, seed=args.seed,
                              agents=compared, executor=executor, anchor=held, **_sampling(args))
            except ValueError as exc:
                notes.append(f"slice {name}: not rated ({exc})")
                continue
            tables.append(result.table().assign(slice=name))
            notes += [f"slice {name}: {n}" for n in result.notes]
    if not tables:
        raise ValueError(f"no slice by {args.by} has two agents to rate")
    ratings = pd.concat(tables, ignore_index=True)
    ratings = ratings[["slice"] + [c for c in ratings.columns if c != "slice"]]
    size_table = pd.DataFrame(sizes)
    folder.table("ratings", ratings)
    folder.table("slices", size_table)
    _say(args, size_table.to_string(index=False))
    _say(args, ratings.to_string(index=False))
    folder.notes(notes)
    folder.close()
    return {"method": method, "by": args.by, "slices": sizes, "notes": notes, "ratings": ratings.to_dict("records"),
            "written": _written(folder)}


def _covariate_ratings(args, method: str, matches, results, folder, excluded: list[str]) -> dict:
    """`referee ratings --covariate ...`: the contextual Bradley-Terry (ratings controlled for the covariates,
    their effects with cluster-robust intervals, and each agent's rank change)."""
    from referee.models.ratings.contextual import fit_contextual_bt
    from referee.prepare.covariates import covariate_pairs

    if method != "bt" or args.bootstrap or args.by or args.anchor:
        raise ValueError("--covariate fits the contextual Bradley-Terry (--method bt), with cluster-robust Wald "
                         "intervals: not with --bootstrap, --by, --anchor or another method")
    with _open_store(args) as store:
        measures = store.table("measures")
    pairs, names, notes = covariate_pairs(matches, results, measures, args.covariate)
    fit = fit_contextual_bt(pairs, names)
    folder.table("ratings", fit.ratings)
    folder.table("covariates", fit.effects)
    _say(args, fit.ratings.to_string(index=False))
    _say(args, "\nCovariate effects (log-odds; Elo points; 95 % intervals clustered by match):")
    _say(args, fit.effects.to_string(index=False))
    moved = int((fit.ratings["rank_change"] != 0).sum())
    notes = excluded + notes + fit.notes + [
        f"ratings controlled for {', '.join(names)} over {fit.comparisons} within-match comparisons; {moved} agent(s) "
        "change rank against the same model without covariates (`rank_change`, positive = up)"]
    folder.notes(notes)
    folder.diagnostics(fit.diagnostics)
    folder.close()
    for note in notes:
        _say(args, f"note: {note}")
    return {"method": "contextual-bt", "diagnostics": fit.diagnostics, "notes": notes,
            "effects": fit.effects.to_dict("records"), "ratings": fit.ratings.to_dict("records"),
            "written": _written(folder)}


def cmd_compare(args) -> dict:
    """`referee compare A B` (or `--all`): paired comparison from the chosen method's cluster bootstrap."""
    from referee.prepare.comparisons import comparisons_from_tables, with_resample
    from referee.run.compare import compare, compare_all

    if args.all == bool(args.agents):
        raise ValueError("name two agents (referee compare A B) or give --all, not both")
    if not args.all and len(args.agents) != 2:
        raise ValueError(f"compare takes two agents, got {len(args.agents)}: {args.agents}")
    matches, results, folder = _stored_tables(args)
    folder.notes(_excluded(args, matches, results))
    comparisons, note = with_resample(comparisons_from_tables(matches, results, parallel=args.parallel), matches,
                                      args.resample)
    if args.all:
        table = compare_all(comparisons, args.method, args.bootstrap, args.seed, args.resample)
        folder.table("pairs", table)
        folder.close()
        adjacent = table[table["adjacent"]]
        _say(args, adjacent[["agent_a", "agent_b", "p_better", "difference", "lower", "upper", "matches", "p_holm",
                             "separable"]].to_string(index=False))
        _say(args, f"{int(adjacent['separable'].sum())} of {len(adjacent)} adjacent pairs separable at 5 % (Holm); "
                   f"every pair in {args.out}/pairs.csv")
        return {"pairs": table.to_dict("records"), "notes": [note] if note else [], "written": _written(folder)}
    found = compare(comparisons, args.agents[0], args.agents[1], args.method, args.bootstrap, args.seed,
                    args.resample)
    folder.json("compare", found)
    folder.close()
    a, b = found["agent_a"], found["agent_b"]
    interval = (f"95 % interval {found['lower']:+.0f} to {found['upper']:+.0f}" if math.isfinite(found["lower"])
                else found["interval"])
    _say(args, f"P({a} stronger than {b}) = {found['p_better']:.3f} ({args.method}, {found['replicates']} bootstrap "
               f"replicates resampling by {args.resample})\ndifference {found['difference']:+.0f} Elo points, "
               f"{interval}\nhead to head: {found['wins']} win(s), {found['losses']} loss(es), {found['ties']} tie(s) "
               f"in {found['matches']} match(es)")
    return dict(found, notes=[note] if note else [], written=_written(folder))


def cmd_ratings_cv(args) -> dict:
    from referee.present.figures import plot_win_matrices
    from referee.run.ratings_cv import (
        cross_validate,
        fitted_and_empirical,
        summarise_cv,
    )

    comparisons, folder = _stored_comparisons(args)
    if args.split and args.split not in comparisons.columns:
        raise ValueError(f"--split takes a match attribute among {['communication', 'game', 'kind']}")
    clusters = comparisons["cluster"].nunique()
    if args.folds > clusters:
        raise ValueError(f"--folds {args.folds} is more than the {clusters} matches there are to split")
    with _executor(args) as executor:
        cv = cross_validate(comparisons, folds=args.folds, dims=args.dims, seed=args.seed, executor=executor,
                            tau_elo=args.per_game_prior_sd)
    folder.table("cv_folds", cv)
    summary = summarise_cv(cv)
    folder.table("cv_auc", summary)
    _say(args, summary.to_string(index=False))
    folder.figure("win_probability", plot_win_matrices(fitted_and_empirical(comparisons, args.split)))
    folder.close()
    _say(args, f"wrote {args.out}/cv_auc.csv, cv_folds.csv, win_probability.png (fitted beside empirical)")
    return {"auc": summary.to_dict("records"), "written": _written(folder)}


def cmd_game_rank(args) -> dict:
    from referee.prepare.comparisons import comparisons_from_tables
    from referee.present.readings import chance_reading
    from referee.run.game_theory import game_ranking

    matches, results, folder = _stored_tables(args)
    folder.notes(_excluded(args, matches, results))
    if args.against == "scenarios":
        return _task_rank(args, matches, results, folder)
    found = game_ranking(comparisons_from_tables(matches, results), args.method, alpha=args.alpha,
                         bootstrap=args.bootstrap, seed=args.seed)
    folder.notes(found.notes)
    folder.table("rankings", found.table)
    folder.table("payoffs", found.payoffs)
    folder.table("intransitivity", found.cyclic)
    written = "rankings.csv, payoffs.csv, intransitivity.csv"
    _say(args, found.table.to_string(index=False))
    for row in found.cyclic.itertuples():
        interval = "" if math.isnan(row.lower) else f" (95 % bootstrap {row.lower:.2f}-{row.upper:.2f})"
        _say(args, f"group {row.component}: cyclic share {row.cyclic_share:.2f}{interval} of the game is what one "
                   f"axis (Bradley-Terry, Elo) cannot hold; {chance_reading(row)}; {row.cyclic_triads} cyclic triad(s)"
                   + (f", e.g. {row.strongest_triads}" if row.cyclic_triads else "")
                   + (f"; Nash support: {row.support}" if args.method == "nash" else ""))
    if found.sweep is not None:
        folder.table("alpha_sweep", found.sweep)
        written += ", alpha_sweep.csv"
        wide = found.sweep.pivot_table(index=["component", "agent"], columns="alpha", values="mass").reset_index()
        _say(args, f"alpha-Rank's stationary mass by ranking intensity alpha (the ranking above uses alpha "
                   f"{args.alpha:g}; a ranking that changes with alpha is not settled by the data):")
        _say(args, wide.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for note in found.notes:
        _say(args, f"note: {note}")
    folder.close()
    _say(args, f"wrote {args.out}/{written}")
    return {"rankings": found.table.to_dict("records"), "intransitivity": found.cyclic.to_dict("records"),
            "written": _written(folder)}


def _task_rank(args, matches, results, folder) -> dict:
    """`rank --against scenarios`: the agent-vs-scenario game of normalised scores."""
    from referee.prepare.scores import agent_match_scores, normalise
    from referee.run.game_theory import task_ranking

    with _open_store(args) as store:
        scenarios = store.table("scenarios")
    scored = matches[matches["scenario"].notna()]
    if not len(scored):
        raise ValueError("--against scenarios needs matches that name a scenario; these matches name none "
                         "(rank --against agents plays agents against one another)")
    found = task_ranking(normalise(agent_match_scores(scored, results), scenarios), args.method, alpha=args.alpha,
                         bootstrap=args.bootstrap, seed=args.seed)
    folder.notes(found.notes)
    folder.table("rankings", found.table)
    folder.table("scenarios", found.tasks)
    folder.table("payoffs", found.payoffs)
    folder.close()
    _say(args, found.table.to_string(index=False))
    _say(args, "scenarios (score: expected normalised score under the agents' equilibrium; mass: the scenarios' "
               "equilibrium):")
    _say(args, found.tasks.to_string(index=False))
    for note in found.notes:
        _say(args, f"note: {note}")
    _say(args, f"wrote {args.out}/rankings.csv, scenarios.csv, payoffs.csv")
    return {"rankings": found.table.to_dict("records"), "scenarios": found.tasks.to_dict("records"),
            "written": _written(folder)}


def cmd_rank(args) -> dict:
    from referee.run.votes import vote_tables

    if args.method in GAME_METHODS:
        return cmd_game_rank(args)

    matches, results, folder = _stored_tables(args)
    folder.notes(_excluded(args, matches, results))
    methods = "all" if args.method == "all" else [args.method]
    table = vote_tables(matches, results, methods, min_ballots=args.min_games, seed=args.seed,
                        ewa_reading=args.ewa_reading)
    methods = list(table["method"].unique())
    columns = ["agent", "score", "rank", "ballots"] + (["support"] if "support" in table.columns else []) + [
        "matches", "status"]
    columns = (["method"] if args.method == "all" else []) + columns
    ranked, apart = table[table["ranked"]], table[~table["ranked"] & (table["method"] == methods[0])]
    folder.table("rankings", ranked[columns])
    if len(apart):
        folder.table("not_ranked", apart[["agent", "ballots"]])
    folder.close()
    _say(args, ranked[columns].to_string(index=False))
    if len(apart):
        _say(args, f"\nnot ranked (fewer than {args.min_games:g} ballots): " +
             ", ".join(f"{a} ({b:g})" for a, b in zip(apart["agent"], apart["ballots"])))
    if "maximal-lotteries" in methods:
        lottery = ranked[ranked["method"] == "maximal-lotteries"]
        support = lottery["support"].fillna(False).astype(bool)
        _say(args, f"maximal lottery support: {', '.join(lottery.loc[support, 'agent'])}; the other "
                   f"{int((~support).sum())} ranked agent(s) have probability 0 and share the next rank")
    _say(args, f"wrote {args.out}/rankings.csv")
    return {"rankings": ranked[columns].to_dict("records"), "not_ranked": apart[["agent", "ballots"]].to_dict("records"),
            "written": _written(folder)}


def cmd_contest(args) -> dict:
    from referee.present.plan_figures import plot_contest_stages
    from referee.run.contest import run_contest

    matches, results, folder = _stored_tables(args)
    result = run_contest(matches, results, selection_phase=args.selection_phase, final_phase=args.final_phase,
                         top=args.top, finalists=args.finalists, combine=args.combine, seed=args.seed)
    tables = {"selection_elo": (result.selection, f"Elo on phase {args.selection_phase!r} (contest table 3); "
                                                  "finalists marked"),
              "finals_elo": (result.finals, f"Elo of the finalists on phase {args.final_phase!r} (table 8)"),
              "finals_voting": (result.votes, "IML, Copeland and ranked pairs on the final phase (tables 9-11)"),
              "combined_elo": (result.combined, "Elo of the finalists over the phases combined (table 12)")}
    for name, (table, title) in tables.items():
        if len(table):
            folder.table(name, table)
            _say(args, f"\n{title}\n{table.to_string(index=False)}")
    folder.figure("stages", plot_contest_stages(result.table(), result.finalists))
    folder.notes(result.notes)
    folder.diagnostics(result.diagnostics)
    folder.close()
    _notes(args, result)
    _say(args, f"\nfinalists: {', '.join(result.finalists)}; wrote {args.out}/")
    return {"finalists": result.finalists, "notes": result.notes, "diagnostics": result.diagnostics,
            **{name: table.to_dict("records") for name, (table, _) in tables.items()}, "written": _written(folder)}


def add_parsers(sub) -> None:
    """Add the parsers of ratings, compare, ratings-cv, rank, contest to the subparsers `sub`."""
    p = sub.add_parser("ratings", help="rate agents: Elo, Bradley-Terry (scalar, Davidson ties, per-game, "
                       "multidimensional, Bayesian), Plackett-Luce, TrueSkill, OpenSkill")
    _data_args(p)
    p.add_argument("--method", choices=RATING_METHODS, required=True, metavar="METHOD",
                   help="rating model: " + "; ".join(f"{n} ({m.description})" for n, m in RATING_METHODS.items()))
    p.add_argument("--bootstrap", type=_count, default=0, metavar="N",
                   help="resample matches N times (COMPACT used 200) for percentile and rank intervals")
    p.add_argument("--by", choices=["game", "tag", "role", "scenario", "phase"],
                   help="game: ratings per game (bt-per-game and bt-md model the games jointly); tag, role, "
                   "scenario, phase: one leaderboard per slice, each rated on its own, with the slice sizes")
    p.add_argument("--prior", action="store_true", help="Bradley-Terry MAP with Normal(0, (400 Elo)^2) priors")
    p.add_argument("--ties", choices=["half", "davidson"], default="half",
                   help="Bradley-Terry: a tie as half a win each way (default) or Davidson's tie parameter "
                   "(reports the tie rate it estimates)")
    p.add_argument("--anchor", metavar="AGENT=RATING",
                   help="fix the scale: AGENT gets exactly RATING in the point fit and in every bootstrap replicate "
                   "(elo, bt, bt-davidson, online-elo, plackett-luce)")
    p.add_argument("--covariate", action="append", default=[], metavar="seat|role|measure:NAME|style:NAME",
                   help="control Bradley-Terry for a covariate (repeatable): a player's seat, role or measure NAME, "
                   "or a pair's style feature of measure NAME (Chatbot Arena's style control: the two answers' "
                   "normalised difference, e.g. style:length); its effect with a match-clustered interval, ratings "
                   "controlled for it and each agent's rank change")
    p.add_argument("--resample", choices=["match", "scenario", "prompt", "seed"], default="match",
                   help="the cluster the bootstrap draws (default match: a match for every runner, Concordia's "
                   "(scenario, repetition), an arena judgment); scenario, seed (repetition) or prompt (an arena's "
                   "prompt or category, kept as the match's game)")
    p.add_argument("--dims", type=_positive_int, default=2, help="dimensions for bt-md (1-7; default 2)")
    p.add_argument("--k", type=_positive_float, default=32.0, help="K factor for online-elo (default 32)")
    p.add_argument("--per-game-prior-sd", type=_prior_sd, default=DEFAULT_TAU_ELO, metavar="ELO|none",
                   help=f"bt-per-game: prior sd of the per-game deviations in Elo points (default {DEFAULT_TAU_ELO:g}); "
                   "'none' for the paper's plain maximum likelihood")
    p.add_argument("--rate-scripted", action="store_true",
                   help="rate scripted partners too (clem's programmatic, Kaggle's built-in bots, Concordia's "
                   "background population: results of group background), which are otherwise a role, not an agent")
    _sampling_args(p)
    _executor_args(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_ratings)

    p = sub.add_parser("compare", help="paired comparison of two agents (or every pair with --all): P(A stronger "
                       "than B), the difference with its interval, their head-to-head record")
    _data_args(p)
    p.add_argument("agents", nargs="*", metavar="AGENT", help="the two agents to compare (A B)")
    p.add_argument("--all", action="store_true", help="every pair, with Holm's control over adjacent pairs")
    p.add_argument("--method", choices=methods_with(elo_scale=True, sampled=False),
                   default="bt", help="the rating model (default bt)")
    p.add_argument("--bootstrap", type=_positive_int, default=1000, metavar="N",
                   help="bootstrap replicates (default 1000)")
    p.add_argument("--resample", choices=["match", "scenario", "prompt", "seed"], default="match",
                   help="the cluster the bootstrap draws (default match)")
    _out_arg(p, required=False, default=Path("reports/compare"))
    _common(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("ratings-cv", help="cross-validated ROC-AUC of rating models; win-probability heatmap")
    _data_args(p)
    p.add_argument("--folds", type=_positive_int, default=5, help="cross-validation folds (at least 2; default 5)")
    p.add_argument("--dims", type=_dims_range, default=range(1, 8), help="dimension range for bt-md, e.g. 1-7 or 2")
    p.add_argument("--split", help="a match attribute to split the heatmap by (e.g. communication)")
    p.add_argument("--per-game-prior-sd", type=_prior_sd, default=DEFAULT_TAU_ELO, metavar="ELO|none",
                   help=f"bt-per-game in every fold: prior sd of the per-game deviations in Elo points (default "
                        f"{DEFAULT_TAU_ELO:g}); 'none' for the COMPACT paper's plain maximum likelihood")
    _executor_args(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_ratings_cv)

    p = sub.add_parser("rank", help="voting-as-evaluation (one ballot per (scenario, repetition) or match), or "
                                    "game-theoretic rankings on the meta-game (Nash averaging, alpha-Rank)")
    _data_args(p)
    p.add_argument("--method", choices=list(VOTING_METHODS) + ["all"] + list(GAME_METHODS), required=True,
                   help="a voting method, all of them, or nash (Nash averaging: skill against the maximum-entropy "
                        "equilibrium of the log-odds meta-game) or alpha-rank (alpha-Rank's stationary mass)")
    p.add_argument("--alpha", type=_positive_float, default=100.0,
                   help="alpha-rank: ranking intensity (default 100, OpenSpiel's; population 50)")
    p.add_argument("--against", choices=["agents", "scenarios"], default="agents",
                   help="nash, alpha-rank: the meta-game of agents against agents (default; comparisons within "
                        "matches) or against scenarios (Balduzzi et al.'s agent-vs-task game of normalised scores; "
                        "alpha-rank then runs two populations)")
    p.add_argument("--bootstrap", type=_count, default=0, metavar="N",
                   help="nash, alpha-rank: N resamples of the matches for 95 %% intervals of the scores and the "
                        "cyclic share (default 0)")
    p.add_argument("--ewa-reading", choices=["runs", "flat", "run-points"], default="runs",
                   help="how evaluation without aggregation combines runs (the paper under-specifies it; see "
                        "models/voting/ewa.py): runs (default: an IML election per run, then one over the runs' "
                        "orders), flat (one IML election over every task-run ballot), run-points (points per "
                        "agent beaten in each run's order, summed)")
    p.add_argument("--min-games", type=_positive_float, default=VOTING_MIN, metavar="N",
                   help=f"agents on fewer than N ballots (games) are listed apart, not ranked (default {VOTING_MIN})")
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_rank)

    p = sub.add_parser("contest", help="the contest's phases: top-k selection by Elo, final cross-play "
                       "(Elo and voting) and combined-phase Elo (paper tables 3, 8-12)")
    _store_arg(p)
    p.add_argument("--runner", help="use this runner's matches (required when the store holds several)")
    p.add_argument("--selection-phase", default="evaluation", help="phase that selects the finalists (default evaluation)")
    p.add_argument("--final-phase", default="cross-play", help="the finalists' phase (default cross-play)")
    p.add_argument("--top", type=_positive_int, default=6, help="finalists kept by the selection (default 6)")
    p.add_argument("--finalists", type=lambda t: [a.strip() for a in t.split(",") if a.strip()], metavar="A,B,...",
                   help="use these finalists instead of the top by selection Elo")
    p.add_argument("--combine", action="append", metavar="PHASE",
                   help="phases of the combined Elo (repeatable; default the selection and final phases)")
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_contest)
