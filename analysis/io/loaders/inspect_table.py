"""Inspect's own headline numbers, computed Inspect's way from the samples referee stored, beside what each
log's header states.

Inspect (`inspect_ai.scorer`) scores a log per scorer: each sample's score value becomes a number by
`value_to_float` (C 1, P 0.5, I 0, N 0; the loader stores it so), the epochs of a sample are reduced to one
value by the scorer's reducer (`mean` unless the header names another), and the metrics run over the reduced
samples: `accuracy` and `mean` are the mean; `stderr` is the sample standard deviation (ddof 1) over the square
root of the number of samples, 0 for a single sample, or, where the header's `stderr` names a metadata key to
cluster on, the clustered standard error with Inspect's finite-cluster correction: sqrt(C / (C - 1) * sum over
clusters of (sum of (value - mean))^2) / n. A sample that ended in an error has no score and is not counted (as
Inspect leaves it unscored).

`inspect_metrics` gives one row per (log, model, metric): task, computed value, the header's `stated` value and
`samples`; `stated` is what Inspect printed, so the two agree to Inspect's printed precision where the log holds
every sample its header scored.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.io.loaders.runner import Tables, headline_rows, only_unit
from referee.io.match_attrs import attrs_columns

REDUCERS = {"mean": np.mean, "median": np.median, "max": np.max, "min": np.min}  # Inspect's reducer names
MEANS = ("accuracy", "mean")  # metrics that are the mean of the reduced values
COLUMNS = ["log", "task", "agent", "metric", "value", "stated", "samples", "note"]


def clustered_stderr(values: np.ndarray, clusters: np.ndarray) -> float:
    """Inspect's clustered standard error of the mean of `values` (n,) grouped by `clusters` (n,): the
    cluster-robust variance of the mean with the finite-cluster correction C / (C - 1); NaN for one cluster."""
    mean = values.mean()
    sums = pd.Series(values - mean).groupby(clusters).sum().to_numpy()
    c = len(sums)
    return float(np.sqrt((sums ** 2).sum() * c / (c - 1)) / len(values)) if c > 1 else float("nan")


def _metric(name: str, values: np.ndarray, clusters: np.ndarray | None) -> float:
    if name in MEANS:
        return float(values.mean())
    if name == "stderr":
        if clusters is not None:
            return clustered_stderr(values, clusters)
        return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0
    if name == "std":
        return float(values.std(ddof=1)) if len(values) > 1 else 0.0
    return float("nan")


def _reduced(scored: pd.DataFrame, log: str, agent: str, reducer: str) -> tuple[np.ndarray, np.ndarray | None, str]:
    """(reduced values (one per sample), clusters or None, note) of one (log, agent): each sample's epochs reduced
    by the log's reducer; the note says why nothing can be computed ('' when values are)."""
    samples = scored[(scored["log"] == log) & (scored["agent"] == agent) & scored["score"].notna()]
    if reducer not in REDUCERS:
        return np.array([]), None, f"epochs reduced by {reducer!r}, which referee does not recompute"
    if samples.empty:
        return np.array([]), None, "the log holds no scored sample"
    reduced = samples.groupby("sample_id").agg(score=("score", REDUCERS[reducer]), cluster=("cluster", "first"))
    clusters = reduced["cluster"].astype(str).to_numpy() if reduced["cluster"].notna().any() else None
    return reduced["score"].to_numpy(float), clusters, ""


POOLED = "all its logs"  # the unit of a model's numbers pooled over its several logs


