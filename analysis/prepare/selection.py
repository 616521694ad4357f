"""Which matches an analysis reads: contest phases, and the test runs that no rating counts.

The 2024 Concordia contest ran in phases (development, evaluation, the finalists' cross-play; paper
section 9.2); a match's phase is `matches.phase`. Concordia marks test runs in each record:
`exclude_from_elo_calculation` (and `disable_language_model`, which the launcher turns into the former); its
Elo script skips those records. Kaggle replays that name no agents are stored by seat and wait for names.
referee keeps such matches in the store and leaves them out of every rating and ranking
(`referee.prepare.comparisons` drops them), counting them with `exclusion_counts`. Each flag is declared by
the loader of the runner that writes it (its entry's `excluded_when`) and read from that runner's matches only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from referee.prepare.membership import is_in

def excluded_when() -> dict[str, dict[str, str]]:
    """runner -> {flag: what a match with it set true is}: each runner entry's `excluded_when` (Concordia's test-run
    flags; Kaggle's replays that name no agents). A flag is read only from its own runner's matches: the same
    key in another runner's attrs (a GTBench note, a table's column) is that runner's data, not a flag."""
    from referee.io.loaders import RUNNERS

    return {name: dict(runner.excluded_when) for name, runner in RUNNERS.items() if runner.excluded_when}


def exclusions(matches: pd.DataFrame) -> pd.Series:
    """Why each match is left out of ratings, or None: a Series aligned with `matches` holding the first flag
    of its runner's `excluded_when` that its `attrs` JSON sets to true (read as
    text, one vectorised pass per flag: every Concordia record names both flags, mostly as false, so parsing
    each record's JSON would loop over every match)."""
    reasons = pd.Series(None, index=matches.index, dtype=object)
    if "attrs" not in matches.columns or "runner" not in matches.columns or matches.empty:
        return reasons
    for runner, flags in excluded_when().items():
        own = (matches["runner"] == runner).to_numpy(bool)
        if not own.any():
            continue
        text = pa.array(matches["attrs"][own], from_pandas=True).cast(pa.string())
        for name in reversed(list(flags)):  # the first flag wins (Arrow's regex kernel: no Python per row)
            found = np.asarray(pc.match_substring_regex(text, rf'"{name}"\s*:\s*true').fill_null(False)
                               .to_numpy(zero_copy_only=False), bool)
            hit = np.zeros(len(matches), bool)
            hit[np.flatnonzero(own)[found]] = True
            reasons = reasons.mask(hit, name)
    return reasons.astype(object).where(reasons.notna(), None)


def without_excluded(matches: pd.DataFrame) -> pd.DataFrame:
    """`matches` less those ratings leave out (`exclusions`): the same frame, not a copy, where none is left out."""
    keep = exclusions(matches).isna()
    return matches if keep.all() else matches[keep]


def exclusion_counts(matches: pd.DataFrame) -> dict[str, int]:
    """How many of `matches` each flag (`excluded_when`) leaves out of ratings (only flags that occur)."""
    return {str(k): int(v) for k, v in exclusions(matches).dropna().value_counts().items()}


def exclusion_note(matches: pd.DataFrame) -> str | None:
    """One sentence counting the matches ratings leave out of `matches` and why, or None when there are none."""
    counts = exclusion_counts(matches)
    if not counts:
        return None
    said = {flag: what for flags in excluded_when().values() for flag, what in flags.items()}
    parts = "; ".join(f"{n} {said.get(name, name)}" for name, n in counts.items())
    return (f"{sum(counts.values())} of {len(matches)} matches are left out of every rating and ranking and stay in "
            f"the store: {parts}")


def with_outcomes(matches: pd.DataFrame, results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The matches and results that ratings compare, by their recorded outcomes (`referee.io.schema.OUTCOMES`):
    a match where any player's outcome is `aborted` has no result and is left out; a player who forfeited
    (illegal move, timeout) loses to every other player of the match (score -inf, rank last). Tables without an
    outcome column pass unchanged."""
    if "outcome" not in results.columns or results["outcome"].isna().all():
        return matches, results
    aborted = set(results.loc[results["outcome"] == "aborted", "match_id"])
    matches = matches[~is_in(matches["match_id"], aborted)]
    results = results[~is_in(results["match_id"], aborted)]
    forfeit = results["outcome"] == "forfeit"
    if forfeit.any():
        results = results.copy()
        results.loc[forfeit, "score"] = float("-inf")
        last = results.groupby("match_id")["rank"].transform("max").fillna(0) + 1
        results.loc[forfeit, "rank"] = last[forfeit]
    return matches, results


def ordering_points(results: pd.DataFrame) -> np.ndarray:
    """What orders the players of each match, shape (rows,): a result's `score` where every player of its match
    records one, else minus its `rank` (lower rank is better), NaN where neither is there. `results` needs
    match_id, score and rank; vectorised (one membership test against the matches where a score is missing, not
    a function call per match)."""
    missing = results["score"].isna().to_numpy(bool)
    complete = ~is_in(results["match_id"], results["match_id"][missing].unique()) if missing.any() else ~missing
    return np.where(complete, pd.to_numeric(results["score"]).to_numpy(float),
                    -pd.to_numeric(results["rank"]).to_numpy(float))


def outcome_note(results: pd.DataFrame) -> str | None:
    """One sentence counting the forfeits and aborted matches ratings treat apart, or None when there are none."""
    if "outcome" not in results.columns:
        return None
    forfeits = int((results["outcome"] == "forfeit").sum())
    aborted = results.loc[results["outcome"] == "aborted", "match_id"].nunique()
    if not forfeits and not aborted:
        return None
    return (f"{forfeits} forfeit(s) counted as losses to every other player of their match; {aborted} aborted "
            "match(es) left out of every rating and ranking (no result)")


def select_phases(matches: pd.DataFrame, phases: list[str] | None) -> pd.DataFrame:
    """The matches in any of `phases` (all of them when `phases` is empty or None).

    Raises ValueError naming the phases the matches hold when a phase has no match.
    """
    if not phases:
        return matches
    held = matches["phase"].dropna().astype(str)
    missing = [p for p in phases if p not in set(held)]
    if missing:
        raise ValueError(f"no match is in phase {missing[0]!r}; phases held: {sorted(held.unique()) or 'none'} "
                         "(set a phase at ingest with --phase, or in the catalogue)")
    return matches[matches["phase"].isin(phases)]
