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
  clusters it, beside the header's own values, and a model scored in several logs (an eval-set's tasks) pooled
  over them, its own number in the rating tables (`referee.prepare.inspect_table`);
- sotopia: the mean of every SOTOPIA-EVAL dimension and of `overall_score` per model;
- meltingpot: the focal per-capita return, min-max normalised per scenario over the populations evaluated and
  averaged over scenarios (the evaluation notebook's normalisation);
- concordia: the contest's Elo (strict wins, Newman iteration) on the focal agents' scenario comparisons.

`runner_numbers(tables)` is the tidy table of every runner present; `runner_columns(numbers)` the same as numeric
columns per agent, named as the runner names them (a rating table's columns beside referee's rating; the
leaderboard shows the headline alone), read from `per_unit(numbers)` (the runner's own per-unit table);
`differences(numbers)` the one-line reasons; `own_numbers` the `referee runner-numbers` job, which prints them even
where referee cannot rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from referee.io.loaders.sotopia import DIMENSIONS as _SOTOPIA
from referee.prepare.clem_table import clem_episodes, clem_names, clem_results
from referee.prepare.inspect_table import MEANS, POOLED, inspect_metrics
from referee.prepare.scores import agent_match_scores
from referee.run.result import RunnerNumbersJobResult

SOTOPIA_DIMENSIONS = tuple(d for d in _SOTOPIA if d != "goal")
COLUMNS = ["runner", "agent", "unit", "task", "metric", "value", "stderr", "stated", "stated_stderr", "headline", "note"]


@dataclass(frozen=True)
class Tables:
    """The canonical tables a runner's numbers are computed from (measures may be empty where unused)."""

    matches: pd.DataFrame
    results: pd.DataFrame
    measures: pd.DataFrame


def only_unit(agent: str, units: list[str]) -> str | None:
    """The unit whose numbers are the agent's own: its one unit, or none when it has several."""
    return units[0] if len(units) == 1 else None


def self_play(agent: str, units: list[str]) -> str | None:
    """clem's model is its self-play pair (`gpt-4o-t0.0--gpt-4o-t0.0`): that unit where the agent has it, else its
    one unit (a game played against a programmatic partner only), else none."""
    same = [u for u in units if len(set(u.split("--"))) == 1]
    return same[0] if len(same) == 1 else only_unit(agent, units)


@dataclass(frozen=True)
class Headline:
    """A runner's own headline: its name, how it is computed (Tables -> agent, unit, metric, value, stderr,
    stated, headline), why referee's rating may order the agents otherwise, `columns` (metric as computed ->
    the numeric column it is printed in, named as the runner names it; the first is the headline), `stderr`
    (the column of the headline's standard error where the runner prints one) and `own_unit` (which of an
    agent's units holds its own numbers)."""

    name: str
    compute: Callable[[Tables], pd.DataFrame]
    differs: str
    columns: dict[str, str]
    measures: bool = False  # whether `compute` reads the measures table
    stderr: str | None = None
    own_unit: Callable[[str, list[str]], str | None] = only_unit


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
    unit = np.where(head["log"] == POOLED, POOLED, head["task"] + " (" + head["log"] + ")")
    return _rows(head.assign(unit=unit, headline=True))


def pooled_unit(agent: str, units: list[str]) -> str | None:
    """An Inspect model's own numbers: its one log, else its logs pooled (`inspect_table.POOLED`)."""
    return POOLED if POOLED in units else only_unit(agent, units)


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
    from referee.run.ratings.ratings import encode

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
        "wins: a model that wins few instances by much scores higher with clem than with referee",
        {"clemscore": "clemscore", "% Played": "pct_played", "Quality Score": "quality"}, measures=True,
        own_unit=self_play),
    "inspect": Headline(
        "accuracy", _inspect,
        "Inspect averages each model's scores over the samples of its own log; referee compares models only on "
        "the samples and epochs both ran, so logs of different samples agree on accuracy but not on ratings",
        {m: m for m in MEANS}, stderr="stderr", own_unit=pooled_unit),
    "sotopia": Headline(
        "goal and overall score", _sotopia,
        "Sotopia averages each model's dimension scores over its episodes, whatever the partner and the "
        "environment; referee compares goal scores on the same environment and agent profiles",
        {d: d for d in ("overall_score", "goal", *SOTOPIA_DIMENSIONS)}, measures=True),
    "meltingpot": Headline(
        "normalised focal per-capita return", _meltingpot,
        "Melting Pot averages the normalised return over scenarios; referee compares populations episode by "
        "episode, so a population that wins most scenarios narrowly can outrank one that wins a few by much",
        {"normalised focal per-capita return": "normalised_return"}),
    "concordia": Headline(
        "contest Elo", _concordia,
        "the same Elo as the contest's (strict wins; ties left out); referee's default Bradley-Terry counts a "
        "tie as half a win, and its table uses a prior where the contest's Elo is undefined",
        {"contest Elo": "contest_elo"}),
}

