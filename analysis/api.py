"""referee in a notebook: one call per analysis, on a store or on logs, returning results that show themselves.

    import referee
    store = referee.open(referee.sample("concordia", "logs"), catalogue=referee.sample("concordia", "catalogue.toml"))
    bt = referee.ratings(store, "bt", bootstrap=200)      # a Result: bt.table(), bt.plot(), bt.notes
    referee.compare(store, "agent_01", "rational_agent")   # P(A stronger than B), difference, head to head
    referee.rank(store, "copeland"); referee.audit(store, outcomes={"nation_power": "higher"}, ...)
    referee.report(store, "reports/mine")

Each call does what the command of the same name does (`referee ratings`, `rank`, `compare`, `ratings-cv`,
`fit`, `compare-predictors` as `predictors`, `describe`, `socio`, `audit`, `report`) and returns a `Result`:
the command's table (`table()`), its notes and diagnostics, the underlying result object (`result`: a
`FitResult`, posteriors in `result.idata`), `plot(name)` (a matplotlib Figure, never shown; `figures` names
them, the first is the default) and a rich `_repr_html_` for Jupyter. `use_style()` draws a notebook's own
figures in referee's style.
"""

from __future__ import annotations

import html
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from referee.io.resources import shipped
from referee.io.store import Store
from referee.run.stored import stored_tables

ROWS_SHOWN = 30  # rows of a table a notebook displays


@dataclass
class Result:
    """What one analysis call returns.

    kind : the call ('ratings', 'rank', ...); result : the underlying object (a `FitResult` or a DataFrame);
    frame : its main table; notes, diagnostics : as the fit reported them; figures : name -> a function that
    draws that figure (the first is `plot()`'s default).
    """

    kind: str
    result: Any
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)
    figures: dict[str, Callable[[], Any]] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """The result's main table (the CSV the command writes)."""
        return self.frame

    def plot(self, name: str | None = None):
        """A figure of the result (a matplotlib Figure): `name` one of `figures`, default the first.
        ValueError naming the figures there are when the result has none of that name."""
        if not self.figures or (name is not None and name not in self.figures):
            have = "figures " + ", ".join(self.figures) if self.figures else "no figure"
            raise ValueError(f"a {self.kind} result has {have}" + (f", not {name!r}" if name else ""))
        return self.figures[name or next(iter(self.figures))]()

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(str(n))}</li>" for n in self.notes)
        shown = self.frame.head(ROWS_SHOWN).to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}")
        more = (f"<p>{len(self.frame) - ROWS_SHOWN} more rows: <code>.table()</code></p>"
                if len(self.frame) > ROWS_SHOWN else "")
        converged = self.diagnostics.get("converged")
        state = "" if converged is None else f" &middot; converged: {converged}"
        return (f"<div><strong>referee {html.escape(self.kind)}</strong>{state}{shown}{more}"
                + (f"<ul>{notes}</ul>" if notes else "") + "</div>")


def sample(*parts: str) -> Path:
    """The path of a bundled sample (`data/sample/...`), e.g. `sample("concordia", "logs")`."""
    return shipped("sample", *parts)


def open(source: str | Path | list, runner: str | Path | None = None, catalogue: str | Path | None = None,
         store: str | Path | None = None, **ingest) -> Store:
    """A store to analyse: an existing `.duckdb` store file (opened read-only), or logs (a file, a folder or a
    list of them) ingested into `store` (default: a new file in a temporary folder) with `runner`,
    `catalogue` and any other `Store.ingest` option. The ingest report is `store.last_ingest`."""
    paths = source if isinstance(source, list) else [source]
    if len(paths) == 1 and str(paths[0]).endswith(".duckdb") and Path(paths[0]).is_file():
        return Store(paths[0], read_only=True)
    target = Path(store) if store is not None else Path(tempfile.mkdtemp(prefix="referee-")) / "store.duckdb"
    opened = Store(target)
    opened.last_ingest = opened.ingest(paths, runner=runner, catalogue=catalogue, **ingest)
    return opened


