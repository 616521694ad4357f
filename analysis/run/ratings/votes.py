"""Voting-as-evaluation of a store's tables (`referee rank`, `referee.rank`): one ballot per match or
(scenario, repetition), every chosen method, with the one status rule's matches and status on each row."""

from __future__ import annotations

import pandas as pd

from referee.models.registry import MIN_BALLOTS, VOTING_METHODS
from referee.models.voting import PreferenceProfile, vote
from referee.prepare.comparisons import ballots_from_tables, comparisons_from_tables
from referee.prepare.membership import is_in
from referee.run.ratings.rating_labels import label_status, without_information


def vote_tables(matches: pd.DataFrame, results: pd.DataFrame, methods: list[str] | str = "all",
                min_ballots: float = MIN_BALLOTS, seed: int = 0, ewa_reading: str | None = None,
                comparisons: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (method, agent): method, agent, score, rank, ballots, ranked (False: on fewer than
    `min_ballots` ballots, listed apart), support (maximal lotteries), matches, status. `methods`: names of
    `referee.models.voting.METHODS`, one or a list, or 'all'; `ewa_reading` the EwA reading (its default
    when None). Agents without information (`rating_labels.without_information`: only ties, or only decided
    against one scripted partner) are on no ballot, and are listed with no score, rank or mass. `comparisons`:
    `comparisons_from_tables(matches, results)` where the caller has it already (computed here when None)."""
    comparisons = comparisons_from_tables(matches, results) if comparisons is None else comparisons
    _, uninformed = without_information(comparisons)
    ballots = ballots_from_tables(matches, results)
    profile = PreferenceProfile.from_ballots(ballots[~is_in(ballots["agent"], uninformed)])
    methods = list(VOTING_METHODS) if methods == "all" else [methods] if isinstance(methods, str) else list(methods)
    # each method warns of the agents it sets apart in the same words: a caller's top level prints it once
    tables = [vote(profile, m, min_ballots=min_ballots, seed=seed,
                   **({"reading": ewa_reading} if m == "ewa" and ewa_reading else {})).assign(method=m)
              for m in methods]
    blind = [pd.DataFrame({"method": m, "agent": sorted(uninformed), "rank": pd.NA, "ranked": False})
             for m in methods if uninformed]
    table = pd.concat(tables + blind, ignore_index=True)
    table = table[["method"] + [c for c in table.columns if c != "method"]]
    return label_status(table, comparisons)