# every column a rating table may carry the runners' own numbers in
RUNNER_COLUMNS = frozenset(c for h in HEADLINES.values() for c in (*h.columns.values(), h.stderr) if c)


def runner_numbers(tables: Tables) -> pd.DataFrame:
    """The runners' own numbers (COLUMNS: runner, agent, unit, metric, value and stderr as referee computes
    them the runner's way, stated and stated_stderr as the runner's own output states them where it does,
    headline: the row's metric is the runner's headline) of every runner in `tables` that has one in
    HEADLINES; empty when none has."""
    parts = [HEADLINES[runner].compute(tables).assign(runner=runner)
             for runner in sorted(tables.matches["runner"].unique()) if runner in HEADLINES]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True)[COLUMNS] if parts else pd.DataFrame(columns=COLUMNS)


def runner_columns(numbers: pd.DataFrame, headline_only: bool = False) -> pd.DataFrame:
    """The runners' own numbers as numeric columns, one row per agent (indexed by agent): the row of `per_unit`
    that is the agent's own unit (`Headline.own_unit`: clem's self-play pair; else the agent's one unit), its
    columns named as the runner names them (`Headline.columns`: clem's clemscore, pct_played, quality;
    Inspect's accuracy and stderr; Sotopia's dimensions; Melting Pot's normalised_return; Concordia's
    contest_elo); NaN where the agent has no own unit (the whole table is `per_unit`). `headline_only`: each
    runner's headline columns (and the headline's stderr) alone."""
    frames = []
    for runner, rows in per_unit(numbers).groupby("runner"):
        spec = HEADLINES[runner]
        mine = numbers[numbers["runner"] == runner]
        heads = set(mine.loc[mine["headline"].astype(bool), "metric"])
        kept = [column for metric, column in spec.columns.items()
                if column in rows.columns and (metric in heads or not headline_only)]
        kept += [spec.stderr] if spec.stderr in rows.columns else []
        own = {agent: spec.own_unit(agent, sorted(block["unit"].astype(str).unique()))
               for agent, block in rows.groupby("agent")}
        frames.append(rows[rows["unit"].astype(str) == rows["agent"].map(own)].set_index("agent")[kept])
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, axis=1)
    return out.loc[:, ~out.columns.duplicated()]


def blanks(numbers: pd.DataFrame, agents) -> list[str]:
    """One line per agent of `agents` that a runner of `numbers` scores but whose headline column is blank, with
    the reason: no unit of its own (`Headline.own_unit`: e.g. clem's model without a self-play pair among
    several), or the runner's number cannot be computed there (the row's note)."""
    out, wide = [], per_unit(numbers)
    mine = numbers[numbers["agent"].isin(set(agents))]
    for (runner, agent), block in mine.groupby(["runner", "agent"]):
        spec = HEADLINES[runner]
        head = next(iter(spec.columns.values()))
        units = sorted(block["unit"].astype(str).unique())
        own = spec.own_unit(agent, units)
        if own is None:
            out.append(f"{agent}: no {spec.name} of its own in the `{head}` column: {runner} scores it in "
                       f"{len(units)} units ({', '.join(units[:4])}{' ...' if len(units) > 4 else ''}) and none is "
                       "its own; `referee runner-numbers` prints each")
            continue
        shown = wide[(wide["runner"] == runner) & (wide["agent"] == agent) & (wide["unit"].astype(str) == own)]
        value = pd.to_numeric(shown[head], errors="coerce") if head in shown.columns else pd.Series(dtype=float)
        if not np.isfinite(value).any():  # per_unit leaves out a unit whose every number is missing
            notes = block.loc[block["unit"].astype(str) == own, "note"]
            why = next((n for n in notes if isinstance(n, str) and n), f"{runner} states no such number")
            out.append(f"{agent}: `{head}` blank: {why}")
    return out


def differences(numbers: pd.DataFrame) -> list[str]:
    """One line per runner present in `numbers`: the runner's headline, its column, and why referee's rating may
    differ."""
    out = []
    for runner in sorted(numbers["runner"].unique()):
        spec = HEADLINES[runner]
        out.append(f"{runner}'s own {spec.name} is the `{next(iter(spec.columns.values()))}` column "
                   f"(`referee runner-numbers` prints all of the runner's numbers); {spec.differs}")
    return out


def with_runner_numbers(table: pd.DataFrame, tables: Tables, headline_only: bool = False
                        ) -> tuple[pd.DataFrame, list[str]]:
    """A rating table (a column `agent`) with the runners' own numbers as numeric columns (`runner_columns`),
    and the lines saying where they are and why the two may disagree."""
    numbers = runner_numbers(tables)
    if numbers.empty:
        return table, []
    wide = runner_columns(numbers, headline_only)
    wide = wide.drop(columns=[c for c in wide.columns if c in table.columns])
    added = {column: table["agent"].map(wide[column]).astype(float).to_numpy() for column in wide.columns}
    return table.assign(**added), differences(numbers) + blanks(numbers, table["agent"])