def _comparisons(store: Store, runner, phase, where, parallel, scripted=False):
    from referee.prepare.comparisons import comparisons_and_agents, require_comparisons

    matches, results = stored_tables(store, runner, phase, where)
    comparisons, agents = comparisons_and_agents(matches, results, parallel=parallel, scripted=scripted)
    return require_comparisons(comparisons, matches, results), matches, results, agents


def ratings(store: Store, method: str = "bt", bootstrap: int = 0, runner: str | None = None,
            phase: list[str] | None = None, where: list[str] | None = None, parallel: bool = False,
            resample: str = "match", seed: int = 0, rate_scripted: bool = False, **options) -> Result:
    """`referee ratings` in one call: the rating table (agent, rating, lower, upper, rank, rank intervals,
    group, interval, matches, status, and `runner_metric`: the runner's own headline number, computed its way,
    `referee.run.runner_numbers`; Elo scale) of `method` (`referee.run.ratings.METHODS`); `rate_scripted`
    rates scripted partners too; `options` go to `referee.run.ratings.rate` (by, prior, dims, k, anchor,
    draws, ...). plot(): the bootstrap's violins with a bootstrap, else each rating with its interval."""
    from referee.prepare.comparisons import with_resample
    from referee.present.figures import plot_bootstrap_violins, plot_ratings
    from referee.run.ratings import rate
    from referee.run.runner_numbers import stored_runner_numbers

    comparisons, matches, results, agents = _comparisons(store, runner, phase, where, parallel, rate_scripted)
    comparisons, _ = with_resample(comparisons, matches, resample)
    found = rate(comparisons, method, bootstrap=bootstrap, seed=seed, agents=agents, **options)
    found.ratings, said = stored_runner_numbers(store, found.table(), matches, results)
    found.notes += said
    table = found.table()
    figures = {"intervals": lambda: plot_ratings(table)} if "game" not in table.columns else {}
    if found.bootstrap is not None and "game" not in table.columns:
        figures = {"violins": lambda: plot_bootstrap_violins(found.bootstrap.long()), **figures}
    return Result("ratings", found, table, found.notes, found.diagnostics, figures)


def compare(store: Store, a: str | None = None, b: str | None = None, method: str = "bt", bootstrap: int = 1000,
            resample: str = "match", runner: str | None = None, phase: list[str] | None = None,
            parallel: bool = False, seed: int = 0) -> Result:
    """`referee compare`: with two agents, one row (p_better, difference, lower, upper, matches, wins, losses,
    ties, ...); without, every pair with Holm's control over adjacent pairs (`referee.run.compare`)."""
    from referee.prepare.comparisons import with_resample
    from referee.run.compare import compare as compare_two, compare_all

    comparisons, matches, _, _ = _comparisons(store, runner, phase, None, parallel)
    comparisons, _ = with_resample(comparisons, matches, resample)
    if (a is None) != (b is None):
        raise ValueError("name both agents, or neither for every pair")
    if a is None:
        table = compare_all(comparisons, method, bootstrap, seed, resample)
        return Result("compare", table, table)
    found = compare_two(comparisons, a, b, method, bootstrap, seed, resample)
    return Result("compare", found, pd.DataFrame([found]))


def rank(store: Store, method: str | list[str] = "copeland", runner: str | None = None,
         phase: list[str] | None = None, min_ballots: float | None = None, seed: int = 0) -> Result:
    """`referee rank`: voting-as-evaluation (`referee.models.voting.METHODS`, one or a list, or 'all') with one
    ballot per match or (scenario, repetition); the table (a `method` column first when several) carries
    matches and status (the one rule)."""
    from referee.models.registry import MIN_BALLOTS
    from referee.run.votes import vote_tables

    matches, results = stored_tables(store, runner, phase)
    table = vote_tables(matches, results, method, MIN_BALLOTS if min_ballots is None else min_ballots, seed)
    if table["method"].nunique() == 1:
        table = table.drop(columns="method")
    return Result("rank", table, table)


