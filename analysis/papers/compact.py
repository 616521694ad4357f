"""The COMPACT paper ("communicate-predict-act" games) by its own protocol: Figure 1 and Table 1 from the
per-game Bradley-Terry model by plain maximum likelihood, Figure 2 from 200 bootstrap re-estimations, Table 2
and Figures 4-7 from the socio-cognitive metrics, consistency on raw metric means over every pair with
standard errors over pairs (Figure 5's error bars)."""

from __future__ import annotations

import pandas as pd

from referee.papers.items import Item, PaperWriter
from referee.readings import kendall_reading

PAPER_DIMS = range(1, 8)  # the multidimensional model's dimensions the paper cross-validates
BOOTSTRAP = 200  # Figure 2: "200 subsampled re-estimations"
PER_GAME = {"model": "Bradley-Terry with per-game deviations", "estimation": "plain maximum likelihood",
            "constraint": "global ratings centred on 1500 (as Table 1's global column, mean 1499.5); each agent's "
                          "deviations sum to zero over games (referee's choice: the paper does not say how they are "
                          "pinned, and its Table 1's do not sum to zero)"}
PER_GAME_DEFAULT = "deviations shrunk by a Normal(0, 100 Elo) prior, in the fit and in the cross-validation"


def compact_paper(store, writer: PaperWriter, runner: str | None = None, seed: int = 0) -> tuple[dict, list[str]]:
    """Make every numbered item of the COMPACT paper the store allows, into `writer`, composed of the job
    table's jobs (`ratings`, `ratings-cv`, `socio`) at the paper's settings.

    store : an open `referee.io.store.Store` of communicate-predict-act matches (predictions, actions, judge
    ratings for Table 2 and Figures 4-7). runner : whose matches (default the store's runner whose logs carry
    COMPACT's metrics). Returns (protocol, notes). ValueError when the store holds no match of `runner`, or (no
    runner named) no COMPACT match."""
    from referee.io.loaders import entry
    from referee.present.figures import plot_win_matrices
    from referee.run.job_table import JOBS

    held = store.runners()
    if runner is not None and runner not in held:
        raise ValueError(f"the store holds no match of runner {runner!r}; its runners: {held or 'none'}")
    if runner is None:
        runner = next((r for r in held if entry(r).socio_cognitive), None)
    if runner is None:
        raise ValueError("the store holds no communicate-predict-act match (runner 'compact'), which `referee paper "
                         f"compact` reads; its runners: {held or 'none'} (name one with --runner to read it as "
                         "COMPACT's games)")
    scope = dict(runner=runner, parallel=True, seed=seed)
    notes: list[str] = []
    protocol = {"per-game model": PER_GAME, "bootstrap": f"{BOOTSTRAP} resamples of matches",
                "consistency": "raw metric means per (agent, game category), no z-scores; mean r ± SEM over pairs",
                "cross-validation": "5 folds of whole games; per-game model by plain maximum likelihood"}
    writer.missing(Item("Figure 3", "an example of the judge's influence ratings"),
                   "an illustration of one judged exchange, not computed from data")
    try:
        per_game = JOBS["ratings"].compute(store, method="bt-per-game", per_game_prior_sd=None, **scope)
    except ValueError as exc:  # no comparisons (the job says why), or no runner to choose
        for number in ("Figure 1", "Table 1", "Figure 2"):
            writer.missing(Item(number, "ratings"), str(exc))
        per_game = None
    if per_game is not None:
        notes += [f"Table 1: {n}" for n in per_game.notes]
        fit = per_game.value.fit
        game_table = fit.game_table()
        games = game_table["game"].nunique()
        table = _table_1(fit, game_table)
        table_protocol = dict(PER_GAME)  # Table 1's own (the paper's top-level protocol keeps its entries)
        if fit.prior_sd is not None:  # the pooled fit has no finite solution: never under the plain label
            table_protocol["estimation"] = ("plain maximum likelihood for the per-game deviations; the pooled fit added "
                                      "a Normal(0, 400 Elo) prior to the global ratings, their maximum-likelihood "
                                      "estimate not existing on these matches: no global rating is shown where "
                                      "the prior decides it (Table 1's global column says why)")
        unbounded = int(fit.unbounded.sum())
        if unbounded:
            split = int((fit.parts > 1).sum())
            table_protocol["cells without a finite estimate"] = (
                f"{unbounded} agent-game cell(s) in {split} of {len(fit.games)} game(s) whose win graph among its "
                "players is not strongly connected (parts that never beat each other both ways, an agent that "
                "won or lost every comparison among them), so plain maximum likelihood has no finite rating there; "
                "the cell shows its win-loss record and why instead of a number; a game the agent never played is "
                "empty")
        writer.table(Item("Table 1", "Elo scores: each agent's global rating and its rating in each game",
                          protocol=table_protocol, referee_default=PER_GAME_DEFAULT),
                     table.sort_values("rank", key=lambda r: pd.to_numeric(r, errors="coerce"), na_position="last"))
        tau = per_game.value.kendall_tau
        tau_item = Item("Section 2 (Kendall tau)", "each game's ranking against the global one (Kendall tau)",
                        protocol={**PER_GAME, "agents": "those with a finite rating in the game and globally"},
                        referee_default=PER_GAME_DEFAULT)
        if tau["kendall_tau"].notna().any():
            tau_item.protocol["mean"] = kendall_reading(float(tau["kendall_tau"].mean()), None)
            writer.table(tau_item, tau)
        else:
            writer.missing(tau_item, "no game has two agents with finite per-game and global ratings by plain "
                                     "maximum likelihood (Table 1 says why for each cell)")
        _figure_2(store, writer, scope, notes)
        matches = store.matches()
        mine = matches if runner is None else matches[matches["runner"] == runner]
        split = "communication" if mine["communication"].notna().any() else None
        try:
            cv = JOBS["ratings-cv"].compute(store, folds=5, dims=list(PAPER_DIMS), per_game_prior_sd=None, split=split,
                                            **scope)
        except ValueError as exc:  # fewer matches than folds
            for number in ("Figure 1", "Section 2 (cross-validated AUC)"):
                writer.missing(Item(number, "cross-validation and win matrices"), str(exc))
            cv = None
        if cv is not None:  # the paper's panels: (a) games with communication, then (b) without
            _figure_1(writer, dict(sorted(cv.drawn["win_matrices"].items(), key=lambda kv: "=True" not in kv[0])),
                      split)
        if cv is not None and games > 1:
            auc = cv.table("cv_auc")
            cv_protocol = {"folds": "5, whole games", "dimensions": "1-7, as the paper tries", **PER_GAME}
            cv_protocol.update(cv_fold_words(auc))
            writer.table(Item("Section 2 (cross-validated AUC)", "held-out ROC-AUC of the scalar, per-game and "
                                                                 "multidimensional models",
                              protocol=cv_protocol, referee_default=PER_GAME_DEFAULT), auc)
        elif cv is not None:
            writer.missing(Item("Section 2 (cross-validated AUC)", "cross-validation"), "every match is one game")
    _socio_items(store, writer, runner, seed, notes)
    return protocol, notes