def inspect_metrics(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Inspect's metrics of each (log, model), computed from the stored samples, beside the header's, and of each
    model with several logs pooled over them.

    Parameters
    ----------
    matches, results : canonical tables of Inspect's matches only (`Tables.of`; they carry `log`, `sample_id`, `epoch`, `stated`,
        `reducer`, `cluster` in their attrs, `referee.io.loaders.inspect_log`).

    Returns
    -------
    COLUMNS: log, task, agent, metric (each metric the header states: accuracy, mean, stderr, std), value
    (computed; NaN where Inspect's way cannot be followed, `note` says why), stated (the header's), samples
    (reduced samples counted), note. A model scored in several logs of one task (reruns, an eval-set's retries)
    has one more row per mean metric and stderr, log POOLED, for that task: the metric over the reduced samples of
    all those logs together (accuracy and mean: their mean; stderr: Inspect's unclustered standard error of that
    mean), `stated` empty (Inspect prints each log apart) and a note saying what was pooled. Samples of different
    tasks are never pooled: Inspect prints no number across tasks, and neither does referee.
    """
    mine = matches
    if mine.empty:
        return pd.DataFrame(columns=COLUMNS)
    info = attrs_columns(mine, ("log", "sample_id", "epoch", "stated", "reducer", "cluster")).assign(
        match_id=mine["match_id"].to_numpy(), task=mine["game"].to_numpy())
    scored = results[["match_id", "agent", "score"]].merge(info, on="match_id")
    rows, pooled = [], {}
    for (log, agent), block in info.merge(results[["match_id", "agent"]], on="match_id").groupby(["log", "agent"]):
        stated = next((s for s in block["stated"] if isinstance(s, dict)), {})
        reducer = next((r for r in block["reducer"] if isinstance(r, str)), None) or "mean"
        task = block["task"].iloc[0]
        values, clusters, note = _reduced(scored, log, agent, reducer)
        pooled.setdefault(agent, []).append((log, task, values, note, stated))
        for name, value in stated.items():
            computed = _metric(name, values, clusters) if not note else float("nan")
            rows.append({"log": log, "task": task, "agent": agent, "metric": name, "value": computed,
                         "stated": value, "samples": len(values),
                         "note": note or ("" if np.isfinite(computed) else f"Inspect's {name!r} is not recomputed")})
    for agent, logs in pooled.items():  # pooled within a task only: Inspect prints no number across tasks
        by_task: dict = {}
        for entry in logs:
            by_task.setdefault(entry[1], []).append(entry)
        for same in by_task.values():
            if len(same) > 1:
                rows += _pooled_rows(agent, same)
    return pd.DataFrame(rows, columns=COLUMNS)


def _pooled_rows(agent: str, logs: list) -> list[dict]:
    """The POOLED rows of a model scored in several logs (`inspect_metrics`): its headline mean metric and stderr
    over the reduced samples of every log that has them; NaN with the reason where none has."""
    metric = next((m for _, _, _, _, stated in logs for m in stated if m in MEANS), "accuracy")
    usable = [(log, task, values) for log, task, values, note, _ in logs if not note and len(values)]
    tasks = sorted({task for _, task, *_ in logs})
    values = np.concatenate([v for *_, v in usable]) if usable else np.array([])
    left = [f"{log}: {note}" for log, _, _, note, _ in logs if note]
    note = (f"pooled over {len(usable)} of {len(logs)} logs ({', '.join(tasks)}): the mean over all their "
            "samples; Inspect prints each log apart" + (f"; left out: {'; '.join(left)}" if left else "")
            if usable else f"none of its {len(logs)} logs holds a scored sample referee can reduce: "
            + "; ".join(left))
    task = ", ".join(tasks)
    return [{"log": POOLED, "task": task, "agent": agent, "metric": name,
             "value": _metric(name, values, None) if usable else float("nan"), "stated": None,
             "samples": len(values), "note": note} for name in (metric, "stderr")]


def inspect_headline(tables: Tables) -> pd.DataFrame:
    """Each log's headline metric with Inspect's standard error beside the header's own (the inspect runner's
    `Headline.compute`; a model of several logs pooled over them, unit POOLED): HEADLINE_COLUMNS."""
    found = inspect_metrics(tables.matches, tables.results)
    if found.empty:
        return headline_rows(pd.DataFrame())
    errors = found[found["metric"] == "stderr"].set_index(["log", "agent", "task"])[["value", "stated"]]
    head = found[found["metric"].isin(MEANS)].join(  # a pooled row is one task's: (log, agent, task) is unique
        errors.rename(columns={"value": "stderr", "stated": "stated_stderr"}), on=["log", "agent", "task"])
    unit = head["task"] + " (" + head["log"] + ")"  # the task named in every unit, pooled or one log
    return headline_rows(head.assign(unit=unit, headline=True))


def pooled_unit(agent: str, units: list[str]) -> str | None:
    """An Inspect model's own number beside its rating: its one log, else its logs of one task pooled; none for a
    model scored on several tasks (Inspect prints no number across tasks: per task, see `runner-numbers`)."""
    pooled = [u for u in units if u.endswith(f"({POOLED})")]
    tasks = {u.rsplit(" (", 1)[0] for u in units}
    if len(tasks) > 1:
        return None
    return pooled[0] if pooled else only_unit(agent, units)
