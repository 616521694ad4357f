"""Per-sample outcomes: the tidy table the pass/fail and graded models read (`referee.models.scores.outcome_glm`).

`sample_outcomes(matches, results)` gives one row per scored result of a match: the sample (its match id), the
runner, the agent, the task (the match's game: Inspect's task, clem's game), the item (the match's scenario: Inspect's
task/sample id, clem's game/experiment; the game where the runner names none), the epoch (the repetition) and y
(the score, or a named measure's value). `outcome_kind` says whether they are pass/fail (every y 0 or 1),
graded (at most MAX_GRADES levels, e.g. Inspect's C/P/I as 1/0.5/0) or neither.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.registry import OUTCOME_ROLES

MAX_GRADES = 7  # a score taking more distinct values than this is continuous, not a grade
COLUMNS = ["sample", "runner", "agent", "task", "item", "epoch", "y"]


def outcome_kind(y: pd.Series) -> str | None:
    """'pass-fail' when every value is 0 or 1, 'graded' for 2 to MAX_GRADES distinct values, else None (also for
    no value at all)."""
    values = set(y.dropna().unique())
    if not values:
        return None
    if values <= {0, 1}:
        return "pass-fail"
    return "graded" if len(values) <= MAX_GRADES else None


TASK_COLUMN, ITEM_COLUMN = "game", "scenario"  # the defaults: Inspect's task is the game, its sample the scenario
ROLE_COLUMNS = OUTCOME_ROLES  # the match columns --task and --item take


def sample_outcomes(matches: pd.DataFrame, results: pd.DataFrame, measures: pd.DataFrame | None = None,
                    runner: str | None = None, measure: str | None = None,
                    phases: list[str] | None = None, task: str = TASK_COLUMN, item: str = ITEM_COLUMN) -> pd.DataFrame:
    """One row per scored sample (COLUMNS; y as float, samples without a score left out and counted in
    `attrs['unscored']`; `attrs['shared']` = (matches seating several agents, matches): a head-to-head store) of
    the canonical `matches` and `results`, of `runner` and in `phases` when given.
    `measure`: read the measure of that name from `measures` (the player's, else the match's, e.g. clem's
    Success) instead of the results' score; a result without it is left out. `task` and `item`: the match
    columns (ROLE_COLUMNS) that are the task and the item (default the game and the scenario; a missing item is
    the task, a missing task '(one task)'), said in `attrs['roles']`. Raises ValueError when nothing is left or
    `task` and `item` name the same column."""
    from referee.prepare.selection import select_phases

    for role, column in (("task", task), ("item", item)):
        if column not in ROLE_COLUMNS:
            raise ValueError(f"--{role} must name a match column, one of {', '.join(ROLE_COLUMNS)}; got {column!r}")
    if task == item:
        raise ValueError(f"--task and --item both name {task!r}: the task and the item must be different columns")
    matches = select_phases(matches, phases)
    matches = matches.assign(_task=matches[task], _item=matches[item])[
        ["match_id", "runner", "_task", "_item", "repetition"]]
    if runner is not None:
        matches = matches[matches["runner"] == runner]
    results = results[["match_id", "player", "agent", "score"]]
    if measure is not None:
        named = measures.loc[measures["name"] == measure, ["match_id", "player", "value"]]
        if named.empty:
            raise ValueError(f"no measure named {measure!r} in the store; its measures: "
                             f"{sorted(measures['name'].dropna().unique())[:20]}")
        own = named.dropna(subset=["player"]).rename(columns={"value": "own"})
        shared = named[named["player"].isna()].drop(columns="player").rename(columns={"value": "shared"})
        results = results.drop(columns="score").merge(own, on=["match_id", "player"], how="left")
        results = results.merge(shared, on="match_id", how="left")
        results = results.assign(score=results["own"].fillna(results["shared"])).dropna(subset=["score"])
    frame = results.merge(matches, on="match_id")
    unscored = int(frame["score"].isna().sum())
    frame = frame.dropna(subset=["score"])
    frame = frame[np.isfinite(frame["score"].astype(float))]
    if frame.empty:
        raise ValueError("the store holds no scored sample" + (f" of runner {runner!r}" if runner else "")
                         + (f" with measure {measure!r}" if measure else ""))
    out = pd.DataFrame({"sample": frame["match_id"].astype(str), "runner": frame["runner"],
                        "agent": frame["agent"].astype(str), "task": frame["_task"].fillna("(one task)").astype(str),
                        "item": frame["_item"].fillna(frame["_task"]).fillna("(one item)").astype(str),
                        "epoch": frame["repetition"], "y": frame["score"].astype(float)},
                       columns=COLUMNS).reset_index(drop=True)
    out.attrs["unscored"] = unscored
    out.attrs["roles"] = {"task": task, "item": item}
    agents_per = out.groupby("sample")["agent"].nunique()
    out.attrs["shared"] = (int((agents_per > 1).sum()), len(agents_per))  # matches seating several agents, of all
    return out
