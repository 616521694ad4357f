"""Voting-as-evaluation (Lanctot et al. 2023): one shared `PreferenceProfile`, one module per method.

Every method is a function `run(profile, seed=0) -> DataFrame(agent, score, rank)`; ranks break exact
score ties with a seeded generator. Methods: `copeland`, `ranked-pairs`, `maximal-lotteries`, `iml`
(iterative maximal lotteries), `ewa` (evaluation without aggregation).
"""

from models.voting import copeland, ewa, lotteries, ranked_pairs
from models.voting.profile import PreferenceProfile

METHODS = {
    "copeland": copeland.run,
    "ranked-pairs": ranked_pairs.run,
    "maximal-lotteries": lotteries.run_maximal_lottery,
    "iml": lotteries.run_iml,
    "ewa": ewa.run,
}

__all__ = ["METHODS", "PreferenceProfile"]
