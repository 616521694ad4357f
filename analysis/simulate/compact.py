"""Simulated communicate-predict-act games (COMPACT format) from known agent traits.

Each agent has a skill (its reward is skill + Normal(0, 1) noise per game, so P(i outscores j) =
Phi((s_i - s_j) / sqrt(2))), a theory-of-mind accuracy (the chance its prediction of another player's
next action is exactly right) and an influence level (a judge's 0-3 rating of its influence on a chat
partner is round(1.5 + influence + Normal(0, 0.5)), clipped). Games cycle through the five games, sizes
2-5, both framings, with and without communication; each has three rounds of messages (when
communication is on), predictions, reasoning and actions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from analysis.io.loaders.compact import GAMES

FRAMINGS = {"coalition": ("merchants", "farmers"), "scheduler": ("friends", "colleagues"),
            "tragedy_of_the_commons": ("fishery", "pasture"), "survivor": ("cowboys", "pirates"),
            "hupi": ("auction", "lottery")}
NAMES = ["Ava", "Ben", "Cleo", "Dev", "Eli"]
ROUNDS = 3


@dataclass
class SimulatedCompact:
    """COMPACT trace lines and the truth."""

    lines: list[dict]
    truth: dict


def _action(rng, game: str, me: str, others: list[str]) -> dict:
    if game == "survivor":
        target = others[int(rng.integers(0, len(others)))]
        ammo = int(rng.integers(0, 4))
        return {"action": f"attack {target} with {ammo}", "target": target, "value": float(ammo)}
    if game == "scheduler":
        option = "ABCDE"[int(rng.integers(0, 5))]
        return {"action": f"propose {option}", "value": float("ABCDE".index(option))}
    if game == "hupi":
        bid = int(rng.integers(1, 11))
        return {"action": f"bid {bid}", "value": float(bid)}
    amount = int(rng.integers(0, 11))
    verb = "demand" if game == "coalition" else "haul"
    return {"action": f"{verb} {amount}", "value": float(amount)}


def simulate_compact(n_agents: int = 6, n_games: int = 60, seed: int = 0) -> SimulatedCompact:
    """Draw `n_games` games among `n_agents` agents; returns the trace lines and the truth."""
    rng = np.random.default_rng(seed)
    agents = [f"llm_{i:02d}" for i in range(n_agents)]
    skill = rng.normal(0, 1, n_agents)
    skill -= skill.mean()
    tom = rng.uniform(0.2, 0.8, n_agents)
    influence = rng.normal(0, 0.7, n_agents)
    lines: list[dict] = []
    start = datetime(2026, 3, 1)
    for g in range(n_games):
        game = GAMES[g % len(GAMES)]
        size = min(2 + (g // 10) % 4, n_agents)
        framing = FRAMINGS[game][(g // 40) % 2]
        communication = (g // 5) % 2 == 0
        who = rng.choice(n_agents, size=size, replace=False)
        names = NAMES[:size]
        game_id = f"compact_{g:04d}"
        lines.append({"record": "game", "game_id": game_id, "game": game, "framing": framing,
                      "communication": communication, "phase": "evaluation",
                      "started_at": (start + timedelta(hours=g)).strftime("%Y-%m-%dT%H:%M:%SZ")})
        lines += [{"record": "player", "game_id": game_id, "player": n, "agent": agents[a]} for n, a in zip(names, who)]
        for rnd in range(1, ROUNDS + 1):
            if communication:
                for x, a in zip(names, who):
                    for y, b in zip(names, who):
                        if x == y:
                            continue
                        lines.append({"record": "message", "game_id": game_id, "round": rnd, "sender": x,
                                      "recipient": y, "text": f"{x} to {y}: let us agree in round {rnd}"})
                        rating = int(np.clip(round(1.5 + influence[a] + rng.normal(0, 0.5)), 0, 3))
                        lines.append({"record": "judge", "game_id": game_id, "round": rnd, "judge": "judge-llm",
                                      "metric": "influence", "subject": x, "object": y, "value": float(rating)})
            actions = {x: _action(rng, game, x, [y for y in names if y != x]) for x in names}
            for x, a in zip(names, who):
                for y in names:
                    if x == y:
                        continue
                    guess = actions[y] if rng.uniform() < tom[a] else _action(rng, game, y, [z for z in names if z != y])
                    lines.append(dict({"record": "prediction", "game_id": game_id, "round": rnd, "player": x,
                                       "target": y}, **{k: v for k, v in guess.items() if k != "target"}))
                lines.append({"record": "reasoning", "game_id": game_id, "round": rnd, "player": x,
                              "text": f"{x} weighs the options in round {rnd}"})
            for x in names:
                lines.append(dict({"record": "action", "game_id": game_id, "round": rnd, "player": x}, **actions[x]))
        rewards = skill[who] + rng.normal(0, 1, size)
        lines += [{"record": "reward", "game_id": game_id, "player": n, "reward": round(float(r), 3)}
                  for n, r in zip(names, rewards)]
    truth = {"generator": "referee simulate compact", "seed": seed,
             "model": "reward = skill + N(0,1); prediction exact with probability tom; influence rating "
                      "round(1.5 + influence + N(0, 0.5)) clipped to 0..3",
             "skill": dict(zip(agents, skill.tolist())), "tom": dict(zip(agents, tom.tolist())),
             "influence": dict(zip(agents, influence.tolist())), "n_games": n_games, "n_lines": len(lines)}
    return SimulatedCompact(lines=lines, truth=truth)


def write_compact(sim: SimulatedCompact, out: str | Path) -> dict[str, Path]:
    """Write `out/logs/games.jsonl` and `out/truth.json`; returns the paths."""
    out = Path(out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    paths = {"trace": out / "logs" / "games.jsonl", "truth": out / "truth.json"}
    paths["trace"].write_text("".join(json.dumps(line) + "\n" for line in sim.lines), encoding="utf-8")
    paths["truth"].write_text(json.dumps(sim.truth, indent=1) + "\n", encoding="utf-8")
    return paths
