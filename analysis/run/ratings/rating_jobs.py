"""The rating jobs (`referee ratings, compare, ratings-cv, rank, contest`; `referee.ratings(...)` and so on): each
one function from a store and typed options (`referee.run.job_table.JOBS`) to a `Result`.

store : a `referee.io.store.Store` (the front doors open one from a path or a DataFrame); ratings are on the Elo
scale (400 points = a factor of 10 in the odds) unless a table says otherwise.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from referee.models.registry import DEFAULT_TAU_ELO, MIN_BALLOTS, RATING_METHODS
from referee.readings import p_text
from referee.run.executor import sweep_executor
from referee.run.options import sampling
from referee.result import CompareJobResult, ContestJobResult, RatingsJobResult, Result
from referee.run.stored import selected_tables, stored_tables


def ratings(store, method: str = "bt", bootstrap: int = 0, by: str | None = None, prior: bool = False,
            ties: str = "half", anchor: str | None = None, covariate: list[str] | None = None,
            resample: str = "match", dims: int = 2, k: float = 32.0, per_game_prior_sd: float | None = DEFAULT_TAU_ELO,
            rate_scripted: bool = False,
            runner: str | None = None, phase: list[str] | None = None, parallel: bool = False,
            where: list[str] | None = None, seed: int = 0, **options) -> RatingsJobResult:
    """Rate agents (`referee ratings`): the rating table (agent, rating, lower, upper, rank and rank interval,
    group, interval, matches, status, and the runner's own numbers as numeric columns named as it names them:
    clem's clemscore, pct_played and quality, Inspect's accuracy and stderr, ...; `referee.run.ratings.runner_numbers`) of
    `method`; `by` slices (game, tag, role, scenario, phase), `covariate` the contextual Bradley-Terry; `ties`
    'davidson' fits Davidson's tie parameter. options : sampling (draws, tune, chains, sampler) and sweep (jobs,
    scheduler, exchange) options."""
    from referee.run.ratings.rating_labels import parse_anchor
    from referee.models.registry import RATING_METHODS

    if ties == "davidson":
        if not RATING_METHODS[method].davidson_variant:
            raise ValueError(f"--ties davidson models ties in Bradley-Terry (--method bt), not in {method}")
        method = RATING_METHODS[method].davidson_variant
    held = parse_anchor(anchor) if anchor else None
    matches, results, excluded = selected_tables(store, runner, phase, where)
    if covariate:
        return _covariate_ratings(store, method, matches, results, excluded, covariate, bootstrap, by, anchor)
    fitting = dict(bootstrap=bootstrap, prior=prior, dims=dims, k=k, tau_elo=per_game_prior_sd, seed=seed,
                   **sampling(options))
    if by not in (None, "game"):
        return _sliced_ratings(store, method, matches, results, excluded, held, by, parallel, resample, fitting,
                               options)
    result = _rated(matches, results, method, by, parallel, resample, rate_scripted, held, fitting, options)
    from referee.run.ratings.runner_numbers import stored_runner_numbers

    result.ratings, said = stored_runner_numbers(store, result.table(), matches, results)
    result.notes += said
    found = _ratings_result(result, method, by, per_game_prior_sd, excluded)
    found.runner_numbers = said  # what the runner's own numbers are and where they stand
    return found


def _rated(matches, results, method, by, parallel, resample, rate_scripted, held, fitting, options):
    """The RatingResult of one leaderboard: from the comparisons, or from pooled win counts when there are too
    many comparisons to list and the method needs only the counts."""
    from referee.prepare.comparisons import (
        ComparisonBudgetError,
        comparable_agents,
        comparisons_and_agents,
        win_counts,
        with_resample,
    )
    from referee.run.ratings.ratings import STREAMABLE, rate, rate_counts
    from referee.run.ratings.runner_numbers import require_rated

    streamed = method in STREAMABLE and not (fitting["bootstrap"] or by or parallel or held)
    try:
        comparisons, agents = comparisons_and_agents(matches, results, parallel=parallel, scripted=rate_scripted)
    except ComparisonBudgetError:
        if not streamed:
            raise
        names, wins, ties = win_counts(matches, results, scripted=rate_scripted)
        return rate_counts(wins, ties, names, method, prior=fitting["prior"],
                           agents=comparable_agents(matches, results, scripted=rate_scripted))
    require_rated(comparisons, matches, results)
    comparisons, resampled = with_resample(comparisons, matches, resample)
    if resampled and not fitting["bootstrap"]:
        resampled = f"--resample {resample} has no effect without --bootstrap"
    with sweep_executor(options) as executor:
        if on_the_board(method, by, held, fitting):
            from referee.run.ratings.board import infer_board

            board = infer_board(comparisons, agents, bootstrap=fitting["bootstrap"], seed=fitting["seed"],
                                executor=executor)
            result = board.bt
            result.ratings = board.table.drop(columns=["block"])
        else:
            result = rate(comparisons, method, by=by, agents=agents, executor=executor, anchor=held, **fitting)
            result.notes.append("rank sets, the set of the best and tiers are the board's (`referee leaderboard`, "
                                f"Bradley-Terry); {method}'s `rank` is its own order")
    if resampled:
        result.notes.append(resampled)
    return result


def on_the_board(method: str, by, anchor, fitting: dict) -> bool:
    """Whether a ratings call is the board's own inference (plain Bradley-Terry, not by game, not anchored, no
    prior), so that its table is the board's table (`referee.run.ratings.board`) rather than a second computation."""
    return RATING_METHODS[method].board and by is None and anchor is None and not fitting.get("prior")


