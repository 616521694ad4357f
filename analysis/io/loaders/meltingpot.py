"""Melting Pot evaluation results (DeepMind; the Concordia contest descends from it): one row per episode of an
evaluated population on a scenario, as `meltingpot.utils.evaluation` returns them (`focal_player_names`,
`focal_player_returns`, `focal_per_capita_return`, and the same for the background population), with the
columns a results table adds: `scenario`, the evaluated population (`population`, `mapla` or
`training_run`), and optionally `substrate` and `episode`. CSV or Parquet. Format document:
`data/formats/meltingpot.md`.

Canonical: each row is a match (one episode), game = the substrate (else the scenario without its `_N`
suffix), scenario = the scenario, repetition = the episode (else the row's count within its scenario and
population); one focal result: agent = the population, score = focal per-capita return. Each population plays
its own episodes of a scenario, so populations are compared across episodes of one (scenario, repetition)
(`separate_episodes`), and per-scenario min-max normalisation over the compared populations is Melting Pot's
own normalisation of focal per-capita return. The background per-capita return is a measure (an outcome,
higher better: the welfare of the others); the focal player returns are kept in the match's attrs.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from referee.io.loaders.runner import Headline, Runner, Tables, headline_rows
from referee.io.loaders.base import LoadOptions, LoadResult, RecordError, file_key
from referee.io.loaders.table import number_cell, open_rows
from referee.io.schema import focal

NAME = "meltingpot"
COMPARISON_UNIT = ("the (scenario, episode): each focal population's per-capita return against every other "
                   "population's on the same scenario and episode; the background bots are scripted and not rated")
POPULATION = ("population", "mapla", "training_run", "focal_population")
REQUIRED = ("scenario", "focal_per_capita_return")
OPTIONAL = ("substrate", "episode", "background_per_capita_return", "focal_player_names", "focal_player_returns",
            "background_player_names", "background_player_returns", "video_path")


def _columns(path: Path, head: str) -> list[str]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        first = head.lstrip("\ufeff").split("\n", 1)[0]
        return next(csv.reader([first]), [])
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            return pq.read_schema(path).names
        except Exception:  # noqa: BLE001 - not a readable Parquet file: not this runner
            return []
    return []


def sniff(path: Path, head: str, sample: list) -> float:
    """1 for a CSV or Parquet table with a scenario, a population column and focal per-capita return."""
    names = set(_columns(path, head))
    return 1.0 if set(REQUIRED) <= names and names & set(POPULATION) else 0.0


def _numbers(value, field: str) -> list[float]:
    """A list of returns: a list or array (Parquet), or its text in a CSV ('[1.0 2.5]', '[1.0, 2.5]')."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip()):
        return []
    if isinstance(value, str):
        found = re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf(?:inity)?", value, re.I)
        value = [float(x) for x in found]
    values = [float(x) for x in np.asarray(value, dtype=float).ravel()]
    if not all(math.isfinite(x) for x in values):
        raise RecordError("wrong value", field, f"expected finite returns, got {value!r}"[:200])
    return values


def _number(value, field: str, required: bool) -> float | None:
    """A finite number of one cell (the table runner's rule); a blank cell or a Parquet null is None, and an
    error when `required`."""
    if isinstance(value, float) and math.isnan(value):  # a Parquet null
        value = None
    number = number_cell(value, field, allow_neg_inf=False)
    if number is None and required:
        raise RecordError("missing field", field, f"'{field}' is empty")
    return number


