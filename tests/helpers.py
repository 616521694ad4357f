"""Helpers shared by several test files: simulated comparisons and a synthetic scenario catalogue."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.io.catalogue import Catalogue


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