def _figure_1(writer: PaperWriter, matrices: dict, split: str | None) -> None:
    """Figure 1: the scalar Bradley-Terry win probabilities beside the observed shares, panel by panel; a fit
    that fell back to a prior (its maximum-likelihood estimate does not exist) is named in the item, in its
    panel's title and in the CSV's `fit` column."""
    from referee.models.ratings.bradley_terry import ELO_SCALE

    fits = {label: ("observed share" if "(empirical)" in label else "maximum likelihood"
                    if m.attrs.get("prior_sd") is None else
                    f"MAP, Normal(0, {m.attrs['prior_sd'] * ELO_SCALE:.0f} Elo) prior: no MLE")
            for label, m in matrices.items()}
    fallback = [label for label, fit in fits.items() if fit.startswith("MAP")]
    protocol = {"model": "scalar Bradley-Terry by maximum likelihood", "split": split,
                "panels": "with communication first, as the paper's (a) and (b)"}
    if fallback:
        protocol["prior"] = (f"{', '.join(fallback)}: the maximum-likelihood estimate does not exist (an agent never "
                             f"won or never lost there), so that panel is {fits[fallback[0]].split(':')[0]} (said in "
                             "its title and the CSV's fit column)")
    shown = {(f"{label}\n({fits[label]})" if label in fallback else label): m for label, m in matrices.items()}
    from referee.present.figures import plot_win_matrices

    long = pd.concat([m.rename_axis(index="agent", columns=None).reset_index()
                      .melt(id_vars="agent", var_name="opponent", value_name="probability")
                      .assign(panel=label, fit=fits[label]) for label, m in matrices.items()], ignore_index=True)
    writer.figure(Item("Figure 1", "probability that each agent outperforms each other, fitted and observed",
                       protocol=protocol), plot_win_matrices(shown),
                  long.loc[long["agent"] != long["opponent"], ["panel", "fit", "agent", "opponent", "probability"]])


