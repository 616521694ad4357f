"""End-to-end jobs built from the pieces: logs -> store -> normalised scores -> report.

`build_report(store, out, ingest_report=None)` writes the HTML report for a store; `run_demo(out)`
ingests the bundled samples into a fresh store under `out` and writes `out/index.html`.
"""

from __future__ import annotations

from pathlib import Path

from referee.run.audit import audit_frame, default_outcomes, run_audit, season_audit
from referee.prepare.comparisons import (
    no_comparisons_reason,
    ballots_from_tables,
    comparable_agents,
    comparisons_from_tables,
    separate_episode_runners,
)
from referee.prepare.selection import exclusion_note, outcome_note
from referee.run.contest import FINAL, SELECTION, run_contest
from referee.run.describe import feature_correlations, mean_se, scores_by, ranking_alignment, scenario_features
from referee.run.predictive import compare_predictors, training_demands
from referee.run.rating_labels import information_note, status_note, without_information
from referee.run.runner_numbers import stored_runner_numbers
from referee.io.loaders import RUNNERS, comparison_unit
from referee.run.ratings import rate
from referee.run.ratings_cv import cross_validate, fitted_and_empirical, summarise_cv
from referee.present.report import (
    Section,
    audit_section,
    beta_regression_section,
    calibration_section,
    contest_section,
    ingest_section,
    layout_section,
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
from referee.models.scores import beta_regression as br
from referee.models.voting import MIN_BALLOTS, vote
from referee.models.voting import PreferenceProfile
from referee.prepare.scores import normalised_scores
from referee.io.resources import shipped
from referee.io.store import IngestReport, Store
from referee.present.outputs import ResultsFolder
from referee.models.fit import collect_notes
from referee.prepare.membership import agents_in

SAMPLE = shipped("sample")


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
                 sampling: dict | None = None, command: list[str] | None = None) -> Path:
    """Write the report of everything in `store` to folder `out`; returns the path of `out/index.html`.

    Each section decides from the data whether it can run, and one that cannot says why in the report:
    the ingest summary (when `ingest_report` is given), the store's contents and catalogue, a per-runner
    overview, normalised scores (matches with a scenario), ratings and rankings (any runner whose matches
    hold comparisons), per-game and multidimensional ratings (several games), socio-cognitive metrics
    (predictions or judge ratings), construct-validity audits (an outcome measure, or an Age of Agents
    season), and with `fit_models` the Bayesian beta regressions and Measurement Layouts (a scenario
    catalogue), and the latest calibration of each model recorded in the store (`referee calibrate --store`).
    A section that fails shows its error and the rest still builds.

    Writes `index.html` (self-contained), `report.md`, `figures/` (PNG and SVG), `tables/` (CSV, sorted by
    rank where there is one), `provenance.json` and `manifest.json`. `sampling` (draws, tune, chains,
    sampler) overrides the models' own defaults, which converge at contest scale (`referee.models.fit`).
    """
    folder = ResultsFolder(out, command=command, seed=seed, store=store)
    sections: list[Section] = []
    if ingest_report is not None:
        sections.append(ingest_section(ingest_report))
    sections.append(store_section(store))
    if store.info()["results"]:
        sections.append(runners_section(store))
    notes: list[str] = []
    with collect_notes(notes):
        scores = normalised_scores(store, scenarios_only=True)
    if len(scores):
        sections.append(scores_section(scores, *scores_by(scores), notes))
    sections += rating_sections(store, seed=seed, scores=scores)
    sections += _guarded("Socio-cognitive metrics", socio_sections, store, seed=seed)
    sections += audit_sections(store, bayes=fit_models, seed=seed, sampling=sampling)
    contest = "Beta regressions and Measurement Layouts (contest figures 2-3, 5-7)"
    if not len(scores):
        sections.append(skipped(contest, "no match has a scenario from a scenario catalogue (tags and score bounds), "
                                         "which these models explain scores by"))
    elif not fit_models:
        sections.append(skipped(contest, "the Bayesian fits were not asked for (--no-models)"))
    else:
        model_data = (scores, store.table("scenarios"), store.table("scenario_tags"))  # normalised once for both
        sections += _guarded("Beta regressions", beta_regression_sections, *model_data, seed=seed,
                             sampling=sampling)
        sections += _guarded("Measurement Layouts", layout_sections, *model_data, seed=seed, sampling=sampling)
    sections.append(calibration_section(store.table("calibrations"), Path(out)))
    index = write_report(sections, folder, title=title)
    folder.close()
    return index


