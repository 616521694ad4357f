"""Evaluation without aggregation (EwA), as referee defines it.

The contest paper describes EwA as reducing the runs axis without averaging scores over runs. referee's
definition: each run (repetition) is its own election — one ballot per task (scenario or match) of that
run — decided by iterative maximal lotteries; the runs' IML rankings are then ballots, one per run, of a
final IML election. An agent's score is its score in that final election. No score is ever averaged
across runs; only orders are combined.
"""

from __future__ import annotations

import pandas as pd

from models.voting.lotteries import run_iml
from models.voting.profile import PreferenceProfile


def run(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """EwA over `profile.ballots`, whose `repetition` column names each ballot's run (all one run if absent).

    Returns agent, score, rank.
    """
    ballots = profile.ballots
    runs = ballots["repetition"].fillna("0") if "repetition" in ballots.columns else pd.Series("0", index=ballots.index)
    per_run = []
    for run_id, group in ballots.groupby(runs.to_numpy(), sort=True):
        columns = [c for c in ("ballot", "agent", "score", "weight") if c in group.columns]
        outcome = run_iml(PreferenceProfile.from_ballots(group[columns], profile.agents), seed)
        present = set(group["agent"])
        outcome = outcome[outcome["agent"].isin(present)]
        # the run's order (its ranks, ties shared), not its scores: only orders are combined
        per_run.append(pd.DataFrame({"ballot": f"run {run_id}", "agent": outcome["agent"], "score": -outcome["rank"]}))
    final = PreferenceProfile.from_ballots(pd.concat(per_run, ignore_index=True), profile.agents)
    return run_iml(final, seed).assign(ballots=profile.support)  # the task ballots each agent was on
