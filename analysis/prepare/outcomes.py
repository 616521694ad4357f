"""Per-sample outcomes: the tidy table the pass/fail and graded models read (`referee.models.scores.outcome_glm`).

`sample_outcomes(store)` gives one row per scored result of a match: the sample (its match id), the runner, the
agent, the task (the match's game: Inspect's task, clem's game), the item (the match's scenario: Inspect's
task/sample id, clem's game/experiment; the game where the runner names none), the epoch (the repetition) and y
(the score, or a named measure's value). `outcome_kind` says whether they are pass/fail (every y 0 or 1),
graded (at most MAX_GRADES levels, e.g. Inspect's C/P/I as 1/0.5/0) or neither.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MAX_GRADES = 7  # a score taking more distinct values than this is continuous, not a grade
COLUMNS = ["sample", "runner", "agent", "task", "item", "epoch", "y"]


def outcome_kind(y: pd.Series) -> str | None:
    """'pass-fail' when every value is 0 or 1, 'graded' for 2 to MAX_GRADES distinct values, else None."""
    values = set(y.dropna().unique())
    if values <= {0, 1}:
        return "pass-fail"
    return "graded" if len(values) <= MAX_GRADES else None


def sample_outcomes(store, runner: str | None = None, measure: str | None = None,
                    phases: list[str] | None = None) -> pd.DataFrame:
    """One row per scored sample (COLUMNS; y as float, samples without a score left out and counted in
    `attrs['unscored']`), of `runner` and in `phases` when given. `measure`: read the measure of that name
    (the player's, else the match's, e.g. clem's Success) instead of the results' score. Raises ValueError when
    nothing is left."""
    matches = store.table("matches")[["match_id", "runner", "game", "scenario", "phase", "repetition"]]
    if runner is not None:
        matches = matches[matches["runner"] == runner]
    if phases:
        matches = matches[matches["phase"].isin(phases)]
    results = store.table("results")[["match_id", "player", "agent", "score"]]
    if measure is not None:
        measures = store.table("measures")
        measures = measures.loc[measures["name"] == measure, ["match_id", "player", "value"]]
        if measures.empty:
            names = sorted(store.table("measures")["name"].dropna().unique())
            raise ValueError(f"no measure named {measure!r} in the store; its measures: {names[:20]}")
        own = results.merge(measures.dropna(subset=["player"]), on=["match_id", "player"])
        shared = results.merge(measures[measures["player"].isna()].drop(columns="player"), on="match_id")
        results = pd.concat([own, shared[~shared.set_index(["match_id", "player"]).index.isin(
            own.set_index(["match_id", "player"]).index)]]).drop(columns="score").rename(columns={"value": "score"})
    frame = results.merge(matches, on="match_id")
    unscored = int(frame["score"].isna().sum())
    frame = frame.dropna(subset=["score"])
    frame = frame[np.isfinite(frame["score"].astype(float))]
    if frame.empty:
        raise ValueError("the store holds no scored sample" + (f" of runner {runner!r}" if runner else "")
                         + (f" with measure {measure!r}" if measure else ""))
    out = pd.DataFrame({"sample": frame["match_id"].astype(str), "runner": frame["runner"],
                        "agent": frame["agent"].astype(str), "task": frame["game"].fillna("(one task)").astype(str),
                        "item": frame["scenario"].fillna(frame["game"]).fillna("(one item)").astype(str),
                        "epoch": frame["repetition"], "y": frame["score"].astype(float)}).reset_index(drop=True)
    out.attrs["unscored"] = unscored
    return out


def runner_stderr(store) -> pd.DataFrame | None:
    """The runner's own standard error of each (agent, task) where its logs state one: Inspect's header
    `stderr` (`referee.prepare.inspect_table`), taken where one log states it for the pair; None when the store
    holds no such runner. Columns agent, task, runner_stderr."""
    from referee.prepare.inspect_table import inspect_metrics

    matches = store.table("matches")
    if not (matches["runner"] == "inspect").any():
        return None
    metrics = inspect_metrics(matches, store.table("results"))
    stated = metrics[(metrics["metric"] == "stderr") & metrics["stated"].notna()]
    one = stated.groupby(["agent", "task"])["stated"].agg(["size", "first"]).reset_index()
    one = one[one["size"] == 1]
    return pd.DataFrame({"agent": one["agent"].astype(str), "task": one["task"].astype(str),
                         "runner_stderr": one["first"].astype(float)})
