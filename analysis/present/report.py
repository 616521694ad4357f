"""Reports: a report is a list of `Section`s (text, warnings, tables, figures) written three ways.

Sections are built from results already computed (`ingest_section`, `rankings_section`, ...); a section
that cannot run is `skipped(title, reason)` and says why. `write_report` writes, into a results folder,
`index.html` (one self-contained page: figures embedded, opens from disk), `report.md` (the same text and
tables, figures linked), every figure as `figures/*.png` and `figures/*.svg`, and every table as
`tables/*.csv` (sorted by rank where there is one).
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import jinja2
from markupsafe import Markup
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from referee.result import FitJobResult, LeaderboardJobResult, RunnerNumbersJobResult
from referee.present.board_view import board_view, methods_view
from referee.present.cells import readable
from referee.present.markdown import md_finalize, md_table
from referee.present.job_figures import outcome_effects, socio_figures
from referee.present.report_paths import relative_frame, relative_paths
from referee.present.outputs import ResultsFolder, rank_sorted, referee_version
from referee.models.validity import CHECK_TITLES
from referee.present.figures import (
    MAX_ROWS,
    plot_bootstrap_violins,
    plot_decomposition,
    plot_score_vs_outcome,
    plot_capability_profiles,
    plot_predictor_comparison,
    plot_correlation_heatmap,
    plot_intervals,
    plot_means,
    plot_win_matrices,
)
from referee.present.plan_figures import plot_contest_stages
from referee.models.registry import DEFAULT_TAU_ELO
from referee.names import NEVER_COMPARED
from referee.readings import chance_reading, cyclic_interval, kendall_reading

HTML_ROWS = 30  # rows of a table shown on the page and in report.md; the CSV under tables/ has them all


@dataclass
class Section:
    """One report section: paragraphs, warnings, (caption, DataFrame) tables and (caption, Figure) figures;
    `skipped` holds the reason when the section could not run on this store."""

    title: str
    text: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tables: list[tuple] = field(default_factory=list)  # (caption, shown) or (caption, shown, the CSV's table)
    figures: list[tuple[str, Figure]] = field(default_factory=list)
    skipped: str | None = None
    leaderboard: bool = False  # its tables are shown whole and compact, its text and warnings folded after them
    summary: str | None = None  # one line above the tables (the leaderboard's: who is ranked, who could be first)
    links: list[tuple[str, str]] = field(default_factory=list)  # (text, relative path): pages of the games behind it


def skipped(title: str, reason: str) -> Section:
    """A section that did not run on this store, saying why (`reason`, a plain sentence fragment)."""
    return Section(title, text=[f"Not run: {reason}."], skipped=reason)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _table_html(cells: pd.DataFrame, classes: str | None = None) -> str:
    """A table of cell texts (`readable`) as HTML, every cell escaped."""
    return cells.to_html(index=False, escape=True, border=0, classes=classes)


def html_templates() -> jinja2.Environment:
    """The HTML pages' templates (`templates/`), every value escaped (players' text is untrusted): the report's
    and the game pages'."""
    return jinja2.Environment(loader=jinja2.PackageLoader("referee.present", "templates"),
                              autoescape=jinja2.select_autoescape(["html"]))