def _row_name(row) -> str:
    return f"{row.model}{'' if not row.dims else f' ({row.dims} dims)'}"


def inspect_default(function, name: str):
    """The default of `function`'s parameter `name` (as its signature states it: one truth for the number)."""
    import inspect

    return inspect.signature(function).parameters[name].default


def cv_fold_words(auc) -> dict[str, str]:
    """What the cross-validation item says of its folds beyond plain maximum likelihood (said in the item and
    carried as columns of its CSV, not only on stderr): the scored folds whose fits added a prior (regularised
    fits, column folds_with_prior), and the folds not scored because a held-out prediction would use a strength the
    fit has no estimate of (column folds_without_estimate; a row with no fold scored has no AUC)."""
    from referee.models.ratings.bradley_terry import DEFAULT_PRIOR_SD, ELO_SCALE

    from referee.models.ratings.bt_multidim import fit_bt_multidim

    said = {}
    total = auc["folds"] + auc["folds_without_estimate"]
    ridge = auc["model"].eq("bt-md") & (auc["folds_with_prior"] > 0)
    if ridge.any():  # equation 3 is always fitted with its ridge: every fold it scores is a penalised fit
        lam = inspect_default(fit_bt_multidim, "lam")
        said["multidimensional fits"] = (
            "; ".join(f"{_row_name(r)}: {r.folds_with_prior} of {t}" for r, t in zip(auc[ridge].itertuples(),
                                                                                    total[ridge].to_numpy()))
            + f" folds scored from equation 3 fitted with a ridge penalty (lambda = {lam:g} on every weight, a Normal "
            "prior): their AUCs are of penalised fits (column folds_with_prior), not plain maximum likelihood")
    with_prior = auc[(auc["folds_with_prior"] > 0) & ~ridge]
    if len(with_prior):
        said["folds given a prior"] = (
            "; ".join(f"{_row_name(r)}: {r.folds_with_prior} of {t}" for r, t in zip(with_prior.itertuples(),
                                                                                    total[with_prior.index]))
            + " folds' fits have no maximum-likelihood estimate on their training games and add a Normal(0, "
            f"{DEFAULT_PRIOR_SD * ELO_SCALE:.0f} Elo) prior: their AUCs are of regularised fits (column "
            "folds_with_prior)")
    unscored = auc[auc["folds_without_estimate"] > 0]
    if len(unscored):
        said["folds not scored"] = (
            "; ".join(f"{_row_name(r)}: {r.folds_without_estimate} of {t}" + (" (no AUC)" if r.folds == 0 else "")
                      for r, t in zip(unscored.itertuples(), total[unscored.index]))
            + " folds' fits have no finite plain maximum-likelihood strength for an agent they would predict (its "
            "win graph on the training games splits), so those folds are left out of the mean, never scored from "
            "where the optimiser stopped (column folds_without_estimate)")
    return said


def _figure_2(store, writer: PaperWriter, scope: dict, notes: list[str]) -> None:
    """Figure 2: the global ratings of Table 1's model (per-game Bradley-Terry, plain maximum likelihood)
    re-estimated on BOOTSTRAP resamples of the games; a replicate in which an agent's global rating has no
    finite estimate (a game of its whose win graph splits, or a game it did not play: `PerGameFit.global_table`)
    leaves that agent out, counted per agent."""
    from referee.present.figures import plot_bootstrap_violins
    from referee.run.job_table import JOBS

    item = Item("Figure 2", "bootstrap distribution of the global Elo ratings",
                protocol={**PER_GAME, "bootstrap": f"{BOOTSTRAP} resamples of whole games, each refitted"})
    result = JOBS["ratings"].compute(store, method="bt-per-game", per_game_prior_sd=None, bootstrap=BOOTSTRAP,
                                     **scope)
    notes += [f"Figure 2: {n}" for n in result.notes]
    boot = result.value.bootstrap
    drawn = boot.long().dropna(subset=["rating"])
    absent = {agent: BOOTSTRAP - int((drawn["agent"] == agent).sum()) for agent in boot.agents}
    if drawn.empty:
        writer.missing(item, "no bootstrap replicate gives any agent a finite global rating by plain maximum "
                             "likelihood: in every resample each agent has a game whose win graph splits (it won "
                             "or lost every comparison there, or the players fall into parts that never beat "
                             "each other both ways) or a game it did not play")
        return
    left_out = {a: n for a, n in absent.items() if n}
    if left_out:
        item.protocol["replicates without a finite estimate"] = (
            "left out per agent (a game of its has a split win graph there, or it drew none of its games): "
            + ", ".join(f"{a} {n} of {BOOTSTRAP}" for a, n in left_out.items()))
    writer.figure(item, plot_bootstrap_violins(drawn))