def _names(value) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        return [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", value)]
    return [str(x) for x in np.asarray(value).ravel()]


def _episode(value) -> int | None:
    """An episode number: a whole number >= 0 (a CSV cell's text, or a Parquet integer or integral float);
    None when blank; RecordError naming `episode` otherwise (-1, 1.5, text, 1e400)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str)
                                                                             and not value.strip()):
        return None
    text = str(value).strip()
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    if isinstance(value, str) and text.isdigit() and len(text) <= 18:
        return int(text)
    raise RecordError("wrong value", "episode", f"an episode is a whole number from 0, got {text[:40]!r}")


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one Melting Pot results table; a bad row is set aside by its line (CSV) or row (Parquet) and column."""
    out, frame, labels = open_rows(path, content_hash, NAME)
    if frame is None:
        return out.build()
    population = next((c for c in POPULATION if c in frame.columns), None)
    missing = [c for c in REQUIRED if c not in frame.columns] + ([] if population else [POPULATION[0]])
    if missing:
        return out.reject_file(RecordError("missing field", missing[0], f"a Melting Pot results table needs columns "
                                           f"{list(REQUIRED)} and one of {list(POPULATION)}; it has {list(frame.columns)}"))
    counts: dict[tuple[str, str], int] = {}
    seen: dict[tuple, str] = {}  # (scenario, population, episode) -> the row that played it
    rows_seen: dict[tuple, str] = {}  # a row's cells -> its first label (a repeated row is no new episode)
    key = file_key(path, content_hash)
    records = frame.to_dict("records")

    label_of = {id(row): label for label, row in zip(labels, records)}

    def parse(row: dict) -> dict[str, list[dict]]:
        label = label_of[id(row)]
        cells = tuple(str(v) for v in row.values())
        if cells in rows_seen:
            raise RecordError("duplicate row", None, f"the row repeats row {rows_seen[cells]} cell for cell: one "
                              "episode written twice, not a new one")
        rows_seen[cells] = label
        scenario, who = row.get("scenario"), row.get(population)
        if not isinstance(scenario, str) or not scenario.strip():
            raise RecordError("missing field", "scenario", "the row names no scenario")
        if who is None or (isinstance(who, float) and math.isnan(who)) or not str(who).strip():
            raise RecordError("missing field", population, "the row names no evaluated population")
        scenario, who = scenario.strip(), str(who).strip()
        score = _number(row.get("focal_per_capita_return"), "focal_per_capita_return", required=True)
        background = _number(row.get("background_per_capita_return"), "background_per_capita_return", required=False)
        focal = _numbers(row.get("focal_player_returns"), "focal_player_returns")
        if focal and abs(np.mean(focal) - score) > 1e-6 * max(1.0, abs(score)):
            raise RecordError("inconsistent", "focal_per_capita_return", f"{score} is not the mean of the focal "
                              f"player returns {focal}")
        episode = _episode(row.get("episode"))
        if episode is None:
            counts[(scenario, who)] = counts.get((scenario, who), 0) + 1
            episode = counts[(scenario, who)] - 1
        elif (scenario, who, episode) in seen:
            raise RecordError("duplicate episode", "episode", f"episode {episode} of population {who!r} on "
                              f"{scenario!r} is also row {seen[(scenario, who, episode)]}")
        seen[(scenario, who, episode)] = label
        substrate = row.get("substrate")
        game = substrate.strip() if isinstance(substrate, str) and substrate.strip() else re.sub(r"_\d+$", "", scenario)
        names = _names(row.get("focal_player_names"))
        match = {"runner": NAME, "game": game, "scenario": scenario, "repetition": str(episode),
                 "n_players": max(1, len(focal), len(names)),
                 "attrs": json.dumps({"focal_player_returns": focal, "focal_player_names": names})}
        results = [{"player": "focal", "agent": who, "group": "focal", "score": score}]
        measures = [] if background is None else [
            {"player": "focal", "name": "background_per_capita_return", "value": background, "kind": "outcome",
             "direction": "higher"}]
        return {"matches": [match], "results": results, "measures": measures}

    out.accept_records(((label, row) for label, row in zip(labels, records)), parse,
                       lambda match, label: f"meltingpot:{key}:{label}")
    return out.build()


def headline(tables: Tables) -> pd.DataFrame:
    """The evaluation notebook's score (the runner's `Headline.compute`): each population's focal per-capita return
    per episode (the mean over its focal players), averaged per scenario, min-max normalised per scenario over the
    populations evaluated, and averaged over scenarios: HEADLINE_COLUMNS."""
    per_episode = focal(tables.results).groupby(["match_id", "agent"])["score"].mean().reset_index()
    per_episode = per_episode.merge(tables.matches[["match_id", "scenario"]], on="match_id")
    if per_episode.empty:
        return headline_rows(pd.DataFrame())
    per = per_episode.groupby(["scenario", "agent"])["score"].mean().reset_index()
    lo = per.groupby("scenario")["score"].transform("min")
    hi = per.groupby("scenario")["score"].transform("max")
    per["norm"] = ((per["score"] - lo) / (hi - lo)).where(hi > lo)
    value = per.groupby("agent")["norm"].mean().rename("value").reset_index()
    return headline_rows(value.assign(unit="mean over scenarios", metric="normalised focal per-capita return",
                                      headline=True))


RUNNER = Runner(
    NAME, sniff, load,
    {"required": list(REQUIRED), "population (one of)": list(POPULATION), "optional": list(OPTIONAL)},
    separate_episodes=True, comparison_unit=COMPARISON_UNIT,
    headline=Headline(
        "normalised focal per-capita return",
        "Melting Pot averages the normalised return over scenarios; referee compares populations episode by "
        "episode, so a population that wins most scenarios narrowly can outrank one that wins a few by much",
        {"normalised focal per-capita return": "normalised_return"}, compute=headline,
        needs="focal per-capita returns of several populations on a scenario"))