def write_report(sections: list[Section], folder: "ResultsFolder", title: str = "referee report") -> Path:
    """Render `sections` into a results folder (`referee.present.outputs.ResultsFolder`).

    Writes `figures/{section}-{i}.png` (150 dpi) and `.svg`, `tables/{section}-{i}-{caption}.csv` (sorted by
    rank where there is one), `report.md`, and `index.html` with every figure embedded (a page that opens
    from disk on its own); tables longer than `HTML_ROWS` rows are cut on the page and in report.md and
    say where the whole table is. Figures are closed after saving. Returns the path of index.html.
    """
    rendered = []
    anchors: dict[str, int] = {}
    base = Path(folder.out).resolve()
    here = lambda text: relative_paths(text, base)  # noqa: E731
    for section in sections:
        anchor = _slug(section.title)
        anchors[anchor] = anchors.get(anchor, 0) + 1
        if anchors[anchor] > 1:
            anchor = f"{anchor}-{anchors[anchor]}"
        figures = []
        for i, (caption, fig) in enumerate(section.figures):
            name = f"figures/{anchor}-{i + 1}"
            png = folder.figure(name, fig)  # PNG and SVG
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            figures.append({"caption": caption, "png": name + ".png", "svg": name + ".svg",
                            "src": f"data:image/png;base64,{data}"})
        tables = []
        for i, (caption, table, *whole) in enumerate(section.tables):
            table = relative_frame(table if whole else rank_sorted(table), base)  # a view keeps its own order
            whole = relative_frame(whole[0], base) if whole else table
            csv = folder.table(f"tables/{anchor}-{i + 1}-{_slug(caption)[:40]}", whole)
            rows = len(table) if section.leaderboard else HTML_ROWS
            cut = len(table) > rows
            note = f"First {rows} of {len(table)} rows; all of them: " if cut else "As CSV: "
            kind = "board" if section.leaderboard and i == 0 else None  # the agent column may wrap
            cells = readable(table.head(rows))  # each cell as a reader reads it, once for HTML and Markdown
            tables.append({"caption": here(caption), "html": _table_html(cells, kind),
                           "markdown": md_table(cells), "csv": csv.relative_to(folder.out).as_posix(),
                           "note": note, "leaderboard": section.leaderboard})
        rendered.append({"title": section.title, "anchor": anchor, "text": [here(p) for p in section.text],
                         "skipped": section.skipped, "warnings": [here(w) for w in section.warnings],
                         "figures": figures, "tables": tables, "leaderboard": section.leaderboard,
                         "summary": here(section.summary),
                         # a page's path is referee's own (games/<kind>/<slug>-<hash>.html): safe in both formats
                         "links": [{"text": text, "href": Markup(href)} for text, href in section.links]})
    lead = next((i for i, s in enumerate(sections) if not s.leaderboard), len(sections))
    env = html_templates()
    context = {"title": title, "sections": rendered, "version": referee_version(), "lead": lead,
               "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    markdown = jinja2.Environment(loader=jinja2.PackageLoader("referee.present", "templates"), trim_blocks=True,
                                  lstrip_blocks=True, keep_trailing_newline=True, finalize=md_finalize)
    folder.path("report.md").write_text(markdown.get_template("report.md").render(**context), encoding="utf-8")
    index = folder.path("index.html")
    index.write_text(env.get_template("report.html").render(**context), encoding="utf-8")
    return index


def ingest_section(report) -> Section:
    """Section for an `referee.io.store.IngestReport`: totals, per-file counts, reasons, first quarantined records."""
    totals = report.as_dict()
    section = Section("Ingest summary", text=[
        f"Read {totals['read']} records: {totals['accepted']} accepted, {totals['quarantined']} quarantined "
        f"(read = accepted + quarantined)."])
    section.warnings += report.warnings
    section.tables.append(("Files", report.files))
    if totals["by_reason"]:
        section.tables.append(("Quarantined by reason", pd.DataFrame(
            {"reason": list(totals["by_reason"]), "records": list(totals["by_reason"].values())})))
        section.tables.append(("First quarantined records", report.quarantine[["message"]].head(20)))
    return section


def store_section(store) -> Section:
    """Section with the store's counts and its scenario catalogue (tags joined with '; ')."""
    info = store.info()
    section = Section("Store", text=[f"Store file: {store.path}"])
    section.tables.append(("Contents", pd.DataFrame({"table": list(info), "count": list(info.values())})))
    scenarios = store.scenarios()
    if len(scenarios):
        tags = store.scenario_tags().groupby("scenario")["tag"].apply(lambda t: "; ".join(sorted(t)))
        scenarios = scenarios.assign(tags=scenarios["scenario"].map(tags).fillna("")).drop(columns="description")
        section.tables.append(("Scenario catalogue", scenarios))
    return section


def runners_section(store) -> Section:
    """Section with one row per runner: matches, agents, players' results, measures and events."""
    overview, outcomes = store.runner_overview(), store.runner_outcomes()
    section = Section("Runners", text=["What each runner's logs contributed to the store."],
                      tables=[("Per runner", overview)])
    if len(outcomes) and outcomes[["forfeit", "aborted", "win", "loss", "tie"]].to_numpy().sum():
        section.text.append("How players' matches ended, where the runner says (results per outcome): ratings, "
                            "rankings and the audit count a forfeit as a loss to every other player of its match "
                            "and leave aborted matches out (they have no result); 'not said' results are rated "
                            "by their scores.")
        section.tables.append(("Outcomes per runner", outcomes))
    return section


