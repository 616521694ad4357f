"""Simulated event logs of "tavern", a public-goods runner that no built-in loader reads.

It exists to exercise the bring-your-own-runner path (`data/formats/mapped.md`) and ingest at scale: one
JSON-lines file per match, each line one event keyed the way this runner spells things (`episode`,
`seat`, `model`, `event`, `ts`, `payload.*`). A match seats 3 to 8 of the agents: they join, chat,
contribute to a common pot, punish and vote each round; at the end every seat gets a `final` line with
its points and place. Points are whole numbers drawn as round(2 * (strength + Gumbel)), so the finishing
order is Plackett-Luce with weights exp(strength) and ties occur. Some matches are draws nobody wins
(every seat scores 0 and shares place 1); some are abandoned (no `final` lines: a match without results).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

# the runner mapping that reads these logs (the worked example of data/formats/mapped.md)
MAPPING = """\
name = "tavern"
game = "public_goods"

[keys]
match = "episode"
player = "seat"
agent = "model"
type = "event"
time = "ts"
round = "round"
text = "payload.text"
target = ["payload.to", "payload.for"]
value = ["payload.amount", "payload.fine"]
score = "payload.points"
rank = "payload.place"

[events]
message = ["say"]
action = ["contribute", "punish"]
vote = ["vote"]
result = ["final"]
ignore = ["heartbeat"]
"""


@dataclass
class SimulatedTavern:
    """One list of event dicts per match (file), and the truth."""

    matches: dict[str, list[dict]]
    truth: dict


def simulate_tavern(n_agents: int = 60, n_matches: int = 200, seed: int = 0, min_players: int = 3,
                    max_players: int = 8, rounds: int = 3, draw_share: float = 0.05,
                    abandoned_share: float = 0.03, rare_agents: int = 0) -> SimulatedTavern:
    """Draw `n_matches` matches among `n_agents` agents (strengths ~ N(0, 1), centred).

    `rare_agents` of the agents play a single match each (a long tail), the rest fill the other seats.
    Returns the events of each match and `truth` (strengths, draws, abandoned matches, line counts).
    """
    rng = np.random.default_rng(seed)
    agents = [f"model_{i:03d}" for i in range(n_agents)]
    strength = rng.normal(0, 1, n_agents)
    strength -= strength.mean()
    rare = list(range(n_agents - rare_agents, n_agents))
    common = np.arange(n_agents - rare_agents)
    start = datetime(2026, 3, 1, 9, 0, 0)
    matches: dict[str, list[dict]] = {}
    draws, abandoned = [], []
    for m in range(n_matches):
        k = int(rng.integers(min_players, min(max_players, n_agents) + 1))
        who = list(rng.choice(common, size=k, replace=False))
        if rare and m < len(rare):
            who[0] = rare[m]
        episode = f"ep-{m:05d}"
        t = start + timedelta(minutes=7 * m)
        lines = []

        def emit(kind, seat=None, model=None, rnd=None, **payload):
            nonlocal t
            t += timedelta(seconds=int(rng.integers(1, 20)))
            line = {"ts": t.isoformat() + "Z", "episode": episode, "event": kind}
            if seat is not None:
                line["seat"] = seat
            if model is not None:
                line["model"] = model
            if rnd is not None:
                line["round"] = rnd
            if payload:
                line["payload"] = payload
            lines.append(line)

        seats = [f"s{i + 1}" for i in range(k)]
        for seat, a in zip(seats, who):
            emit("join", seat, agents[a])
        for r in range(rounds):
            for i, seat in enumerate(seats):
                other = seats[(i + 1 + int(rng.integers(0, k - 1))) % k]
                emit("say", seat, rnd=r, to=other, text=f"{seat} proposes a deal to {other} in round {r}")
                emit("contribute", seat, rnd=r, amount=float(rng.integers(0, 11)))
                if rng.random() < 0.2:
                    emit("punish", seat, rnd=r, to=other, fine=float(rng.integers(1, 4)))
                if rng.random() < 0.1:
                    emit("heartbeat")
            for seat in seats:
                emit("vote", seat, rnd=r, **{"for": seats[int(rng.integers(0, k))]})
        kind = rng.random()
        if kind < abandoned_share:
            abandoned.append(episode)
        else:
            if kind < abandoned_share + draw_share:
                draws.append(episode)
                points = np.zeros(k)
            else:
                points = np.round(2 * (strength[who] + rng.gumbel(size=k)))
            order = (-points).argsort(kind="stable")
            place = np.empty(k)
            for pos, idx in enumerate(order):
                place[idx] = pos + 1 if pos == 0 or points[idx] != points[order[pos - 1]] else place[order[pos - 1]]
            for seat, a, p, pl in zip(seats, who, points, place):
                emit("final", seat, agents[a], points=float(p), place=int(pl))
        matches[episode] = lines
    truth = {"generator": "referee simulate tavern", "seed": seed,
             "model": "points = round(2 * (strength + Gumbel)): Plackett-Luce order with weights exp(strength)",
             "strengths": dict(zip(agents, strength.tolist())), "n_matches": n_matches, "draws": draws,
             "abandoned": abandoned, "rare_agents": [agents[i] for i in rare],
             "n_lines": sum(len(v) for v in matches.values()),
             "n_heartbeats": sum(1 for v in matches.values() for e in v if e["event"] == "heartbeat"),
             "n_finals": sum(1 for v in matches.values() for e in v if e["event"] == "final")}
    return SimulatedTavern(matches=matches, truth=truth)


def write_tavern(sim: SimulatedTavern, out: str | Path) -> dict[str, Path]:
    """Write `out/logs/ep-NNNNN.jsonl` (one file per match), `out/tavern.toml` (the runner mapping) and
    `out/truth.json`; returns the paths of the logs folder, the mapping and the truth."""
    out = Path(out)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for episode, lines in sim.matches.items():
        (logs / f"{episode}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    paths = {"logs": logs, "mapping": out / "tavern.toml", "truth": out / "truth.json"}
    paths["mapping"].write_text(MAPPING, encoding="utf-8")
    paths["truth"].write_text(json.dumps(sim.truth, indent=1) + "\n", encoding="utf-8")
    return paths