def _ratings_result(result, method, by, per_game_prior_sd, excluded) -> RatingsJobResult:
    table = result.table()
    tables, lines = {"ratings": table}, []
    if result.ties is not None:
        ties = result.ties
        tables["ties"] = pd.DataFrame([ties])
        lines.append(f"\nDavidson's tie parameter nu = {ties['nu']:.3f} (se {ties['nu_se']:.3f}): two equal agents tie "
                     f"with probability {ties['tie_probability_equal']:.3f}; observed tie rate "
                     f"{ties['observed_tie_rate']:.3f}")
    if result.kendall_tau is not None:
        from referee.readings import kendall_reading

        tau = result.kendall_tau
        tables["kendall_tau"] = tau
        lines += [f"\nKendall tau of each game's ranking against the global one "
                  f"({kendall_reading(tau['kendall_tau'].mean(), per_game_prior_sd)}):", tau.to_string(index=False)]
    return RatingsJobResult("ratings", tables, result.notes + excluded, result.diagnostics,
                  fields={"method": method, "by": by, "ties": result.ties}, lines=lines, value=result)


def _sliced_ratings(store, method, matches, results, excluded, anchor, by, parallel, resample, fitting,
                    options) -> RatingsJobResult:
    """`ratings --by tag|role|scenario|phase`: one leaderboard per slice, each rated on its own slice's matches,
    in one table with the slice sizes."""
    from referee.prepare.comparisons import comparisons_and_agents, with_resample
    from referee.prepare.membership import agents_in
    from referee.prepare.slices import slices
    from referee.run.ratings.ratings import rate

    tables, sizes, notes = [], [], list(excluded)
    with sweep_executor(options) as executor:
        for name, m, r in slices(matches, results, store.scenario_tags(), by):
            comparisons, compared = comparisons_and_agents(m, r, parallel=parallel)
            row = {"slice": name, "matches": len(m), "comparisons": len(comparisons),
                   "agents": len(agents_in(comparisons)) if len(comparisons) else 0}
            sizes.append(row)
            if row["agents"] < 2:
                notes.append(f"slice {name}: fewer than two agents compared, no leaderboard")
                continue
            comparisons, _ = with_resample(comparisons, m, resample)
            held = anchor if anchor and anchor[0] in agents_in(comparisons) else None
            if anchor and held is None:
                notes.append(f"slice {name}: {anchor[0]} did not play in it, so its scale is not anchored")
            try:
                result = rate(comparisons, method, agents=compared, executor=executor, anchor=held, **fitting)
            except ValueError as exc:
                notes.append(f"slice {name}: not rated ({exc})")
                continue
            tables.append(result.table().assign(slice=name))
            notes += [f"slice {name}: {n}" for n in result.notes]
    if not tables:
        raise ValueError(f"no slice by {by} has two agents to rate")
    table = pd.concat(tables, ignore_index=True)
    table = table[["slice"] + [c for c in table.columns if c != "slice"]]
    size_table = pd.DataFrame(sizes)
    return RatingsJobResult("ratings", {"ratings": table, "slices": size_table}, notes, fields={"method": method, "by": by},
                  lines=[size_table.to_string(index=False)])