def scores_section(scores: pd.DataFrame, by_agent: pd.DataFrame, by_scenario: pd.DataFrame,
                   warnings: list[str] | None = None) -> Section:
    """Section with mean normalised score per agent and per scenario (±1 SE), tables and figures.

    `scores` is `referee.prepare.scores.normalised_scores(store)` (columns agent, scenario, score_norm, bounds);
    `by_agent`, `by_scenario` their means with standard errors (`referee.run.scores.describe.scores_by`).
    """
    section = Section("Normalised scores", text=[
        "Raw focal scores are min-max normalised per scenario by the catalogue's theoretical bounds, with "
        "-inf mapped to the theoretical minimum (Concordia paper, section 9.4.2). "
        f"{len(scores)} (match, agent) scores; overall mean {scores['score_norm'].mean():.3f} "
        f"(SE {scores['score_norm'].std() / max(len(scores), 1) ** 0.5:.3f})."])
    section.warnings += list(warnings or [])
    section.tables += [("Mean normalised score per agent", by_agent),
                       ("Mean normalised score per scenario", by_scenario)]
    section.figures += [("Mean normalised score per agent, ±1 SE over matches (contest figure 4).",
                         plot_means(by_agent, "agent")),
                        ("Mean normalised score per scenario, ±1 SE over matches (contest figure 3, left).",
                         plot_means(by_scenario, "scenario"))]
    return section


def _contest_layout(table: pd.DataFrame, value: str, label: str, status: pd.DataFrame | None = None) -> pd.DataFrame:
    """A ranking in the contest's tables' layout: Rank, Submission, value, then Matches and Status (the one
    status rule, `referee.run.ratings.rating_labels`) from `status` (indexed by agent) or the table's own columns;
    where `status` has the board's `block`, only its ranked agents are ranked (1..k in the table's order), the
    others listed after them without a rank."""
    ordered = table.sort_values("rank")
    source = status if status is not None else ordered.set_index("agent")
    rank = ordered["rank"].to_numpy(float)
    if "block" in source.columns:  # only the board's ranked agents get a rank; the others follow, unranked
        ranked = ordered["agent"].map(source["block"]).eq("ranked").to_numpy()
        ordered = pd.concat([ordered[ranked], ordered[~ranked]])
        rank = np.r_[np.arange(1, ranked.sum() + 1), np.full((~ranked).sum(), np.nan)]
    out = pd.DataFrame({"Rank": pd.array(rank, dtype="Float64").astype("Int64"), "Submission": ordered["agent"].to_numpy(),
                        label: ordered[value].to_numpy()})
    if "status" in source.columns:
        out["Matches"] = ordered["agent"].map(source["matches"]).to_numpy()
        out["Status"] = ordered["agent"].map(source["status"]).fillna(NEVER_COMPARED).to_numpy()
    return out


def leaderboard_section(runner: str, result: LeaderboardJobResult) -> Section:
    """The leaderboard (`referee.run.ratings.leaderboard`'s Result) as the report's first section: a one-line summary,
    the board (`referee.present.board_view.board_view`: at most 12 columns), each method's own columns right below
    (`methods_view`), then the definitions and notes folded in one block. The tier tests and the seat effect are
    in the appendix's rankings section; the CSVs hold the job's numeric tables."""
    level = result.level
    table = result.table()
    summary = result.summary
    definitions = (
        "One row per agent, best first. The established agents (enough matches: never by strength) are ranked by "
        f"Bradley-Terry (Elo scale, 95 % interval from {result.value.inference.source}; '≥' or '≤' where an agent "
        f"never lost or never won). The rank set holds each agent's true rank at {level:.0%} on its own, the joint "
        "rank set every agent's at once (Mogstad et al. 2024, step down); two agents' sets share no rank only where "
        "their own paired test separates them. Could be first marks the confidence set of the best: the ranked "
        "agents that no agent is credibly above, each tested against all the others at once (comparisons with the "
        "best; p_best in the CSV). Tier 1 runs down to the last agent that could be first; below it a new tier "
        "starts only where every agent above has a joint rank set entirely above every agent below and the two "
        "neighbours' test in that family separates them (family-wise 95 %; each boundary's test and the matches "
        "carrying its evidence are in the appendix). Provisional agents and agents without information follow, unranked. The second "
        "table gives each method's own reading: the contest's Elo, each voting method's position, and Nash "
        "averaging's and alpha-Rank's masses in the game among the established agents. Click a column's header "
        "to sort by it.")
    said = [s for s in result.said if s != summary]
    section = Section(f"Leaderboard ({runner})", leaderboard=True, summary=summary,
                      text=[definitions, *said], warnings=[n for n in result.notes if n not in result.said])
    section.tables.append(("Every agent, best first", board_view(table, result.runner_columns), table))
    methods = table[["agent", *result.methods]]  # every method's column is on the board
    section.tables.append(("Each method's own reading (same order)", methods_view(methods), methods))
    return section


