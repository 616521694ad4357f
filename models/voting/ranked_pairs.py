"""Ranked pairs, Tideman's method (https://en.wikipedia.org/wiki/Ranked_pairs).

Pairs with a positive margin are locked in from the largest margin down, skipping any that would close a
cycle (pairs of equal margin together: see `lock`); an agent ranks below every agent with a locked path to
it. An agent's score is the sum of the margins of the locked edges reachable from it (as OpenSpiel scores
it), so the winner scores highest and the last agent 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.voting.profile import PreferenceProfile


def _closure(graph: np.ndarray) -> np.ndarray:
    """reach[i, j]: a path of one or more locked edges leads from i to j (boolean matrix squaring)."""
    reach = graph.astype(bool)
    while True:
        step = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
        if (step == reach).all():
            return reach
        reach = step


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


def lock(margins: np.ndarray) -> np.ndarray:
    """The locked graph: positive-margin pairs from the largest margin down; pairs of equal margin are taken
    together, and those that would lie on a cycle (with each other or with what is locked) are all skipped,
    so that no tie is broken by an arbitrary order."""
    n = margins.shape[0]
    graph = np.zeros((n, n), dtype=bool)
    for m in sorted(set(margins[margins > 0].tolist()), reverse=True):
        edges = np.argwhere(margins == m)
        if len(edges) == 1:
            i, j = edges[0]
            if not _reaches(graph, int(j), int(i)):
                graph[i, j] = True
            continue
        candidate = graph.copy()
        candidate[edges[:, 0], edges[:, 1]] = True
        reach = _closure(candidate)
        keep = ~reach[edges[:, 1], edges[:, 0]]  # (i, j) lies on a cycle when j reaches i
        graph[edges[keep, 0], edges[keep, 1]] = True
    return graph


def run(profile: PreferenceProfile, seed: int = 0) -> pd.DataFrame:
    """Ranked pairs. Returns agent, score, rank, ballots: the ranking takes the sources of the locked graph
    tier by tier, and the agents of one tier (which the locked graph cannot separate) share a rank,
    competition-style (a strict order wherever the locked graph orders everyone); an agent's score is the
    sum of the margins of the locked edges reachable from it, itself included (OpenSpiel's score: the
    winner highest, the last agent 0). `pairs` is the contest paper's scale (its Table 6): one count per pair
    of agents, 1 to the agent the locked graph puts above the other, half each where it orders neither, so the
    column sums to n (n - 1) / 2."""
    margins = profile.margins
    graph = lock(margins)
    reach = _closure(graph)
    below = reach | np.eye(len(graph), dtype=bool)  # k itself and every agent it reaches
    scores = below.astype(float) @ (graph * margins).sum(axis=1)
    unordered = ~reach & ~reach.T & ~np.eye(len(graph), dtype=bool)
    pairs = reach.sum(axis=1) + 0.5 * unordered.sum(axis=1)
    rank = np.zeros(len(graph))
    remaining = np.ones(len(graph), dtype=bool)
    while remaining.any():
        tier = remaining & ~(graph[remaining].any(axis=0))  # no locked edge from a remaining agent
        rank[tier] = 1 + (~remaining).sum()
        remaining &= ~tier
    return profile.outcome(scores, seed).assign(rank=rank, pairs=pairs.astype(float))