def _covariate_ratings(store, method, matches, results, excluded, covariate, bootstrap, by, anchor) -> RatingsJobResult:
    """`ratings --covariate ...`: the contextual Bradley-Terry (ratings controlled for the covariates, their
    effects with cluster-robust intervals, and each agent's rank change)."""
    from referee.models.ratings.contextual import fit_contextual_bt
    from referee.prepare.covariates import covariate_pairs

    from referee.models.registry import RATING_METHODS

    if not RATING_METHODS[method].covariates or bootstrap or by or anchor:
        raise ValueError("--covariate fits the contextual Bradley-Terry (--method bt), with cluster-robust Wald "
                         "intervals: not with --bootstrap, --by, --anchor or another method")
    pairs, names, notes = covariate_pairs(matches, results, store.measures(), covariate)
    fit = fit_contextual_bt(pairs, names)
    fit.ratings = with_statuses(fit.ratings, pairs.assign(cluster=pairs["match_id"]))
    moved = int((fit.ratings["rank_change"] != 0).sum())
    notes = excluded + notes + fit.notes + [
        f"ratings controlled for {', '.join(names)} over {fit.comparisons} within-match comparisons; {moved} agent(s) "
        "change rank against the same model without covariates (`rank_change`, positive = up)"]
    return RatingsJobResult("ratings", {"ratings": fit.ratings, "covariates": fit.effects}, notes, fit.diagnostics,
                  fields={"method": "contextual-bt"}, value=fit,
                  lines=["\nCovariate effects (log-odds; Elo points; 95 % intervals clustered by match):",
                         fit.effects.to_string(index=False)])


def with_statuses(table: pd.DataFrame, comparisons: pd.DataFrame) -> pd.DataFrame:
    """A rating table fitted apart from the board (the contextual model) with the one status rule's `matches` and
    `status` (`rating_labels.label_status`) and its intervals open on the side where an agent never lost (above)
    or never won (below), as every other table of the same comparisons: an unbeaten agent's rating is never
    printed with a closed interval."""
    from referee.run.ratings.intervals import one_sided
    from referee.run.ratings.rating_labels import label_status

    out = label_status(table, comparisons)
    side = out["agent"].map(one_sided(comparisons)).fillna("")
    out.loc[side == "never lost", "upper"] = np.inf
    out.loc[side == "never won", "lower"] = -np.inf
    return out


