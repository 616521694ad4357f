"""Ranked pairs, Tideman's method (https://en.wikipedia.org/wiki/Ranked_pairs).

Pairs with a positive margin are locked in from the largest margin down, skipping any that would close a
cycle; the ranking repeatedly takes a source of the locked graph. An agent's score is the sum of the
margins of the locked edges reachable from it among the agents not yet ranked (as OpenSpiel scores it),
so the winner scores highest and the last agent 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from models.voting.profile import PreferenceProfile


def _reaches(graph: np.ndarray, start: int, goal: int) -> bool:
    seen, stack = {start}, [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        for nxt in np.flatnonzero(graph[node]):
            if nxt not in seen:
                seen.add(int(nxt))
                stack.append(int(nxt))
    return False


def _reachable_margin(graph: np.ndarray, margins: np.ndarray, start: int) -> float:
    total, seen, stack = 0.0, {start}, [start]
    while stack:
        node = stack.pop()
        for nxt in np.flatnonzero(graph[node]):
            total += margins[node, nxt]
            if nxt not in seen:
                seen.add(int(nxt))
                stack.append(int(nxt))
    return total


def run(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """Ranked-pairs scores and ranking. Returns agent, score, rank (rank follows the locked order)."""
    margins = profile.margins
    n = len(profile.agents)
    rng = np.random.default_rng(seed)
    tiebreak = rng.permutation(n * n)
    pairs = [(margins[i, j], tiebreak[i * n + j], i, j) for i in range(n) for j in range(n) if margins[i, j] > 0]
    pairs.sort(key=lambda p: (-p[0], p[1]))
    graph = np.zeros((n, n), dtype=bool)
    for _, _, i, j in pairs:
        if not _reaches(graph, j, i):
            graph[i, j] = True
    remaining = list(rng.permutation(n))
    order, scores = [], np.zeros(n)
    while remaining:
        sources = [k for k in remaining if not graph[remaining, k].any()]
        pick = sources[0]
        scores[pick] = _reachable_margin(graph, margins, pick)
        order.append(pick)
        remaining.remove(pick)
        graph[pick, :] = False
    rank = np.empty(n, int)
    rank[order] = np.arange(1, n + 1)
    return pd.DataFrame({"agent": profile.agents, "score": scores, "rank": rank})
