"""Simulated pairwise arena judgments from known Bradley-Terry strengths (Elo scale).

P(first wins | not a tie) = 1 / (1 + 10^((r_second - r_first) / 400)); a judgment is a tie with
probability `tie_rate` (a tenth of those both-bad). Ratings are drawn N(1500, 150^2) and centred.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass
class SimulatedArena:
    """Judgments as a DataFrame in the arena format, and the truth."""

    judgments: pd.DataFrame
    truth: dict


def simulate_arena(n_agents: int = 10, n_judgments: int = 2000, seed: int = 0, tie_rate: float = 0.1,
                   spread: float = 150.0) -> SimulatedArena:
    """Draw `n_judgments` judgments between random pairs of `n_agents` models.

    Returns SimulatedArena with columns first, second, winner (first/second/tie/tie-both-bad), judge,
    prompt, time; `truth['ratings']` are the Elo-scale strengths (mean 1500).
    """
    rng = np.random.default_rng(seed)
    agents = [f"model_{i:02d}" for i in range(n_agents)]
    ratings = rng.normal(0.0, spread, n_agents)
    ratings = ratings - ratings.mean() + 1500.0
    i = rng.integers(0, n_agents, n_judgments)
    j = (i + rng.integers(1, n_agents, n_judgments)) % n_agents
    p_first = 1.0 / (1.0 + 10 ** ((ratings[j] - ratings[i]) / 400.0))
    u, t = rng.uniform(size=n_judgments), rng.uniform(size=n_judgments)
    winner = np.where(t < tie_rate, np.where(t < tie_rate / 10, "tie-both-bad", "tie"),
                      np.where(u < p_first, "first", "second"))
    start = datetime(2026, 1, 1)
    judgments = pd.DataFrame({
        "first": np.array(agents)[i], "second": np.array(agents)[j], "winner": winner,
        "judge": [f"judge_{k}" for k in rng.integers(0, 20, n_judgments)],
        "prompt": [f"prompt_{k}" for k in rng.integers(0, 12, n_judgments)],
        "time": [(start + timedelta(minutes=int(m))).strftime("%Y-%m-%dT%H:%M:%SZ")
                 for m in np.sort(rng.integers(0, 60 * 24 * 30, n_judgments))],
    })
    truth = {"generator": "referee simulate arena", "seed": seed, "tie_rate": tie_rate,
             "model": "Bradley-Terry on the Elo scale: P(i beats j) = 1/(1+10^((r_j-r_i)/400))",
             "ratings": dict(zip(agents, ratings.tolist()))}
    return SimulatedArena(judgments=judgments, truth=truth)


def write_arena(sim: SimulatedArena, out: str | Path) -> dict[str, Path]:
    """Write `out/logs/judgments.csv` and `out/truth.json`; returns the paths."""
    out = Path(out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    sim.judgments.to_csv(out / "logs" / "judgments.csv", index=False)
    (out / "truth.json").write_text(json.dumps(sim.truth, indent=1) + "\n", encoding="utf-8")
    return {"judgments": out / "logs" / "judgments.csv", "truth": out / "truth.json"}
