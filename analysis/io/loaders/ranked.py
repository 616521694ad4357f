"""Ranked multiplayer games: one JSON line per game, plus an optional per-turn log.

Games file (each line one game, one record):

    {"game_id": "g1", "game": "werewolf", "started_at": "2026-01-01T10:00:00Z",
     "participants": [{"agent": "gpt-4", "player": "p1", "points": 12, "rank": 1}, ...]}

`player` defaults to the agent; give `points`, `rank` (also spelt `position`), or both; ties share a
rank; missing ranks are derived from points (highest first). Turn log (each line one event, one record):

    {"game_id": "g1", "turn": 3, "player": "p1", "type": "message" | "move" | "vote",
     "text": "...", "target": "p2", "value": 1.0}

Games become matches (`match_id` = game_id), participants results; turns become events (stage = type).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from referee.io.loaders.runner import Runner
from referee.io.loaders.errors import checked_keys
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    RecordError,
    ResultBuilder,
    json_lines,
    parse_time,
    rank_value,
    ranks_from_scores,
    score_value,
)
from referee.io.loaders.detect import share
from referee.io.loaders.jsonl import not_in, read_records, repeated_keys, screen

NAME = "ranked"
GAME_KEYS = {"game_id", "game", "started_at", "phase", "variant", "participants"}
PARTICIPANT_KEYS = {"agent", "player", "points", "rank", "position", "team"}
TURN_TYPES = ("message", "move", "vote")
TURN_FIELDS = {"game_id": pa.string(), "turn": pa.int64(), "seq": pa.int64(), "time": pa.string(),
               "player": pa.string(), "type": pa.string(), "text": pa.string(), "target": pa.string(),
               "value": pa.float64()}


def sniff(path: Path, head: str, sample: list) -> float:
    """The share of sampled JSON lines with `game_id` and either `participants` (games) or `turn` (turn log)."""
    if path.suffix.lower() != ".jsonl":
        return 0.0
    return share(sample, lambda r: "game_id" in r and ("participants" in r or "turn" in r) and "record" not in r)


def _participant(p: object, i: int) -> dict:
    field = f"participants[{i}]"
    checked_keys(p, "a participant", allowed=PARTICIPANT_KEYS, where=field)
    agent = p.get("agent")
    if not isinstance(agent, str) or not agent:
        raise RecordError("missing field" if agent is None else "wrong type", f"{field}.agent", "expected an agent name")
    player = p.get("player", agent)
    if not isinstance(player, str):
        raise RecordError("wrong type", f"{field}.player", f"expected text, got {player!r}")
    points = None if p.get("points") is None else score_value(p["points"], f"{field}.points", allow_neg_inf=False)
    rank = p.get("rank", p.get("position"))
    if rank is not None:
        rank = rank_value(rank, f"{field}.rank")
    if points is None and rank is None:
        raise RecordError("missing field", f"{field}.points", "a participant needs points or a rank")
    team = p.get("team")
    return {"player": player, "agent": agent, "score": points, "rank": rank, "team": None if team is None else str(team)}


def parse_game(obj: object) -> tuple[dict, list[dict]]:
    """A game line's match row and result rows (without provenance); raises RecordError."""
    if not isinstance(obj, dict):
        raise RecordError("wrong type", None, "expected a JSON object")
    extra = sorted(set(obj) - GAME_KEYS)
    if extra:
        raise RecordError("unexpected field", extra[0], f"'{extra[0]}' is not part of a game record")
    game_id = obj.get("game_id")
    if not isinstance(game_id, (str, int)) or isinstance(game_id, bool):
        raise RecordError("missing field" if game_id is None else "wrong type", "game_id", "expected a game id")
    parts = obj.get("participants")
    if not isinstance(parts, list):
        raise RecordError("missing field" if parts is None else "wrong type", "participants", "expected a list")
    if len(parts) < 2:
        raise RecordError("wrong value", "participants", f"a game needs at least two participants, got {len(parts)}")
    results = [_participant(p, i) for i, p in enumerate(parts)]
    names = [r["player"] for r in results]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RecordError("player listed twice", "participants", f"player {twice[0]!r} appears twice")
    if any(r["rank"] is None for r in results):
        if any(r["score"] is None for r in results):
            raise RecordError("missing field", "participants", "give points for everyone or ranks for everyone")
        for r, rank in zip(results, ranks_from_scores([r["score"] for r in results])):
            r["rank"] = rank
    for key in ("game", "phase", "variant"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise RecordError("wrong type", key, f"expected text, got {obj[key]!r}")
    match = {"match_id": str(game_id), "runner": NAME, "game": obj.get("game"), "phase": obj.get("phase"),
             "variant": obj.get("variant"), "n_players": len(results), "started_at": parse_time(obj.get("started_at"), "started_at")}
    return match, results


def load_games(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read a games file: each non-blank line is one game."""
    out = ResultBuilder(path, content_hash, NAME)
    for line in json_lines(path):
        out.saw()
        try:
            match, results = parse_game(line.parsed())
        except RecordError as exc:
            out.quarantine(str(line.number), exc, line)
            continue
        match.update(source_file=str(path), content_hash=content_hash, record_index=str(line.number))
        for r in results:
            r["match_id"] = match["match_id"]
        out.accept({"matches": [match], "results": results}, str(line.number), line)
    if out.read == 0:
        return out.reject_file(RecordError("empty file", None, "the file has no games"))
    return out.build()


def load_turns(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read a per-turn log: each line is one event (record = line number)."""
    out, table = read_records(path, content_hash, NAME, TURN_FIELDS, options.progress)
    if table is None:
        return out.build()
    seq = pc.coalesce(table["seq"], table["_line"])
    table = table.set_column(table.schema.get_field_index("seq"), "seq", seq)
    checks = [
        (pc.is_null(table["game_id"]), "missing field", "game_id", "required field 'game_id' is missing"),
        (pc.is_null(table["player"]), "missing field", "player", "required field 'player' is missing"),
        (pc.is_null(table["type"]), "missing field", "type", "required field 'type' is missing"),
        (not_in(table["type"], TURN_TYPES), "wrong value", "type", f"type must be one of {list(TURN_TYPES)}"),
        (pc.is_in(table["_line"], value_set=repeated_keys(table, ["game_id", "seq"])), "duplicate event", "seq",
         "this game's seq appears on an earlier line"),
    ]
    known = _sibling_players(path)
    if known:  # a turn of a game the folder's games file lists must be by one of its players
        games = pa.array(sorted({g for g, _ in known}))
        key = pc.binary_join_element_wise(pc.cast(table["game_id"], pa.string()), pc.cast(table["player"], pa.string()),
                                          "\x1f")
        listed = pa.array(sorted(f"{g}\x1f{p}" for g, p in known))
        stranger = pc.and_(pc.is_in(table["game_id"], value_set=games), pc.invert(pc.is_in(key, value_set=listed)))
        checks.append((pc.fill_null(stranger, False), "unknown player", "player",
                       "this player is not a participant of the game in the folder's games file"))
    good = screen(out, table, checks, "time")
    out.accept_bulk(good.num_rows, events=pa.table({
        "match_id": good["game_id"], "seq": good["seq"], "round": good["turn"], "time": good["_t"],
        "stage": good["type"], "actor": good["player"], "type": good["type"], "target": good["target"],
        "text": good["text"], "value": good["value"]}))
    out.add_records(good["game_id"], good["_line"])
    return out.build()


def _sibling_players(path: Path) -> set[tuple[str, str]]:
    """(game_id, player) of every participant in the games files (JSON lines whose first line lists
    `participants`) beside the turn log `path`; unreadable lines are skipped (their file is checked on its own).
    Read once per folder (and its modification time) however many turn logs it holds."""
    try:
        stamp = path.parent.stat().st_mtime_ns
    except OSError:
        return set()
    return _folder_players(str(path.parent), stamp)


@functools.lru_cache(maxsize=16)
def _folder_players(folder: str, stamp: int) -> frozenset[tuple[str, str]]:
    import json

    pairs: set[tuple[str, str]] = set()
    for other in sorted(Path(folder).glob("*.jsonl")):
        try:
            with open(other, encoding="utf-8-sig", errors="replace") as fh:
                lines = iter(fh)
                first = next((line for line in lines if line.strip()), "")
                if '"participants"' not in first:
                    continue
                for line in [first, *lines]:
                    try:
                        game = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(game, dict) and isinstance(game.get("participants"), list):
                        for p in game["participants"]:
                            if isinstance(p, dict):
                                who = p.get("player", p.get("agent"))
                                pairs.add((str(game.get("game_id")), str(who)))
        except OSError:
            continue
    return frozenset(pairs)


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Dispatch on the first line: a games file (`participants`) or a turn log."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = next((line for line in fh if line.strip()), "")
    if '"participants"' in first or not first:
        return load_games(path, content_hash, options)
    return load_turns(path, content_hash, options)


RUNNER = Runner(NAME, sniff, load, {"game line": sorted(GAME_KEYS), "participant": sorted(PARTICIPANT_KEYS),
                                    "turn line": list(TURN_FIELDS)})