def stored_runner_numbers(store, table: pd.DataFrame, matches: pd.DataFrame, results: pd.DataFrame,
                          headline_only: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """`with_runner_numbers` of a rating table over the matches and results it was rated from, reading the
    store's measures (`referee.io.store.Store`) only where a present runner's headline needs them; a table rated
    by game or without an `agent` column is returned as it is."""
    if "agent" not in table.columns or "game" in table.columns:
        return table, []
    return with_runner_numbers(table, stored_tables(store, matches, results), headline_only)


def stored_tables(store, matches: pd.DataFrame, results: pd.DataFrame) -> Tables:
    """`Tables` of these matches and results, with the store's measures (`referee.io.store.Store`) read only where
    a present runner's headline needs them."""
    needs = any(HEADLINES[r].measures for r in matches["runner"].unique() if r in HEADLINES)
    measures = store.measures() if needs else pd.DataFrame(columns=["match_id", "player", "name", "value",
                                                                            "kind", "round"])
    return Tables(matches, results, measures)


def per_unit(numbers: pd.DataFrame) -> pd.DataFrame:
    """The runners' own per-unit table (clem's results table per model pair, Inspect's per log, ...): one row per
    (runner, unit, agent), one numeric column per metric, named as the runner names it (`Headline.columns`; a
    metric outside them, such as clem's per-game '% Played', keeps the runner's own name), and the headline's
    standard error where the runner prints one. Each value and standard error is referee's computation, else the
    runner's stated one."""
    rows = []
    for runner, block in numbers.groupby("runner"):
        spec = HEADLINES[runner]
        value = block["value"].where(block["value"].notna(), block["stated"]).astype(float)
        wide = block.assign(value=value, metric=block["metric"].map(lambda m: spec.columns.get(m, m))).pivot_table(
            index=["agent", "unit"], columns="metric", values="value", aggfunc="first", sort=False)
        order = [c for c in spec.columns.values() if c in wide.columns]
        wide = wide[order + [c for c in wide.columns if c not in order]]
        if spec.stderr:
            head = block[block["headline"].astype(bool)].drop_duplicates(["agent", "unit"]).set_index(["agent", "unit"])
            error = head["stderr"].where(head["stderr"].notna(), head["stated_stderr"]).astype(float)
            wide.insert(len(order), spec.stderr, error.reindex(wide.index).to_numpy())
        rows.append(wide.reset_index().assign(runner=runner))
    if not rows:
        return pd.DataFrame(columns=["runner", "unit", "agent"])
    out = pd.concat(rows, ignore_index=True)
    out.columns.name = None
    return out[["runner", "unit", "agent", *[c for c in out.columns if c not in ("runner", "unit", "agent")]]]


def own_numbers(store, runner: str | None = None, phase: list[str] | None = None,
                where: list[str] | None = None) -> RunnerNumbersJobResult:
    """The runners' own numbers, computed their way from the stored logs (`referee runner-numbers`,
    `referee.runner_numbers(...)`), whether or not referee can rate these agents. Main table `numbers`: per
    unit (`per_unit`: clem's model pairs, Inspect's logs); `by_agent` the agent's own numbers as the rating tables
    show them (`runner_columns`); `long` the tidy table (`runner_numbers`). Lines: why referee's rating may order
    the agents otherwise. ValueError when no runner of these matches prints a number of its own."""
    from referee.run.stored import stored_tables as scoped

    matches, results = scoped(store, runner, phase, where)
    numbers = runner_numbers(stored_tables(store, matches, results))
    if numbers.empty:
        present = ", ".join(sorted(matches["runner"].unique())) or "none"
        raise ValueError(f"no runner of these matches ({present}) prints a headline number of its own that referee "
                         f"can compute from its logs; referee knows those of {', '.join(HEADLINES)}")
    by_agent = runner_columns(numbers).rename_axis("agent").reset_index()
    return RunnerNumbersJobResult("runner-numbers", {"numbers": per_unit(numbers), "by_agent": by_agent, "long": numbers}, [], {},
                  lines=differences(numbers), fields={"runners": sorted(numbers["runner"].unique())})


def require_rated(comparisons: pd.DataFrame, matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """`referee.prepare.comparisons.require_comparisons`, its error saying where the runner's own numbers are
    when the runner prints some (they need no comparison)."""
    from referee.prepare.comparisons import require_comparisons

    try:
        return require_comparisons(comparisons, matches, results)
    except ValueError as exc:
        own = sorted(set(matches["runner"]) & set(HEADLINES))
        if not own:
            raise
        raise ValueError(f"{exc}; `referee runner-numbers` prints {', '.join(own)}'s own numbers, which need no "
                         "comparison") from None