def runner_numbers_section(result: RunnerNumbersJobResult) -> Section:
    """The runners' own numbers (`referee.run.ratings.runner_numbers.own_numbers`'s Result): per unit, as each runner
    computes and names them, and why referee's rating may order the agents otherwise."""
    runners = ", ".join(result.runners)
    section = Section(f"The runners' own numbers ({runners})", text=[
        "Each runner's own headline numbers, computed its way from the logs referee stored (and equal to what the "
        "runner prints, where its output prints them), per unit: clem's model pair, Inspect's log, ... They need "
        "no comparison between agents, so they stand even where referee cannot rate.", *result.lines])
    section.tables.append(("Per unit, as the runner names each number", result.table()))
    return section


def rankings_section(runner: str, elo, board, votes: dict[str, pd.DataFrame], pooled: bool = True,
                     count: str | None = None, unit: str | None = None) -> Section:
    """Ratings and rankings in the contest's tables 3-7 layout (Elo, IML, Copeland, ranked pairs, EwA), plus the
    board's draws of the Bradley-Terry ratings as violins (the Bradley-Terry table itself is the leaderboard).

    elo : `referee.run.ratings.ratings.RatingResult`; board : the one inference (`referee.run.ratings.board.Board`); votes :
    method -> `referee.models.voting.vote` table; pooled : comparisons and ballots are per (scenario,
    repetition) (Concordia), else per match; count : the one sentence counting established agents
    (`referee.run.ratings.rating_labels.status_note`), stated once; unit : what one comparison is for this runner, in
    words (`referee.io.loaders.comparison_unit`).
    """
    said = unit
    unit = "(scenario, repetition)" if pooled else "match"
    unit_plural = "(scenario, repetition) pairs" if pooled else "matches"
    section = Section(f"Ratings and rankings ({runner})", text=[
        ("Comparisons are made within each (scenario, repetition), joined on both; a strictly higher focal "
         "score wins. " if pooled else "Comparisons are made between the players of each match; a higher score "
         "wins. ") + "Elo is the contest's computation; Bradley-Terry ties count as half wins, and its ratings, "
        f"intervals, rank sets and tiers are the leaderboard's ({board.source}). Voting methods take one "
        f"ballot per {unit}; agents on too few ballots are listed apart, not ranked."])
    if said:
        section.text.append(f"One comparison is {said}.")
    status = board.table.set_index("agent")[["matches", "status", "block"]]
    if count:
        section.text.append(count[0].upper() + count[1:] + "; the same status stands in every table below.")
    section.tables.append(("Table 3 layout: Elo", _contest_layout(elo.table(), "rating", "Elo", status)))
    titles = {"iml": ("Table 4 layout: iterative maximal lotteries", "IML"),
              "copeland": ("Table 5 layout: Copeland", "Copeland"),
              "ranked-pairs": ("Table 6 layout: ranked pairs", "Ranked pairs"),
              "ewa": ("Table 7 layout: evaluation without aggregation (the 'runs' reading: an IML election per "
                      "run, then one over the runs' orders)", "EwA")}
    for method, (title, label) in titles.items():
        if method in votes:
            section.tables.append((title, _contest_layout(votes[method], "score", label, status)))
    drawn = board.draws_long()
    if len(drawn):
        shown = drawn["agent"].nunique()
        section.figures.append((f"The board's draws of each agent's Bradley-Terry rating ({board.source}; COMPACT "
                                "figure 2's view), line at the median"
                                + (f"; beyond {MAX_ROWS} agents the lowest are pooled in one grey violin."
                                   if shown > MAX_ROWS else "."), plot_bootstrap_violins(drawn)))
    return section


def contest_section(runner: str, result) -> Section:
    """The contest's phased evaluation (tables 3, 8-12) from `referee.run.ratings.contest.ContestResult`: the selection Elo
    with the finalists, the finalists' Elo and votes on the final phase, their Elo over the phases combined, and
    the figure of their places across the stages; the result's notes (exclusions, ties, absences) as warnings."""
    section = Section(f"Contest phases ({runner})", text=[
        f"The contest's procedure (paper section 9.2): every agent is Elo-rated on the selection phase, the top "
        f"{len(result.finalists)} go to the final phase, where they are ranked by Elo among themselves and by voting "
        "(one ballot per scenario and repetition), and their Elo is recomputed over the phases combined. Each of "
        "those Elo tables rates the finalists among themselves (mean 1500, as the paper's tables 8 and 12)."],
        warnings=list(result.notes))
    selection = result.selection.assign(finalist=result.selection["finalist"].map({True: "yes", False: ""}))
    section.tables.append(("Table 3 layout: Elo on the selection phase; the finalists marked",
                           _contest_layout(selection, "rating", "Elo").assign(Finalist=selection.sort_values("rank")[
                               "finalist"].to_numpy())))
    if len(result.finals):
        section.tables.append(("Table 8 layout: the finalists' Elo on the final phase",
                               _contest_layout(result.finals, "rating", "Elo")))
        labels = {"iml": "Table 9 layout: IML", "copeland": "Table 10 layout: Copeland",
                  "ranked-pairs": "Table 11 layout: ranked pairs"}
        for method, title in labels.items():
            votes = result.votes[result.votes["method"] == method]
            if len(votes):
                section.tables.append((f"{title} on the final phase", _contest_layout(votes, "score", "Score")))
        section.tables.append(("Table 12 layout: the finalists' Elo over the phases combined",
                               _contest_layout(result.combined, "rating", "Elo")))
    section.figures.append(("Each finalist's place by Elo at each stage (the selection among every agent rated).",
                            plot_contest_stages(result.table(), result.finalists)))
    return section


