"""Voting-as-evaluation (Lanctot et al. 2023): one shared `PreferenceProfile`, one module per method.

Every method is a function `run(profile, seed=0) -> DataFrame(agent, score, rank, ballots)`; equal scores
share a rank (competition ranking). Methods: `copeland`, `ranked-pairs`, `maximal-lotteries`, `iml`
(iterative maximal lotteries), `ewa` (evaluation without aggregation).

`vote(profile, method, min_ballots)` is how tournaments are ranked: agents that appear on fewer than
`min_ballots` ballots are listed apart, not ranked (a few lucky or unlucky games say little), with a
warning naming them; the rest are ranked on the ballots restricted to them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from referee.models.voting import copeland, ewa, lotteries, ranked_pairs
from referee.models.voting.profile import PreferenceProfile
from referee.models.registry import MIN_BALLOTS  # noqa: F401  (an agent on fewer ballots is listed apart)

METHODS = {
    "copeland": copeland.run,
    "ranked-pairs": ranked_pairs.run,
    "maximal-lotteries": lotteries.run_maximal_lottery,
    "iml": lotteries.run_iml,
    "ewa": ewa.run,
}


class SparseSupportWarning(UserWarning):
    """Some agents appear on too few ballots to be ranked; they were listed apart."""


def vote(profile: PreferenceProfile, method: str, min_ballots: float = MIN_BALLOTS, seed: int = 0,
         **options) -> pd.DataFrame:
    """Rank the agents of `profile` by `method`, setting apart those with too little support.

    Parameters
    ----------
    profile : the ballots. method : a key of METHODS. min_ballots : the least number of ballots (weighted)
        an agent must appear on to be ranked (default MIN_BALLOTS). seed : passed to the method.
    options : the method's own options (`ewa`: reading='runs' | 'flat' | 'run-points', see `referee.models.voting.ewa`).

    Returns
    -------
    DataFrame agent, score, rank, ballots, ranked (+ `support` for maximal lotteries): the ranked agents
    first (rank 1 = best; ties share a rank), then the agents set apart (score and rank empty,
    ranked False). Raises ValueError when no agent has the support; warns (SparseSupportWarning) naming
    the agents set apart.
    """
    if method not in METHODS:
        raise ValueError(f"unknown voting method {method!r}; methods: {list(METHODS)}")
    support = profile.support
    keep = support >= min_ballots
    if not keep.any():
        raise ValueError(f"no agent appears on {min_ballots:g} or more ballots (the most is {support.max():g}); "
                         "lower --min-games to rank them")
    agents = np.array(profile.agents)
    apart = agents[~keep]
    if len(apart):
        shown = ", ".join(f"{a} ({s:g})" for a, s in zip(apart[:10], support[~keep][:10]))
        warnings.warn(f"{len(apart)} agent(s) appear on fewer than {min_ballots:g} ballots and are listed apart, "
                      f"not ranked: {shown}{' ...' if len(apart) > 10 else ''} (set --min-games to change this)",
                      SparseSupportWarning, stacklevel=2)
    ranked = METHODS[method](profile.restricted(list(agents[keep])) if len(apart) else profile, seed=seed, **options)
    ranked = ranked.assign(ranked=True).sort_values(["rank", "agent"], kind="stable")
    rest = pd.DataFrame({"agent": apart, "score": np.nan, "rank": np.nan, "ballots": support[~keep], "ranked": False})
    return pd.concat([ranked, rest], ignore_index=True) if len(rest) else ranked.reset_index(drop=True)


__all__ = ["METHODS", "MIN_BALLOTS", "PreferenceProfile", "SparseSupportWarning", "vote"]