FORMULAS = shipped("formulas")


def audit_sections(store: Store, bayes: bool = True, seed: int = 0, sampling: dict | None = None
                   ) -> list[Section]:
    """A construct-validity audit per runner whose matches record an outcome measure apart from the score
    (`referee.run.audit`), and one per Age-of-Agents season with the EVAL 01 formula; a runner without an
    outcome gets a section that says so."""
    matches, measures = store.table("matches"), store.table("measures")
    sections, without = [], []
    for runner, group in matches.groupby("runner"):
        if getattr(RUNNERS.get(runner), "SEASON_AUDIT", False):
            for match_id in sorted(group["match_id"]):
                sections += _guarded(f"Construct-validity audit: {match_id}", _aoa_audit, store, match_id,
                                     bayes=bayes, seed=seed, sampling=sampling)
            continue
        title = f"Construct-validity audit ({runner})"
        ids = set(group["match_id"])
        outcomes = measures[measures["match_id"].isin(ids) & (measures["kind"] == "outcome")]
        if outcomes.empty:
            without.append(runner)
            continue
        sections += _guarded(title, _outcome_audit, store, runner, title, bayes=bayes, seed=seed, sampling=sampling)
    if without:
        sections.append(skipped(f"Construct-validity audit ({', '.join(without)})",
                                "no outcome is recorded apart from the score (a table's outcome column ingested with "
                                "--measure NAME=outcome, or a runner's outcome measures); the derived win would only "
                                "restate the score"))
    return sections


def _aoa_audit(store: Store, match_id: str, bayes: bool, seed: int, sampling: dict | None) -> Section:
    result, frame, _, outcomes = season_audit(store, match_id, bayes=bayes, seed=seed, sampling=sampling)
    return audit_section(f"Construct-validity audit: {match_id}", result, frame, outcomes[0])


def _outcome_audit(store: Store, runner: str, title: str, bayes: bool, seed: int, sampling: dict | None) -> Section:
    frame, events = audit_frame(store, runner=runner)
    ids = set(frame["match_id"])
    measures = store.table("measures")
    outcomes = default_outcomes(frame, measures[measures["match_id"].isin(ids)])
    # the report audits every runner's recorded outcomes unasked: an undeclared direction is read as higher is
    # better, and the result says so beside each outcome and in its notes (`referee audit` refuses instead)
    result = run_audit(frame, events, None, outcomes, [], None, seed=seed, bayes=bayes, sampling=sampling,
                       assume="higher")
    return audit_section(title, result, frame, outcomes[0])


def layout_sections(scores, scenarios, tags, seed: int = 0, sampling: dict | None = None) -> Section:
    """Fit the Measurement Layout on training cells, compare predictors, and build the figures 6-7 section.

    scores, scenarios, tags : `referee.run.score_models.model_scores(store)`.
    """
    comparison = compare_predictors(scores, training_demands(scores, scenarios, tags), seed=seed, **(sampling or {}))
    return layout_section(comparison)


def beta_regression_sections(scores, scenarios, tags, seed: int = 0, baseline: str = "rational_agent",
                             sampling: dict | None = None) -> Section:
    """Fit the baseline-contrast and tag-effects models on the store's scenario-based scores and build the
    report section with contest figures 2, 3 (right) and 5 and the fits' diagnostics and notes."""
    if baseline not in set(scores["agent"]):
        baseline = sorted(scores["agent"].unique())[0]
    contrast = br.fit_baseline_contrast(scores, baseline, seed=seed, **(sampling or {}))
    tag_fit = br.fit_tag_effects(scores, tags, seed=seed, **(sampling or {}))
    correlations = feature_correlations(scores, scenario_features(scenarios, tags))
    return beta_regression_section(contrast, br.contrast_table(contrast), tag_fit, br.tag_table(tag_fit), correlations)


