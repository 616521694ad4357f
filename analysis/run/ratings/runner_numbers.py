"""Each runner's own headline numbers, computed the runner's way, shown beside referee's ratings.

Each runner that prints a headline number of its own declares it in its entry (`referee.io.loaders.runner.Runner`'s
`headline`, a `Headline`): what it is called, how it is computed from the tables referee stored (a function of the
runner's `Tables` giving one row per (agent, unit, metric): agent, unit, metric, value, stderr, and where the
runner's own output states them, stated and stated_stderr; `task`, the game, where a unit is one: an Inspect log's
task; or a rating method fitted to the runner's comparisons) and one line on why referee's rating may order the
agents otherwise, so a user can report both:

- clembench: `clemscore`, `% Played` and `Quality Score` per model pair, overall and per game
  (`referee.io.loaders.clem_table`, equal to clem's results.csv);
- inspect: each log's headline metric (accuracy or mean) with Inspect's standard error, clustered where the log
  clusters it, beside the header's own values, and a model scored in several logs (an eval-set's tasks) pooled
  over them, its own number in the rating tables (`referee.io.loaders.inspect_table`);
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

import numpy as np
import pandas as pd

from referee.io.loaders import RUNNERS, Headline, Tables
from referee.io.loaders.runner import HEADLINE_COLUMNS, headline_rows
from referee.models.registry import RATING_METHODS, implementation
from referee.prepare.comparisons import comparisons_from_tables
from referee.run.ratings.ratings import encode
from referee.result import RunnerNumbersJobResult

COLUMNS = ["runner", *HEADLINE_COLUMNS]
STATED_ONLY = "stated, not recomputed"  # a per-unit row showing the runner's own statement (`per_unit`'s source)


def _stated_only(numbers: pd.DataFrame) -> pd.Series:
    """The rows of `numbers` whose number is the runner's own statement, which referee could not recompute."""
    return numbers["value"].isna() & numbers["stated"].notna()
HEADLINES: dict[str, Headline] = {name: r.headline for name, r in RUNNERS.items() if r.headline}  # read off the entries
# every column a rating table may carry the runners' own numbers in
RUNNER_COLUMNS = frozenset(c for h in HEADLINES.values() for c in (*h.columns.values(), h.stderr) if c)


def _rated(spec: Headline, tables: Tables) -> pd.DataFrame:
    """A headline that is a rating (`Headline.rating`, e.g. the contest's Elo): the method fitted, without a prior,
    to the runner's comparisons of kind `spec.comparisons` (the background population never rated)."""
    comparisons = comparisons_from_tables(tables.matches, tables.results)
    comparisons = comparisons[comparisons["kind"] == spec.comparisons]
    if comparisons.empty:
        return headline_rows(pd.DataFrame())
    fit = implementation(RATING_METHODS[spec.rating].fit)(encode(comparisons), False, 0.0)
    table = fit.table().rename(columns={"rating": "value"})
    return headline_rows(table.assign(unit=spec.unit, metric=next(iter(spec.columns)), headline=True))


def headline_numbers(runner: str, tables: Tables) -> pd.DataFrame:
    """Runner `runner`'s own numbers (HEADLINE_COLUMNS) from the tables of its matches, as its entry's
    headline computes them; empty when it declares none."""
    spec = HEADLINES.get(runner)
    if spec is None:
        return headline_rows(pd.DataFrame())
    mine = tables.of(runner)
    return spec.compute(mine) if spec.compute is not None else _rated(spec, mine)


def runner_numbers(tables: Tables) -> pd.DataFrame:
    """The runners' own numbers (COLUMNS: runner, agent, unit, metric, value and stderr as referee computes
    them the runner's way, stated and stated_stderr as the runner's own output states them where it does,
    headline: the row's metric is the runner's headline) of every runner in `tables` that has one in
    its entry (`HEADLINES`); empty when none has."""
    parts = [headline_numbers(runner, tables).assign(runner=runner)
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
    return table.assign(**added), differences(numbers) + stated_lines(numbers) + blanks(numbers, table["agent"])


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
    runner's stated one, and `source` says which: 'recomputed', or STATED_ONLY where a number of the row is the
    runner's own statement that referee could not recompute (an Inspect log with no scored sample: its header's
    value)."""
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
        stated_only = _stated_only(block).groupby(
            [block["agent"], block["unit"]], sort=False).any()
        wide["source"] = np.where(stated_only.reindex(wide.index).fillna(False).to_numpy(bool),
                                  STATED_ONLY, "recomputed")
        rows.append(wide.reset_index().assign(runner=runner))
    if not rows:
        return pd.DataFrame(columns=["runner", "unit", "agent"])
    out = pd.concat(rows, ignore_index=True)
    out.columns.name = None
    return out[["runner", "unit", "agent", *[c for c in out.columns if c not in ("runner", "unit", "agent")]]]


def stated_lines(numbers: pd.DataFrame) -> list[str]:
    """One line per runner whose numbers include stated values referee did not recompute, counting the rows and
    giving their reasons (the rows' notes)."""
    shown = numbers[_stated_only(numbers)]
    out = []
    for runner, block in shown.groupby("runner"):
        units = block.drop_duplicates(["agent", "unit"])
        why = sorted({n for n in block["note"] if isinstance(n, str) and n}) or ["no reason recorded"]
        out.append(f"{len(units)} {runner} row(s) show the runner's stated number, not recomputed (source "
                   f"'{STATED_ONLY}'): {'; '.join(why)}")
    return out


def unit_lines(numbers: pd.DataFrame) -> list[str]:
    """Each distinct note of the numbers computed (where a unit's records come from, when its name does not say:
    clem's model read from a renamed folder or pooled over several, Inspect's task pooled over its logs)."""
    noted = numbers[numbers["value"].notna() & numbers["note"].notna()]
    return sorted({str(n) for n in noted["note"] if str(n).strip()})


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
        raise ValueError(_none_to_print(matches))
    by_agent = runner_columns(numbers).rename_axis("agent").reset_index()
    return RunnerNumbersJobResult("runner-numbers", {"numbers": per_unit(numbers), "by_agent": by_agent, "long": numbers}, [], {},
                  lines=differences(numbers) + stated_lines(numbers) + unit_lines(numbers), fields={"runners": sorted(numbers["runner"].unique())})


def _none_to_print(matches: pd.DataFrame) -> str:
    """Why no runner of these matches has a number to print: for each runner, that it prints none referee
    computes, or what its number is computed from that none of its matches here carries."""
    counts = matches["runner"].value_counts().sort_index()
    said = [f"{runner}'s {HEADLINES[runner].name} is computed from {HEADLINES[runner].needs}, which none of its "
            f"{n} match(es) here carries" if runner in HEADLINES else
            f"{runner} prints no headline number of its own that referee computes" for runner, n in counts.items()]
    return (f"no runner's own number to print: {'; '.join(said) or 'the store holds no match'} (referee computes "
            f"the own numbers of {', '.join(HEADLINES)})")


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
