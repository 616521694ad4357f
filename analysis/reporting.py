"""The report of a store, composed of the job table's jobs: logs -> store -> jobs -> report.

`build_report(store, out, ingest_report=None)` decides from the store which sections it supports, computes
each by its job (`referee.run.job_table.JOBS`, the same functions and options as `referee <job>` and
`referee.<job>(...)`) and draws it with `referee.present.report`; `run_demo(out)` ingests the bundled samples
into a fresh store under `out` and writes `out/index.html`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from referee.io.loaders import comparison_unit, entry
from referee.io.reading import default_workers
from referee.io.resources import shipped
from referee.io.store import IngestReport, Store
from referee.models.fit import collect_notes
from referee.models.progress import Stages
from referee.models.registry import MIN_BALLOTS
from referee.prepare.comparisons import separate_episode_runners
from referee.present.outputs import ResultsFolder
from referee.present.report import (
    Section,
    audit_section,
    beta_regression_section,
    calibration_section,
    contest_section,
    ingest_section,
    layout_section,
    leaderboard_section,
    runner_numbers_section,
    outcome_section,
    one_axis_section,
    prediction_section,
    rankings_section,
    runners_section,
    scores_section,
    skipped,
    socio_section,
    store_section,
    write_report,
)
from referee.names import FINAL, SELECTION
from referee.run.scores.describe import mean_se, ranking_alignment
from referee.run.job_table import JOBS
from referee.run.ratings.rating_labels import status_note
from referee.result import Result

SAMPLE = shipped("sample")
REPORT_STAGES = 10  # build_report's stages, each said as it ends
VOTES = ["iml", "copeland", "ranked-pairs", "ewa"]  # the contest's tables 4-7, in its order


def job(name: str, store: Store, **options) -> Result:
    """The job `name` of the job table computed on `store` with `options` (checked as the command line checks
    them), without its figures: the report draws its own."""
    return JOBS[name].compute(store, **options)


def _guarded(title: str, build, *args, **kwargs) -> list[Section]:
    """Run one section builder; every warning raised inside it is shown in the report, and a failure
    becomes a section that says what failed, so the rest of the report still builds. A builder attributes
    its fits' notes to the section they belong to; a warning no section claims is shown in each of them."""
    notes: list[str] = []
    try:
        with collect_notes(notes):
            built = build(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - one section's failure must not lose the others
        return [Section(title, text=[f"This section could not be built: {type(exc).__name__}: {exc}"],
                        warnings=notes)]
    sections = built if isinstance(built, list) else [built]
    claimed = {w for section in sections for w in section.warnings}
    for section in sections:
        section.warnings += [n for n in notes if n not in claimed]
    return sections


def build_report(store: Store, out: str | Path, ingest_report: IngestReport | None = None,
                 title: str = "referee report", fit_models: bool = True, seed: int = 0,
                 sampling: dict | None = None, command: list[str] | None = None, stages: Stages | None = None
                 ) -> Path:
    """Write the report of everything in `store` to folder `out`; returns the path of `out/index.html`.

    Each section decides from the data whether it can run, and one that cannot says why in the report:
    the ingest summary (when `ingest_report` is given), the store's contents and catalogue, a per-runner
    overview, normalised scores (`describe`; matches with a scenario), ratings and rankings (`ratings`,
    `rank`; any runner whose matches hold comparisons), contest phases (`contest`), per-game and
    multidimensional ratings (`ratings-cv`, `ratings`; several games), socio-cognitive metrics (`socio`;
    predictions or judge ratings), construct-validity audits (`audit`; an outcome measure, or an Age of Agents
    season), and with `fit_models` the Bayesian beta regressions and Measurement Layouts (`fit`,
    `compare-predictors`; per runner whose scenarios have catalogue tags), the crossed models of per-sample pass/fail or graded outcomes
    (`fit pass-fail`, `fit graded`; a runner whose agents answer items apart, as Inspect's), and the latest calibration of each model recorded in the store
    (`referee calibrate --store`). A section that fails shows its error and the rest still builds.

    Writes `index.html` (self-contained), `report.md`, `figures/` (PNG and SVG), `tables/` (CSV, sorted by
    rank where there is one), `provenance.json` and `manifest.json`. `sampling` (draws, tune, chains,
    sampler) overrides the models' own defaults, which converge at contest scale (`referee.models.fit`).
    Each of its REPORT_STAGES says its time as it ends (`referee.models.progress`: on stdout, the report's log;
    `stages` continues a caller's count, as the demo's).
    """
    stages = stages or Stages("referee report", REPORT_STAGES, sys.stdout)
    folder = ResultsFolder(out, command=command, seed=seed, store=store)
    sampling = dict(sampling or {})
    # the Measurement Layouts' held-out folds are the report's longest work: begun now in worker processes, they are
    # fitted while the sections before them are computed here, and read at their stage (the beta regressions begun
    # in processes of their own too oversubscribed two cores: the cold demo took 183 s against 167 s)
    begun = start_layouts(store, seed=seed, sampling=sampling) if fit_models else {}
    try:
        return _build(store, out, folder, ingest_report, title, fit_models, seed, sampling, stages, begun)
    finally:
        for started in begun.values():
            started.cancel()


def _build(store: Store, out: str | Path, folder: ResultsFolder, ingest_report: IngestReport | None, title: str,
           fit_models: bool, seed: int, sampling: dict, stages: Stages, begun: dict) -> Path:
    """`build_report`'s stages, the layouts of `begun` (`start_layouts`) already under way."""
    boards: dict[str, Result | str] = {}  # per runner: its leaderboard, or why it has none
    with stages.stage("leaderboards") as stage:
        sections: list[Section] = leaderboard_sections(store, boards, seed=seed)
        games = games_behind_boards(store, boards, sections)
        stage.wrote(f"{sum(isinstance(b, Result) for b in boards.values())} board(s)")
    with stages.stage("the runners' own numbers"):
        sections += runner_numbers_sections(store)
    with stages.stage("the store and its runners"):
        if ingest_report is not None:
            sections.append(ingest_section(ingest_report))
        sections.append(store_section(store))
        if store.info()["results"]:
            sections.append(runners_section(store))
    with stages.stage("normalised scores"):
        matches = store.matches()
        scenario_based = bool(matches["scenario"].notna().any())
        described = None
        if scenario_based:
            notes: list[str] = []
            with collect_notes(notes):
                described = job("describe", store)
            sections.append(scores_section(described.table("scores"), described.table("mean_by_agent"),
                                           described.table("mean_by_scenario"), notes))
        scores = None if described is None else described.table("scores")
    with stages.stage("every rating method (the appendix)"):
        appendix = rating_sections(store, boards, scores, seed=seed)  # each method's own tables, after everything else
    with stages.stage("socio-cognitive metrics"):
        sections += _guarded("Socio-cognitive metrics", socio_sections, store, seed=seed)
    with stages.stage("construct-validity audits"):
        sections += audit_sections(store, bayes=fit_models, seed=seed, sampling=sampling)
    contest = "Beta regressions and Measurement Layouts (contest figures 2-3, 5-7)"
    with stages.stage("beta regressions and Measurement Layouts" + ("" if fit_models else " (skipped: --no-models)")):
        if described is None:
            sections.append(skipped(contest, "no match has a scenario from a scenario catalogue (tags and score "
                                             "bounds), which these models explain scores by"))
        elif not fit_models:
            sections.append(skipped(contest, "the Bayesian fits were not asked for (--no-models)"))
        else:
            sections += contest_sections(store, seed=seed, sampling=sampling, begun=begun)
    with stages.stage("pass/fail and graded outcomes" + ("" if fit_models else " (skipped: --no-models)")):
        if fit_models:
            sections += _guarded("Pass/fail and graded outcomes", outcome_sections, store, seed=seed,
                                 sampling=sampling)
    with stages.stage("writing the report") as stage:
        sections.append(calibration_section(store.calibrations(), Path(out)))
        for section in appendix:
            section.title = f"Appendix: {section.title}"
        index = write_report(sections + appendix, folder, title=title)
        pages = write_games_behind(folder, games)
        folder.close()
        stage.wrote(f"{len(sections) + len(appendix)} sections and {pages}, {len(folder.files)} files in {out}")
    return index


def leaderboard_sections(store: Store, boards: dict, seed: int = 0) -> list[Section]:
    """The report's first sections: one leaderboard (`leaderboard`) per runner whose matches hold comparisons.
    `boards` receives each runner's leaderboard Result, or why it has none (no comparison), for the appendix,
    which draws each method apart from the same computation."""
    built = []
    for runner, group in store.matches().groupby("runner"):
        found = _guarded(f"Leaderboard ({runner})", _leaderboard, store, _scope(runner, group), boards, seed)
        board = boards.get(runner)
        built.append((len(board.table("rank_sets")) if isinstance(board, Result) else 0, found))
    # the board that ranks most agents opens the report
    return [s for _, found in sorted(built, key=lambda pair: -pair[0]) for s in found]


GAMES_GROWTH = 0.2  # the pages of the games behind the boards add at most this share to the rest of the report


def games_behind_boards(store: Store, boards: dict, sections: list[Section]) -> list:
    """The games behind each board (`referee.run.ratings.games`): each rated agent's most surprising matches and
    each pair of ranked neighbours' head-to-heads, with the traces a page may show (`referee.io.traces`); the
    board's section links every rated agent's page. Returns [(runner, GamesBehind, board table, traces)] for
    `write_games_behind`."""
    from referee.io.traces import traces
    from referee.present.game_pages import agent_pages
    from referee.run.ratings.games import games_behind

    pending = []
    titles = {s.title: s for s in sections}
    for runner, board in boards.items():
        section = titles.get(f"Leaderboard ({runner})")
        if not isinstance(board, Result) or section is None:
            continue
        table = board.value.inference.table  # the one inference: rating, status, block, rank, tier, component
        games = games_behind(board.value.comparisons, table, board.value.own)  # what the board was computed from
        section.links = list(agent_pages(runner, games).items())
        pending.append((runner, games, table, traces(store, games.pages)))
    return pending


def write_games_behind(folder: ResultsFolder, pending: list) -> str:
    """Write the pages of `games_behind_boards` into the report's folder, the match pages within GAMES_GROWTH of
    the bytes written so far (every agent page always: the board links them); what was written, in words."""
    from referee.present.game_pages import write_game_pages

    written = sum(p.stat().st_size for p in folder.files if p.exists())
    budget, pages, spent = GAMES_GROWTH * written, 0, 0
    for runner, games, table, found in pending:
        n, used = write_game_pages(folder, runner, games, table, found, budget - spent)
        pages, spent = pages + n, spent + used
    return f"{pages} page(s) of the games behind the boards ({spent / max(written, 1):.0%} of the rest)"


def _scope(runner: str, group) -> dict:
    """The runner and the phase its rankings are on: the selection phase where a contest has several phases
    (the finals are their own section), else every match."""
    phases = set(group["phase"].dropna())
    return dict(runner=runner, phase=[SELECTION] if SELECTION in phases and len(phases) > 1 else None)


def _leaderboard(store: Store, scope: dict, boards: dict, seed: int) -> list[Section]:
    runner = scope["runner"]
    try:
        boards[runner] = job("leaderboard", store, seed=seed, **scope)
    except ValueError as exc:  # no comparison, or none that carries information: the job says which
        boards[runner] = str(exc)
        return []  # the appendix's ratings section says why
    section = leaderboard_section(runner, boards[runner])
    section.warnings += board_violations(boards[runner])
    return [section]


def board_violations(board: Result) -> list[str]:
    """`referee check`'s invariants on the tables of a leaderboard Result as the report prints them: one warning
    naming each broken invariant (none when all hold)."""
    from referee.run.ratings.invariants import Printed, check_outputs

    found = check_outputs(Printed(board=board.table(), sets=board.table("rank_sets"),
                                  tier_tests=board.table("tier_tests")), board.level)
    return [f"referee check: {row.invariant} broken at {row.where}: {row.what}" for row in found.itertuples()]


def runner_numbers_sections(store: Store) -> list[Section]:
    """The runners' own numbers (`runner-numbers`), right after the leaderboards, whether or not referee could rate
    (nothing when no runner of the store prints numbers of its own)."""
    try:
        found = job("runner-numbers", store)
    except ValueError:
        return []
    return [runner_numbers_section(found)]


FORMULAS = shipped("formulas")
EVAL01 = FORMULAS / "aoa_eval01.toml"  # the Age of Agents season's scoring formula


def audit_sections(store: Store, bayes: bool = True, seed: int = 0, sampling: dict | None = None
                   ) -> list[Section]:
    """A construct-validity audit (`audit`) per runner whose matches record an outcome measure apart from the
    score, and one per Age-of-Agents season with the EVAL 01 formula; a runner without an outcome gets a
    section that says so. The report audits unasked, so an outcome whose direction nothing declares is read
    as higher is better, and the result says so beside it (`referee audit` refuses instead)."""
    matches, measures = store.matches(), store.measures()
    options = dict(no_bayes=not bayes, seed=seed, assume="higher", **(sampling or {}))
    sections, without = [], []
    for runner, group in matches.groupby("runner"):
        if entry(runner).season_audit:
            for match_id in sorted(group["match_id"]):
                title = f"Construct-validity audit: {match_id}"
                sections += _guarded(title, _audit, store, title, match=match_id, formula=EVAL01,
                                     group_by=["team"], telemetry="universal", **options)
            continue
        outcomes = measures[measures["match_id"].isin(set(group["match_id"])) & (measures["kind"] == "outcome")]
        if outcomes.empty:
            without.append(runner)
            continue
        title = f"Construct-validity audit ({runner})"
        sections += _guarded(title, _audit, store, title, runner=runner, **options)
    if without:
        sections.append(skipped(f"Construct-validity audit ({', '.join(without)})",
                                "no outcome is recorded apart from the score (a table's outcome column ingested with "
                                "--measure NAME=outcome, or a runner's outcome measures); the derived win would only "
                                "restate the score"))
    return sections


def _audit(store: Store, title: str, **options) -> Section:
    found = job("audit", store, **options)
    return audit_section(title, found.value, found.table("players"), found.drawn["outcome"])


def contest_sections(store: Store, seed: int = 0, sampling: dict | None = None,
                     begun: dict | None = None) -> list[Section]:
    """The beta regressions and Measurement Layouts (contest figures 2-3, 5-7) of each runner in
    `tagged_runners`, each on its own matches (another runner's scenarios would enter them untagged); one section
    saying why when no runner has tagged scenarios. `begun`: the runners' layouts already begun
    (`start_layouts`); the others run here."""
    tagged = tagged_runners(store)
    if not tagged:
        return [skipped("Beta regressions and Measurement Layouts (contest figures 2-3, 5-7)",
                        "no scored scenario has tags in its catalogue, which these models explain scores by")]
    sections: list[Section] = []
    for runner in tagged:
        built = _guarded("Beta regressions", beta_regression_sections, store, runner, seed=seed, sampling=sampling)
        built += _guarded("Measurement Layouts", layout_sections, store, runner, seed=seed, sampling=sampling,
                          begun=begun)
        for section in built:
            section.title += f" ({runner})"
        sections += built
    return sections


def tagged_runners(store: Store) -> list[str]:
    """The runners whose scored matches name a scenario with catalogue tags (`Store.tagged_runners`)."""
    return store.tagged_runners()


def layout_options(runner: str, seed: int = 0, sampling: dict | None = None) -> dict:
    """The options of `runner`'s `compare-predictors` job: its held-out folds in processes ($REFEREE_REPORT_JOBS,
    else the CPUs, at most 4; every executor gives the same numbers, tests/test_sweeps.py)."""
    return dict(runner=runner, seed=seed, jobs=default_workers("REFEREE_REPORT_JOBS"), **(sampling or {}))


def start_layouts(store: Store, seed: int = 0, sampling: dict | None = None) -> dict:
    """`compare-predictors` begun (`Job.start`) for every runner in `tagged_runners`: with worker processes its
    folds are fitted in them from now on (in-process, when its section reads it). {runner: the started job, or a
    `Failed` holding the error its start raised, which the runner's section shows}."""
    from referee.run.executor import Failed

    begun: dict = {}
    for runner in tagged_runners(store):
        try:
            begun[runner] = JOBS["compare-predictors"].start(store, **layout_options(runner, seed, sampling))
        except Exception as exc:  # noqa: BLE001 - shown in the runner's section, as a failed section is
            begun[runner] = Failed(exc)
    return begun


def layout_sections(store: Store, runner: str, seed: int = 0, sampling: dict | None = None,
                    begun: dict | None = None) -> Section:
    """The Measurement Layout against the other predictors on held-out scenarios (`compare-predictors`) of
    `runner`'s matches as the contest figures 6-7 section (`contest_sections` names the runner in its title):
    the job `begun` holds for `runner` (`start_layouts`; its start's error raised here), else the job run now."""
    started = (begun or {}).get(runner)
    found = started.finish() if started is not None else job("compare-predictors", store,
                                                             **layout_options(runner, seed, sampling))
    return layout_section(found.value)


def beta_regression_sections(store: Store, runner: str, seed: int = 0, baseline: str = "rational_agent",
                             sampling: dict | None = None) -> Section:
    """The baseline contrast and the tag effects (`fit`) of `runner`'s scenario-based matches with their
    correlations (`describe`) as the section with contest figures 2, 3 (right) and 5; the baseline is `baseline`
    when it played, else the first agent by name."""
    described = job("describe", store, runner=runner)
    agents = sorted(described.table("scores")["agent"].unique())
    fitting = dict(runner=runner, seed=seed, **(sampling or {}))
    contrast = job("fit", store, model="baseline-contrast", baseline=baseline if baseline in agents else agents[0],
                   **fitting).value
    tag_fit = job("fit", store, model="tag-effects", **fitting).value
    correlations = described.table("correlations").set_index("feature")
    return beta_regression_section(contrast, contrast.table(), tag_fit, tag_fit.table(), correlations)


def outcome_sections(store: Store, seed: int = 0, sampling: dict | None = None) -> list[Section]:
    """The crossed outcome model (`fit pass-fail`, or `fit graded`) of each runner whose agents answer items
    apart (separate episodes, as Inspect's samples) and whose every score is pass/fail or graded."""
    from referee.prepare.outcomes import outcome_kind

    joined = store.results()[["match_id", "score"]].merge(store.matches()[["match_id", "runner"]])
    sections = []
    for runner in sorted(set(joined["runner"]) & separate_episode_runners()):
        kind = outcome_kind(joined.loc[joined["runner"] == runner, "score"])
        if kind is None:
            continue
        found = job("fit", store, model=kind, runner=runner, seed=seed, **(sampling or {}))
        sections.append(outcome_section(runner, found))
    return sections


MIN_PREDICTION_MATCHES = 10  # cross-validated prediction needs a few matches per fold
ONE_AXIS_BOOTSTRAP = 100  # resamples of the matches for the cyclic share's and Nash skills' intervals


def rating_sections(store: Store, boards: dict, scores=None, seed: int = 0) -> list[Section]:
    """For each runner: ratings and rankings (Elo, Bradley-Terry with bootstrap intervals and voting, as its
    leaderboard in `boards` computed them: `leaderboard_sections`) whenever its matches hold comparisons, a
    single game or many; "is there one axis" (`rank` nash and
    alpha-rank); its contest phases (`contest`); with several games, cross-validated prediction
    (`ratings-cv`), per-game Kendall tau and win-probability heatmaps. What cannot run gets a section that says
    why; a runner whose analysis fails shows the error and the other runners still build. With `scores` (the
    `describe` job's normalised scores), for scenario runners, how the Elo ranking aligns with the ranking by
    mean normalised score (the contest paper's headline comparison)."""
    matches = store.matches()
    sections: list[Section] = []
    for runner, group in matches.groupby("runner"):
        title = f"Ratings and rankings ({runner})"
        phases = sorted(set(group["phase"].dropna()))
        scope = _scope(runner, group)
        board = boards.get(runner, "the leaderboard could not be built (see its section)")
        sections += _guarded(title, _rankings, store, runner, scope, board, title,
                             scores=None if scores is None else scores[scores["runner"] == runner], phases=phases)
        sections += _guarded(f"Is there one axis? ({runner})", _one_axis, store, runner, scope, board, seed)
        if {SELECTION, FINAL} <= set(phases):
            sections += _guarded(f"Contest phases ({runner})", _contest, store, runner, seed)
        if group["scenario"].notna().any():
            continue  # scenario-based runners: the beta regressions and layouts explain scores by scenario
        prediction = f"Per-game and multidimensional ratings ({runner})"
        games = group["game"].dropna().unique()
        if len(games) < 2:
            sections.append(skipped(prediction, f"every match is one game ({', '.join(map(str, games)) or 'unnamed'}); "
                                                "per-game deviations and several rating dimensions need several games"))
        elif len(group) < MIN_PREDICTION_MATCHES:
            sections.append(skipped(prediction, f"{len(group)} matches, fewer than {MIN_PREDICTION_MATCHES}: too few "
                                                "to hold some out for cross-validation"))
        else:
            split = "communication" if group["communication"].notna().any() else None
            sections += _guarded(prediction, _prediction, store, runner, split, seed)
    return sections


def _contest(store: Store, runner: str, seed: int) -> Section:
    return contest_section(runner, job("contest", store, runner=runner, seed=seed).value)


def _rankings(store: Store, runner: str, scope: dict, board: Result | str, title: str, scores,
              phases: list[str]) -> Section:
    """Each method's own tables from the runner's leaderboard `board` (or why there is none)."""
    if isinstance(board, str):
        return skipped(title, board)
    elo, inference, table = board.value.elo, board.value.inference, board.value.votes
    bt = inference.bt
    count = status_note(inference.table)
    votes = {m: table[(table["method"] == m) & table["ranked"].astype(bool)] for m in VOTES}
    votes = {m: v for m, v in votes.items() if len(v) >= 2}
    unvoted = [] if votes else [f"Voting methods not run: fewer than two agents appear on {MIN_BALLOTS:g} or more "
                                "ballots; a ranking by votes needs two."]
    section = rankings_section(runner, elo, inference, votes, pooled=runner in separate_episode_runners(),
                               count=count, unit=comparison_unit(runner))
    section.text += unvoted + board.runner_numbers
    if len(board.tables.get("tier_tests", ())):
        section.tables.append(("The leaderboard's tiers: each agent against the next, the difference (Elo points), "
                               "the family its boundary reads ('best': the next agent and all below are not the best, "
                               "down to the end of the set of the best; 'joint': every pair of the board at once) "
                               "with that family's p-value, Holm's p beside it, and the joint rank bounds (below "
                               "tier 1, a new tier where the highest above is smaller than the lowest below and the "
                               "pair is separable)",
                               board.table("tier_tests")))
    if "seat_effect" in board.tables:
        section.tables.append(("Seat effect: a later seat's change in the log-odds of winning (95 %, clustered by "
                               "match)", board.table("seat_effect")))
    said = {count, status_note(elo.table())}  # the count is stated once, in the text
    section.warnings += [n for n in dict.fromkeys(elo.notes + bt.notes) if n not in said]
    if len(phases) > 1:
        rated = scope["phase"] or phases
        section.text.append(f"The store holds phases {', '.join(phases)}; these rankings are on "
                            f"{'phase ' + rated[0] if len(rated) == 1 else 'every phase pooled'} "
                            "(`referee ratings --phase NAME` for another).")
    if scores is not None and len(scores):
        rated = scores if scope["phase"] is None else scores[scores["phase"].isin(scope["phase"])]
        means = mean_se(rated, "agent").set_index("agent")["mean"]
        found = ranking_alignment(elo.table().set_index("agent")["rating"], means)
        section.text.append(
            f"Elo against the mean normalised score ({found['agents']} agents; the contest paper finds that they "
            f"closely align): Kendall tau {found['kendall_tau']:.2f}, Spearman rho {found['spearman_rho']:.2f}; "
            + ("both put the same agent first." if found["top_agree"] else "they put different agents first."))
    return section


def _one_axis(store: Store, runner: str, scope: dict, board: Result | str, seed: int) -> Section:
    """The one-axis section: Nash averaging (with a bootstrap) and alpha-Rank (`rank`) beside the Elo table of
    the runner's leaderboard `board`."""
    title = f"Is there one axis? ({runner})"
    if isinstance(board, str):
        return skipped(title, board)
    elo = board.value.elo.table()
    rated = elo["rating"].notna().sum()
    if rated < 3:
        return skipped(title, f"{rated} agent(s) compared; a cycle needs three")
    played = int((elo["matches"] >= MIN_BALLOTS).sum()) if "matches" in elo.columns else rated
    if played < 3:
        return skipped(title, f"{played} agent(s) played {MIN_BALLOTS} or more matches; Nash averaging and alpha-Rank "
                              "play only those (`referee rank --min-games N` plays the others), and a cycle needs three")
    nash = job("rank", store, method=["nash"], bootstrap=ONE_AXIS_BOOTSTRAP, seed=seed, **scope).value
    alpha = job("rank", store, method=["alpha-rank"], seed=seed, **scope).value
    section = one_axis_section(runner, elo, nash, alpha)
    from referee.run.ratings.invariants import Printed, check_outputs

    found = check_outputs(Printed(cyclic=nash.cyclic))
    section.warnings += [f"referee check: {row.invariant} broken at {row.where}: {row.what}" for row in found.itertuples()]
    return section


def _prediction(store: Store, runner: str, split: str | None, seed: int) -> Section:
    scope = dict(runner=runner, parallel=True, seed=seed)
    cv = job("ratings-cv", store, folds=5, dims=[1, 2], split=split, **scope)
    per_game = job("ratings", store, method="bt-per-game", **scope)
    multidim = job("ratings", store, method="bt-md", dims=2, **scope)
    section = prediction_section(runner, cv.table("cv_auc"), per_game.value.kendall_tau, cv.drawn["win_matrices"])
    fit = per_game.value.fit
    by_game = fit.game_table().pivot(index="agent", columns="game", values="rating").reset_index()
    per_game_table = fit.global_table()[["agent", "rank", "rating"]].rename(columns={"rating": "global"}).merge(
        by_game, on="agent")
    section.tables += [("Per-game model: each agent's global rating and its rating in each game (Elo scale)",
                        per_game_table),
                       ("Two-dimensional Bradley-Terry: each agent's rating vector (dim_1, dim_2)",
                        multidim.table("ratings").drop(columns=["lower", "upper"]))]
    section.warnings += list(dict.fromkeys(per_game.notes + multidim.notes))
    return section


def socio_sections(store: Store, seed: int = 0) -> list[Section]:
    """COMPACT's socio-cognitive analysis (`socio`) for every runner whose matches hold predictions or judge
    ratings; a store with neither gets a section that says so."""
    matches, events, measures = store.matches(), store.events(), store.measures()
    with_metrics = set(events.loc[events["stage"] == "predict", "match_id"]) | set(
        measures.loc[measures["kind"] == "judge", "match_id"])
    if not with_metrics:
        return [skipped("Socio-cognitive metrics (COMPACT)", "no match records predictions of other players' "
                                                             "actions or LLM-judge ratings")]
    runners = sorted(matches.loc[matches["match_id"].isin(with_metrics), "runner"].unique())
    return [socio_section(runner, job("socio", store, runner=runner, seed=seed).value) for runner in runners]


# (logs, catalogue) per bundled sample; see data/sample/README.md
SAMPLES = [
    (SAMPLE / "concordia" / "logs", SAMPLE / "concordia" / "catalogue.toml"),
    (SAMPLE / "aoa_eval01" / "season.json", None),
    (SAMPLE / "aoa_sim" / "logs", None),
    (SAMPLE / "compact" / "logs", None),
    (SAMPLE / "arena" / "logs", None),
    (SAMPLE / "ranked" / "logs", None),
]


def run_demo(out: str | Path = "reports/demo", store: str | Path | None = None, fit_models: bool = True,
             sampling: dict | None = None, seed: int = 0, command: list[str] | None = None) -> Path:
    """The main job on the bundled sample data: a fresh store (default `out/demo.duckdb`), ingest of every
    bundled sample (`SAMPLES`, one per runner), and the report `out/index.html`; returns its path.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if store is not None and Path(store).exists():
        raise FileExistsError(f"{store}: the demo writes a fresh store; choose a path that does not exist")
    db = Path(store) if store else out / "demo.duckdb"
    for stale in (db, db.with_name(db.name + ".wal")):
        stale.unlink(missing_ok=True)
    stages = Stages("referee demo", REPORT_STAGES + 1, sys.stdout)
    stages.start(f"{len(SAMPLES)} bundled samples -> {db}, then the report in {out}/ ({REPORT_STAGES + 1} stages"
                 + ("" if fit_models else "; no Bayesian fits") + ")")
    with Store(db) as demo:
        with stages.stage("ingest the bundled samples") as stage:
            reports = [demo.ingest([logs], catalogue=catalogue) for logs, catalogue in SAMPLES]
            combined = IngestReport.combine(reports)
            stage.wrote(f"{len(SAMPLES)} samples, {combined.accepted:,} records accepted, {combined.quarantined:,} "
                        "set aside")
        return build_report(demo, out, combined, title="referee demo: the bundled samples",
                            fit_models=fit_models, sampling=sampling, seed=seed, command=command, stages=stages)