def compare(store, a: str | None = None, b: str | None = None, all: bool = False, method: str = "bt",
            bootstrap: int | None = None, resample: str = "match", runner: str | None = None, phase: list[str] | None = None,
            parallel: bool = False, where: list[str] | None = None, seed: int = 0) -> Result:
    """Paired comparison (`referee compare A B`): P(a stronger than b), the difference a - b in Elo points with
    its 95 % interval, their head-to-head record; with `all`, every pair with Holm's adjustment (bt: over every
    pair of the board; another method: over adjacent pairs; `referee.run.ratings.compare`)."""
    from referee.prepare.comparisons import comparisons_from_tables, with_resample
    from referee.run.ratings.compare import compare as compare_two, compare_all

    named = [x for x in (a, b) if x is not None]
    if all == bool(named):
        raise ValueError("name two agents (referee compare A B) or give --all, not both")
    if not all and len(named) != 2:
        raise ValueError(f"compare takes two agents, got {len(named)}: {named}")
    matches, results, excluded = selected_tables(store, runner, phase, where)
    comparisons, note = with_resample(comparisons_from_tables(matches, results, parallel=parallel), matches, resample)
    notes = excluded + ([note] if note else [])
    if all:
        table = compare_all(comparisons, method, bootstrap, seed, resample)
        adjacent = table[table["adjacent"]] if len(table) else table
        if adjacent.empty:
            return Result("compare", {"pairs": table}, notes, lines=["no two ranked agents are neighbours"])
        families = ", ".join(sorted(set(adjacent["family"].dropna().astype(str))))
        return Result("compare", {"pairs": table}, notes, lines=[
            adjacent[["agent_a", "agent_b", "p_better", "difference", "lower", "upper", "matches", "family",
                      "p_family", "p_holm", "separable"]].to_string(index=False),
            f"{int(adjacent['separable'].sum())} of {len(adjacent)} pairs of ranked neighbours separable at 5 % "
            f"(each in the family its tier boundary reads: {families}; Holm beside it for reference)"])
    found = compare_two(comparisons, a, b, method, bootstrap, seed, resample)
    interval = (found["interval"] if math.isnan(found["lower"]) else
                f"interval {_signed(found['lower'])} to {_signed(found['upper'])} ({found['interval']})")
    source = (f"{method}, the board's inference" if RATING_METHODS[method].board else
              f"{method}, {found['replicates']} bootstrap replicates resampling by {resample}")
    probability = ("no probability (both ends open)" if math.isnan(found["p_better"]) else
                   f"{found['p_better']:.3f} (two-sided p {p_text(found['p_value'])})")
    line = (f"P({a} stronger than {b}) = {probability} ({source})\n"
            f"difference {found['difference']:+.0f} Elo points, {interval}\n"
            f"head to head: {found['wins']} win(s), {found['losses']} loss(es), {found['ties']} tie(s) in "
            f"{found['matches']} match(es)")
    if RATING_METHODS[method].board and math.isfinite(found["p_joint"]):  # the board's own multiplicity, read here
        line += (f"\nover every pair of the board at once (the joint family its tiers read): p "
                 f"{p_text(found['p_joint'])} ({'separated' if found['board_separates'] else 'not separated'}; "
                 f"Holm p {p_text(found['p_holm'])})"
                 + ("; separated as one pair, not by the board as a whole: one tier holds both"
                    if found["own_test_separates"] and found["same_tier"] and not found["board_separates"] else ""))
    from referee.run.ratings.games import head_to_head

    # the games behind the pair: their matches, the result the board's difference least expected first
    met = head_to_head(comparisons, pd.Series({a: found["difference"], b: 0.0}), a, b)
    if len(met):
        shown = ", ".join(f"{r.match} ({r.result})" for r in met.head(10).itertuples())
        line += (f"\ntheir matches, most surprising first: {shown}" + (f" and {len(met) - 10} more" if len(met) > 10
                                                                        else "")
                 + "; `referee show MATCH` prints one's trace")
    return CompareJobResult("compare", {"compare": pd.DataFrame([found]), "head_to_head": met}, notes,
                            fields=dict(found), lines=[line], value=found)


def _signed(value: float) -> str:
    """An interval end in Elo points with its sign; an open end as 'open'."""
    return "open" if math.isinf(value) else f"{value:+.0f}"


