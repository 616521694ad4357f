"""Each runner's own headline numbers, computed the runner's way, shown beside referee's ratings.

One registry, `HEADLINES`: for each runner that prints a headline number of its own, what it is called, how it
is computed from the tables referee stored (a function of `Tables` giving one row per (agent, unit, metric):
agent, unit, metric, value, stderr, and where the runner's own output states them, stated and stated_stderr;
`task`, the game, where a unit is one: an Inspect log's task)
and one line on why referee's rating may order the agents
otherwise, so a user can report both:

- clembench: `clemscore`, `% Played` and `Quality Score` per model pair, overall and per game
  (`referee.prepare.clem_table`, equal to clem's results.csv);
- inspect: each log's headline metric (accuracy or mean) with Inspect's standard error, clustered where the log
  clusters it, beside the header's own values (`referee.prepare.inspect_table`);
- sotopia: the mean of every SOTOPIA-EVAL dimension and of `overall_score` per model;
- meltingpot: the focal per-capita return, min-max normalised per scenario over the populations evaluated and
  averaged over scenarios (the evaluation notebook's normalisation);
- concordia: the contest's Elo (strict wins, Newman iteration) on the focal agents' scenario comparisons.

`runner_numbers(tables)` is the tidy table of every runner present; `headline_column(numbers)` one text per
agent for a rating table's `runner_metric` column; `differences(numbers)` the one-line reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from referee.prepare.clem_table import clem_episodes, clem_names, clem_results
from referee.prepare.inspect_table import MEANS, inspect_metrics
from referee.prepare.scores import agent_match_scores

COLUMNS = ["runner", "agent", "unit", "task", "metric", "value", "stderr", "stated", "stated_stderr", "headline"]


@dataclass(frozen=True)
class Tables:
    """The canonical tables a runner's numbers are computed from (measures may be empty where unused)."""

    matches: pd.DataFrame
    results: pd.DataFrame
    measures: pd.DataFrame


@dataclass(frozen=True)
class Headline:
    """A runner's own headline: its name, how it is computed (Tables -> agent, unit, metric, value, stderr,
    stated, headline) and why referee's rating may order the agents otherwise."""

    name: str
    compute: Callable[[Tables], pd.DataFrame]
    differs: str
    measures: bool = False  # whether `compute` reads the measures table


def _rows(frame: pd.DataFrame) -> pd.DataFrame:
    for column in COLUMNS[1:]:
        if column not in frame.columns:
            frame = frame.assign(**{column: np.nan})
    return frame[COLUMNS[1:]]


def _clem(tables: Tables) -> pd.DataFrame:
    """clem's results table per model pair, each row under the rated agents of the pair (its focal models)."""
    table = clem_results(clem_episodes(tables.matches, tables.measures))
    if table.empty:
        return _rows(pd.DataFrame())
    focal = tables.results[tables.results["group"].fillna("focal") == "focal"][["match_id", "agent"]]
    folders = clem_names(tables.matches)[["match_id", "model"]].rename(columns={"model": "unit"})
    owners = focal.merge(folders, on="match_id")
    owners = owners[["unit", "agent"]].drop_duplicates()
    long = table.reset_index(names="unit").melt(id_vars="unit", var_name="metric", value_name="value")
    long["metric"] = long["metric"].str.replace("-, ", "", regex=False).str.replace("all, Average ", "", regex=False)
    long = long.merge(owners, on="unit")
    return _rows(long.assign(headline=long["metric"] == "clemscore"))


def _inspect(tables: Tables) -> pd.DataFrame:
    found = inspect_metrics(tables.matches, tables.results)
    if found.empty:
        return _rows(pd.DataFrame())
    errors = found[found["metric"] == "stderr"].set_index(["log", "agent"])[["value", "stated"]]
    head = found[found["metric"].isin(MEANS)].join(
        errors.rename(columns={"value": "stderr", "stated": "stated_stderr"}), on=["log", "agent"])
    return _rows(head.assign(unit=head["task"] + " (" + head["log"] + ")", headline=True))


def _sotopia(tables: Tables) -> pd.DataFrame:
    mine = tables.matches.loc[tables.matches["runner"] == "sotopia", "match_id"]
    judged = tables.measures[tables.measures["match_id"].isin(mine) & (tables.measures["kind"] == "judge")]
    scored = judged.merge(tables.results[["match_id", "player", "agent"]], on=["match_id", "player"])
    if scored.empty:
        return _rows(pd.DataFrame())
    means = scored.groupby(["agent", "name"])["value"].agg(value="mean", stderr="sem")
    means = means.reset_index().rename(columns={"name": "metric"})
    return _rows(means.assign(unit="all episodes", headline=means["metric"].isin(["goal", "overall_score"])))


def _meltingpot(tables: Tables) -> pd.DataFrame:
    mine = tables.matches[tables.matches["runner"] == "meltingpot"]
    scores = agent_match_scores(mine, tables.results)
    if scores.empty:
        return _rows(pd.DataFrame())
    per = scores.groupby(["scenario", "agent"])["score"].mean().reset_index()
    lo = per.groupby("scenario")["score"].transform("min")
    hi = per.groupby("scenario")["score"].transform("max")
    per["norm"] = ((per["score"] - lo) / (hi - lo)).where(hi > lo)
    value = per.groupby("agent")["norm"].mean().rename("value").reset_index()
    return _rows(value.assign(unit="mean over scenarios", metric="normalised focal per-capita return", headline=True))