MIN_PREDICTION_MATCHES = 10  # cross-validated prediction needs a few matches per fold
ONE_AXIS_BOOTSTRAP = 100  # resamples of the matches for the cyclic share's and Nash skills' intervals


def rating_sections(store: Store, bootstrap: int = 200, seed: int = 0, scores=None) -> list[Section]:
    """For each runner: ratings and rankings (Elo, Bradley-Terry with bootstrap intervals, voting) whenever
    its matches hold comparisons, a single game or many; with several games, cross-validated prediction,
    per-game Kendall tau and win-probability heatmaps. What cannot run gets a section that says why; a
    runner whose analysis fails shows the error and the other runners still build. `scores`
    (`normalised_scores`, scenario-based) adds, for scenario runners, how the Elo ranking aligns with the ranking
    by mean normalised score (the contest paper's headline comparison)."""
    matches, results = store.table("matches"), store.table("results")
    sections: list[Section] = []
    for runner, group in matches.groupby("runner"):
        runner_results = results[results["match_id"].isin(group["match_id"])]
        title = f"Ratings and rankings ({runner})"
        phases = set(group["phase"].dropna())
        rated = group[group["phase"] == SELECTION] if SELECTION in phases and len(phases) > 1 else group
        runner_scores = None if scores is None else scores[scores["match_id"].isin(rated["match_id"])]
        computed: dict = {}  # the comparisons and Elo table the rankings computed, for the one-axis section
        sections += _guarded(title, _rankings, runner, rated, runner_results, bootstrap, seed, title, runner_scores,
                             phases=sorted(phases), computed=computed, store=store)
        sections += _guarded(f"Is there one axis? ({runner})", _one_axis, runner, computed, seed)
        if {SELECTION, FINAL} <= phases:
            sections += _guarded(f"Contest phases ({runner})", _contest, runner, group, runner_results, seed)
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
            sections += _guarded(prediction, _prediction, runner, group, runner_results, seed)
    return sections


def _contest(runner: str, group, results, seed: int) -> Section:
    return contest_section(runner, run_contest(group, results, seed=seed))


def _rankings(runner: str, group, results, bootstrap: int, seed: int, title: str, scores=None,
              phases: list[str] | None = None, computed: dict | None = None, store: Store | None = None) -> Section:
    results = results[results["match_id"].isin(group["match_id"])]
    comparisons = comparisons_from_tables(group, results)
    if not len(comparisons):
        return skipped(title, no_comparisons_reason(group, results))
    _, uninformed = without_information(comparisons)
    if len(uninformed) == len(agents_in(comparisons)):
        return skipped(title, information_note(comparisons, uninformed))
    elo = rate(comparisons, "elo", seed=seed)
    if computed is not None:
        computed.update(comparisons=comparisons, elo=elo.table())
    bt = rate(comparisons, "bt", bootstrap=bootstrap, seed=seed, agents=comparable_agents(group, results))
    own = []
    if store is not None:
        bt.ratings, own = stored_runner_numbers(store, bt.table(), group, results)
    ballots = ballots_from_tables(group, results)
    profile = PreferenceProfile.from_ballots(ballots[~ballots["agent"].isin(uninformed)])
    supported = int((profile.support >= MIN_BALLOTS).sum())
    votes = {m: vote(profile, m, seed=seed) for m in ("iml", "copeland", "ranked-pairs", "ewa")} if supported >= 2 else {}
    count = status_note(bt.table())
    section = rankings_section(runner, elo, bt, votes, pooled=runner in separate_episode_runners(), count=count,
                               unit=comparison_unit(runner))
    section.text += own
    if not votes:
        section.text.append(f"Voting methods not run: {supported} agent(s) appear on {MIN_BALLOTS:g} or more ballots "
                            f"(the most is {profile.support.max():g}); a ranking by votes needs two.")
    said = {count, status_note(elo.table())}  # the count is stated once, in the text
    notes = [n for n in elo.notes + bt.notes if n not in said]
    section.warnings += list(dict.fromkeys(notes))
    if phases and len(phases) > 1:
        rated = sorted(set(group["phase"].dropna()))
        section.text.append(f"The store holds phases {', '.join(phases)}; these rankings are on "
                            f"{'phase ' + rated[0] if len(rated) == 1 else 'every phase pooled'} "
                            "(`referee ratings --phase NAME` for another).")
    for note in (exclusion_note(group), outcome_note(results)):
        if note:
            section.text.append(note[0].upper() + note[1:] + ".")
    if scores is not None and len(scores):
        means = mean_se(scores, "agent").set_index("agent")["mean"]
        found = ranking_alignment(elo.table().set_index("agent")["rating"], means)
        section.text.append(
            f"Elo against the mean normalised score ({found['agents']} agents; the contest paper finds that they "
            f"closely align): Kendall tau {found['kendall_tau']:.2f}, Spearman rho {found['spearman_rho']:.2f}; "
            + ("both put the same agent first." if found["top_agree"] else "they put different agents first."))
    return section


