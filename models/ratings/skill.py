"""TrueSkill and OpenSkill ratings, computed by their own packages (`trueskill`, `openskill`), so that a user can
put referee's ratings next to the leaderboards built with them.

Both are online: matches are fed in order (by time where the comparisons carry it, else as they come), each as
a ranking of its agents (one agent per team; tied agents share a rank). The packages' defaults are used as they
ship: TrueSkill mu 25, sigma 25/3, draw probability 0.10; OpenSkill's Plackett-Luce model with mu 25, sigma
25/3. The table gives mu as `rating` (the packages' own scale, not Elo), mu -/+ 1.96 sigma as the interval,
`sigma`, and `leaderboard` = mu - 3 sigma, the conservative value both packages' leaderboards sort by
(OpenSkill's `ordinal()`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.models.fit import FitResult
from referee.models.ratings.bradley_terry import Z95, add_rank
from referee.models.ratings.plackett_luce import Ranking


@dataclass
class SkillFit(FitResult):
    """Online skill ratings (the `referee.models.fit.FitResult` contract): mu and sigma per agent, shape (n,), in the
    package's own units; `system` is 'trueskill' or 'openskill'; `matches` how many rankings were fed."""

    agents: list[str] = field(default_factory=list)
    mu: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sigma: np.ndarray = field(default_factory=lambda: np.zeros(0))
    system: str = "trueskill"
    matches: int = 0
    model: str = "skill"

    def table(self) -> pd.DataFrame:
        """agent, rating (mu), lower, upper (mu -/+ 1.96 sigma), rank (by mu), sigma, leaderboard (mu - 3 sigma,
        the packages' conservative value) and leaderboard_rank (1 = best by it: the order public TrueSkill and
        OpenSkill leaderboards print, which can differ from the order by mu where sigmas differ)."""
        frame = pd.DataFrame({"agent": self.agents, "rating": self.mu, "lower": self.mu - Z95 * self.sigma,
                              "upper": self.mu + Z95 * self.sigma})
        conservative = self.mu - 3 * self.sigma
        order = pd.Series(conservative).rank(ascending=False, method="min").to_numpy(int)
        return add_rank(frame).assign(sigma=self.sigma, leaderboard=conservative, leaderboard_rank=order)


def _ranks(ranking: Ranking) -> tuple[list[int], list[int]]:
    """(agents in order, their ranks: 0 for the first tier, 1 for the next ...)."""
    agents, ranks = [], []
    for place, tier in enumerate(ranking):
        agents += list(tier)
        ranks += [place] * len(tier)
    return agents, ranks


def fit_trueskill(rankings: list[Ranking], agents: list[str]) -> SkillFit:
    """TrueSkill (package defaults) fed `rankings` in order; agents never seen keep the prior (mu 25, sigma
    25/3). Returns a SkillFit."""
    import trueskill

    env = trueskill.TrueSkill()
    state = [env.create_rating() for _ in agents]
    fed = 0
    for ranking in rankings:
        players, ranks = _ranks(ranking)
        if len(players) < 2:
            continue
        new = env.rate([(state[i],) for i in players], ranks=ranks)
        for i, (rating,) in zip(players, new):
            state[i] = rating
        fed += 1
    return SkillFit(agents=list(agents), mu=np.array([r.mu for r in state]), sigma=np.array([r.sigma for r in state]),
                    system="trueskill", matches=fed, model="trueskill", diagnostics={"converged": True})


def fit_openskill(rankings: list[Ranking], agents: list[str]) -> SkillFit:
    """OpenSkill's Plackett-Luce model (package defaults) fed `rankings` in order. Returns a SkillFit."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    state = [model.rating(name=a) for a in agents]
    fed = 0
    for ranking in rankings:
        players, ranks = _ranks(ranking)
        if len(players) < 2:
            continue
        new = model.rate([[state[i]] for i in players], ranks=[r + 1 for r in ranks])
        for i, (rating,) in zip(players, new):
            state[i] = rating
        fed += 1
    return SkillFit(agents=list(agents), mu=np.array([r.mu for r in state]), sigma=np.array([r.sigma for r in state]),
                    system="openskill", matches=fed, model="openskill", diagnostics={"converged": True})
