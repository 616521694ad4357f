"""Coverage of rating intervals on simulated tournaments with known truth: the cluster bootstrap's 95 %
percentile intervals of Bradley-Terry contain the true (centred) ratings 92-98 % of the time, for
arena-style pairs and for multiplayer matches broken into pairs (the cluster bootstrap resamples whole
matches, so the pairs' dependence is respected); Wald intervals on the same multiplayer pairs, which treat the
pairs as independent, cover less. Bounded in CI (40 tournaments); REFEREE_FULL=1 runs 200."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from referee.run.ratings import rate
from referee.models.ratings.bradley_terry import to_elo

FULL = bool(os.environ.get("REFEREE_FULL"))
TOURNAMENTS = 200 if FULL else 40


def tournament(theta: np.ndarray, matches: int, size: int, rng: np.random.Generator) -> pd.DataFrame:
    """Comparisons of `matches` matches of `size` players each, ordered by Plackett-Luce (size 2: BT)."""
    rows = []
    n = len(theta)
    for m in range(matches):
        who = list(rng.choice(n, size, replace=False))
        order = []
        while who:
            w = np.exp(theta[who])
            order.append(who.pop(rng.choice(len(who), p=w / w.sum())))
        rows += [{"a": f"a{order[x]:02d}", "b": f"a{order[y]:02d}", "outcome": 1.0, "cluster": f"m{m}"}
                 for x in range(size) for y in range(x + 1, size)]
    return pd.DataFrame(rows).assign(game="g", kind="match")


def coverage(size: int, matches: int, seed: int) -> tuple[float, float]:
    """(bootstrap coverage, Wald coverage) of 95 % intervals over TOURNAMENTS tournaments of 10 agents."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1.0, 1.0, 10)
    truth = pd.Series(to_elo(theta), index=[f"a{i:02d}" for i in range(10)])
    boot, wald, total = 0, 0, 0
    for t in range(TOURNAMENTS):
        comparisons = tournament(theta, matches, size, rng)
        point = rate(comparisons, "bt").table().set_index("agent")
        table = rate(comparisons, "bt", bootstrap=200, seed=t).table().set_index("agent")
        inside = (table["lower"] <= truth[table.index]) & (truth[table.index] <= table["upper"])
        boot += int(inside.sum())
        wald += int(((point["lower"] <= truth[point.index]) & (truth[point.index] <= point["upper"])).sum())
        total += len(table)
    return boot / total, wald / total


@pytest.mark.slow
def test_bootstrap_intervals_cover_within_three_points_of_nominal():
    pairs_boot, pairs_wald = coverage(size=2, matches=600, seed=1)
    assert abs(pairs_boot - 0.95) <= 0.03, pairs_boot
    assert abs(pairs_wald - 0.95) <= 0.03, pairs_wald  # independent pairs: Wald is right too
    multi_boot, multi_wald = coverage(size=6, matches=120, seed=2)
    assert abs(multi_boot - 0.95) <= 0.03, multi_boot
    assert multi_wald < multi_boot  # the pairs of one match are not independent: Wald overstates certainty
