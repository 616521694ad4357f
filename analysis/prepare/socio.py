"""Socio-cognitive metrics of communicate-predict-act games (COMPACT paper, section 3.1), from canonical tables.

Every metric is computed per round, then averaged per (match, player[, other]); a dyadic metric has the
other player in `other`.

- `theory_of_mind` (player, other): how accurately the player predicted the other's action in each round.
  Per game (`ACCURACY`): 'exact' (Scheduler's option; Survivor's target and ammunition, i.e. the action
  text) scores 1 for a match and 0 otherwise; 'distance' (Coalition's and the Commons' amounts, HUPI's bid)
  scores 1 - |predicted - actual| / (the game's range), so a near miss earns partial credit.
- `predictability` (player, other): the same dyad read the other way: how accurately the other predicted
  the player.
- `assertiveness` (player): the action's value as a share of the game's range (`ACTION_RANGE`): Survivor,
  ammunition used of the most available; Coalition and the Commons, the amount demanded or hauled of the
  most allowed; Scheduler, the proposal's value to the proposer on its 0-4 preference scale; HUPI, the bid
  of the highest allowed bid. (A trace does not record the available ammunition or resource, so the ranges
  are the games' stated maxima; `ACTION_RANGE` is where to change them.)
- `influence` (player, other), `planning`, `learning` (player): LLM-judge ratings 0-3 (`judge` measures,
  averaged over judges and rounds); `amenability` (player, other) is influence read the other way: how much
  the other influenced the player.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# how a prediction is scored, per game
ACCURACY = {"scheduler": "exact", "survivor": "exact", "coalition": "distance", "tragedy_of_the_commons": "distance",
            "hupi": "distance"}
# (lowest, highest) action value per game
ACTION_RANGE = {"survivor": (0.0, 3.0), "scheduler": (0.0, 4.0), "hupi": (1.0, 10.0), "coalition": (0.0, 10.0),
                "tragedy_of_the_commons": (0.0, 10.0)}
JUDGED = ("influence", "planning", "learning")
METRICS = ("theory_of_mind", "predictability", "assertiveness", "influence", "amenability", "planning", "learning")
COLUMNS = ["match_id", "player", "other", "agent", "game", "metric", "value"]


def prediction_accuracy(events: pd.DataFrame, matches: pd.DataFrame) -> pd.DataFrame:
    """Each prediction scored against the action it predicted.

    events : canonical events (stage 'predict' rows and type 'action' rows are used); matches : match_id, game.
    Returns match_id, round, player (who predicted), other (whose action), game, accuracy in [0, 1]; a
    prediction whose action is missing (or whose game has no rule in `ACCURACY`) is left out.
    """
    predictions = events.loc[events["stage"] == "predict", ["match_id", "round", "actor", "target", "text", "value"]]
    actions = events.loc[events["type"] == "action", ["match_id", "round", "actor", "text", "value"]].rename(
        columns={"actor": "target", "text": "actual_text", "value": "actual"})
    joined = predictions.merge(actions, on=["match_id", "round", "target"]).merge(
        matches[["match_id", "game"]], on="match_id")
    rule = joined["game"].map(ACCURACY)
    low = joined["game"].map(lambda g: ACTION_RANGE.get(g, (np.nan, np.nan))[0])
    high = joined["game"].map(lambda g: ACTION_RANGE.get(g, (np.nan, np.nan))[1])
    exact = (joined["text"] == joined["actual_text"]).astype(float)
    distance = 1.0 - ((joined["value"] - joined["actual"]).abs() / (high - low)).clip(upper=1.0)
    by_rule = {"exact": exact, "distance": distance}  # how each game's prediction is scored (ACCURACY)
    joined["accuracy"] = np.select([rule.eq(k) for k in by_rule], list(by_rule.values()), np.nan)
    out = joined.rename(columns={"actor": "player", "target": "other"}).dropna(subset=["accuracy"])
    return out[["match_id", "round", "player", "other", "game", "accuracy"]].reset_index(drop=True)


def assertiveness(events: pd.DataFrame, matches: pd.DataFrame) -> pd.DataFrame:
    """match_id, round, player, game, value: each action's value as a share of its game's `ACTION_RANGE`."""
    acts = events.loc[events["type"] == "action", ["match_id", "round", "actor", "value"]].merge(
        matches[["match_id", "game"]], on="match_id")
    acts = acts[acts["game"].isin(ACTION_RANGE) & acts["value"].notna()]
    low = acts["game"].map(lambda g: ACTION_RANGE[g][0])
    high = acts["game"].map(lambda g: ACTION_RANGE[g][1])
    acts = acts.assign(value=((acts["value"] - low) / (high - low)).clip(0.0, 1.0))
    return acts.rename(columns={"actor": "player"})[["match_id", "round", "player", "game", "value"]]


def socio_metrics(matches: pd.DataFrame, results: pd.DataFrame, events: pd.DataFrame,
                  measures: pd.DataFrame) -> pd.DataFrame:
    """Every metric of the module docstring, averaged per match and player (and other player, for dyads).

    Parameters
    ----------
    matches, results, events, measures : canonical tables (`referee.io.schema`), e.g. of the compact runner.

    Returns
    -------
    A long table: match_id, player, other (None for a player-level metric), agent, game, metric, value; one
    row per (match, player, other, metric). Theory of mind and predictability, assertiveness and
    amenability are in [0, 1]; judge metrics on their 0-3 scale.
    """
    parts = []
    acc = prediction_accuracy(events, matches)
    tom = acc.groupby(["match_id", "player", "other"], as_index=False)["accuracy"].mean()
    parts.append(tom.assign(metric="theory_of_mind", value=tom["accuracy"]))
    parts.append(tom.assign(metric="predictability", value=tom["accuracy"]).rename(
        columns={"player": "other", "other": "player"}))
    act = assertiveness(events, matches).groupby(["match_id", "player"], as_index=False)["value"].mean()
    parts.append(act.assign(metric="assertiveness", other=None))
    judged = measures[(measures["kind"] == "judge") & measures["name"].isin(JUDGED)]
    dyadic = judged[judged["other"].notna()].groupby(["match_id", "player", "other", "name"], as_index=False)["value"].mean()
    single = judged[judged["other"].isna()].groupby(["match_id", "player", "name"], as_index=False)["value"].mean()
    parts.append(dyadic.rename(columns={"name": "metric"}))
    parts.append(single.rename(columns={"name": "metric"}).assign(other=None))
    influence = dyadic[dyadic["name"] == "influence"]
    parts.append(influence.rename(columns={"player": "other", "other": "player"}).assign(metric="amenability"))
    long = pd.concat([p[["match_id", "player", "other", "metric", "value"]] for p in parts if len(p)],
                     ignore_index=True)
    if long.empty:
        return pd.DataFrame(columns=COLUMNS)
    long = long.merge(results[["match_id", "player", "agent"]], on=["match_id", "player"], how="left").merge(
        matches[["match_id", "game"]], on="match_id", how="left")
    return long[COLUMNS].sort_values(["match_id", "player", "metric", "other"], na_position="first").reset_index(drop=True)


def player_metrics(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (match_id, player): agent, game, and one column per metric (dyads averaged over the
    other players), the vector m_{i,e} of the paper's equation 5. Metrics a match lacks are NaN."""
    wide = metrics.pivot_table(index=["match_id", "player", "agent", "game"], columns="metric", values="value",
                               aggfunc="mean")
    return wide.reindex(columns=[m for m in METRICS if m in wide.columns]).reset_index().rename_axis(columns=None)