def _one_axis(runner: str, computed: dict, seed: int) -> Section:
    """The one-axis section from the comparisons and Elo table the rankings section computed (`computed`)."""
    from referee.run.game_theory import game_ranking

    title = f"Is there one axis? ({runner})"
    if "comparisons" not in computed:
        return skipped(title, "the rankings above were not computed")
    comparisons = computed["comparisons"]
    agents = set(agents_in(comparisons))
    if len(agents) < 3:
        return skipped(title, f"{len(agents)} agent(s) compared; a cycle needs three")
    nash = game_ranking(comparisons, "nash", bootstrap=ONE_AXIS_BOOTSTRAP, seed=seed)
    return one_axis_section(runner, computed["elo"], nash, game_ranking(comparisons, "alpha-rank", seed=seed))


def _prediction(runner: str, group, results, seed: int) -> Section:
    comparisons = comparisons_from_tables(group, results, parallel=True)
    split = "communication" if group["communication"].notna().any() else None
    cv = summarise_cv(cross_validate(comparisons, folds=5, dims=[1, 2], seed=seed))
    per_game = rate(comparisons, "bt-per-game", seed=seed)
    multidim = rate(comparisons, "bt-md", dims=2, seed=seed)
    section = prediction_section(runner, cv, per_game.kendall_tau, fitted_and_empirical(comparisons, split))
    fit = per_game.fit
    by_game = fit.game_table().pivot(index="agent", columns="game", values="rating").reset_index()
    per_game_table = fit.global_table()[["agent", "rank", "rating"]].rename(columns={"rating": "global"}).merge(
        by_game, on="agent")
    section.tables += [("Per-game model: each agent's global rating and its rating in each game (Elo scale)",
                        per_game_table),
                       ("Two-dimensional Bradley-Terry: each agent's rating vector (dim_1, dim_2)",
                        multidim.table().drop(columns=["lower", "upper"]))]
    section.warnings += per_game.notes + [n for n in multidim.notes if n not in per_game.notes]
    return section


def socio_sections(store: Store, bootstrap: int = 200, seed: int = 0) -> list[Section]:
    """COMPACT's socio-cognitive analysis (`referee.run.socio`) for every runner whose matches hold
    predictions or judge ratings; a store with neither gets a section that says so."""
    from referee.run.socio import socio_analysis

    matches, events, measures = store.table("matches"), store.table("events"), store.table("measures")
    with_metrics = set(events.loc[events["stage"] == "predict", "match_id"]) | set(
        measures.loc[measures["kind"] == "judge", "match_id"])
    if not with_metrics:
        return [skipped("Socio-cognitive metrics (COMPACT)", "no match records predictions of other players' "
                                                             "actions or LLM-judge ratings")]
    results = store.table("results")
    sections = []
    for runner, group in matches[matches["match_id"].isin(with_metrics)].groupby("runner"):
        ids = set(group["match_id"])
        tables = [t[t["match_id"].isin(ids)] for t in (results, events, measures)]
        sections.append(socio_section(runner, socio_analysis(group, *tables, n_boot=bootstrap, seed=seed)))
    return sections


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
    with Store(db) as demo:
        reports = [demo.ingest([logs], catalogue=catalogue) for logs, catalogue in SAMPLES]
        return build_report(demo, out, IngestReport.combine(reports), title="referee demo: the bundled samples",
                            fit_models=fit_models, sampling=sampling, seed=seed, command=command)
