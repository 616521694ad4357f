"""Helpers shared by several test files: simulated comparisons and a synthetic scenario catalogue."""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.io.catalogue import Catalogue


def simulate(strengths: np.ndarray, games: list[str], n: int, seed: int) -> pd.DataFrame:
    """Comparisons drawn from per-game strengths (K, agents), one per cluster, no ties."""
    rng = np.random.default_rng(seed)
    K, A = strengths.shape
    g = rng.integers(0, K, n)
    a = rng.integers(0, A, n)
    b = (a + rng.integers(1, A, n)) % A
    p = 1 / (1 + np.exp(-(strengths[g, a] - strengths[g, b])))
    won = rng.random(n) < p
    names = np.array([f"ag{i}" for i in range(A)])
    return pd.DataFrame({"a": names[a], "b": names[b], "outcome": won.astype(float), "cluster": np.arange(n).astype(str),
                         "game": np.array(games)[g], "kind": "match", "communication": None, "time": None})


def synthetic_catalogue(n_scenarios: int, n_tags: int, seed: int) -> Catalogue:
    rng = np.random.default_rng(seed)
    tags = [f"t{k}" for k in range(n_tags)]
    while True:
        X = rng.random((n_scenarios, n_tags)) < 0.45
        if np.linalg.matrix_rank(np.c_[np.ones(n_scenarios), X]) == n_tags + 1:
            break
    scen = pd.DataFrame({"scenario": [f"s{i:02d}" for i in range(n_scenarios)], "game": "g", "mode": "resident",
                         "background": "bg", "score_min": 0.0, "score_max": 10.0, "description": None})
    rows = [{"scenario": f"s{i:02d}", "tag": tags[k]} for i in range(n_scenarios) for k in range(n_tags) if X[i, k]]
    return Catalogue(scenarios=scen, tags=pd.DataFrame(rows))


def tournament(n_agents: int = 80, n_matches: int = 600, rare: int = 20, rare_games: int = 3, seed: int = 0,
               sizes: tuple[int, ...] = (3, 8), draw_share: float = 0.05, runner: str = "table",
               scenario: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """A generated free-for-all tournament of the real shapes, as canonical (matches, results) tables.

    `n_agents` agents with strengths ~ N(0, 1); the last `rare` of them play `rare_games` matches each (a long
    tail), the rest fill the other seats; matches have 3 or 8 players (`sizes`); points are
    round(2 * (strength + Gumbel)) (a Plackett-Luce order with ties); `draw_share` of the matches are games
    nobody wins (everyone 0 points, sharing rank 1). `scenario`, if given, is written on every match (the
    constant column a user adds). Returns (matches, results, strengths by agent).
    """
    rng = np.random.default_rng(seed)
    agents = [f"ag{i:03d}" for i in range(n_agents)]
    strength = rng.normal(0, 1, n_agents)
    common = np.arange(n_agents - rare)
    rare_slots = [a for a in range(n_agents - rare, n_agents) for _ in range(rare_games)]
    matches, results = [], []
    for m in range(n_matches):
        k = int(sizes[m % len(sizes)])
        who = list(rng.choice(common, size=k, replace=False))
        if m < len(rare_slots):
            who[0] = rare_slots[m]
        points = np.zeros(k) if rng.random() < draw_share else np.round(2 * (strength[who] + rng.gumbel(size=k)))
        ranks = pd.Series(points).rank(method="min", ascending=False).to_numpy()
        mid = f"m{m:05d}"
        matches.append({"match_id": mid, "runner": runner, "game": "ffa", "scenario": scenario, "variant": None,
                        "phase": None, "repetition": None, "n_players": k, "communication": None, "started_at": None})
        results += [{"match_id": mid, "player": f"p{j}", "agent": agents[a], "group": None, "team": None,
                     "role": None, "score": float(p), "rank": float(r)} for j, (a, p, r) in enumerate(zip(who, points, ranks))]
    return pd.DataFrame(matches), pd.DataFrame(results), dict(zip(agents, strength.tolist()))


def duels(n_agents: int, games: int, rare: int, seat: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """Two-seat games as a user's CSV rows: seat 0 gets `seat` log-odds; the last `rare` agents play 3 games each."""
    rng = np.random.default_rng(seed)
    agents = [f"ag{i:02d}" for i in range(n_agents)]
    strength = dict(zip(agents, rng.normal(0, 0.7, n_agents)))
    common = agents[: n_agents - rare]
    rare_slots = [a for a in agents[n_agents - rare:] for _ in range(3)]
    rows = []
    for m in range(games):
        first, second = rng.choice(common, 2, replace=False)
        if m < len(rare_slots):
            first = rare_slots[m]
        won = rng.random() < 1 / (1 + np.exp(-(strength[first] - strength[second] + seat)))
        rows += [{"match": f"m{m}", "agent": first, "player": "p0", "score": float(won), "rank": 1 + (not won),
                  "game": "duel", "seat": 0},
                 {"match": f"m{m}", "agent": second, "player": "p1", "score": float(not won), "rank": 1 + won,
                  "game": "duel", "seat": 1}]
    return pd.DataFrame(rows), strength


def pairwise_pearson(values: np.ndarray) -> np.ndarray:
    """The independent reference for `referee.models.social.consistency.similarity` (its test and
    benchmarks/consistency.py): numpy's Pearson r of each pair of rows of `values` (rows x metrics, NaN where a
    metric is missing) over the metrics both have, one pair at a time; NaN where they share fewer than 3 or either
    is constant over them; 1 on the diagonal."""
    from itertools import combinations

    out = np.eye(len(values))
    for i, j in combinations(range(len(values)), 2):
        ok = np.isfinite(values[i]) & np.isfinite(values[j])
        flat = ok.sum() < 3 or np.ptp(values[i][ok]) == 0 or np.ptp(values[j][ok]) == 0
        out[i, j] = out[j, i] = np.nan if flat else np.corrcoef(values[i][ok], values[j][ok])[0, 1]
    return out
