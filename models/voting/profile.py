"""The preference profile every voting method reads: ballots -> pairwise preference and margin matrices."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class PreferenceProfile:
    """Pairwise preferences of a set of ballots.

    agents : names, in matrix order.
    preferences : shape (n, n); [a, b] = (weighted) number of ballots ranking a strictly above b. A ballot
        that omits an agent, or ties two, expresses no preference between them.
    ballots : the ballots table it was built from (ballot, agent, score[, weight]).
    """

    agents: list[str]
    preferences: np.ndarray
    ballots: pd.DataFrame

    @classmethod
    def from_ballots(cls, ballots: pd.DataFrame, agents: list[str] | None = None) -> "PreferenceProfile":
        """Build from a ballots table: columns `ballot`, `agent`, `score` (higher ranks higher), optional
        `weight` (how many voters cast that ballot, default 1). An agent listed twice on a ballot counts at its
        mean score; a missing score leaves the agent off that ballot; agents not in `agents` (when given) are
        left out."""
        agents = sorted(ballots["agent"].unique()) if agents is None else list(agents)
        preferences, met, support = _counts(ballots, agents)
        profile = cls(agents, preferences, ballots)
        profile.__dict__["_met_support"] = (met, support)  # the cached property's value, from the same pairs
        return profile

    @classmethod
    def from_orders(cls, orders: list[tuple[float, str]], agents: list[str]) -> "PreferenceProfile":
        """Build from strict orders given as (weight, 'A>B>C') strings over single-letter or named agents."""
        rows = []
        for k, (weight, order) in enumerate(orders):
            names = order.split(">")
            rows += [{"ballot": k, "agent": a, "score": float(len(names) - pos), "weight": weight}
                     for pos, a in enumerate(names)]
        return cls.from_ballots(pd.DataFrame(rows), agents)

    @property
    def margins(self) -> np.ndarray:
        """Margin matrix: preferences - preferences.T, shape (n, n), antisymmetric (0 for agents that never
        met: margins are only ever over ballots that rank both)."""
        return self.preferences - self.preferences.T

    @functools.cached_property
    def _met_support(self) -> tuple[np.ndarray, np.ndarray]:
        """(met, support) of the ballots (`_counts`); set by `from_ballots`, computed here for a profile built
        directly."""
        return _counts(self.ballots, self.agents)[1:]

    @property
    def support(self) -> np.ndarray:
        """Ballots (weighted) each agent appears on, shape (n,)."""
        return self._met_support[1]

    @property
    def met(self) -> np.ndarray:
        """met[i, j]: ballots (weighted) ranking both i and j, shape (n, n); 0 on the diagonal."""
        return self._met_support[0]

    def restricted(self, agents: list[str]) -> "PreferenceProfile":
        """The profile of the same ballots over `agents` only."""
        return PreferenceProfile.from_ballots(self.ballots[self.ballots["agent"].isin(agents)], agents)

    def outcome(self, scores: np.ndarray, seed: int = 0) -> pd.DataFrame:
        """agent, score, rank, ballots: rank 1 = best, equal scores (to 1e-9) share the best rank among them
        (competition ranking: 1, 2, 2, 4); `ballots` = how many ballots each agent appears on. `seed` is
        accepted for the methods' common signature; no tie is broken at random."""
        scores = np.asarray(scores, float)
        rank = pd.Series(np.round(scores, 9)).rank(method="min", ascending=False).to_numpy()
        return pd.DataFrame({"agent": self.agents, "score": scores, "rank": rank, "ballots": self.support})


PAIRS_AT_ONCE = 1 << 22  # (ballot row, ballot row) pairs built at a time: bounds `_counts`' memory (~100 MB)


def _counts(ballots: pd.DataFrame, agents: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(preferences, met, support) of a ballots table over `agents` (see `PreferenceProfile`), from the pairs of
    agents that share a ballot: sum over ballots of m^2 pairs for a ballot of m agents, never a ballots x agents
    matrix (an arena's million two-agent ballots over 1,000 agents are two million pairs, not 10^9 cells)."""
    n = len(agents)
    rows = ballots[["ballot", "agent", "score"]].assign(code=pd.Categorical(ballots["agent"], categories=agents).codes)
    rows = rows[(rows["code"] >= 0) & rows["score"].notna()]
    cells = rows.groupby(["ballot", "code"], sort=True, observed=True)["score"].mean().reset_index()
    if "weight" in ballots.columns:
        per_ballot = ballots.groupby("ballot")["weight"].first()
        weight = per_ballot.reindex(cells["ballot"]).to_numpy(float)
    else:
        weight = np.ones(len(cells))
    code, score = cells["code"].to_numpy(np.int64), cells["score"].to_numpy(float)
    ballot = cells["ballot"].to_numpy()
    starts = np.flatnonzero(np.r_[True, ballot[1:] != ballot[:-1]])
    sizes = np.diff(np.r_[starts, len(cells)])
    first = np.repeat(starts, sizes)  # each row's ballot's first row
    size = np.repeat(sizes, sizes)  # and its number of rows
    pairs_to = np.cumsum(size)  # the pairs of rows [0, r] (each row with every row of its ballot)
    support = np.bincount(code, weights=weight, minlength=n).astype(float)
    prefs, met = np.zeros(n * n), np.zeros(n * n)
    row = 0
    while row < len(cells):
        # rows [row, stop) pair with every row of their ballot: at most PAIRS_AT_ONCE pairs (one row at least)
        before = pairs_to[row - 1] if row else 0
        stop = max(row + 1, int(np.searchsorted(pairs_to, before + PAIRS_AT_ONCE, side="right")))
        left = np.repeat(np.arange(row, stop), size[row:stop])
        offsets = np.arange(len(left)) - np.repeat(pairs_to[row:stop] - before - size[row:stop], size[row:stop])
        right = first[left] + offsets
        keep = left != right
        left, right = left[keep], right[keep]
        cell = code[left] * n + code[right]
        met += np.bincount(cell, weights=weight[left], minlength=n * n)
        above = score[left] > score[right]
        prefs += np.bincount(cell[above], weights=weight[left][above], minlength=n * n)
        row = stop
    return prefs.reshape(n, n), met.reshape(n, n), support