def _concordia(tables: Tables) -> pd.DataFrame:
    """The contest's Elo on its own comparisons (focal agents within each scenario and repetition, the background
    population never rated, whatever the rating asked for)."""
    from referee.models.ratings.elo import fit_contest_elo
    from referee.prepare.comparisons import comparisons_from_tables
    from referee.run.ratings import encode

    comparisons = comparisons_from_tables(tables.matches[tables.matches["runner"] == "concordia"], tables.results)
    comparisons = comparisons[comparisons["kind"] == "scenario"]
    if comparisons.empty:
        return _rows(pd.DataFrame())
    coded = encode(comparisons)
    elo = fit_contest_elo(coded.counts(ties="ignore"), coded.agents).table()
    return _rows(elo.rename(columns={"rating": "value"}).assign(unit="all scenarios", metric="contest Elo",
                                                                   headline=True))


HEADLINES: dict[str, Headline] = {
    "clembench": Headline(
        "clemscore", _clem,
        "clem multiplies a model's % played by its mean quality score, game by game; referee compares models "
        "instance by instance (an aborted episode loses to every model that played the instance) and rates the "
        "wins: a model that wins few instances by much scores higher with clem than with referee", measures=True),
    "inspect": Headline(
        "accuracy", _inspect,
        "Inspect averages each model's scores over the samples of its own log; referee compares models only on "
        "the samples and epochs both ran, so logs of different samples agree on accuracy but not on ratings"),
    "sotopia": Headline(
        "goal and overall score", _sotopia,
        "Sotopia averages each model's dimension scores over its episodes, whatever the partner and the "
        "environment; referee compares goal scores on the same environment and agent profiles", measures=True),
    "meltingpot": Headline(
        "normalised focal per-capita return", _meltingpot,
        "Melting Pot averages the normalised return over scenarios; referee compares populations episode by "
        "episode, so a population that wins most scenarios narrowly can outrank one that wins a few by much"),
    "concordia": Headline(
        "contest Elo", _concordia,
        "the same Elo as the contest's (strict wins; ties left out); referee's default Bradley-Terry counts a "
        "tie as half a win, and its table uses a prior where the contest's Elo is undefined"),
}


def runner_numbers(tables: Tables) -> pd.DataFrame:
    """The runners' own numbers (COLUMNS: runner, agent, unit, metric, value and stderr as referee computes
    them the runner's way, stated and stated_stderr as the runner's own output states them where it does,
    headline: the row's metric is the runner's headline) of every runner in `tables` that has one in
    HEADLINES; empty when none has."""
    parts = [HEADLINES[runner].compute(tables).assign(runner=runner)
             for runner in sorted(tables.matches["runner"].unique()) if runner in HEADLINES]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True)[COLUMNS] if parts else pd.DataFrame(columns=COLUMNS)


def _text(row) -> str:
    value = row["value"] if pd.notna(row["value"]) else row["stated"]
    digits = 0 if float(value).is_integer() and abs(value) >= 100 else 2 if abs(value) >= 1 else 3
    text = f"{row['metric']} {value:.{digits}f}"
    if pd.notna(row["stderr"]):
        text += f" ± {row['stderr']:.{digits}f}"
    return text


def headline_column(numbers: pd.DataFrame) -> pd.Series:
    """One text per agent (indexed by agent): its headline numbers, each 'metric value[ ± stderr]', followed by
    its unit where the agent has several ('; ' between them)."""
    head = numbers[numbers["headline"].astype(bool)]
    out = {}
    for agent, block in head.groupby("agent"):
        several = block["unit"].nunique() > 1
        out[agent] = "; ".join(_text(r) + (f" [{r['unit']}]" if several else "") for _, r in block.iterrows())
    return pd.Series(out, dtype=object)


def differences(numbers: pd.DataFrame) -> list[str]:
    """One line per runner present in `numbers`: the runner's headline, and why referee's rating may differ."""
    return [f"{runner}'s own {HEADLINES[runner].name} is in the `runner_metric` column; {HEADLINES[runner].differs}"
            for runner in sorted(numbers["runner"].unique())]


def with_runner_numbers(table: pd.DataFrame, tables: Tables) -> tuple[pd.DataFrame, list[str]]:
    """A rating table (a column `agent`) with `runner_metric` (the runners' own headline per agent, '' where
    the runner prints none), and the lines saying why the two may disagree."""
    numbers = runner_numbers(tables)
    if numbers.empty:
        return table, []
    column = table["agent"].map(headline_column(numbers)).fillna("")
    return table.assign(runner_metric=column.to_numpy()), differences(numbers)


def stored_runner_numbers(store, table: pd.DataFrame, matches: pd.DataFrame,
                          results: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """`with_runner_numbers` of a rating table over the matches and results it was rated from, reading the
    store's measures (`referee.io.store.Store`) only where a present runner's headline needs them; a table rated
    by game or without an `agent` column is returned as it is."""
    if "agent" not in table.columns or "game" in table.columns:
        return table, []
    return with_runner_numbers(table, stored_tables(store, matches, results))


def stored_tables(store, matches: pd.DataFrame, results: pd.DataFrame) -> Tables:
    """`Tables` of these matches and results, with the store's measures (`referee.io.store.Store`) read only where
    a present runner's headline needs them."""
    needs = any(HEADLINES[r].measures for r in matches["runner"].unique() if r in HEADLINES)
    measures = store.table("measures") if needs else pd.DataFrame(columns=["match_id", "player", "name", "value",
                                                                            "kind", "round"])
    return Tables(matches, results, measures)