def ratings_cv(store, folds: int = 5, dims=range(1, 8), split: str | None = None,
               per_game_prior_sd: float | None = DEFAULT_TAU_ELO,
               runner: str | None = None, phase: list[str] | None = None, parallel: bool = False,
               where: list[str] | None = None, seed: int = 0, **options) -> Result:
    """Cross-validated ROC-AUC (`referee ratings-cv`): k-fold AUC of held-out comparisons for bt, bt-per-game and
    bt-md by dimension; `cv_auc` the mean and SE per model, `cv_folds` every fold; plot() the fitted beside the
    observed win matrices (by `split`, a match attribute such as communication)."""
    from referee.prepare.comparisons import comparisons_from_tables
    from referee.run.ratings.ratings_cv import cross_validate, fitted_and_empirical, summarise_cv

    matches, results, excluded = selected_tables(store, runner, phase, where)
    comparisons = comparisons_from_tables(matches, results, parallel=parallel)
    if split and split not in comparisons.columns:
        raise ValueError(f"--split takes a match attribute among {['communication', 'game', 'kind']}")
    clusters = comparisons["cluster"].nunique()
    if folds > clusters:
        raise ValueError(f"--folds {folds} is more than the {clusters} matches there are to split")
    with sweep_executor(options) as executor:
        cv = cross_validate(comparisons, folds=folds, dims=dims, seed=seed, executor=executor,
                            tau_elo=per_game_prior_sd)
    return Result("ratings-cv", {"cv_auc": summarise_cv(cv), "cv_folds": cv}, excluded, value=cv,
                  drawn={"win_matrices": fitted_and_empirical(comparisons, split)})


def rank(store, method: list[str], alpha: float = 100.0, against: str = "agents", bootstrap: int = 0,
         ewa_reading: str = "runs", min_games: float = MIN_BALLOTS, runner: str | None = None,
         phase: list[str] | None = None, parallel: bool = False, where: list[str] | None = None,
         seed: int = 0) -> Result:
    """Voting-as-evaluation or a game-theoretic ranking (`referee rank`): `method` one or more voting methods
    (side by side, a `method` column first), 'all' of them, or one game-theoretic method
    (`referee.models.registry.GAME_METHODS`); agents on fewer than `min_games` ballots are listed apart
    (`not_ranked`)."""
    from referee.models.registry import GAME_METHODS

    methods = list(dict.fromkeys(method))
    matches, results, excluded = selected_tables(store, runner, phase, where)
    games = [m for m in methods if m in GAME_METHODS]
    if games:
        if len(methods) > 1:
            raise ValueError(f"{games[0]} ranks on its own: give it as the only --method")
        return _game_rank(store, matches, results, excluded, games[0], alpha, against, bootstrap, min_games, seed)
    from referee.run.ratings.votes import vote_tables

    table = vote_tables(matches, results, "all" if "all" in methods else methods, min_ballots=min_games, seed=seed,
                        ewa_reading=ewa_reading)
    methods = list(table["method"].unique())
    columns = ["agent", "score", "rank", "ballots"] + (["support"] if "support" in table.columns else []) + [
        "matches", "status"]
    columns = (["method"] if len(methods) > 1 else []) + columns
    ranked, apart = table[table["ranked"]], table[~table["ranked"] & (table["method"] == methods[0])]
    lines = []
    if len(apart):
        lines.append(f"\nnot ranked (fewer than {min_games:g} ballots): " +
                     ", ".join(f"{a} ({b:g})" for a, b in zip(apart["agent"], apart["ballots"])))
    lottery = ranked[ranked["method"] == "maximal-lotteries"]
    if len(lottery):
        support = lottery["support"].fillna(False).astype(bool)
        lines.append(f"maximal lottery support: {', '.join(lottery.loc[support, 'agent'])}; the other "
                     f"{int((~support).sum())} ranked agent(s) have probability 0 and share the next rank")
    return Result("rank", {"rankings": ranked[columns], "not_ranked": apart[["agent", "ballots"]]}, excluded,
                  lines=lines, value=table)


