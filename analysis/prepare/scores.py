"""Per-agent match scores and per-scenario min-max normalisation (Concordia paper, section 9.4.2).

`agent_match_scores(matches, results)` reduces per-player results to one score per (match, agent): the
mean over that agent's focal players (all players when no group is recorded), which for Concordia is
the focal per-capita score. `normalise(scores, scenarios)` rescales each scenario's scores to [0, 1] by
its theoretical bounds, mapping -inf to the theoretical minimum; where a scenario has no bounds it uses
the observed finite range and warns.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from referee.io.schema import focal

MATCH_FIELDS = ["match_id", "runner", "game", "scenario", "variant", "phase", "repetition", "communication"]


class BoundsWarning(UserWarning):
    """Normalisation fell back to observed bounds, clipped out-of-bound scores, or met a constant scenario."""


def agent_match_scores(matches: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """One score per (match, agent).

    Parameters
    ----------
    matches : canonical `matches` table.
    results : canonical `results` table.

    Returns
    -------
    DataFrame with MATCH_FIELDS plus `agent`, `score` (mean raw score of the agent's focal players in
    that match; -inf if any is -inf) and `n_players` (how many players the mean is over).
    """
    per_agent = (focal(results).groupby(["match_id", "agent"], sort=True)["score"]
                 .agg(score="mean", n_players="size").reset_index())
    return matches[MATCH_FIELDS].merge(per_agent, on="match_id", how="inner")


def normalisation_unit(scores: pd.DataFrame) -> pd.Series:
    """The unit scores are normalised within: the scenario, else the game, else one unit for all."""
    unit = scores["scenario"].astype(object)
    unit = unit.where(unit.notna(), scores["game"].astype(object))
    return unit.where(unit.notna(), "(all)").astype(str)


def normalise(scores: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """Min-max normalise raw scores to [0, 1] per scenario.

    Parameters
    ----------
    scores : a table with `score` (raw, -inf allowed), `scenario` and `game` columns, for example
        `agent_match_scores(...)`.
    scenarios : canonical `scenarios` table (theoretical `score_min`, `score_max`; NULL when unknown).

    Returns
    -------
    A copy of `scores` with `score_norm` in [0, 1] (NaN where a scenario's scores are all equal and it has
    no theoretical bounds) and `bounds` ('theoretical'; 'scale' for a runner whose every score is a pass/fail or
    graded outcome on [0, 1], kept as it is; else 'observed'). -inf maps to the minimum (0).

    Warns
    -----
    BoundsWarning naming the scenarios normalised by observed bounds, those whose scores fall outside
    their theoretical bounds (then clipped), and constant ones.
    """
    out = scores.copy()
    out["_unit"] = normalisation_unit(out)
    bounds = scenarios.set_index("scenario")[["score_min", "score_max"]].astype(float)
    raw = out["score"].astype(float)
    finite = raw.where(np.isfinite(raw))
    lo = out["_unit"].map(bounds["score_min"]).astype(float)
    hi = out["_unit"].map(bounds["score_max"]).astype(float)
    theoretical = lo.notna() & hi.notna()
    scale = ~theoretical & _on_unit_scale(out, raw)
    observed_lo = finite.groupby(out["_unit"]).transform("min")
    observed_hi = finite.groupby(out["_unit"]).transform("max")
    lo = lo.where(theoretical, observed_lo.where(~scale, 0.0))
    hi = hi.where(theoretical, observed_hi.where(~scale, 1.0))
    fallback = sorted(set(out.loc[~theoretical & ~scale, "_unit"]))
    if fallback:
        warnings.warn(f"no theoretical score bounds for {fallback}; normalised by observed bounds",
                      BoundsWarning, stacklevel=2)
    outside = theoretical & np.isfinite(raw) & ((raw < lo) | (raw > hi))
    if outside.any():
        names = sorted(set(out.loc[outside, "_unit"]))
        warnings.warn(f"{int(outside.sum())} scores lie outside their theoretical bounds in {names}; clipped",
                      BoundsWarning, stacklevel=2)
    span = hi - lo
    constant = span <= 0
    if constant.any():
        warnings.warn(f"constant scores in {sorted(set(out.loc[constant, '_unit']))}; normalised score is NaN",
                      BoundsWarning, stacklevel=2)
    raw = raw.where(~np.isneginf(raw), lo)
    norm = ((raw - lo) / span.where(~constant)).clip(0.0, 1.0)
    out["score_norm"] = norm
    out["bounds"] = np.where(theoretical, "theoretical", np.where(scale, "scale", "observed"))
    return out.drop(columns="_unit")


def _on_unit_scale(scores: pd.DataFrame, raw: pd.Series) -> pd.Series:
    """Which rows belong to a runner whose every score is a pass/fail or graded outcome on [0, 1] (Inspect's
    C/P/I as 1/0.5/0, clem's Success): their own scale is the bounds, so a scenario where every agent passed
    (or failed) keeps its scores rather than turning NaN, and one graded 0.5 stays 0.5."""
    from referee.prepare.outcomes import outcome_kind

    runner = scores["runner"] if "runner" in scores.columns else pd.Series("", index=scores.index)
    kinds = {}
    for r in runner.dropna().unique():
        values = raw[runner == r].dropna()
        kinds[r] = outcome_kind(values) is not None and bool(values.between(0, 1).all())
    return runner.map(kinds).fillna(False).astype(bool)


def normalised_scores(store, scenarios_only: bool = False, phases: list[str] | None = None,
                      runner: str | None = None, matches: pd.DataFrame | None = None) -> pd.DataFrame:
    """`normalise(agent_match_scores(...))` over an open `referee.io.store.Store`: one row per (match, agent).

    With `scenarios_only`, only matches that name a scenario (Concordia-style evaluations) are included; with
    `phases`, only matches in those phases (ValueError naming the phases held when one has no match); with
    `runner`, only that runner's matches; `matches`, the store's matches where the caller has read them already.
    """
    from referee.prepare.selection import select_phases

    matches = select_phases(store.matches() if matches is None else matches, phases)
    if scenarios_only:
        matches = matches[matches["scenario"].notna()]
    if runner is not None:
        matches = matches[matches["runner"] == runner]
    scores = agent_match_scores(matches, store.results())
    return normalise(scores, store.scenarios())