def calibration_section(calibrations: pd.DataFrame, out: Path) -> Section:
    """The latest simulation-based calibration of each model recorded in the store (`calibrations` table), with
    a link to its folder (relative to the report folder `out`), or a skipped section saying how to run one."""
    title = "Calibration of the Bayesian models"
    if calibrations.empty:
        return skipped(title, "no calibration is recorded in this store; `referee calibrate MODEL --sims 100 --store "
                              "STORE --out DIR` runs one (simulation-based calibration, Talts et al. 2018)")
    latest = calibrations.sort_values("ran_at").groupby("model").tail(1).sort_values("model")
    rows = []
    for r in latest.itertuples():
        link = os.path.relpath(Path(r.folder) / "rank_histograms.png", out.resolve())
        rows.append({"model": r.model, "ran at (UTC)": str(r.ran_at)[:19], "simulations": int(r.sims),
                     "verdict": "passed" if r.passed else f"failed: {r.groups_failed}", "rank histograms": link})
    section = Section(title, text=[
        "For each model, the latest simulation-based calibration recorded in the store: parameters drawn from the "
        "model's prior, data simulated from its likelihood, the model refitted, and the rank of each true value "
        "among the posterior draws tested for uniformity, with the coverage of the 50% and 94% HDIs. A failed "
        "group means that model's intervals for those parameters should not be trusted as stated."])
    section.tables.append(("Latest calibration per model (the figure's path is relative to this report)",
                           pd.DataFrame(rows)))
    failed = latest[~latest["passed"].astype(bool)]
    section.warnings += [f"Calibration of {r.model} failed for {r.groups_failed}" for r in failed.itertuples()]
    return section


def prediction_section(runner: str, cv_summary: pd.DataFrame, kendall: pd.DataFrame | None,
                       matrices: dict[str, pd.DataFrame]) -> Section:
    """Cross-validated ROC-AUC of rating models, per-game Kendall tau, and win-probability heatmaps."""
    section = Section(f"Predicting held-out comparisons ({runner})", text=[
        "k-fold cross-validated ROC-AUC of held-out decisive comparisons (folds grouped by match, pairs "
        "oriented at random) for scalar, per-game and multidimensional Bradley-Terry (COMPACT section 2.4)."])
    section.tables.append(("ROC-AUC by model (dims = dimensions of the multidimensional model)", cv_summary))
    if kendall is not None:
        section.tables.append((f"Kendall tau of each game's ranking against the global ranking "
                               f"({kendall_reading(kendall['kendall_tau'].mean(), DEFAULT_TAU_ELO)})", kendall))
    section.figures.append(("P(row beats column) from Bradley-Terry (COMPACT figure 1), each beside the observed share "
                            "of wins; agents in rating order, the top 15 when there are more; blank: never compared.",
                            plot_win_matrices(matrices)))
    return section


def _diagnostics_table(diagnostics: dict) -> pd.DataFrame:
    return pd.DataFrame({"diagnostic": list(diagnostics), "value": [str(v) for v in diagnostics.values()]})


