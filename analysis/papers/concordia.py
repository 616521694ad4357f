"""The contest paper ("Evaluating Generalization Capabilities of LLM-Based Agents in Mixed-Motive Scenarios
Using Concordia") by its own protocol: Table 1 and Table 13 from the paper's catalogue, Tables 3-7 on the
evaluation phase (Elo and the voting methods), Tables 8-12 on the finalists (the paper's: the top five by
evaluation Elo plus `rational_agent`), Figures 2-5 (a beta likelihood on squeezed scores, agent slopes on
every tag the scenarios tell apart, the paper's tags), Figures 6-7 (Measurement Layouts; one train/test split)."""

from __future__ import annotations

import functools

import pandas as pd

from referee.io.catalogue import CONTEST_2024_PAPER, load_catalogue
from referee.io.toml_file import read_toml
from referee.papers.items import Item, PaperWriter
from referee.names import FINAL, SELECTION
from referee.prepare.selection import select_phases

BASELINE = "rational_agent"
PAPER_TOP = 5  # the paper's finalists: its top five by evaluation Elo, and the baseline (Tables 8-12)
VOTES = {"iml": ("Table 4", "Table 9", "iterative maximal lotteries"), "copeland": ("Table 5", "Table 10", "Copeland"),
         "ranked-pairs": ("Table 6", "Table 11", "ranked pairs"), "ewa": ("Table 7", None, "evaluation without "
                                                                                        "aggregation")}
BETA = {"likelihood": "beta on squeezed scores (Smithson-Verkuilen: (y (n - 1) + 1/2) / n)"}
VOTE_READINGS = {  # what each vote table's numbers are, where the paper leaves it open or differs in scale
    "ranked-pairs": {"score": "OpenSpiel's: the sum of the margins of the locked edges below the agent",
                     "pairs": "the paper's scale: one count per pair of agents, 1 to the agent the locked graph puts "
                              "above, half each where it orders neither (the column sums to n (n - 1) / 2, 325 for the "
                              "paper's 26 agents)"},
    "ewa": {"reading": "runs: an iterative-maximal-lotteries election per run (repetition), one ballot per scenario, "
                       "then one election over the runs' orders; the paper under-specifies evaluation without "
                       "aggregation (models/voting/ewa.py gives the three readings; `referee rank --ewa-reading`)"},
}
ILLUSTRATIONS = {"Figure 1": "an overview diagram of the contest framework, not computed from data",
                 "Figure 8": "the participants' Likert-scale survey answers, which are not match logs"}


@functools.cache
def paper_catalogue():
    """The paper's catalogue (`CONTEST_2024_PAPER`), read once per process."""
    return load_catalogue(CONTEST_2024_PAPER)