def audit(store: Store, outcomes: dict[str, str] | list[str] | None = None, formula: str | Path | None = None,
          runner: str | None = None, match: str | None = None, group_by: list[str] | None = None,
          telemetry: str | None = None, score: str | None = None, bayes: bool = True, seed: int = 0,
          **sampling) -> Result:
    """`referee audit`: the construct-validity audit of the score against ground-truth outcomes. `outcomes`:
    name -> 'higher' or 'lower' (which way is better; a list takes the runner's or formula's declarations).
    `score`: what is audited: the recorded score (None), 'formula' (your formula's score, recomputed from the
    counters: audit a metric before you publish it) or a column of the data (e.g. an outcome, to see a score
    that passes). `result.frame` is the per-player table audited. plot('score_vs_outcome') and, with a
    formula, plot('decomposition')."""
    from referee.models.validity.checks import reproduce
    from referee.present.figures import plot_decomposition, plot_score_vs_outcome
    from referee.run.audit import audit_frame, default_outcomes, formula_from, run_audit

    frame, events = audit_frame(store, runner=runner, match=match)
    rule = formula_from(formula, frame) if formula else None
    if score == "formula":
        if rule is None:
            raise ValueError("score='formula' audits the formula's own score: give formula=FILE")
        frame = frame.assign(score=reproduce(frame, rule)["expected"].to_numpy())
    elif score is not None:
        if score not in frame.columns:
            raise ValueError(f"score={score!r} is not a column of the audited data ({sorted(frame.columns)})")
        frame = frame.assign(score=frame[score])
    given = outcomes if isinstance(outcomes, dict) else {}
    names = list(outcomes or []) or default_outcomes(frame, store.table("measures"))
    found = run_audit(frame, events, rule, names, list(group_by or []), telemetry, seed=seed, bayes=bayes,
                      directions=given, sampling=sampling or None)
    found.frame = frame
    order = list(frame.sort_values("score", ascending=False)["player"])
    figures = {"score_vs_outcome": lambda: plot_score_vs_outcome(frame, names[0])}
    if "decomposition" in found:
        figures["decomposition"] = lambda: plot_decomposition(found["decomposition"]["table"], order)
    return Result("audit", found, found.table(), found.notes, found.diagnostics, figures)


def fit(store: Store, model: str = "tag-effects", baseline: str | None = None, seed: int = 0, **sampling) -> Result:
    """`referee fit`: a Bayesian model of normalised scores, 'tag-effects', 'baseline-contrast' (against
    `baseline`) or 'measurement-layout'; `sampling` (draws, tune, chains, sampler) as the command's options.
    The posterior is `result.idata`; plot() draws the model's intervals."""
    from referee.models.scores import beta_regression as br
    from referee.present.figures import plot_intervals
    from referee.run.score_models import model_scores

    scores, scenarios, tags = model_scores(store)
    if model == "tag-effects":
        found = br.fit_tag_effects(scores, tags, seed=seed, **sampling)
        table = br.tag_table(found)
        figures = {"intervals": lambda: plot_intervals(table, "tag", "Tag coefficients (94% HDI)",
                                                       "log-odds effect on score")}
    elif model == "baseline-contrast":
        if baseline is None:
            raise ValueError("baseline-contrast needs baseline=AGENT")
        found = br.fit_baseline_contrast(scores, baseline, seed=seed, **sampling)
        table = br.contrast_table(found)
        figures = {"intervals": lambda: plot_intervals(table, "agent", "Difference from the baseline (95% HDI)",
                                                       "log-odds difference")}
    elif model == "measurement-layout":
        from referee.present.figures import plot_capability_profiles
        from referee.run.score_models import fit_store_layout

        found, _ = fit_store_layout(scores, scenarios, tags, seed=seed, **sampling)
        table = found.table()
        figures = {"capabilities": lambda: plot_capability_profiles(
            table, {n: found.parameters(n) for n in ("base_chance", "sample_size")})}
    else:
        raise ValueError(f"unknown model {model!r}: tag-effects, baseline-contrast or measurement-layout")
    return Result("fit", found, table, found.notes, found.diagnostics, figures)


