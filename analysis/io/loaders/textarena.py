"""TextArena games, as `referee.io.recorders.record_textarena` writes them: one JSON line per game.

TextArena (`textarena` on PyPI) has no log format of its own: a harness plays `env.step` until done, then
`env.close()` returns the rewards per player id and each player's game info (role, invalid_move, turn_count,
reason). The recorder writes that, with the agents the harness seated, as

    {"format": "referee-textarena/1", "game_id": "g1", "env_id": "TicTacToe-v0", "seed": 3,
     "started_at": "2026-11-30T10:00:00Z",
     "players": [{"player_id": 0, "agent": "model-a", "role": "Player 0", "reward": 1,
                  "invalid_move": false, "turn_count": 3, "reason": "..."}, ...]}

Canonical: one match per line (match_id = game_id, game = env_id, repetition = seed), one result per player
(player = 'player {id}', role kept for hidden-role games, score = reward, rank from rewards, outcome: `tie` when
every reward is equal, else `win` at the best reward (a player or a winning team), `forfeit` below it for a
player flagged with an invalid move, `loss` for the others).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from referee.io.loaders.runner import Runner
from referee.io.loaders.errors import checked_keys
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    RecordError,
    given_id,
    load_match_lines,
    parse_time,
    ranks_from_scores,
)
from referee.io.loaders.detect import share

NAME = "textarena"
FORMAT = "referee-textarena/1"
KEYS = {"format", "game_id", "env_id", "seed", "started_at", "players", "notes"}
PLAYER_KEYS = {"player_id", "agent", "role", "reward", "invalid_move", "turn_count", "reason"}


def sniff(path: Path, head: str, sample: list) -> float:
    """The share of sampled JSON lines that carry this format's tag."""
    if path.suffix.lower() != ".jsonl":
        return 0.0
    return share(sample, lambda r: isinstance(r, dict) and r.get("format") == FORMAT)


def outcomes(rewards: list[float], invalid: list[bool]) -> list[str]:
    """Each player's outcome from the rewards and the invalid-move flags: `tie` for everyone when all rewards
    are equal; else `win` at the best reward (one player, or a winning team), and below it `forfeit` for a
    player whose invalid move cost the game, `loss` for the others. A best-reward player keeps its win even if
    it once moved invalidly (TextArena flags such players too); the flag stays in the result's attrs."""
    best = max(rewards)
    if all(r == best for r in rewards):
        return ["tie"] * len(rewards)
    return ["win" if r == best else "forfeit" if bad else "loss" for r, bad in zip(rewards, invalid)]


def _player(entry: object, index: int) -> dict:
    where = f"players[{index}]"
    checked_keys(entry, "a player", allowed=PLAYER_KEYS, where=where)
    pid = entry.get("player_id")
    if isinstance(pid, bool) or not isinstance(pid, int):
        raise RecordError("wrong type", f"{where}.player_id", f"expected an integer player id, got {pid!r}")
    agent = entry.get("agent")
    if not isinstance(agent, str) or not agent.strip():
        raise RecordError("missing field", f"{where}.agent", "each player needs the agent the harness seated")
    reward = entry.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
        raise RecordError("wrong type", f"{where}.reward", f"expected a finite number, got {reward!r}")
    invalid = entry.get("invalid_move", False)
    if not isinstance(invalid, bool):
        raise RecordError("wrong type", f"{where}.invalid_move", f"expected true or false, got {invalid!r}")
    role = entry.get("role")
    if role is not None and not isinstance(role, str):
        raise RecordError("wrong type", f"{where}.role", f"expected text, got {role!r}")
    turns = entry.get("turn_count")
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 0):
        raise RecordError("wrong value", f"{where}.turn_count", f"expected a whole number of turns >= 0, got {turns!r}")
    return {"player_id": pid, "agent": agent.strip(), "role": role, "reward": float(reward), "invalid_move": invalid,
            "turn_count": entry.get("turn_count"), "reason": entry.get("reason")}


def parse_record(record: object, options: LoadOptions) -> dict[str, list[dict]]:
    """Canonical rows for one game line (match_id filled by the caller); raises RecordError naming the field."""
    if not isinstance(record, dict):
        raise RecordError("wrong type", None, f"expected a game object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise RecordError("not this runner", "format", f"expected format {FORMAT!r}, got {record.get('format')!r}")
    extra = sorted(set(record) - KEYS)
    if extra:
        raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a TextArena game line")
    env_id = record.get("env_id")
    if not isinstance(env_id, str) or not env_id:
        raise RecordError("missing field", "env_id", "a game needs its env_id")
    players = record.get("players")
    if not isinstance(players, list) or len(players) < 2:
        raise RecordError("missing field", "players", "a game needs at least two players")
    rows = [_player(p, i) for i, p in enumerate(players)]
    ids = [r["player_id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise RecordError("player listed twice", "players", f"player ids {ids} repeat")
    rewards = [r["reward"] for r in rows]
    results_outcome = outcomes(rewards, [r["invalid_move"] for r in rows])
    ranks = ranks_from_scores(rewards)
    seed = record.get("seed")
    match = {"runner": NAME, "game": env_id, "repetition": None if seed is None else str(seed),
             "n_players": len(rows), "started_at": parse_time(record.get("started_at"), "started_at"),
             "given_id": given_id(record.get("game_id"), "game_id"),
             "attrs": json.dumps({"notes": record["notes"]}) if record.get("notes") else None}
    results = [{"player": f"player {r['player_id']}", "agent": r["agent"], "role": r["role"], "score": r["reward"],
                "rank": rank, "outcome": outcome,
                "attrs": json.dumps({k: r[k] for k in ("invalid_move", "turn_count", "reason") if r[k] is not None})}
               for r, rank, outcome in zip(rows, ranks, results_outcome)]
    return {"matches": [match], "results": results}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read a TextArena game log (JSON lines); a bad line is quarantined by line number and field."""
    return load_match_lines(path, content_hash, NAME, lambda record: parse_record(record, options), prefix="")


# the format numbers each player by its seat (turn order): `referee.prepare.covariates.seats`
RUNNER = Runner(NAME, sniff, load, {"game line": sorted(KEYS), "player": sorted(PLAYER_KEYS)}, seats=True)
