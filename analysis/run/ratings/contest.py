"""The 2024 Concordia contest's phased evaluation (paper section 9.2 and tables 3, 8-12) on a store.

The contest Elo-ranked every submission on the evaluation phase, took the top six to a cross-play
tournament, ranked them there by Elo (table 8) and by voting (IML, Copeland, ranked pairs: tables 9-11),
and recomputed Elo over the evaluation and cross-play phases together (table 12). Every Elo here is the
contest's (`referee.models.ratings.elo`), centred at 1500 over the agents it rates: the finals and combined tables
rate the finalists among themselves (the paper's tables 8 and 12 each average exactly 1500 over the six).
Test runs (`exclude_from_elo_calculation`) never count; each stage says how many it left out.

`run_contest(matches, results, ...)` takes canonical tables and returns a `ContestResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from referee.prepare.comparisons import ballots_from_tables, comparisons_and_agents
from referee.names import FINAL, SELECTION
from referee.prepare.selection import exclusion_counts, select_phases
from referee.run.ratings.ratings import rate
from referee.models.fit import FitResult, collect_notes
from referee.models.voting import PreferenceProfile, vote

TOP = 6  # the paper's final six (section 9.2)
VOTING = ("iml", "copeland", "ranked-pairs")  # tables 9, 10, 11
STAGES = ("selection", "finals", "combined")


@dataclass
class ContestResult(FitResult):
    """The phased contest: `selection` (Elo of every agent on the selection phase, with `finalist`), `finals`
    (Elo of the finalists on the final phase), `votes` (method, agent, score, rank, ballots on the final phase),
    `combined` (Elo of the finalists over the combined phases), `finalists` in selection order, and
    `excluded` (phase -> reason -> test runs left out). Empty frames for the stages the store cannot run
    (the notes say why). `table()` stacks the three Elo tables with a `stage` column."""

    selection: pd.DataFrame = field(default_factory=pd.DataFrame)
    finals: pd.DataFrame = field(default_factory=pd.DataFrame)
    votes: pd.DataFrame = field(default_factory=pd.DataFrame)
    combined: pd.DataFrame = field(default_factory=pd.DataFrame)
    finalists: list[str] = field(default_factory=list)
    excluded: dict = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """stage, agent, rating, rank: the selection, finals and combined Elo tables one after another."""
        parts = [frame[["agent", "rating", "rank"]].assign(stage=stage)
                 for stage, frame in zip(STAGES, (self.selection, self.finals, self.combined)) if len(frame)]
        if not parts:
            return pd.DataFrame(columns=["stage", "agent", "rating", "rank"])
        return pd.concat(parts, ignore_index=True)[["stage", "agent", "rating", "rank"]]


def _elo(compared: list[tuple[pd.DataFrame, list[str]]], among: list[str] | None = None) -> pd.DataFrame:
    """The contest Elo table (agent, rating, rank) of the pooled (comparisons, comparable agents) of one or more
    phases, only between agents in `among` when given (then rated among themselves)."""
    comparisons = pd.concat([c for c, _ in compared], ignore_index=True)
    agents = sorted({a for _, names in compared for a in names})
    if among is not None:
        comparisons = comparisons[comparisons["a"].isin(among) & comparisons["b"].isin(among)]
        agents = [a for a in among if a in set(agents)]
    if comparisons.empty:
        raise ValueError("no comparisons between these agents")
    table = rate(comparisons, "elo", agents=agents).table()
    return table[["agent", "rating", "rank"]].sort_values(["rank", "agent"]).reset_index(drop=True)


def _phase_comparisons(matches: pd.DataFrame, results: pd.DataFrame):
    """phase -> (its comparisons, its comparable agents), each phase built once on first use. Comparison units
    are per phase (`referee.prepare.comparisons.pooled_unit`), so several phases' comparisons pool by
    concatenation."""
    built: dict[str, tuple[pd.DataFrame, list[str]]] = {}

    def compared(phase: str) -> tuple[pd.DataFrame, list[str]]:
        if phase not in built:
            chosen = select_phases(matches, [phase])
            mine = results[results["match_id"].isin(chosen["match_id"])]
            built[phase] = comparisons_and_agents(chosen, mine)
        return built[phase]

    return compared


def run_contest(matches: pd.DataFrame, results: pd.DataFrame, selection_phase: str = SELECTION,
                final_phase: str = FINAL, top: int = TOP, finalists: list[str] | None = None,
                combine: list[str] | None = None, min_ballots: float = 1, seed: int = 0) -> ContestResult:
    """Select the top `top` agents by Elo on `selection_phase`, rank them on `final_phase`, and combine.

    Parameters
    ----------
    matches, results : canonical tables of one runner (phases in `matches.phase`).
    selection_phase, final_phase : phase names (default 'evaluation' and 'cross-play').
    top : how many finalists the selection keeps (default 6); ties at the cut are broken by name, and said.
    finalists : the finalists to use instead of the selection's (e.g. the ones the organisers took).
    combine : the phases of the combined Elo (default the selection and final phases).
    min_ballots : ballots a finalist needs to be ranked by the voting rules (default 1: every finalist).
    seed : seed of the voting rules' tie-breaks.

    Returns
    -------
    ContestResult. Raises ValueError when the store holds no match of the selection phase; a store without
    the final phase gives the selection alone, with a note saying so.
    """
    notes: list[str] = []
    compared = _phase_comparisons(matches, results)
    with collect_notes(notes):
        excluded = {p: exclusion_counts(matches[matches["phase"] == p])
                    for p in sorted(matches["phase"].dropna().unique())}
        selection = _elo([compared(selection_phase)])
        ordered = selection.sort_values(["rating", "agent"], ascending=[False, True])["agent"].tolist()
        picked = ordered[:top]
        if len(ordered) > top:
            cut = selection.set_index("agent")["rating"]
            tied = [a for a in ordered[top:] if cut[a] == cut[picked[-1]]]
            if tied:
                notes.append(f"tie at the cut: {picked[-1]} and {', '.join(tied)} share Elo {cut[picked[-1]]:g}; "
                             "the finalist was chosen by name")
        if finalists:
            unknown = [a for a in finalists if a not in set(ordered)]
            if unknown:
                raise ValueError(f"finalists {unknown} have no rated match in phase {selection_phase!r}")
            if set(finalists) != set(picked):
                notes.append(f"finalists given ({', '.join(finalists)}) differ from the top {top} by selection Elo "
                             f"({', '.join(picked)})")
            picked = list(finalists)
        selection["finalist"] = selection["agent"].isin(picked)
        result = ContestResult(model="contest", selection=selection, finalists=picked, excluded=excluded)
        held = set(matches["phase"].dropna())
        if final_phase not in held:
            notes.append(f"no match is in phase {final_phase!r} (phases held: {sorted(held)}): only the selection "
                         "was computed")
        else:
            played = set(compared(final_phase)[1])
            absent = [a for a in picked if a not in played]
            outside = sorted(played - set(picked))
            if absent:
                notes.append(f"finalists without a rated match in phase {final_phase!r}: {', '.join(absent)}")
            if outside:
                notes.append(f"phase {final_phase!r} also holds agents outside the finalists, left out of the "
                             f"final tables: {', '.join(outside)}")
            result.finals = _elo([compared(final_phase)], among=picked)
            final = select_phases(matches, [final_phase])
            result.votes = _final_votes(final, results[results["match_id"].isin(final["match_id"])], picked,
                                        min_ballots, seed)
            result.combined = _elo([compared(p) for p in combine or [selection_phase, final_phase]], among=picked)
        for phase, counts in excluded.items():
            if counts:
                notes.append(f"phase {phase!r}: left out {sum(counts.values())} test run(s) "
                             f"({', '.join(f'{n} {k}' for k, n in counts.items())})")
    result.notes = notes
    result.diagnostics = {"converged": True, "finalists": len(picked), "selection_agents": len(selection),
                          "phases": sorted(matches["phase"].dropna().unique().tolist()),
                          "excluded": {p: sum(c.values()) for p, c in excluded.items()}}
    return result


def _final_votes(matches, results, finalists, min_ballots, seed) -> pd.DataFrame:
    """IML, Copeland and ranked pairs over the final phase's ballots among the finalists (tables 9-11)."""
    ballots = ballots_from_tables(matches, results)
    ballots = ballots[ballots["agent"].isin(finalists)]
    profile = PreferenceProfile.from_ballots(ballots)
    tables = [vote(profile, method, min_ballots=min_ballots, seed=seed).assign(method=method) for method in VOTING]
    table = pd.concat(tables, ignore_index=True)
    return table[table["ranked"]][["method", "agent", "score", "rank", "ballots"]].reset_index(drop=True)
