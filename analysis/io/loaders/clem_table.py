"""clembench's own leaderboard numbers, computed clem's way from the episodes referee stored.

clem (clembench's `evaluation/bencheval.py`, and clemcore's `clem eval` after it) turns each episode's scores
into one long table, `raw.csv` (game, model, experiment, episode, metric, value), adds `Played = 1 - Aborted`,
and writes `results.csv`:

- per (game, model): `% Played` = 100 x the mean of Played, `Quality Score` = the mean of `Main Score` over the
  episodes that have one (clem's NaN for an aborted episode is skipped, as pandas' mean skips it) and its
  sample standard deviation `Quality Score (std)`, each rounded to 2 decimals;
- per model: `Average % Played` and `Average Quality Score`, the means of the rounded per-game values over
  the games it played, rounded to 2 decimals, and `clemscore` = Average % Played / 100 x Average Quality
  Score, rounded to 2 decimals.

"model" is clem's results folder: the model pair (`gpt-4o-t0.0--programmatic-t0.0`). An episode without a
scores.json is not in clem's table (clem never scored it), and neither is it here. `clem_episodes` builds the
long table from referee's canonical tables; `clem_results` is clem's aggregation of it, column for column.
"""

from __future__ import annotations

from pathlib import PurePath

import numpy as np
import pandas as pd

from referee.io.loaders.runner import Tables, headline_rows, only_unit
from referee.io.match_attrs import attrs_columns
from referee.io.schema import focal

ABORTED, PLAYED, MAIN = "Aborted", "Played", "Main Score"
EPISODE_COLUMNS = ["game", "model", "experiment", "episode", "metric", "value"]


def clem_names(matches: pd.DataFrame) -> pd.DataFrame:
    """What clem names each clembench episode by: match_id, game, model (clem's results folder: the model pair),
    experiment, episode, and the folder it sits in now (`folder`, '' where the path is shorter); one row per match of `matches` (clembench's only, `Tables.of`). The model is the
    results folder clem ran into (the episode's `meta.results_folder`, stored as `results_folder`); an episode
    written without `meta` in a folder renamed after the run takes the name its folder's other episodes' `meta`
    give it, so a model keeps one name (one row of clem's table) whatever its folder is called now."""
    names = attrs_columns(matches, ("results_folder", "experiment_name", "episode"))
    model = names["results_folder"].to_numpy(object)
    folder = np.array([_folder(f) for f in matches["source_file"]], dtype=object)
    given = pd.Series(model)[(model != folder) & (folder != "")]
    renamed = given.groupby(folder[given.index]).agg(lambda m: m.mode().iat[0]).to_dict()
    model = np.array([renamed.get(f, m) if m == f else m for m, f in zip(model, folder)], dtype=object)
    return pd.DataFrame({"match_id": matches["match_id"].to_numpy(), "game": matches["game"].to_numpy(), "model": model,
                         "experiment": names["experiment_name"].to_numpy(), "episode": names["episode"].to_numpy(),
                         "folder": folder})


def _folder(source_file: object) -> str:
    """The results folder an episode file sits in (<results>/<model pair>/<game>/<experiment>/<episode>/file),
    '' where the path is shorter."""
    parts = PurePath(str(source_file)).parts
    return parts[-5] if len(parts) >= 5 else ""


def clem_episodes(matches: pd.DataFrame, measures: pd.DataFrame) -> pd.DataFrame:
    """clem's raw table (game, model, experiment, episode, metric, value) of the clembench episodes referee
    stored: every match-level episode score of each episode whose scores.json was read.

    Parameters
    ----------
    matches : canonical `matches` of clembench's episodes only (`Tables.of`; they carry results_folder,
        experiment_name and episode in attrs).
    measures : canonical `measures`.
    """
    names = clem_names(matches)
    if names.empty:
        return pd.DataFrame(columns=EPISODE_COLUMNS)
    episode = measures[measures["player"].isna() & measures["round"].isna()]
    long = episode[["match_id", "name", "value"]].rename(columns={"name": "metric"}).merge(names, on="match_id")
    return long[EPISODE_COLUMNS].reset_index(drop=True)