def beta_regression_section(contrast, contrast_table: pd.DataFrame, tags, tag_table: pd.DataFrame,
                            correlations: pd.DataFrame) -> Section:
    """Figures 2, 3 (right) and 5 of the contest paper with each fit's diagnostics and identifiability notes.

    contrast, tags : `referee.models.scores.beta_regression.FitResult`; the tables from `contrast_table` and `tag_table`;
    correlations : `referee.run.scores.describe.feature_correlations`.
    """
    section = Section("Beta regressions of normalised scores", text=[
        "Ordered-beta likelihood (exact 0 and 1 allowed). Figure 2: each agent's log-odds difference from the "
        "baseline agent with a random intercept per scenario (95% HDI). Figure 3, right: tag coefficients of the "
        "hierarchical model with LKJ-correlated agent slopes (94% HDI), on the log-odds scale and as average marginal "
        "effects on the expected normalised score in percentage points (over the observed agent-scenario cells)."])
    for fit in (contrast, tags):
        if not fit.diagnostics["converged"]:
            section.warnings.append(f"{fit.model}: NOT CONVERGED (max R-hat {fit.diagnostics['max_r_hat']:.3f}, "
                                    f"{fit.diagnostics['divergences']} divergences); read its numbers with care.")
    section.warnings += tags.notes
    section.tables += [("Figure 2: contrast with the baseline", contrast_table),
                       ("Diagnostics: baseline contrast", _diagnostics_table(contrast.diagnostics)),
                       ("Figure 3 (right): tag coefficients", tag_table),
                       ("Diagnostics: tag effects", _diagnostics_table(tags.diagnostics))]
    section.figures += [
        ("Figure 2: log-odds difference from the baseline agent (mean, 95% HDI).",
         plot_intervals(contrast_table, "agent", "Difference from the baseline", "log-odds difference")),
        ("Figure 3 (right): tag coefficients (mean, 94% HDI).",
         plot_intervals(tag_table, "tag", "Tag coefficients", "log-odds effect on score")),
        ("Figure 3 (right) on the response scale: each tag's average marginal effect on the expected normalised "
         "score, in percentage points (mean, 94% HDI; the paper reports -10 to -20 points).",
         plot_intervals(tag_table[["tag", "ame_pp", "ame_low", "ame_high"]].rename(
                            columns={"ame_pp": "mean", "ame_low": "hdi_low", "ame_high": "hdi_high"}),
                        "tag", "Tag effects on the expected score", "percentage points of normalised score")),
        ("Figure 5: Pearson correlations of score, tags, substrates and resident status.",
         plot_correlation_heatmap(correlations, "Score, tags, substrates, resident")),
    ]
    return section


def outcome_section(runner: str, result: FitJobResult) -> Section:
    """Per-sample outcomes of `runner` (a `referee fit pass-fail` or `fit graded` Result): agent effects on the
    probability scale (forest plot), accuracy raw beside pooled per agent and task, priors and diagnostics."""
    fit = result.value
    what = f"the {fit.scale}"
    section = Section(f"Pass/fail and graded outcomes ({runner})", text=[
        f"{'Ordered logistic' if fit.graded else 'Logit'} model of each sample's outcome with crossed effects of "
        f"{', '.join(fit.effects)} (sum-to-zero agents and tasks, items nested in tasks). Agents' effects are "
        f"shown as {what} on the average task and item (mean, 94% HDI); the accuracy table puts each agent's raw "
        "rate per task beside the model's partially pooled estimate and the runner's own standard error where its "
        "logs state one."] + result.lines)
    if not fit.converged:
        section.warnings.append(f"NOT CONVERGED (max R-hat {fit.diagnostics['max_r_hat']:.3f}, "
                                f"{fit.diagnostics['divergences']} divergences); read its numbers with care.")
    section.warnings += [n for n in fit.notes if not n.startswith("Priors")]
    section.tables += [("Agents", result.table()), ("Accuracy by agent and task", result.table("accuracy")),
                       ("Priors", fit.priors), ("Diagnostics", _diagnostics_table(fit.diagnostics))]

    section.figures.append((f"Agents' {what} on the average task and item (mean, 94% HDI); '(prior only)' marks "
                            "an agent the data cannot compare with the others.", outcome_effects(result)))
    return section