def paper_tags(scenarios: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The paper catalogue's tags (scenario, tag) for `scenarios`, and the scenarios it does not list."""
    catalogue = paper_catalogue()
    tags = catalogue.tags[catalogue.tags["scenario"].isin(scenarios)]
    return tags.reset_index(drop=True), sorted(set(scenarios) - set(catalogue.scenarios["scenario"]))


def substrate_table() -> pd.DataFrame:
    """Table 1: the paper's five substrates in its order (substrate key, name, the paper's description, its
    tags) and the catalogue scenarios of each (haggling_multi_item's scenario is the Haggling substrate's)."""
    catalogue = paper_catalogue()
    tags = catalogue.tags.merge(catalogue.scenarios[["scenario", "game"]], on="scenario")
    rows = []
    for key, substrate in read_toml(CONTEST_2024_PAPER, "catalogue")["substrates"].items():
        group = tags[tags["game"].isin(substrate["games"])]
        rows.append({"substrate": key, "name": substrate["name"], "description": substrate["description"],
                     "tags": ", ".join(dict.fromkeys(group["tag"])),
                     "scenarios": ", ".join(sorted(group["scenario"].unique()))})
    return pd.DataFrame(rows)


def as_paper_substrates(scenarios: pd.DataFrame) -> pd.DataFrame:
    """`scenarios` with each `game` replaced by the paper's substrate key (Table 1's five: the
    haggling_multi_item game is the Haggling substrate's); a game the paper does not list keeps its name."""
    substrates = read_toml(CONTEST_2024_PAPER, "catalogue")["substrates"]
    of = {game: key for key, substrate in substrates.items() for game in substrate["games"]}
    return scenarios.assign(game=scenarios["game"].map(lambda g: of.get(g, g)))


def tag_definitions() -> pd.DataFrame:
    """Table 13: tag, description, from the paper catalogue's [tags] table."""
    doc = read_toml(CONTEST_2024_PAPER, "catalogue")
    return pd.DataFrame(sorted(doc.get("tags", {}).items()), columns=["tag", "description"])


def concordia_paper(store, writer: PaperWriter, finalists: list[str] | None = None, models: bool = True,
                    sampling: dict | None = None, seed: int = 0) -> tuple[dict, list[str]]:
    """Make every numbered item of the contest paper the store allows, into `writer`.

    store : an open `referee.io.store.Store` with scenario-based matches (phases 'evaluation' and
    'cross-play' for Tables 8-12; without phases every match is read as the evaluation phase). finalists :
    Tables 8-12's agents (default the paper's: top five by evaluation Elo plus rational_agent). models : fit
    the Bayesian models of Figures 2, 3 (right), 6 and 7. sampling : draws, tune, chains for them.
    Returns (the protocol, notes). ValueError when the store holds no scenario-based match."""
    from referee.run.job_table import JOBS

    matches, results = store.matches(), store.results()
    scenario_matches = matches[matches["scenario"].notna()]
    if not len(scenario_matches):
        raise ValueError("the store holds no scenario-based match (substrate x background x mode, as Concordia's "
                         "runs are), which `referee paper concordia` reads; ingest a contest's logs first")
    runners = sorted(scenario_matches["runner"].unique())
    scope = {"runner": runners[0]} if len(runners) == 1 else {}  # several: each job asks for one
    phases = set(scenario_matches["phase"].dropna())
    selection = select_phases(scenario_matches, [SELECTION]) if SELECTION in phases else scenario_matches
    if SELECTION in phases:
        scope["phase"] = [SELECTION]
    notes = [] if SELECTION in phases else [f"no match is in phase {SELECTION!r}: every scenario match is read as the "
                                            "evaluation phase"]
    protocol = {"evaluation phase": SELECTION if SELECTION in phases else "every match",
                "normalisation": "per scenario, min-max by theoretical bounds where the catalogue gives them, else "
                                 "by observed bounds (the paper uses theoretical bounds)",
                "tags": "the paper's Table 1 (data/catalogues/concordia_contest_2024_paper.toml)",
                "elo": "the contest's Elo over (scenario, repetition) comparisons", **BETA,
                "tag slopes": "agent slopes on every tag the scenarios tell apart (Figure 3 (right) names any tag left "
                              "out, aliased with the others)", "baseline": BASELINE,
                "figure 7": "one train/test split (one fold of five held out per agent's scenarios)"}
    for number, reason in ILLUSTRATIONS.items():
        writer.missing(Item(number, "illustration"), reason)
    writer.table(Item("Table 1", "substrate design: each substrate's description and tags",
                      protocol={"source": "the paper's Table 1 (descriptions transcribed into "
                                          "data/catalogues/concordia_contest_2024_paper.toml)",
                                "substrates": "the paper's five; the haggling_multi_item scenario is read as Haggling"}),
                 substrate_table())
    _evaluation_tables(writer, store, scope, seed)
    finals = ("Table 8", "Table 9", "Table 10", "Table 11", "Table 12")
    if SELECTION not in phases:
        for number in finals:
            writer.missing(Item(number, "finals"), f"the finals need an {SELECTION!r} phase that selects the finalists "
                           f"and a {FINAL!r} phase they play; the store holds no phase (every match was read as the "
                           "evaluation phase): ingest with --phase, or from folders named after the phases")
    else:
        contest_job = JOBS["contest"]
        runner = scope.get("runner")
        contest = contest_job.compute(store, top=PAPER_TOP if finalists is None else len(finalists),
                                      finalists=finalists or None, runner=runner, seed=seed).value
        picked = finalists or _paper_finalists(contest)
        if not finalists and picked != contest.finalists:
            contest = contest_job.compute(store, finalists=picked, runner=runner, seed=seed).value
        protocol["finalists"] = picked
        notes += contest.notes
        _final_tables(writer, contest, picked)
    _score_figures(store, writer, selection, models, sampling or {}, seed, protocol, notes)
    writer.table(Item("Table 13", "descriptions of the scenario tags", protocol={"source": "the paper's Table 13"}),
                 tag_definitions())
    return protocol, notes


def _paper_finalists(contest) -> list[str]:
    """The top five by evaluation Elo and the baseline (the paper's Tables 8-12), in selection order."""
    order = contest.selection.sort_values(["rating", "agent"], ascending=[False, True])["agent"].tolist()
    top = [agent for agent in order if agent != BASELINE][:PAPER_TOP]  # the baseline never takes a finalist's seat
    return top + ([BASELINE] if BASELINE in order else [])


def _evaluation_tables(writer: PaperWriter, store, scope: dict, seed: int) -> None:
    """Tables 3-7: the `ratings` job's Elo and the `rank` job's votes (every agent ranked: one ballot suffices)
    on the evaluation phase (`scope`: its runner and phase)."""
    from referee.run.job_table import JOBS

    item = Item("Table 3", "evaluation phase: Elo", protocol={"model": "the contest's Elo"})
    try:
        elo = JOBS["ratings"].compute(store, method="elo", seed=seed, **scope)
    except ValueError as exc:  # no comparison in the evaluation phase: the job says why
        writer.missing(item, str(exc))
        for method, (number, _, label) in VOTES.items():
            writer.missing(Item(number, f"evaluation phase: {label}"), "no evaluation-phase comparison")
        return
    from referee.run.ratings.runner_numbers import RUNNER_COLUMNS

    writer.table(item, elo.table("ratings").drop(columns=list(RUNNER_COLUMNS), errors="ignore").sort_values("rank"))
    votes = JOBS["rank"].compute(store, method=list(VOTES), min_games=1, seed=seed, **scope).value
    for method, (number, _, label) in VOTES.items():
        table = votes[votes["method"] == method].drop(columns="method").sort_values("rank").dropna(axis=1, how="all")
        writer.table(Item(number, f"evaluation phase: {label}", protocol={
            "method": label, "ballots": "one per (scenario, repetition)", **_readings(method, table)}), table)


def _say_absent(item: Item, picked: list[str], table: pd.DataFrame) -> None:
    """Name, in the item's protocol, the finalists its table has no row for (a finalist, e.g. the baseline,
    that played no cross-play match), so that a table of fewer rows than finalists says why."""
    absent = [a for a in picked if a not in set(table["agent"])] if "agent" in table.columns else []
    if absent:
        item.protocol["finalists without a row"] = (f"{', '.join(absent)}: no cross-play match ({len(table)} rows "
                                                    f"for {len(picked)} finalists)")


def _readings(method: str, table: pd.DataFrame) -> dict:
    """What the vote table's numbers are (`VOTE_READINGS`): a column's reading only where the table written has
    that column, so a protocol never names a column its CSV lacks."""
    return {k: v for k, v in VOTE_READINGS.get(method, {}).items() if k == "reading" or k in table.columns}


def _final_tables(writer: PaperWriter, contest, picked: list[str]) -> None:
    finals = {"Table 8": ("finalists' cross-play: Elo", contest.finals),
              "Table 12": ("Elo over the cross-play and evaluation phases", contest.combined)}
    for number, (title, table) in finals.items():
        item = Item(number, title, protocol={"finalists": picked, "model": "the contest's Elo"},
                    referee_default="`referee contest` takes the top 6 by Elo unless --finalists is given")
        if len(table):
            _say_absent(item, picked, table)
            writer.table(item, table.sort_values("rank"))
        else:
            writer.missing(item, f"no match is in phase {FINAL!r}")
    for method, (_, number, label) in VOTES.items():
        if number is None:
            continue
        votes = contest.votes
        table = votes[votes["method"] == method] if len(votes) else votes
        if len(table):
            table = table.drop(columns="method").sort_values("rank").dropna(axis=1, how="all")
        item = Item(number, f"finalists' cross-play: {label}", protocol={"finalists": picked, "method": label,
                                                                         **_readings(method, table)})
        if len(table):
            _say_absent(item, picked, table)
            writer.table(item, table)
        else:
            writer.missing(item, f"no match is in phase {FINAL!r}")


def _score_figures(store, writer: PaperWriter, selection, models: bool, sampling: dict, seed: int, protocol: dict,
                   notes: list[str]) -> None:
    """Figures 2-7 from the evaluation phase's normalised scores, re-tagged with the paper's tags."""
    from referee.models.scores import beta_regression as br
    from referee.present.figures import (plot_capability_profiles, plot_correlation_heatmap, plot_intervals,
                                         plot_means, plot_predictor_comparison)
    from referee.prepare.scores import agent_match_scores, normalise
    from referee.run.scores.describe import feature_correlations, scenario_features, scores_by
    from referee.run.scores.predictive import compare_predictors, training_demands

    scenarios = as_paper_substrates(store.scenarios())  # Figures 5-7 read Table 1's five substrates
    scores = normalise(agent_match_scores(selection, store.results()), scenarios)
    bounds = sorted(set(scores["bounds"]))
    protocol["bounds used"] = bounds
    if bounds != ["theoretical"]:
        notes.append("the catalogue gives no theoretical bounds for some scenarios: they are normalised by their "
                     "observed range, which removes each scenario's level (Figures 2-3 then compare agents within "
                     "scenarios, not scenarios)")
    tags, unlisted = paper_tags(sorted(scores["scenario"].unique()))
    if unlisted:
        notes.append(f"scenarios the paper's catalogue does not list keep the store's tags: {', '.join(unlisted)}")
        stored = store.scenario_tags()
        tags = pd.concat([tags, stored[stored["scenario"].isin(unlisted)]], ignore_index=True)
    by_agent, by_scenario = scores_by(scores)
    norm = {"normalisation": "per scenario min-max", "bounds": bounds}
    writer.figure(Item("Figure 3 (left)", "mean normalised score per scenario, ±1 SE", protocol=norm),
                  plot_means(by_scenario, "scenario"), by_scenario)
    writer.figure(Item("Figure 4", "mean normalised score per focal agent, ±1 SE", protocol=norm),
                  plot_means(by_agent, "agent"), by_agent)
    correlations = feature_correlations(scores, scenario_features(scenarios, tags))
    writer.figure(Item("Figure 5", "Pearson correlations of score, tags, substrates and resident status",
                       protocol={**norm, "tags": "the paper's"}),
                  plot_correlation_heatmap(correlations, "Score, tags, substrates, resident"), correlations.reset_index())
    if not models:
        for number in ("Figure 2", "Figure 3 (right)", "Figure 6", "Figure 7"):
            writer.missing(Item(number, "Bayesian model"), "the Bayesian fits were not asked for (--no-models)")
        return
    baseline = BASELINE if BASELINE in set(scores["agent"]) else None
    item = Item("Figure 2", "each agent's log-odds difference from the baseline (mean, 95 % HDI)",
                protocol={"model": "mixed-effects beta regression, random intercept per scenario", **BETA,
                          "baseline": baseline},
                referee_default="an ordered-beta likelihood, which keeps exact 0 and 1 scores as they are")
    if baseline is None:
        writer.missing(item, f"the baseline agent {BASELINE!r} played no evaluation-phase scenario")
    else:
        contrast = br.fit_baseline_contrast(scores, baseline, seed=seed, likelihood="squeeze", **sampling)
        notes += [f"Figure 2: {n}" for n in contrast.notes]
        item.protocol["converged"] = bool(contrast.diagnostics["converged"])
        table = br.contrast_table(contrast)
        writer.figure(item, plot_intervals(table, "agent", "Difference from the baseline", "log-odds difference"), table)
    tag_fit = br.fit_tag_effects(scores, tags, seed=seed, likelihood="squeeze", structure="paper", **sampling)
    notes += [f"Figure 3 (right): {n}" for n in tag_fit.notes]
    table = br.tag_table(tag_fit)
    dropped = sorted(set(tags["tag"]) - set(table["tag"]))
    item = Item("Figure 3 (right)", "tag coefficients of the hierarchical beta regression (mean, 94 % HDI)",
                protocol={"model": "hierarchical beta regression on tags", **BETA,
                          "tag slopes": "every tag the scenarios tell apart" if dropped else "every tag",
                          "tags": "the paper's", "converged": bool(tag_fit.diagnostics["converged"]),
                          **({"tags left out": f"{len(dropped)} of {tags['tag'].nunique()}: {', '.join(dropped)}: "
                                                "each is a combination of the intercept and the kept tags over these "
                                                "scenarios (aliased), so no coefficient of its own exists; the paper "
                                                "shows every tag"} if dropped else {})},
                referee_default="agent slopes only on tags present in and absent from 3 scenarios or more, and an "
                                "ordered-beta likelihood")
    title = "Tag coefficients" + (f" ({len(dropped)} of {tags['tag'].nunique()} tags left out, aliased: "
                                  f"{', '.join(dropped)})" if dropped else "")
    writer.figure(item, plot_intervals(table, "tag", title, "log-odds effect on score"), table)
    comparison = compare_predictors(scores, training_demands(scores, scenarios, tags), seed=seed, test_folds=[0],
                                    profiles="training", **sampling)
    split = {"split": "one train/test split: a fifth of each agent's scenarios held out", "tags": "the paper's"}
    writer.figure(Item("Figure 7", "test R² and RMSE per agent: Measurement Layout, linear regression, XGBoost and "
                                   "the training mean", protocol=split,
                       referee_default="five-fold cross-validation, every cell tested once (`compare-predictors`)"),
                  plot_predictor_comparison(comparison.per_agent), comparison.per_agent)
    included = comparison.included_agents()
    item = Item("Figure 6", "capability profiles (posterior mean, 94 % HDI) of agents whose test R² exceeds 0.35",
                protocol={**split, "model": "Measurement Layout learned on the training cells of the split, as the "
                                            "paper's", "included": included},
                referee_default="profiles of a layout fitted on every cell (`compare-predictors`)")
    if included:
        layout = comparison.layout
        caps = layout.capabilities()
        extras = {n: layout.parameters(n).loc[lambda t: t["agent"].isin(included)]
                  for n in ("base_chance", "sample_size")}
        drawn = caps[caps["agent"].isin(included)]
        # the CSV holds exactly what the figure draws: the included agents' capabilities, base chance and sample size
        shown = pd.concat([drawn.assign(parameter="capability"),
                           *[t.assign(parameter=n) for n, t in extras.items()]], ignore_index=True)
        writer.figure(item, plot_capability_profiles(drawn, extras), shown)
    else:
        writer.missing(item, "no agent's Measurement Layout reaches a test R² of 0.35 (the paper shows only those)")
