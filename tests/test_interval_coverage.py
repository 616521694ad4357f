"""Coverage of rating intervals on simulated tournaments with known truth: the cluster bootstrap's 95 %
percentile intervals of Bradley-Terry contain the true (centred) ratings 92-98 % of the time, for
arena-style pairs and for multiplayer matches broken into pairs (the cluster bootstrap resamples whole
matches, so the pairs' dependence is respected). The default Wald intervals are cluster-robust by match and
cover as well; the model-based Wald intervals on the same multiplayer pairs, which treat the pairs as
independent (the fit's own `se`), cover less. Bounded in CI (40 tournaments); REFEREE_FULL=1 runs 200."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from referee.run.ratings.ratings import rate
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


def coverage(size: int, matches: int, seed: int) -> tuple[float, float, float]:
    """(bootstrap, cluster-robust Wald, model-based Wald) coverage of 95 % intervals over TOURNAMENTS
    tournaments of 10 agents."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1.0, 1.0, 10)
    truth = pd.Series(to_elo(theta), index=[f"a{i:02d}" for i in range(10)])
    boot, wald, naive, total = 0, 0, 0, 0
    for t in range(TOURNAMENTS):
        comparisons = tournament(theta, matches, size, rng)
        fitted = rate(comparisons, "bt")
        point = fitted.table().set_index("agent")
        plain = fitted.fits[0].table().set_index("agent")  # the fit's own, model-based Wald intervals
        table = rate(comparisons, "bt", bootstrap=200, seed=t).table().set_index("agent")
        inside = (table["lower"] <= truth[table.index]) & (truth[table.index] <= table["upper"])
        boot += int(inside.sum())
        wald += int(((point["lower"] <= truth[point.index]) & (truth[point.index] <= point["upper"])).sum())
        naive += int(((plain["lower"] <= truth[plain.index]) & (truth[plain.index] <= plain["upper"])).sum())
        total += len(table)
    return boot / total, wald / total, naive / total


@pytest.mark.slow
def test_bootstrap_intervals_cover_within_three_points_of_nominal():
    pairs_boot, pairs_wald, pairs_naive = coverage(size=2, matches=600, seed=1)
    assert abs(pairs_boot - 0.95) <= 0.03, pairs_boot
    assert abs(pairs_wald - 0.95) <= 0.03 and abs(pairs_naive - 0.95) <= 0.03  # independent pairs: both right
    multi_boot, multi_wald, multi_naive = coverage(size=6, matches=120, seed=2)
    assert abs(multi_boot - 0.95) <= 0.03, multi_boot
    assert abs(multi_wald - 0.95) <= 0.03, multi_wald  # cluster-robust: the match is the unit
    assert multi_naive < multi_boot - 0.03  # the pairs of one match are not independent: model-based Wald overstates
