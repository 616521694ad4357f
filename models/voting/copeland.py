"""Copeland's method (https://en.wikipedia.org/wiki/Copeland%27s_method): an agent scores 1 for every
other agent it beats by pairwise majority and 1/2 for every pairwise tie; in an incomplete tournament,
over the agents it met, as a share of them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.voting.profile import PreferenceProfile


def run(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """Copeland scores: 1 per agent beaten by pairwise majority, 1/2 per pairwise tie, counted only over the
    agents it met on some ballot. When some pairs never met, the score is that share of the pairs it met,
    scaled to n - 1 (so that it reads like a complete tournament's score). Returns agent, score, rank, ballots."""
    margins, met = profile.margins, profile.met > 0
    scores = ((margins > 0) & met).sum(axis=1) + 0.5 * ((margins == 0) & met).sum(axis=1)
    n = len(profile.agents)
    opponents = met.sum(axis=1)
    if (opponents < n - 1).any():
        scores = np.where(opponents > 0, scores / np.maximum(opponents, 1) * (n - 1), 0.0)
    return profile.outcome(scores, seed)