def layout_section(comparison) -> Section:
    """Measurement Layout profiles (figure 6, agents with test R^2 >= 0.35 only) and the predictive
    comparison (figure 7), from an `referee.run.scores.predictive.Comparison`."""
    layout = comparison.layout
    included = comparison.included_agents()
    section = Section("Measurement Layouts and predictive comparison", text=[
        f"Demands (chosen on all cells, for the profiles): {', '.join(layout.demands)}. Figure 7 follows the paper's "
        f"protocol as {comparison.per_agent['folds'].max()}-fold cross-validation over each agent's scenarios: in each "
        "fold the demands are chosen on the training cells only, the layout, linear regression, XGBoost and a constant "
        "(the agent's training mean) are fitted on them and scored on the held-out (agent, scenario) cells; R² and RMSE "
        "are averaged over folds, with their sd.",
        f"Agents whose layout reaches a fold-average test R² ≥ 0.35 (profiles shown, as in the paper): "
        f"{', '.join(included) or 'none'}."])
    if not layout.diagnostics["converged"]:
        section.warnings.append(f"measurement layout: NOT CONVERGED (max R-hat {layout.diagnostics['max_r_hat']:.3f}, "
                                f"{layout.diagnostics['divergences']} divergences)")
    section.warnings += layout.notes
    section.text.append("Intervals are 94% highest-density intervals of the posterior.")
    section.tables += [("Pooled test metrics", comparison.pooled),
                       ("Test R² per agent", comparison.per_agent.pivot(index="agent", columns="predictor",
                                                                         values="r2").reset_index()),
                       ("Diagnostics: measurement layout (all cells)", _diagnostics_table(layout.diagnostics)),
                       ("Diagnostics: the layout of each fold", comparison.fold_diagnostics)]
    folds = comparison.fold_diagnostics
    unconverged = folds.loc[~folds["converged"].astype(bool), "fold"].tolist() if len(folds) else []
    if unconverged:
        section.warnings.append(f"measurement layout: the fits of fold(s) {unconverged} did NOT CONVERGE; their test "
                                "scores are read with care.")
    section.figures.append(("Figure 7: fold-average test R² (top; dashed line at 0.35) and RMSE (bottom) per agent "
                            "and predictor.",
                            plot_predictor_comparison(comparison.per_agent)))
    if included:
        caps = layout.capabilities()
        extras = {n: layout.parameters(n).loc[lambda t: t["agent"].isin(included)] for n in ("base_chance", "sample_size")}
        section.figures.append(("Figure 6: capability profiles (posterior mean, 94% HDI) of the included agents.",
                                plot_capability_profiles(caps[caps["agent"].isin(included)], extras)))
    return section



def one_axis_section(runner: str, elo: pd.DataFrame, nash, alpha) -> Section:
    """"Is there one axis?": how much of the meta-game one rating axis cannot hold (the cyclic share, with its
    bootstrap interval), the Nash support, the strongest cycles (figure) and where Elo, Nash averaging and
    alpha-Rank disagree (a table of the three ranks).

    elo : the Elo table (agent, rank); nash, alpha : `referee.run.ratings.game_theory.GameRanking` of the same
    comparisons by 'nash' (with a bootstrap) and 'alpha-rank'."""
    section = Section(f"Is there one axis? ({runner})", text=[
        "Elo and Bradley-Terry place every agent on one line. The meta-game of every pair's log-odds splits into a "
        "part one line can hold and a cyclic part it cannot (the Hodge decomposition of Balduzzi et al. 2019): the "
        "cyclic share is near 0 for a ranking and near 1 for rock-paper-scissors. Nash averaging (Balduzzi et al. "
        "2018) scores each agent against the maximum-entropy equilibrium of the game, and alpha-Rank (Omidshafiei "
        "et al. 2019, ranking intensity 100, population 50) by the mass an evolutionary process leaves on it; "
        "neither is moved by copies of an agent."])
    section.warnings += list(dict.fromkeys(nash.notes + alpha.notes))
    for row in nash.cyclic.itertuples():
        where = f"Group {row.component} ({row.agents} agents): " if len(nash.cyclic) > 1 else ""
        interval = cyclic_interval(row)
        section.text.append(
            f"{where}cyclic share {row.cyclic_share:.2f}{interval}; {chance_reading(row)}; "
            f"{row.cyclic_triads} cyclic triad(s)"
            + (f", the strongest {row.strongest_triads.split('; ')[0]}" if row.cyclic_triads else "")
            + f"; the Nash equilibrium's support: {row.support}.")
    ranks = (elo[["agent", "rank"]].rename(columns={"rank": "elo_rank"})
             .merge(nash.table[["agent", "rank", "score", "mass", "lower", "upper", "component"]]
                    .rename(columns={"rank": "nash_rank", "score": "nash_skill", "mass": "nash_mass",
                                     "lower": "skill_lower", "upper": "skill_upper"}), on="agent")
             .merge(alpha.table[["agent", "rank", "mass"]].rename(columns={"rank": "alpha_rank",
                                                                          "mass": "alpha_mass"}), on="agent"))
    spread = ranks[["elo_rank", "nash_rank", "alpha_rank"]]
    ranks["spread"] = spread.max(axis=1) - spread.min(axis=1)
    firsts = {label: ", ".join(sorted(ranks.loc[ranks[column] == 1, "agent"]))
              for label, column in (("Elo", "elo_rank"), ("Nash averaging", "nash_rank"), ("alpha-Rank", "alpha_rank"))}
    firsts = {method: agents for method, agents in firsts.items() if agents}  # a method may rank nobody here
    if len(firsts) == 3 and len(set(firsts.values())) == 1:
        section.text.append(f"All three put {firsts['Elo']} first.")
    elif firsts:
        section.text.append("They disagree on the first place: " + "; ".join(f"{k} puts {v} first"
                                                                           for k, v in firsts.items()) + ".")
    apart = ranks[ranks["spread"] >= 2].sort_values("spread", ascending=False)
    if len(apart):
        section.text.append(f"{len(apart)} agent(s) move two places or more between the three rankings: "
                            + ", ".join(apart["agent"].head(8)) + (" and others" if len(apart) > 8 else "") + ".")
    section.tables.append(("Elo, Nash averaging and alpha-Rank side by side (nash_skill: expected log-odds against "
                           "the equilibrium, 0 on its support, with a 95 % bootstrap interval; masses: equilibrium "
                           "and stationary probabilities; spread: largest rank difference)",
                           ranks.sort_values(["component", "nash_rank", "elo_rank"])))
    if nash.cycles is not None and len(nash.cycles):
        from referee.present.game_figures import plot_cycles

        section.figures.append(("The strongest cyclic triads (log-odds summed around the cycle): each arrow points "
                                "from an agent to one it beats by majority, labelled with the win rate.",
                                plot_cycles(nash.cycles, nash.payoffs)))
    return section