def _game_rank(store, matches, results, excluded, method, alpha, against, bootstrap, min_games, seed) -> Result:
    from referee.prepare.comparisons import comparisons_from_tables
    from referee.readings import chance_reading, cyclic_interval
    from referee.run.ratings.game_theory import game_ranking

    if against == "scenarios":
        return _task_rank(store, matches, results, excluded, method, alpha, bootstrap, seed)
    found = game_ranking(comparisons_from_tables(matches, results), method, alpha=alpha, bootstrap=bootstrap,
                         min_games=min_games, seed=seed)
    lines = []
    for row in found.cyclic.itertuples():
        interval = cyclic_interval(row)
        lines.append(f"group {row.component}: cyclic share {row.cyclic_share:.2f}{interval} of the game is what one "
                     f"axis (Bradley-Terry, Elo) cannot hold; {chance_reading(row)}; {row.cyclic_triads} cyclic "
                     "triad(s)" + (f", e.g. {row.strongest_triads}" if row.cyclic_triads else "")
                     + (f"; support: {row.support}" if row.support else ""))
    tables = {"rankings": found.table, "not_ranked": found.not_ranked, "payoffs": found.payoffs,
              "intransitivity": found.cyclic}
    if found.sweep is not None:
        tables["alpha_sweep"] = found.sweep
        wide = found.sweep.pivot_table(index=["component", "agent"], columns="alpha", values="mass").reset_index()
        lines += [f"alpha-Rank's stationary mass by ranking intensity alpha (the ranking above uses alpha {alpha:g}; a "
                  "ranking that changes with alpha is not settled by the data):",
                  wide.to_string(index=False, float_format=lambda v: f"{v:.3f}")]
    return Result("rank", tables, excluded + found.notes, lines=lines, value=found)


def _task_rank(store, matches, results, excluded, method, alpha, bootstrap, seed) -> Result:
    """`rank --against scenarios`: the agent-vs-scenario game of normalised scores."""
    from referee.prepare.scores import agent_match_scores, normalise
    from referee.run.ratings.game_theory import task_ranking

    scored = matches[matches["scenario"].notna()]
    if not len(scored):
        raise ValueError("--against scenarios needs matches that name a scenario; these matches name none "
                         "(rank --against agents plays agents against one another)")
    found = task_ranking(normalise(agent_match_scores(scored, results), store.scenarios()), method,
                         alpha=alpha, bootstrap=bootstrap, seed=seed)
    return Result("rank", {"rankings": found.table, "scenarios": found.tasks, "payoffs": found.payoffs},
                  excluded + found.notes, value=found, lines=[
                      "scenarios (score: expected normalised score under the agents' equilibrium; mass: the "
                      "scenarios' equilibrium):", found.tasks.to_string(index=False)])


def contest(store, selection_phase: str = "evaluation", final_phase: str = "cross-play", top: int = 6,
            finalists: list[str] | None = None, combine: list[str] | None = None, runner: str | None = None,
            seed: int = 0) -> ContestJobResult:
    """The contest's phases (`referee contest`; contest tables 3, 8-12): top-k selection by Elo, the finalists'
    Elo and voting on the final phase, and Elo over the phases combined."""
    from referee.run.ratings.contest import run_contest

    matches, results = stored_tables(store, runner)
    result = run_contest(matches, results, selection_phase=selection_phase, final_phase=final_phase, top=top,
                         finalists=finalists, combine=combine, seed=seed)
    titled = {"selection_elo": (result.selection, f"Elo on phase {selection_phase!r} (contest table 3); finalists "
                                                  "marked"),
              "finals_elo": (result.finals, f"Elo of the finalists on phase {final_phase!r} (table 8)"),
              "finals_voting": (result.votes, "IML, Copeland and ranked pairs on the final phase (tables 9-11)"),
              "combined_elo": (result.combined, "Elo of the finalists over the phases combined (table 12)")}
    tables = {name: table for name, (table, _) in titled.items() if len(table)}
    lines = [f"\n{title}\n{table.to_string(index=False)}" for table, title in titled.values() if len(table)]
    return ContestJobResult("contest", tables, result.notes, result.diagnostics, fields={"finalists": result.finalists},
                  lines=lines[1:] + [f"\nfinalists: {', '.join(result.finalists)}"], value=result)
