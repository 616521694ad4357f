"""Intervals a paper can print: what each rating interval is, where the data leave it open, where a bootstrap
cannot be trusted, and which agents' ranks cannot be told apart.

Pure functions on a rating table (agent, rating, lower, upper, rank[, rank_lower, rank_upper, component])
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
- Rank intervals (`rank_bounds`): with a bootstrap, the percentile interval of each agent's rank; for the
  agents above, and for every agent without a bootstrap, from the rating intervals: best rank = 1 + the
  agents whose lower bound is above this agent's upper bound, worst = the component's size less the agents
  whose upper bound is below its lower bound (Chatbot Arena's rule, both ways).
- Tie groups (`tie_groups`): down the ranking, a new group starts at the first agent whose best rank is
  worse than the worst rank of the current group's first agent: agents of one group cannot be told apart
  at 95 % from that agent; groups are numbered 1 (top) down and are monotone in rank, within each component.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.ratings.bootstrap import MIN_MATCHES
from referee.models.ratings.bradley_terry import (ELO_CENTRE, ELO_SCALE, pair_counts, profile_bound,
                                                  unbeaten_and_winless)
from referee.prepare.membership import agents_in

# methods whose likelihood is Bradley-Terry's on the Elo scale: a one-sided agent's finite bound is the
# profile-likelihood bound of that model
PROFILE_METHODS = ("elo", "bt", "bt-davidson", "plackett-luce")
WALD = {"bt": "Wald 95 %", "bt-davidson": "Wald 95 %", "plackett-luce": "Wald 95 %", "bayes-bt": "94 % HDI",
        "trueskill": "mu -/+ 1.96 sigma", "openskill": "mu -/+ 1.96 sigma"}  # each method's own interval
ROBUST_WALD = "Wald 95 % (cluster-robust by match, never narrower than the model-based)"


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
    index = pd.Index(agents)
    return agents, pair_counts(index.get_indexer(comparisons["a"]), index.get_indexer(comparisons["b"]),
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
    """The rating table with honest intervals, rank intervals, tie groups and an `interval` column saying
    what each interval is.

    table : agent, rating, lower, upper, rank[, rank_lower, rank_upper (bootstrap), component]; lower/upper are
        the bootstrap's percentiles when `replicates` > 0, else the model's.
    model : agent, lower, upper of the method's own (model-based) interval, or None when it has none;
    model_interval : what that interval is (e.g. 'Wald 95 %').
    status : `rating_labels.reference_status` of the comparisons (matches and one_sided per agent).
    fixed : the anchor agent, whose rating is fixed in every replicate (its zero width is by design).
    Returns (table with lower/upper (-inf/+inf where open), rank_lower, rank_upper, matches, interval, group;
    notes).
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
    outside = rated & ((out["rating"] < out["lower"]) | (out["rating"] > out["upper"]))
    if outside.any():  # a percentile interval can miss a skewed estimate: never print an estimate outside it
        out.loc[outside, "lower"] = np.fmin(out.loc[outside, "lower"], out.loc[outside, "rating"])
        out.loc[outside, "upper"] = np.fmax(out.loc[outside, "upper"], out.loc[outside, "rating"])
        text[outside] = [f"{t}, extended to hold the estimate (outside the bootstrap's percentiles)"
                         for t in text[outside]]
        notes.append(f"{int(outside.sum())} agent(s)' estimate lay outside the bootstrap's percentile interval (a "
                     "skewed bootstrap); their intervals are extended to hold it, see `interval`")
    out = rank_bounds(out, keep=~weak if replicates else None)
    out["matches"] = matches.astype(int).to_numpy()
    out["interval"] = text.to_numpy()
    return tie_groups(out), notes


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
        notes.append(f"{int(who.sum())} agent(s) {name}: their intervals are open {where} (`interval` column), not "
                     "the narrow spread of identical estimates")
    return notes


def rank_bounds(table: pd.DataFrame, keep: pd.Series | None = None) -> pd.DataFrame:
    """rank_lower (best) and rank_upper (worst) from the rating intervals, within `component` when present:
    best = 1 + agents whose lower bound is above this one's upper, worst = component size - agents whose upper
    bound is below this one's lower; a missing bound counts as open. `keep` (bool per row): rows whose
    existing (bootstrap) rank interval is kept, widened to these bounds where they are wider."""
    out = table.copy()
    lower = out["lower"].fillna(-np.inf).to_numpy(float)
    upper = out["upper"].fillna(np.inf).to_numpy(float)
    comp = out["component"].fillna(0).to_numpy() if "component" in out.columns else np.zeros(len(out))
    rated = out["rating"].notna().to_numpy()
    best = np.full(len(out), np.nan)
    worst = np.full(len(out), np.nan)
    for c in np.unique(comp):
        idx = np.flatnonzero((comp == c) & rated)
        lo, hi = lower[idx], upper[idx]
        best[idx] = 1 + (lo[None, :] > hi[:, None]).sum(axis=1)
        worst[idx] = len(idx) - (hi[None, :] < lo[:, None]).sum(axis=1)
    if keep is not None and "rank_lower" in out.columns:
        kept = keep.to_numpy(bool) & out["rank_lower"].notna().to_numpy()
        best = np.where(kept, out["rank_lower"].to_numpy(float), np.fmin(best, out["rank_lower"].to_numpy(float)))
        worst = np.where(kept, out["rank_upper"].to_numpy(float), np.fmax(worst, out["rank_upper"].to_numpy(float)))
    out["rank_lower"] = pd.array(np.where(rated, best, np.nan), dtype="Float64").round().astype("Int64")
    out["rank_upper"] = pd.array(np.where(rated, worst, np.nan), dtype="Float64").round().astype("Int64")
    return out


def tie_groups(table: pd.DataFrame) -> pd.DataFrame:
    """The table with `group`: 1 = the top group; down the ranking (by rating, within `component`), a new
    group starts at the first agent whose best rank (rank_lower) is worse than the worst rank (rank_upper)
    of the current group's first agent. Unrated agents get no group."""
    out = table.copy()
    group = pd.Series(pd.NA, index=out.index, dtype="Int64")
    comp = out["component"] if "component" in out.columns else pd.Series(0, index=out.index)
    for _, part in out[out["rating"].notna()].groupby(comp[out["rating"].notna()]):
        ordered = part.sort_values("rating", ascending=False)
        number, leader_worst = 0, -np.inf
        for idx, best, worst in zip(ordered.index, ordered["rank_lower"], ordered["rank_upper"]):
            if number == 0 or best > leader_worst:
                number += 1
                leader_worst = worst
            group[idx] = number
    out["group"] = group
    return out