def clem_results(episodes: pd.DataFrame) -> pd.DataFrame:
    """clem's results table from its raw long table (see the module docstring): one row per model, columns
    named as clem names them ('-, clemscore', 'all, Average % Played', 'all, Average Quality Score', then per
    game 'GAME, % Played', 'GAME, Quality Score', 'GAME, Quality Score (std)'); percentages in [0, 100],
    quality scores on the game's Main Score scale (0-100), all rounded to 2 decimals as clem prints them."""
    data = episodes[episodes["metric"].isin([ABORTED, MAIN])].copy()
    data["value"] = pd.to_numeric(data["value"], errors="coerce")
    played = data[data["metric"] == ABORTED].assign(metric=PLAYED, value=lambda d: 1 - d["value"])
    data = pd.concat([data[data["metric"] == MAIN], played], ignore_index=True)
    mean = data.groupby(["game", "model", "metric"])["value"].mean().unstack("metric")
    std = data[data["metric"] == MAIN].groupby(["game", "model"])["value"].std()
    per_game = pd.DataFrame({"% Played": (mean[PLAYED] * 100).round(2),
                             "Quality Score": mean.get(MAIN, pd.Series(np.nan, index=mean.index)).round(2),
                             "Quality Score (std)": std.reindex(mean.index).round(2)})
    overall = per_game[["% Played", "Quality Score"]].groupby(level="model").mean().round(2)
    out = pd.DataFrame(index=overall.index)
    out["-, clemscore"] = (overall["% Played"] / 100 * overall["Quality Score"]).round(2)
    out["all, Average % Played"] = overall["% Played"]
    out["all, Average Quality Score"] = overall["Quality Score"]
    for game, block in per_game.groupby(level="game"):
        block = block.droplevel("game")
        for column in per_game.columns:
            out[f"{game}, {column}"] = block[column]
    out.index.name = None
    return out


def self_play(agent: str, units: list[str]) -> str | None:
    """clem's model is its self-play pair (`gpt-4o-t0.0--gpt-4o-t0.0`): that unit where the agent has it, else its
    one unit (a game played against a programmatic partner only), else none."""
    same = [u for u in units if len(set(u.split("--"))) == 1]
    return same[0] if len(same) == 1 else only_unit(agent, units)


def clem_headline(tables: Tables) -> pd.DataFrame:
    """clem's results table per model pair (the clembench runner's `Headline.compute`), each row under the rated
    agents of the pair (its focal models): HEADLINE_COLUMNS, metric clemscore, % Played and Quality Score."""
    table = clem_results(clem_episodes(tables.matches, tables.measures))
    if table.empty:
        return headline_rows(pd.DataFrame())
    folders = clem_names(tables.matches)[["match_id", "model", "folder"]].rename(columns={"model": "unit"})
    owners = focal(tables.results)[["match_id", "agent"]].merge(folders, on="match_id")
    owners = owners[["unit", "agent"]].drop_duplicates()
    long = table.reset_index(names="unit").melt(id_vars="unit", var_name="metric", value_name="value")
    long["metric"] = long["metric"].str.replace("-, ", "", regex=False).str.replace("all, Average ", "", regex=False)
    long = long.merge(owners, on="unit")
    notes = _disk_folders(folders)
    return headline_rows(long.assign(headline=long["metric"] == "clemscore", note=long["unit"].map(notes)))


def _disk_folders(units: pd.DataFrame) -> dict[str, str]:
    """unit -> a note where clem's model (the results folder clem ran into, its episodes' meta) is not the one
    folder its episodes now sit in (`clem_names`' folder): read from a renamed folder, or pooled over several (a
    run copied or resumed under another name), naming them, so that a table row named `X--X` says where its
    episodes are."""
    out = {}
    for unit, block in units.groupby("unit"):
        found = sorted(f for f in block["folder"].unique() if f)
        if found and found != [unit]:
            out[unit] = (f"clem's model {unit} (its episodes' meta) read from {len(found)} results folder(s) on disk: "
                         f"{', '.join(found[:4])}{' ...' if len(found) > 4 else ''}")
    return out
