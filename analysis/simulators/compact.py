"""Simulated communicate-predict-act games (COMPACT format) from known agent traits.

Each agent has
- a theory-of-mind accuracy `tom` (the chance its prediction of another player's next action is exactly
  right; otherwise the prediction is a random action),
- an assertiveness `assertiveness` in (0.15, 0.85): its action's value is round(assertiveness x the game's
  top value + Normal(0, 0.6)), clipped to the game's range (`referee.prepare.socio.ACTION_RANGE`),
- an influence level (a judge's 0-3 rating of its influence on a chat partner is
  round(1.5 + influence + Normal(0, 0.5)), clipped) and a planning level (the judge's 0-3 planning rating
  per round is round(1.5 + planning + Normal(0, 0.5)), clipped),
- a skill.
A player's reward in a game is 0.3 skill + sum over `DRIVERS` of weight x the player's realised metric in
that game (its share of exact predictions; its mean influence rating / 3) + Normal(0, 0.5): winning depends
on theory of mind and influence, not on assertiveness or planning (their weight is 0), which is what the
determinants model must find. Games cycle through the five games, sizes 2-5, both framings, with and
without communication; each has three rounds of messages (when communication is on), predictions,
reasoning and actions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from referee.io.loaders.compact import GAMES

FRAMINGS = {"coalition": ("merchants", "farmers"), "scheduler": ("friends", "colleagues"),
            "tragedy_of_the_commons": ("fishery", "pasture"), "survivor": ("cowboys", "pirates"),
            "hupi": ("auction", "lottery")}
NAMES = ["Ava", "Ben", "Cleo", "Dev", "Eli"]
ROUNDS = 3
# what winning depends on: reward weight per realised metric (theory of mind as the share of exact
# predictions in the game, influence as the mean judge rating / 3); the others have weight 0
DRIVERS = {"theory_of_mind": 3.0, "influence": 1.5, "assertiveness": 0.0, "planning": 0.0}
# the simulator's action ranges (lowest, highest value), the same as `referee.prepare.socio.ACTION_RANGE`
TOP = {"survivor": 3, "scheduler": 4, "hupi": 10, "coalition": 10, "tragedy_of_the_commons": 10}


@dataclass
class SimulatedCompact:
    """COMPACT trace lines and the truth."""

    lines: list[dict]
    truth: dict


def _action(rng, game: str, me: str, others: list[str], assertiveness: float | None = None) -> dict:
    """One action; its value drawn uniformly, or around `assertiveness` x the game's top value."""
    low = 1 if game == "hupi" else 0
    if assertiveness is None:
        value = int(rng.integers(low, TOP[game] + 1))
    else:
        value = int(np.clip(round(assertiveness * TOP[game] + rng.normal(0, 0.6)), low, TOP[game]))
    if game == "survivor":
        target = others[int(rng.integers(0, len(others)))]
        return {"action": f"attack {target} with {value}", "target": target, "value": float(value)}
    if game == "scheduler":
        option = "ABCDE"[value]
        return {"action": f"propose {option}", "value": float(value)}
    if game == "hupi":
        return {"action": f"bid {value}", "value": float(value)}
    amount = value
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
    assertiveness = rng.uniform(0.15, 0.85, n_agents)
    planning = rng.normal(0, 0.7, n_agents)
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
        hits = np.zeros(size)
        guesses = np.zeros(size)
        influence_sum = np.zeros(size)
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
                        influence_sum[names.index(x)] += rating
                        lines.append({"record": "judge", "game_id": game_id, "round": rnd, "judge": "judge-llm",
                                      "metric": "influence", "subject": x, "object": y, "value": float(rating)})
            actions = {x: _action(rng, game, x, [y for y in names if y != x], assertiveness[a])
                       for x, a in zip(names, who)}
            for k, (x, a) in enumerate(zip(names, who)):
                for y in names:
                    if x == y:
                        continue
                    guess = actions[y] if rng.uniform() < tom[a] else _action(rng, game, y, [z for z in names if z != y])
                    hits[k] += guess == actions[y]
                    guesses[k] += 1
                    lines.append(dict({"record": "prediction", "game_id": game_id, "round": rnd, "player": x,
                                       "target": y}, **{k: v for k, v in guess.items() if k != "target"}))
                lines.append({"record": "reasoning", "game_id": game_id, "round": rnd, "player": x,
                              "text": f"{x} weighs the options in round {rnd}"})
                lines.append({"record": "judge", "game_id": game_id, "round": rnd, "judge": "judge-llm",
                              "metric": "planning", "subject": x,
                              "value": float(np.clip(round(1.5 + planning[a] + rng.normal(0, 0.5)), 0, 3))})
            for x in names:
                lines.append(dict({"record": "action", "game_id": game_id, "round": rnd, "player": x}, **actions[x]))
        chats = max(1, ROUNDS * (size - 1))
        realised = {"theory_of_mind": hits / np.maximum(guesses, 1),
                    "influence": influence_sum / chats / 3 if communication else np.zeros(size)}
        rewards = 0.3 * skill[who] + rng.normal(0, 0.5, size)
        for metric, weight in DRIVERS.items():
            if weight and metric in realised:
                rewards = rewards + weight * realised[metric]
        lines += [{"record": "reward", "game_id": game_id, "player": n, "reward": round(float(r), 3)}
                  for n, r in zip(names, rewards)]
    truth = {"generator": "referee simulate compact", "seed": seed,
             "model": "reward = 0.3 skill + sum of DRIVERS weight x realised metric + N(0, 0.5); prediction exact "
                      "with probability tom; action value round(assertiveness x top + N(0, 0.6)); influence and "
                      "planning ratings round(1.5 + level + N(0, 0.5)) clipped to 0..3",
             "drivers": DRIVERS,
             "skill": dict(zip(agents, skill.tolist())), "tom": dict(zip(agents, tom.tolist())),
             "assertiveness": dict(zip(agents, assertiveness.tolist())),
             "influence": dict(zip(agents, influence.tolist())), "planning": dict(zip(agents, planning.tolist())),
             "n_games": n_games, "n_lines": len(lines)}
    return SimulatedCompact(lines=lines, truth=truth)


def write_compact(sim: SimulatedCompact, out: str | Path) -> dict[str, Path]:
    """Write `out/logs/games.jsonl` and `out/truth.json`; returns the paths."""
    out = Path(out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    paths = {"trace": out / "logs" / "games.jsonl", "truth": out / "truth.json"}
    paths["trace"].write_text("".join(json.dumps(line) + "\n" for line in sim.lines), encoding="utf-8")
    paths["truth"].write_text(json.dumps(sim.truth, indent=1) + "\n", encoding="utf-8")
    return paths
