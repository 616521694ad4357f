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
        `weight` (how many voters cast that ballot, default 1)."""
        agents = sorted(ballots["agent"].unique()) if agents is None else list(agents)
        scores = ballots.pivot_table(index="ballot", columns="agent", values="score", aggfunc="mean")
        scores = scores.reindex(columns=agents).to_numpy(float)
        weight = np.ones(len(scores))
        if "weight" in ballots.columns:
            weight = ballots.groupby("ballot")["weight"].first().reindex(
                ballots.pivot_table(index="ballot", columns="agent", values="score").index).to_numpy(float)
        n = len(agents)
        prefs = np.zeros((n, n))
        for i in range(n):
            above = scores[:, [i]] > scores  # NaN compares False: absent agents express nothing
            prefs[i] = (above * weight[:, None]).sum(axis=0)
        return cls(agents, prefs, ballots)

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
    def _presence(self) -> tuple[np.ndarray, np.ndarray]:
        """(present, weight): present[k, i] when ballot k ranks agent i; weight per ballot."""
        scores = self.ballots.pivot_table(index="ballot", columns="agent", values="score", aggfunc="mean")
        present = scores.reindex(columns=self.agents).notna().to_numpy()
        weight = (self.ballots.groupby("ballot")["weight"].first().reindex(scores.index).to_numpy(float)
                  if "weight" in self.ballots.columns else np.ones(len(present)))
        return present, weight

    @property
    def support(self) -> np.ndarray:
        """Ballots (weighted) each agent appears on, shape (n,)."""
        present, weight = self._presence
        return (present * weight[:, None]).sum(axis=0)

    @property
    def met(self) -> np.ndarray:
        """met[i, j]: ballots (weighted) ranking both i and j, shape (n, n); 0 on the diagonal."""
        present, weight = self._presence
        both = (present * weight[:, None]).T @ present.astype(float)
        np.fill_diagonal(both, 0.0)
        return both

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
