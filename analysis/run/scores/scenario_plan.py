"""Scenario plans for the Measurement Layout: the store's catalogue as candidate demand profiles for
`referee.models.scores.layout_design`.

A candidate is every catalogue scenario (played ones too: in the layout a replay is more data) and, on request,
hypothetical profiles. Its demands are those the layout was fitted with (`referee.run.scores.predictive.demand_matrix`,
chosen on the played scores); a demand the fit merged ('a + b', always present together) is split back into its
members (`split_merged`), and a demand no played scenario exercises (a substrate not yet played) enters with
prior draws of its capabilities.
"""

from __future__ import annotations

import pandas as pd

from referee.run.scores.predictive import demand_matrix
from referee.models.scores.layout_design import (LayoutDraws, layout_profiles, next_layout_scenarios, split_merged,
                                         with_prior_demands)


def layout_candidates(scores: pd.DataFrame, scenarios: pd.DataFrame, tags: pd.DataFrame, draws: LayoutDraws,
                      profiles: bool = False, seed: int = 0) -> tuple[pd.DataFrame, LayoutDraws, list[str]]:
    """The candidates' demand profiles over the fit's demands.

    scores, scenarios, tags : `referee.run.scores.score_models.model_scores`; draws : `layout_draws` of a layout fitted
    to these scores. Returns (0/1 table, index scenario or 'profile: ...', columns = the returned draws' demands;
    the draws with merged demands split and unexercised demands added from the prior; notes). Raises ValueError when the posterior names
    a demand the store's data no longer defines (refit it).
    """
    matrix = demand_matrix(scenarios, scenarios, tags, select_on=scores)
    members = [m for name in draws.demands for m in name.split(" + ")]
    missing = [m for m in members if m not in matrix.columns]
    if missing:
        raise ValueError(f"the layout posterior's demands {missing} are not among the store's demands "
                         f"{list(matrix.columns)}: it was fitted to other data; refit it on this store")
    played = matrix.index.isin(scores["scenario"])
    new = [d for d in matrix.columns if d not in members and not matrix.loc[played, d].any()]
    dropped = [d for d in matrix.columns if d not in members and d not in new]
    merged = [name for name in draws.demands if " + " in name]
    draws = with_prior_demands(split_merged(draws, seed=seed), new, seed=seed)
    table = matrix[draws.demands].astype(float)
    notes = []
    if new:
        notes.append(f"Demands no played scenario exercises, planned with their capabilities' prior: {new}.")
    if merged:
        notes.append(f"Demands the fit merged (always seen together) are planned for apart, their capabilities' "
                     f"known product split by flat Dirichlet shares: {merged}.")
    if dropped:
        notes.append(f"Demands the fit left out (aliased with others) are not planned for: {dropped}.")
    if profiles:
        table = pd.concat([table, layout_profiles(draws.demands)])
    return table, draws, notes


def layout_scenario_plan(scores: pd.DataFrame, scenarios: pd.DataFrame, tags: pd.DataFrame, draws: LayoutDraws,
                         budget: int, repeats: int = 1, profiles: bool = False, target: str | None = None,
                         seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """The next `budget` scenarios for the layout (`referee.models.scores.layout_design.next_layout_scenarios`; target:
    a demand to serve in every pick), each with `scores_so_far` (the store's (match, agent) scores of it so far;
    empty for a hypothetical profile). Returns (table, notes)."""
    candidates, draws, notes = layout_candidates(scores, scenarios, tags, draws, profiles=profiles, seed=seed)
    table = next_layout_scenarios(draws, candidates, budget, repeats=repeats, target=target)
    counts = scores.dropna(subset=["score_norm"]).groupby("scenario").size()
    so_far = table["scenario"].map(lambda s: "" if s.startswith("profile: ") else int(counts.get(s, 0)))
    table.insert(2, "scores_so_far", so_far)
    notes.append(f"{len(table)} pick(s) from {len(candidates)} candidate(s), each played by all {len(draws.agents)} "
                 f"agents x {repeats} episode(s); sd is the capability's posterior sd (0-1 scale), root-mean-square "
                 "over agents, after the pick by expected Fisher information (a normal approximation on the "
                 "log-capability scale, models/scores/layout_design.py).")
    return table, notes
