"""Intervals a paper can print: what each rating interval is, where the data leave it open, where a bootstrap
cannot be trusted, and which agents' ranks cannot be told apart.

Pure functions on a rating table (agent, rating, lower, upper, rank[, component])
on the Elo scale and the comparisons it came from (`referee.prepare.comparisons`).

- One-sided records (`one_sided`): an agent whose every comparison is a loss (never won) has no finite
  lower bound: its likelihood keeps rising as its rating falls. Its interval is open below (`lower` = -inf)
  and, for the Bradley-Terry family, ends above at the 95 % likelihood-ratio bound with the other agents at
  their estimates (`referee.models.ratings.bradley_terry.profile_bound`); never lost, mirrored. The point rating
  stays the method's own (a MAP value under the stated prior when the MLE does not exist).
- Bootstrap intervals that cannot be trusted (`finish`): a cluster bootstrap cannot move an estimate whose
  resampled data are always alike (every replicate all losses, all ties) and under-covers for agents with
  few matches. For an agent with fewer than MIN_MATCHES matches, a one-sided record, or a zero-width bootstrap
  interval, the interval is the hull of the bootstrap's and the model's (Wald, profile) intervals; where the
  method has no model interval and the bootstrap did not move, there is no interval (NaN), and the
  `interval` column says so.
- Provisional agents never read as more certain than established ones (`_provisional_floor`): an agent with
  fewer than MIN_MATCHES matches whose finite interval is narrower than the widest established agent's of its
  component is widened to that width about its own centre, and `interval` says so.
- Ranks' uncertainty is not here: rank sets, the set of the best and tiers come from one inference, the board
  (`referee.run.ratings.board`), which every table that prints them reads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.ratings.bootstrap import MIN_MATCHES
from referee.models.registry import methods_with
from referee.models.ratings.bradley_terry import (ELO_CENTRE, ELO_SCALE, pair_counts, profile_bound,
                                                  unbeaten_and_winless)
from referee.prepare.membership import agents_in
from referee.models.codes import positions

# methods whose likelihood is Bradley-Terry's on the Elo scale (their registry entry's `profile`): a one-sided
# agent's finite bound is the profile-likelihood bound of that model
PROFILE_METHODS = methods_with(profile=True)
ROBUST_WALD = "Wald 95 % (cluster-robust by match)"


def one_sided(comparisons: pd.DataFrame) -> pd.Series:
    """'never won' (every comparison lost), 'never lost' (every comparison won) or '' per compared agent: the
    agents `bradley_terry.unbeaten_and_winless` finds in the pair counts (a tie counts half each way)."""
    agents, counts = _pair_counts(comparisons)
    never_won, never_lost = unbeaten_and_winless(counts, agents)
    side = pd.Series("", index=pd.Index(agents, name="agent"), name="one_sided", dtype=object)
    side[never_won], side[never_lost] = "never won", "never lost"
    return side


def _pair_counts(comparisons: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """(agents sorted, W (n, n) of `bradley_terry.pair_counts`: wins of row over column, ties as halves)."""
    agents = agents_in(comparisons)
    return agents, pair_counts(positions(comparisons["a"], agents), positions(comparisons["b"], agents),
                               comparisons["outcome"].to_numpy(float), len(agents))


def _profile(rating: pd.Series, agents: list[str], counts: np.ndarray, agent: str, side: str) -> float:
    """The finite end (Elo) of a one-sided agent's likelihood-ratio interval, opponents held at their ratings
    (`rating`, by agent); `counts` the pair counts W of `agents`: a never-winner's losses are its column."""
    k = agents.index(agent)
    games = counts[:, k] if side == "never won" else counts[k, :]
    theta = (rating.reindex(agents).to_numpy(float) - ELO_CENTRE) / ELO_SCALE
    keep = (games > 0) & np.isfinite(theta)
    if not keep.any():
        return np.nan
    bound = profile_bound(theta[keep], games[keep], "upper" if side == "never won" else "lower")
    return ELO_CENTRE + ELO_SCALE * bound


