"""The preference profile every voting method reads: ballots -> pairwise preference and margin matrices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.ratings.bradley_terry import add_rank


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
        """Margin matrix: preferences - preferences.T, shape (n, n), antisymmetric."""
        return self.preferences - self.preferences.T

    def outcome(self, scores: np.ndarray, seed: int = 0) -> pd.DataFrame:
        """agent, score, rank (1 = best; exact ties broken by a seeded generator)."""
        return add_rank(pd.DataFrame({"agent": self.agents, "score": np.asarray(scores, float)}), by="score", seed=seed)
