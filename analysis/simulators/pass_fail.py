"""Per-sample pass/fail outcomes from known agent, task and item effects (issue 52's design): the truth the
outcome models (`referee.models.scores.outcome_glm`) are checked against.

`pass_fail_samples(agents=12, tasks=8, items=40, epochs=2, aliased=2)`: the first `agents - aliased` agents
answer every item of the first `tasks - aliased` tasks; each of the last `aliased` agents is alone on a task of
its own (its effect and its task's cannot be told apart). logit p = mu + a_agent + b_task + c_item with
a ~ Normal(0, sigma_agent), b ~ Normal(0, sigma_task), c ~ Normal(0, sigma_item), drawn from `seed`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def pass_fail_samples(agents: int = 12, tasks: int = 8, items: int = 40, epochs: int = 2, aliased: int = 2,
                      mu: float = 0.3, sigma_agent: float = 1.0, sigma_task: float = 0.8, sigma_item: float = 0.7,
                      grades: int = 2, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """(samples, truth): samples one row per (agent, task, item, epoch) with sample, agent, task, item, epoch,
    y (0 or 1; with `grades` > 2, an ordered-logistic grade k/(grades-1) for k = 0..grades-1, its cutpoints evenly
    spaced from -1 to 1 on the logit scale); truth {'mu', 'agent': Series, 'task': Series, 'item': Series (by 'task/item'), 'aliased': the
    agents alone on their task}."""
    if not 0 <= aliased < min(agents, tasks):
        raise ValueError(f"aliased must be from 0 to fewer than the agents and the tasks, got {aliased}")
    rng = np.random.default_rng(seed)
    agent_names = [f"agent_{k:02d}" for k in range(agents)]
    task_names = [f"task_{k}" for k in range(tasks)]
    a = pd.Series(rng.normal(0, sigma_agent, agents), agent_names)
    b = pd.Series(rng.normal(0, sigma_task, tasks), task_names)
    c = pd.Series(rng.normal(0, sigma_item, tasks * items),
                  [f"{t}/{i}" for t in task_names for i in range(items)])
    shared = task_names[:tasks - aliased]
    plays = {name: shared for name in agent_names[:agents - aliased]}
    plays.update({name: [task_names[tasks - aliased + k]] for k, name in enumerate(agent_names[agents - aliased:])})
    rows = [(name, t, i, e) for name, ts in plays.items() for t in ts for i in range(items) for e in range(epochs)]
    frame = pd.DataFrame(rows, columns=["agent", "task", "item", "epoch"])
    eta = mu + a[frame["agent"]].to_numpy() + b[frame["task"]].to_numpy() \
        + c[(frame["task"] + "/" + frame["item"].astype(str))].to_numpy()
    if grades > 2:
        cutpoints = np.linspace(-1, 1, grades - 1)
        latent = eta + rng.logistic(0, 1, len(frame))
        frame["y"] = (latent[:, None] > cutpoints[None, :]).sum(1) / (grades - 1)
    else:
        frame["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    frame.insert(0, "sample", [f"{r.agent}:{r.task}/{r.item}:{r.epoch}" for r in frame.itertuples()])
    return frame, {"mu": mu, "agent": a, "task": b, "item": c, "aliased": agent_names[agents - aliased:]}
