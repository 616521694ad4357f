"""Simulated ranked multiplayer games from known strengths (Plackett-Luce), with per-turn logs.

Each game draws 3 to 8 of the agents; points are strength + Gumbel noise (so the finishing order is
Plackett-Luce with weights exp(strength)), rounded to whole points so that ties occur; ranks follow
points (ties share the best rank). Each game has a few turns of messages, moves and votes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GAMES = ("werewolf", "diplomacy_lite", "poker")


@dataclass
class SimulatedRanked:
    """Game records, turn records, and the truth."""

    games: list[dict]
    turns: list[dict]
    truth: dict


def simulate_ranked(n_agents: int = 8, n_games: int = 60, seed: int = 0, min_players: int = 3,
                    max_players: int = 8) -> SimulatedRanked:
    """Draw `n_games` games; `truth['strengths']` are the agents' log Plackett-Luce weights (mean 0)."""
    rng = np.random.default_rng(seed)
    agents = [f"agent_{i:02d}" for i in range(n_agents)]
    strength = rng.normal(0, 1, n_agents)
    strength -= strength.mean()
    games, turns = [], []
    for g in range(n_games):
        k = int(rng.integers(min_players, min(max_players, n_agents) + 1))
        who = rng.choice(n_agents, size=k, replace=False)
        points = np.round(2 * (strength[who] + rng.gumbel(size=k)))
        order = (-points).argsort(kind="stable")
        rank = np.empty(k)
        for pos, idx in enumerate(order):
            rank[idx] = pos + 1 if pos == 0 or points[idx] != points[order[pos - 1]] else rank[order[pos - 1]]
        game_id = f"game_{g:04d}"
        games.append({"game_id": game_id, "game": GAMES[g % len(GAMES)],
                      "participants": [{"agent": agents[a], "player": f"p{n}", "points": float(p), "rank": float(r)}
                                       for n, (a, p, r) in enumerate(zip(who, points, rank))]})
        for turn in range(int(rng.integers(1, 4))):
            for n in range(k):
                kind = ("message", "move", "vote")[int(rng.integers(0, 3))]
                event = {"game_id": game_id, "turn": turn, "player": f"p{n}", "type": kind}
                if kind == "message":
                    event["text"] = f"p{n} speaks in turn {turn}"
                else:
                    event["target"] = f"p{int(rng.integers(0, k))}"
                turns.append(event)
    truth = {"generator": "referee simulate ranked", "seed": seed,
             "model": "points = 2 * (strength + Gumbel), rounded: Plackett-Luce order with weights exp(strength)",
             "strengths": dict(zip(agents, strength.tolist())), "n_games": n_games, "n_turns": len(turns)}
    return SimulatedRanked(games=games, turns=turns, truth=truth)


def write_ranked(sim: SimulatedRanked, out: str | Path) -> dict[str, Path]:
    """Write `out/logs/games.jsonl`, `out/logs/turns.jsonl` and `out/truth.json`; returns the paths."""
    out = Path(out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    paths = {"games": out / "logs" / "games.jsonl", "turns": out / "logs" / "turns.jsonl", "truth": out / "truth.json"}
    paths["games"].write_text("".join(json.dumps(g) + "\n" for g in sim.games), encoding="utf-8")
    paths["turns"].write_text("".join(json.dumps(t) + "\n" for t in sim.turns), encoding="utf-8")
    paths["truth"].write_text(json.dumps(sim.truth, indent=1) + "\n", encoding="utf-8")
    return paths
