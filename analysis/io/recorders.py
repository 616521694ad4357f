"""Recorders for runners that keep no log of their own: one call after a game writes what referee ingests.

`record_textarena(path, env_id, agents, rewards, game_info)` appends one line of the `textarena` runner's format
(`referee.io.loaders.textarena`) after a TextArena harness's `rewards, game_info = env.close()`:

    rewards, game_info = env.close()
    record_textarena("logs/arena.jsonl", "TicTacToe-v0", {0: "model-a", 1: "model-b"}, rewards, game_info, seed=3)
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from referee.io.loaders.textarena import FORMAT


def record_textarena(path: str | Path, env_id: str, agents: dict[int, str], rewards: dict, game_info: dict,
                     seed: int | None = None, game_id: str | None = None, started_at: datetime | None = None) -> dict:
    """Append one TextArena game to the JSON-lines file `path` (created with its folder when missing).

    env_id : the environment played; agents : player id -> the agent seated there; rewards, game_info : what
    `env.close()` returned (player id -> reward; player id -> {role, invalid_move, turn_count, reason}).
    seed, game_id, started_at : optional (default: now, UTC). Returns the line written, as a dict.
    Raises ValueError when a player id lacks an agent or a reward.
    """
    missing = sorted(set(rewards) ^ set(agents), key=str)
    if missing:
        raise ValueError(f"player ids {missing} have a reward or an agent but not both")
    players = []
    for pid in sorted(rewards):
        info = dict(game_info.get(pid, {}))
        players.append({"player_id": int(pid), "agent": agents[pid], "role": info.get("role"),
                        "reward": float(rewards[pid]), "invalid_move": bool(info.get("invalid_move", False)),
                        "turn_count": info.get("turn_count"), "reason": info.get("reason")})
    line = {"format": FORMAT, "game_id": game_id, "env_id": env_id, "seed": seed,
            "started_at": (started_at or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ"), "players": players}
    line = {k: v for k, v in line.items() if v is not None}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, default=str) + "\n")
    return line
