"""Simulated pairwise arena judgments from known Bradley-Terry strengths (Elo scale).

P(first wins | not a tie) = 1 / (1 + 10^((r_second - r_first) / 400)); a judgment is a tie with
probability `tie_rate` (a tenth of those both-bad). Ratings are drawn N(1500, 150^2) and centred.

With `style_effect` (log-odds), each answer also has a length (`length_a`, `length_b`: lognormal around a
typical length per model, longer for stronger models, so that length confounds strength as in Chatbot
Arena), and P(first wins | not a tie) = sigmoid(ln 10 (r_first - r_second) / 400 + style_effect * z) with z
Chatbot Arena's style feature: (length_a - length_b) / (length_a + length_b), standardised over the
judgments (`referee.prepare.covariates.style_feature`).
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
                   spread: float = 150.0, style_effect: float | None = None) -> SimulatedArena:
    """Draw `n_judgments` judgments between random pairs of `n_agents` models.

    style_effect : None for no lengths; else the log-odds effect of the standardised style feature of answer
        length (module docstring), with the lengths in `length_a`, `length_b`.

    Returns SimulatedArena with columns first, second, winner (first/second/tie/tie-both-bad), judge,
    prompt, time (and length_a, length_b); `truth['ratings']` are the Elo-scale strengths (mean 1500),
    `truth['style_effect']` the effect.
    """
    rng = np.random.default_rng(seed)
    agents = [f"model_{i:02d}" for i in range(n_agents)]
    ratings = rng.normal(0.0, spread, n_agents)
    ratings = ratings - ratings.mean() + 1500.0
    i = rng.integers(0, n_agents, n_judgments)
    j = (i + rng.integers(1, n_agents, n_judgments)) % n_agents
    logit = np.log(10.0) * (ratings[i] - ratings[j]) / 400.0
    lengths = None
    if style_effect is not None:
        typical = 400.0 * np.exp((ratings - 1500.0) / 400.0)  # stronger models answer longer
        lengths = np.rint(typical[np.r_[i, j]] * rng.lognormal(0.0, 0.5, 2 * n_judgments)) + 1.0
        share = (lengths[:n_judgments] - lengths[n_judgments:]) / (lengths[:n_judgments] + lengths[n_judgments:])
        logit = logit + style_effect * (share - share.mean()) / share.std()
    p_first = 1.0 / (1.0 + np.exp(-logit))
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
    if lengths is not None:
        judgments["length_a"] = lengths[:n_judgments].astype(np.int64)
        judgments["length_b"] = lengths[n_judgments:].astype(np.int64)
    truth = {"generator": "referee simulate arena", "seed": seed, "tie_rate": tie_rate,
             "style_effect": style_effect,
             "style_feature": None if style_effect is None else
             "standardised (length_a - length_b) / (length_a + length_b); referee ratings --covariate style:length",
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