def describe(store: Store, phase: list[str] | None = None) -> Result:
    """`referee describe`: mean normalised score per agent (the table) and per scenario (`result`), with ±1 SE
    over matches; plot('agents') or plot('scenarios')."""
    from referee.present.figures import plot_means
    from referee.run.describe import scores_by
    from referee.run.score_models import model_scores

    scores, _, _ = model_scores(store, phase)
    by_agent, by_scenario = scores_by(scores)
    return Result("describe", by_scenario, by_agent, figures={"agents": lambda: plot_means(by_agent, "agent"),
                                                               "scenarios": lambda: plot_means(by_scenario, "scenario")})


def predictors(store: Store, folds: int = 4, phase: list[str] | None = None, seed: int = 0, **sampling) -> Result:
    """`referee compare-predictors` (contest figure 7): the Measurement Layout against linear regression,
    XGBoost and a constant, cross-validated over each agent's scenarios; the table is the pooled comparison,
    `result` the `Comparison` (per_agent, layout); plot() the per-agent figure."""
    from referee.present.figures import plot_predictor_comparison
    from referee.run.predictive import compare_predictors, training_demands
    from referee.run.score_models import model_scores

    scores, scenarios, tags = model_scores(store, phase)
    found = compare_predictors(scores, training_demands(scores, scenarios, tags), folds=folds, seed=seed,
                               **sampling)
    return Result("predictors", found, found.pooled, list(found.layout.notes), dict(found.layout.diagnostics),
                  {"per_agent": lambda: plot_predictor_comparison(found.per_agent)})


def ratings_cv(store: Store, folds: int = 5, dims: list[int] | range = range(1, 8), split: str | None = None,
               runner: str | None = None, parallel: bool = False, seed: int = 0) -> Result:
    """`referee ratings-cv`: k-fold ROC-AUC of held-out comparisons (bt, bt-per-game, bt-md by dimension): the
    table is the mean and SE per model, `result` every fold; plot() the fitted beside the observed win
    matrices (by `split`, e.g. 'communication')."""
    from referee.present.figures import plot_win_matrices
    from referee.run.ratings_cv import cross_validate, fitted_and_empirical, summarise_cv

    comparisons, _, _, _ = _comparisons(store, runner, None, None, parallel)
    folds_table = cross_validate(comparisons, folds=folds, dims=dims, seed=seed)
    return Result("ratings-cv", folds_table, summarise_cv(folds_table),
                  figures={"win_matrices": lambda: plot_win_matrices(fitted_and_empirical(comparisons, split))})


def socio(store: Store, runner: str | None = None, bootstrap: int = 200, seed: int = 0) -> Result:
    """`referee socio` (COMPACT section 4): socio-cognitive metrics, their consistency (the table) and what
    predicts winning (`result.determinants`, `result.auc_table()`); plot('similarity') or
    plot('consistency')."""
    from referee.present.figures import plot_consistency, plot_similarity_blocks
    from referee.run.socio import socio_analysis

    matches, results = stored_tables(store, runner or ("compact" if "compact" in set(
        store.table("matches")["runner"]) else None))
    ids = set(matches["match_id"])
    events, measures = (store.table(t) for t in ("events", "measures"))
    found = socio_analysis(matches, results, events[events["match_id"].isin(ids)],
                           measures[measures["match_id"].isin(ids)], n_boot=bootstrap, seed=seed)
    return Result("socio", found, found.consistency, found.notes, found.diagnostics,
                  {"similarity": lambda: plot_similarity_blocks(found.similarity),
                   "consistency": lambda: plot_consistency(found.consistency)})


def use_style() -> None:
    """Draw a notebook's own matplotlib figures in referee's style (paper widths, colour-blind-safe palette)."""
    from referee.present.figures import use_style as apply

    apply()


def report(store: Store, out: str | Path, fit_models: bool = True, seed: int = 0, **sampling) -> Path:
    """`referee report`: the HTML report of a store written to `out` (figures, tables, report.md); returns the
    path of its index.html. sampling : draws, tune, chains, sampler of the Bayesian sections."""
    from referee.reporting import build_report

    return build_report(store, out, fit_models=fit_models, seed=seed, sampling=sampling or None)
