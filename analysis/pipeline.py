"""End-to-end jobs built from the pieces: logs -> store -> normalised scores -> report.

`build_report(store, out, ingest_report=None)` writes the HTML report for a store; `run_demo(out)`
ingests the bundled samples into a fresh store under `out` and writes `out/index.html`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from analysis.audit import audit_frame, default_outcomes, formula_from, run_audit
from analysis.comparisons import ballots_from_tables, comparisons_from_tables
from analysis.describe import feature_correlations, scenario_features
from analysis.predictive import compare_predictors, demand_matrix
from analysis.ratings import rate
from analysis.ratings_cv import cross_validate, summarise_cv, win_matrix
from analysis.report import (
    Section,
    audit_section,
    beta_regression_section,
    ingest_section,
    layout_section,
    prediction_section,
    rankings_section,
    runners_section,
    scores_section,
    store_section,
    write_report,
)
from analysis.score_models import model_scores
from models import beta_regression as br
from models.voting import METHODS as VOTING
from models.voting import PreferenceProfile
from analysis.scores import normalised_scores
from analysis.store import IngestReport, Store

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "data" / "sample"


def build_report(store: Store, out: str | Path, ingest_report: IngestReport | None = None,
                 title: str = "referee report", fit_models: bool = True, draws: int = 1000, seed: int = 0) -> Path:
    """Write `out/index.html` (and figures) for everything in `store`; returns the index path.

    Sections: the ingest summary (when `ingest_report` is given), the store's contents and catalogue, a
    per-runner overview, normalised scores per agent and per scenario (for matches with a scenario), ratings
    and rankings, and (with `fit_models`) the Bayesian beta regressions with `draws` draws per chain.
    """
    sections: list[Section] = []
    if ingest_report is not None:
        sections.append(ingest_section(ingest_report))
    sections.append(store_section(store))
    if store.info()["results"]:
        sections.append(runners_section(store))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = normalised_scores(store, scenarios_only=True)
    if len(scores):
        sections.append(scores_section(scores, [str(w.message) for w in caught]))
    sections += rating_sections(store)
    sections += audit_sections(store, bayes=fit_models, seed=seed)
    if fit_models and len(scores):
        model_data = model_scores(store)  # normalised once for both model sections
        sections.append(beta_regression_sections(*model_data, draws=draws, seed=seed))
        sections.append(layout_sections(*model_data, draws=draws, seed=seed))
    return write_report(sections, out, title=title)


FORMULAS = REPO / "data" / "formulas"


def audit_sections(store: Store, bayes: bool = True, seed: int = 0) -> list[Section]:
    """A construct-validity audit of every Age-of-Agents season in the store, with the EVAL 01 formula."""
    matches = store.table("matches")
    sections = []
    for match_id in sorted(matches.loc[matches["runner"] == "aoa", "match_id"]):
        frame, events = audit_frame(store, match=match_id)
        outcomes = default_outcomes(frame, store.table("measures"))
        formula = formula_from(FORMULAS / "aoa_eval01.toml", frame)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_audit(frame, events, formula, outcomes, ["team"], "universal", seed=seed, bayes=bayes)
        sections.append(audit_section(f"Construct-validity audit: {match_id}", result, frame, outcomes[0]))
    return sections


def layout_sections(scores, scenarios, tags, draws: int = 1000, seed: int = 0) -> Section:
    """Fit the Measurement Layout on training cells, compare predictors, and build the figures 6-7 section.

    scores, scenarios, tags : `analysis.score_models.model_scores(store)`.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = compare_predictors(scores, demand_matrix(scores, scenarios, tags), seed=seed, draws=draws,
                                        tune=draws)
    return layout_section(comparison)


def beta_regression_sections(scores, scenarios, tags, draws: int = 1000, seed: int = 0,
                             baseline: str = "rational_agent") -> Section:
    """Fit the baseline-contrast and tag-effects models on the store's scenario-based scores and build the
    report section with contest figures 2, 3 (right) and 5 and the fits' diagnostics."""
    if baseline not in set(scores["agent"]):
        baseline = sorted(scores["agent"].unique())[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        contrast = br.fit_baseline_contrast(scores, baseline, draws=draws, tune=draws, seed=seed)
        tag_fit = br.fit_tag_effects(scores, tags, draws=draws, tune=draws, seed=seed)
    correlations = feature_correlations(scores, scenario_features(scenarios, tags))
    return beta_regression_section(contrast, br.contrast_table(contrast), tag_fit, br.tag_table(tag_fit), correlations)


def rating_sections(store: Store, bootstrap: int = 200, seed: int = 0) -> list[Section]:
    """Ratings and rankings for every runner with scenarios (Concordia-style) and, for runners with several
    games, cross-validated prediction, per-game Kendall tau and win-probability heatmaps."""
    matches, results = store.table("matches"), store.table("results")
    sections = []
    for runner, group in matches.groupby("runner"):
        runner_results = results[results["match_id"].isin(group["match_id"])]
        if group["scenario"].notna().any():
            comparisons = comparisons_from_tables(group, runner_results)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                elo = rate(comparisons, "elo", seed=seed)
                bt = rate(comparisons, "bt", bootstrap=bootstrap, seed=seed)
            profile = PreferenceProfile.from_ballots(ballots_from_tables(group, runner_results))
            votes = {m: VOTING[m](profile, seed=seed) for m in ("iml", "copeland", "ranked-pairs", "ewa")}
            sections.append(rankings_section(runner, elo, bt, votes))
        elif group["game"].nunique() > 1 and len(group) >= 10:
            comparisons = comparisons_from_tables(group, runner_results, parallel=True)
            split = "communication" if group["communication"].notna().any() else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cv = summarise_cv(cross_validate(comparisons, folds=5, dims=[1, 2], seed=seed))
                per_game = rate(comparisons, "bt-per-game", seed=seed)
                matrices = win_matrix(comparisons, split)
            sections.append(prediction_section(runner, cv, per_game.extra["kendall_tau"], matrices))
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
             draws: int = 1000) -> Path:
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
                            fit_models=fit_models, draws=draws)
