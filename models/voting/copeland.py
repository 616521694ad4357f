"""Copeland's method (https://en.wikipedia.org/wiki/Copeland%27s_method): an agent scores 1 for every
other agent it beats by pairwise majority and 1/2 for every pairwise tie."""

from __future__ import annotations

import numpy as np
import pandas as pd

from models.voting.profile import PreferenceProfile


def run(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """Copeland scores: wins + 0.5 ties over all other agents. Returns agent, score, rank."""
    margins = profile.margins
    n = len(profile.agents)
    off = ~np.eye(n, dtype=bool)
    scores = ((margins > 0) & off).sum(axis=1) + 0.5 * ((margins == 0) & off).sum(axis=1)
    return profile.outcome(scores, seed)