def _table_1(fit, game_table) -> "pd.DataFrame":
    """Table 1: agent, rank, global, then one column per game: the rating (Elo) where plain maximum likelihood
    has a finite one, else 'no finite estimate (W-L: why)' (the game's win graph among its players is not
    strongly connected: `PerGameFit.records`), and an empty cell for a game the agent never played. An agent
    with a cell without an estimate, or a game it never played, has no global rating (the mean of its per-game
    strengths) and no rank."""
    record = fit.records().set_index(["game", "agent"])
    rating = game_table.set_index(["game", "agent"])["rating"]
    cells = pd.Series(None, index=rating.index, dtype=object)  # a game the agent never played: empty
    for (game, agent), row in record.iterrows():
        cells[(game, agent)] = (rating[(game, agent)] if row["finite"]
                                else f"no finite estimate ({row['wins']:g}-{row['losses']:g}: {row['why']})")
    by_game = cells.rename("rating").reset_index().pivot(index="agent", columns="game", values="rating").reset_index()
    table = fit.global_table()[["agent", "rank", "rating"]].rename(columns={"rating": "global"})
    table["global"] = table["global"].astype(object)
    table["rank"] = table["rank"].astype(object)
    totals = record.groupby(level="agent")[["wins", "losses"]].sum()
    for agent in (a for a, finite in zip(fit.agents, fit.global_finite) if not finite):
        row = table["agent"] == agent
        missed = [g for g in fit.games if (g, agent) not in record.index]
        why = f"it played no match of {', '.join(missed)}" if missed else "its game cells have no finite estimate"
        won, lost = (totals.loc[agent, "wins"], totals.loc[agent, "losses"]) if agent in totals.index else (0, 0)
        table.loc[row, "global"] = f"no finite estimate ({won:g}-{lost:g} over all games; {why})"
        table.loc[row, "rank"] = None
    return table.merge(by_game, on="agent")