def finish(table: pd.DataFrame, comparisons: pd.DataFrame, method: str, model: pd.DataFrame | None,
           model_interval: str | None, status: pd.DataFrame, replicates: int = 0,
           fixed: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The rating table with honest intervals and an `interval` column saying what each interval is.

    table : agent, rating, lower, upper, rank[, component]; lower/upper are
        the bootstrap's percentiles when `replicates` > 0, else the model's.
    model : agent, lower, upper of the method's own (model-based) interval, or None when it has none;
    model_interval : what that interval is (e.g. 'Wald 95 %').
    status : `rating_labels.reference_status` of the comparisons (matches and one_sided per agent).
    fixed : the anchor agent, whose rating is fixed in every replicate (its zero width is by design).
    Returns (table with lower/upper (-inf/+inf where open), matches, interval; notes).
    """
    out = table.copy()
    side = out["agent"].map(status["one_sided"]).fillna("")
    matches = out["agent"].map(status["matches"]).fillna(0)
    rated = out["rating"].notna()
    own = (model.set_index("agent") if model is not None else pd.DataFrame(columns=["lower", "upper"]))
    model_lo, model_hi = out["agent"].map(own["lower"]), out["agent"].map(own["upper"])
    has_model = model_lo.notna() & model_hi.notna()
    base = (f"bootstrap percentile 95 % ({replicates} replicates)" if replicates else
            model_interval or "none: a point estimate (--bootstrap N gives intervals)")
    text = pd.Series(np.where(rated, base, "no rating"), index=out.index, dtype=object)
    notes: list[str] = []
    unmoved = rated & ((out["upper"] - out["lower"]).abs() < 1e-9) & (out["agent"] != fixed) if replicates \
        else pd.Series(False, index=out.index)
    weak = rated & ((matches < MIN_MATCHES) | (side != "") | unmoved)  # a bootstrap not to trust alone
    if replicates:
        hull = weak & has_model
        out.loc[hull, "lower"] = np.fmin(out.loc[hull, "lower"], model_lo[hull])
        out.loc[hull, "upper"] = np.fmax(out.loc[hull, "upper"], model_hi[hull])
        why = np.where(unmoved, "the bootstrap could not move the estimate (every replicate alike)",
                       np.where(side != "", side, f"fewer than {MIN_MATCHES} matches"))
        text[hull] = [f"hull of the bootstrap's and the model's ({model_interval}) intervals: {w}"
                      for w in why[hull.to_numpy()]]
        lost = unmoved & ~has_model & (side == "")
        out.loc[lost, ["lower", "upper"]] = np.nan
        text[lost] = ("none: the bootstrap could not move the estimate (every replicate alike) and the method has "
                      "no model interval")
        if unmoved.any():
            notes.append(f"the bootstrap could not move {int(unmoved.sum())} agent(s)' estimate(s) (every replicate "
                         "alike, e.g. all ties or all losses): their intervals are not the bootstrap's, see `interval`")
    if (rated & (side != "")).any():
        notes += _open_sides(out, text, side, matches, rated, comparisons, method)
    notes += _provisional_floor(out, text, matches, rated & (side == ""))
    outside = rated & ((out["rating"] < out["lower"]) | (out["rating"] > out["upper"]))
    if outside.any():  # a percentile interval can miss a skewed estimate: never print an estimate outside it
        out.loc[outside, "lower"] = np.fmin(out.loc[outside, "lower"], out.loc[outside, "rating"])
        out.loc[outside, "upper"] = np.fmax(out.loc[outside, "upper"], out.loc[outside, "rating"])
        text[outside] = [f"{t}, extended to hold the estimate (outside the bootstrap's percentiles)"
                         for t in text[outside]]
        notes.append(f"{int(outside.sum())} agent(s)' estimate lay outside the bootstrap's percentile interval (a "
                     "skewed bootstrap); their intervals are extended to hold it, see `interval`")
    out["matches"] = matches.astype(int).to_numpy()
    out["interval"] = text.to_numpy()
    return out.drop(columns=["rank_lower", "rank_upper"], errors="ignore"), notes


def _provisional_floor(out: pd.DataFrame, text: pd.Series, matches: pd.Series, two_sided: pd.Series) -> list[str]:
    """Widen, in place in `out` and `text`, every provisional agent's (fewer than MIN_MATCHES matches) finite
    interval that is narrower than the widest finite interval of the established agents of its component (each
    of whom holds more matches): fewer matches never read as more certain. The widened interval keeps its centre
    (lower + upper) / 2 and holds the rating. Returns the note naming them ([] when none)."""
    width = out["upper"] - out["lower"]
    finite = two_sided & np.isfinite(width)
    part = out["component"] if "component" in out.columns else pd.Series(1, index=out.index)
    part = part.astype(object).where(part.notna(), "-")
    established = finite & (matches >= MIN_MATCHES)
    widest = width[established].groupby(part[established]).max()
    floor = part.map(widest).astype(float)
    short = finite & (matches < MIN_MATCHES) & (width < floor - 1e-9)
    if not short.any():
        return []
    centre = (out.loc[short, "lower"] + out.loc[short, "upper"]) / 2
    half = floor[short] / 2
    out.loc[short, "lower"] = np.fmin(centre - half, out.loc[short, "rating"])
    out.loc[short, "upper"] = np.fmax(centre + half, out.loc[short, "rating"])
    text[short] = [f"{t}, widened to the widest established agent's width ({w:.0f} points): fewer than "
                   f"{MIN_MATCHES} matches" for t, w in zip(text[short], floor[short])]
    names = list(out.loc[short, "agent"].astype(str))
    return [f"{len(names)} provisional agent(s) whose interval was narrower than the widest established agent's "
            "(who played more matches) are widened to that width, never read as more certain: "
            + ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")]


def _open_sides(out: pd.DataFrame, text: pd.Series, side: pd.Series, matches: pd.Series, rated: pd.Series,
                comparisons: pd.DataFrame, method: str) -> list[str]:
    """Open the interval of every agent that never won (below) or never lost (above), in place in `out` and
    `text`, its finite end widened to the profile-likelihood bound for PROFILE_METHODS. Returns the notes."""
    agents, counts = _pair_counts(comparisons) if method in PROFILE_METHODS else ([], None)
    rating = out.set_index("agent")["rating"]
    notes = []
    for name, opened, finite, pick in (("never won", "lower", "upper", np.fmax),
                                       ("never lost", "upper", "lower", np.fmin)):
        who = rated & (side == name)
        if not who.any():
            continue
        where = "below" if name == "never won" else "above"
        out.loc[who, opened] = -np.inf if name == "never won" else np.inf
        for idx in out.index[who.to_numpy()]:
            bound = _profile(rating, agents, counts, out.at[idx, "agent"], name) if counts is not None else np.nan
            if np.isfinite(bound):
                out.at[idx, finite] = pick(out.at[idx, finite], bound)
            text[idx] = (f"open {where}: {name} in {int(matches[idx])} match(es)" + (
                "; the other end is the 95 % profile-likelihood bound, or wider" if np.isfinite(bound) else ""))
        notes.append(f"{int(who.sum())} agent(s) {name}: their intervals are open {where} (`referee ratings` says so in its `interval` column), not "
                     "the narrow spread of identical estimates")
    return notes