def socio_section(runner: str, result) -> Section:
    """COMPACT's socio-cognitive analysis (an `referee.run.social.socio.SocioResult`): consistency (figures 4-5),
    what predicts winning (figures 6-7) and judge agreement."""
    section = Section(f"Socio-cognitive metrics and what predicts winning ({runner})", text=[
        "Theory of mind, predictability, assertiveness and the LLM judge's influence, amenability, planning and "
        "learning per player and match (COMPACT section 3.1). Consistency compares agents' standardised metric "
        "vectors per game category; winning is predicted from metric differences with two agents left out of "
        "each training fold (section 4)."])
    section.warnings += result.notes
    section.tables.append(("Consistency (Pearson r, 95% bootstrap interval over matches)", result.consistency))
    section.tables.append(("Cross-validated ROC-AUC of what predicts winning", result.auc_table()))
    if result.agreement:
        section.tables.append(("Agreement of two judges", pd.DataFrame([result.agreement])))
    section.figures += [(caption, figure) for _, caption, figure in socio_figures(result)]
    return section


def audit_section(title: str, result, frame: pd.DataFrame, outcomes: list[str]) -> Section:
    """A construct-validity audit (`referee.run.social.audit.run_audit`) as a section: verdicts, tables, figures,
    the Bayesian regression's diagnostics (when it ran) and the audit's notes."""
    section = Section(title, text=[f"Verdict: {result['summary']['verdict']}"])
    for key, name in CHECK_TITLES.items():
        if key in result:
            mark = {True: "PASS", False: "FAIL", None: "INFO"}[result[key].get("passed")]
            section.text.append(f"{name} ({mark}): {result[key]['verdict']}")
    section.warnings += result.notes
    for key in ("reproduction", "counter_terms", "hold_outcome_constant", "two_scores", "events"):
        if key in result and isinstance(result[key].get("table"), pd.DataFrame) and len(result[key]["table"]):
            section.tables.append((CHECK_TITLES[key], result[key]["table"].head(30)))
    diagnostics = result.diagnostics
    if "max_r_hat" in diagnostics:  # the Bayesian regression of the assignment-luck check ran
        section.text.append("The assignment-luck check's Bayesian regression reports the posterior probability that "
                            "the outcome's slope is positive; its convergence is below.")
        if not diagnostics.get("converged", True):
            section.warnings.append(f"audit regression: NOT CONVERGED (max R-hat {diagnostics.get('max_r_hat')}, "
                                    f"{diagnostics.get('divergences')} divergences); read its numbers with care.")
        section.tables.append(("Diagnostics: assignment-luck regression", _diagnostics_table(diagnostics)))
    order = list(frame.sort_values("score", ascending=False)["player"])
    if "decomposition" in result:
        section.figures.append(("Score decomposition: each player's score split into its formula's parts "
                                "(stacked; negative parts below zero).",
                                plot_decomposition(result["decomposition"]["table"], order)))
    drawn = [o for o in outcomes if o in frame.columns and frame[o].notna().any()]
    if drawn:
        section.figures.append((f"Recorded score against {', '.join(drawn)} (the outcome(s) judged; one panel each), "
                                "one point per player and match (a discrete outcome is jittered, with its median and "
                                "count).", plot_score_vs_outcome(frame, drawn)))
    return section