def _socio_items(store, writer: PaperWriter, runner: str | None, seed: int, notes: list[str]) -> None:
    from referee.models.social.consistency import metric_vectors, paper_consistency, similarity
    from referee.present.figures import plot_consistency, plot_intervals, plot_roc_curves, plot_similarity_blocks
    from referee.run.job_table import JOBS

    try:
        result = JOBS["socio"].compute(store, runner=runner, bootstrap=BOOTSTRAP, seed=seed).value
    except ValueError as exc:
        for number in ("Table 2", "Figure 4", "Figure 5", "Figure 6", "Figure 7(a)", "Figure 7(b)"):
            writer.missing(Item(number, "socio-cognitive metrics"), str(exc))
        return
    notes += [f"socio-cognitive metrics: {n}" for n in result.notes]
    players = result.players.drop(columns="communication", errors="ignore")
    metric_names = [c for c in players.columns if c not in {"match_id", "player", "agent", "game", "category", "framing"}]
    listed, absent = _table_2(players)
    item = Item("Table 2", "socio-cognitive metrics: the paper's list, each with how it is evaluated and how many "
                           "player-matches of these logs carry it (each agent's means beside it)",
                protocol={"unit": "player-match"}, referee_default=(
                    f"not in these logs: {', '.join(absent)} (the column stays empty and every item made from the "
                    "metrics goes without it)" if absent else None))
    writer.table(item, listed)
    writer.table(item, players.groupby("agent")[metric_names].mean().reset_index(), suffix="_per_agent")
    if absent:
        notes.append(f"Table 2: the logs carry no {', '.join(absent)} rating, which the paper's list has; the "
                     "metric is left out of Figures 4-7")
    raw = {"vectors": "raw metric means per (agent, game category)", "z-scores": "none"}
    default = "metric means z-scored per metric before correlating, and intervals by a bootstrap over matches"
    writer.figure(Item("Figure 4", "Pearson correlations of (agent, game category) metric vectors", protocol=raw,
                       referee_default=default),
                  plot_similarity_blocks(similarity(metric_vectors(players, ["agent", "category"], standardise=False))))
    summary, per_agent = paper_consistency(players)
    item = Item("Figure 5", "intra- against inter-agent correlations (left: games; middle: framings; right: "
                            "framings over all games)", protocol={**raw, "error bars": "±1 SEM over pairs"},
                referee_default=default + "; the inter-agent correlation within one game category only")
    writer.figure(item, plot_consistency(summary.assign(low=summary["mean_r"] - summary["sem"],
                                                        high=summary["mean_r"] + summary["sem"]), "±1 SEM over pairs"),
                  summary)
    writer.table(item, per_agent, suffix="_per_agent")
    per_game = players.groupby("game")["framing"].nunique() if "framing" in players.columns else pd.Series(dtype=int)
    if not len(per_game) or per_game.max() < 2:
        notes.append("Figure 5 (middle, right): every game was played in one framing only, so no agent can be "
                     "compared with itself across framings and those bars are empty")
    found = result.determinants.get("all games")
    if found is None:
        for number in ("Figure 6", "Figure 7(a)", "Figure 7(b)"):
            writer.missing(Item(number, "what predicts winning"), "no pair of players to predict")
        return
    folds = {"folds": "two agents left out of each training fold", "model": "logistic regression on metric "
                                                                            "differences (equation 5)"}
    curves = {m: found.roc(m, held_out=False) for m in found.auc["model"]}
    writer.figure(Item("Figure 6", "ROC curves of each model, trained on all data (the held-out AUCs in the table)",
                       protocol={**folds, "curves": "each model trained on every pair and scored on the same pairs, "
                                                    "as the paper's figure; its table gives the cross-validated AUCs"},
                       referee_default="out-of-fold curves, which do not reward a model for fitting its own data"),
                  plot_roc_curves(curves, dict(zip(found.auc["model"], found.auc["auc_all_data"]))), found.auc)
    for number, model, title in (("Figure 7(a)", "metrics", "fixed feature weights"),
                                 ("Figure 7(b)", "metrics per game", "feature weights per game")):
        weights = found.weights[found.weights["model"] == model].rename(
            columns={"weight": "mean", "low": "hdi_low", "high": "hdi_high"})
        writer.figure(Item(number, f"{title} of equation 5 (95 % bootstrap interval over matches)", protocol=folds),
                      plot_intervals(weights, "feature", "What predicts winning" + (" in each game" if "game" in model
                                                                                  else ""),
                                     "weight per sd of metric difference"), weights)


PAPER_METRICS = (  # Table 2 of the paper: metric, how it is evaluated, referee's column
    ("Theory of Mind", "Accuracy of action predictions", "theory_of_mind"),
    ("Transparency", "Inverse of Theory of Mind", "predictability"),
    ("Influence", "LLM comparing chats to actions", "influence"),
    ("Amenability", "Inverse of Influence", "amenability"),
    ("Assertiveness", "Compare action values to preferences", "assertiveness"),
    ("Planning", "LLM rates planning depth in reasoning", "planning"),
    ("Learning", "LLM rates learning in reasoning", "learning"),
    ("Game Outcome", "Score by defined game logic", None),
)


def _table_2(players: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The paper's Table 2 (metric, evaluation method) with referee's column for each and how many of these
    player-matches carry a value; and the metrics none carries."""
    rows, absent = [], []
    for metric, method, column in PAPER_METRICS:
        if column is None:
            rows.append({"metric": metric, "evaluation method": method, "column": "results.score",
                         "player-matches": len(players), "status": "the score each result stores"})
            continue
        n = int(players[column].notna().sum()) if column in players.columns else 0
        if not n:
            absent.append(column)
        rows.append({"metric": metric, "evaluation method": method, "column": column, "player-matches": n,
                     "status": "computed from these logs" if n else "not in these logs"})
    return pd.DataFrame(rows), absent
