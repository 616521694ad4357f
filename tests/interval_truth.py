"""Generated tournaments with known skills for the interval-coverage checks (issue: honest intervals): common
agents, rare agents with a handful of matches, one agent that never won and one that never lost."""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.ratings.bradley_terry import ELO_CENTRE, ELO_SCALE


def known_skill_tournament(seed: int, common: int = 40, rare: int = 8, matches: int = 1200, size: int = 3
                           ) -> tuple[pd.DataFrame, pd.Series, dict[str, str]]:
    """Comparisons of `matches` free-for-all matches of `size` players ordered by Plackett-Luce (strength +
    Gumbel), strengths ~ N(0, 0.6^2); `rare` agents play 4-8 matches each; 'never_won' (strength -2.5) and
    'never_lost' (+2.5) play 5 matches each, conditioned on their records (the match is redrawn until the
    never-winner is last, the never-loser first: exactly what observing such a record means).

    Returns (comparisons: a, b, outcome, cluster, game, kind; true Elo ratings centred at 1500 over every
    agent; kind per agent: 'common', 'rare', 'never won', 'never lost')."""
    rng = np.random.default_rng(seed)
    names = [f"c{i:02d}" for i in range(common)] + [f"r{i:02d}" for i in range(rare)] + ["never_won", "never_lost"]
    strength = np.r_[rng.normal(0, 0.6, common + rare), -2.5, 2.5]
    kind = {n: ("common" if i < common else "rare" if i < common + rare else n.replace("_", " "))
            for i, n in enumerate(names)}
    slots = [common + i for i in range(rare) for _ in range(rng.integers(4, 9))]
    slots += [common + rare] * 5 + [common + rare + 1] * 5
    rows = []
    for m in range(matches):
        who = list(rng.choice(common, size=size, replace=False))
        special = slots[m] if m < len(slots) else None
        if special is not None:
            who[0] = special
        while True:
            perf = strength[who] + rng.gumbel(size=size)
            order = [who[k] for k in np.argsort(-perf)]
            if special == common + rare and order[-1] != special:
                continue
            if special == common + rare + 1 and order[0] != special:
                continue
            break
        rows += [{"a": names[order[x]], "b": names[order[y]], "outcome": 1.0, "cluster": f"m{m:05d}"}
                 for x in range(size) for y in range(x + 1, size)]
    truth = pd.Series(ELO_CENTRE + ELO_SCALE * (strength - strength.mean()), index=names)
    return pd.DataFrame(rows).assign(game="ffa", kind="match"), truth, kind
