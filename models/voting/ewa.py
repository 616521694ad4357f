"""Evaluation without aggregation (EwA): ranking without averaging scores over runs.

The contest paper under-specifies EwA. It says the method "does not leverage statistics (e.g., no
mean/average) to reduce the multiple runs per task, instead introduces a multi-player ranked-ordered
tournament (i.e., team chess) to reduce the task-runs axis" (section 9.4.1), and elsewhere that it treats
"each match-run as an independent IML election" (appendix). Three readings, each a `reading` of `run`:

- ``"runs"`` (referee's default): each run (repetition) is its own election, one ballot per task (scenario
  or match) of that run, decided by iterative maximal lotteries (IML); the runs' IML orders are then the
  ballots, one per run, of a final IML election. An agent's score is its score in that final election.
- ``"flat"``: one IML election whose ballots are every (task, run) result as it is, no run averaged or
  decided first (the "no mean over runs" reading; it differs from referee's IML table only in what the
  standard tables pool).
- ``"run-points"``: a ranked-order tournament over runs (the "team chess" reading): each run's IML order
  awards every agent one point per agent it finishes above (a tie: half a point each); an agent's score is
  its points summed over runs.

No reading ever averages a score across runs; only orders are combined. `tests/test_voting.py` checks each
on an example worked by hand.
"""

from __future__ import annotations

import pandas as pd

from referee.models.voting.lotteries import run_iml
from referee.models.voting.profile import PreferenceProfile

READINGS = ("runs", "flat", "run-points")


def _runs(ballots: pd.DataFrame) -> pd.Series:
    return ballots["repetition"].fillna("0") if "repetition" in ballots.columns else pd.Series("0", index=ballots.index)


def run_orders(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """Each run's IML election over its task ballots: ballot ('run R'), agent, score (minus the agent's rank in
    that run: higher is better, ties shared), for the agents on that run's ballots."""
    ballots = profile.ballots
    per_run = []
    for run_id, group in ballots.groupby(_runs(ballots).to_numpy(), sort=True):
        columns = [c for c in ("ballot", "agent", "score", "weight") if c in group.columns]
        outcome = run_iml(PreferenceProfile.from_ballots(group[columns], profile.agents), seed)
        outcome = outcome[outcome["agent"].isin(set(group["agent"]))]
        # the run's order (its ranks, ties shared), not its scores: only orders are combined
        per_run.append(pd.DataFrame({"ballot": f"run {run_id}", "agent": outcome["agent"], "score": -outcome["rank"]}))
    return pd.concat(per_run, ignore_index=True)


def run(profile: PreferenceProfile, seed: int = 0, reading: str = "runs") -> pd.DataFrame:
    """EwA over `profile.ballots`, whose `repetition` column names each ballot's run (all one run if absent),
    by one of `READINGS` (module docstring). Returns agent, score, rank, ballots (the task ballots each agent
    was on)."""
    if reading not in READINGS:
        raise ValueError(f"unknown EwA reading {reading!r}; readings: {list(READINGS)}")
    if reading == "flat":
        return run_iml(profile, seed).assign(ballots=profile.support)
    orders = run_orders(profile, seed)
    if reading == "runs":
        final = PreferenceProfile.from_ballots(orders, profile.agents)
        return run_iml(final, seed).assign(ballots=profile.support)
    # run-points: a point per agent finished above, half a point per agent tied with, which is the number of
    # agents in the run less the agent's average rank (1 = best, ties sharing the mean of their places)
    by_run = orders.groupby("ballot")["score"]
    orders["points"] = by_run.transform("size") - by_run.rank(method="average", ascending=False)
    totals = orders.groupby("agent")["points"].sum().reindex(profile.agents, fill_value=0.0)
    return profile.outcome(totals.to_numpy(float), seed).assign(ballots=profile.support)
