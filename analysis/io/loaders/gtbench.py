"""GTBench-style match files: one JSON line per match of a game-theoretic benchmark (GTBench and the harnesses
modelled on it), naming the agents (reasoning methods), the models behind them, the winner and the scores:

    {"match_id": "m1", "game": "tictactoe", "agents": ["cot", "prompt"], "models": ["gpt-4", "llama-3"],
     "winner": 0, "scores": [1, 0], "status": "completed", "forfeit": null}

Fields: `agents` (two or more seats) and `game` are required; `models` (one per seat), `winner` (a seat index, an
agent name, or null / "draw" / -1 when nobody wins), `scores` (a list per seat or an object by agent name),
`status` (`completed`, `forfeit` or `aborted`; default completed), `forfeit` (the seat index or agent name that
moved illegally or timed out), `match_id`, `seed`, `started_at` and `notes` are optional.

Canonical: one match per line (match_id, else file and line; game; repetition = seed); one result per seat
(player = 'seat {i}'; agent = 'MODEL/AGENT' when models are given, else the agent name; score = the given score,
else 1 for the winner, 0.5 each when nobody wins, 0 otherwise; rank from the scores). Outcome: `aborted` for
every seat of an aborted match (no scores kept), `forfeit` for the forfeiting seat and `win` for the others of
a forfeited match, else `win` for the winner and `loss` for the rest, `tie` for everyone when nobody wins.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

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

NAME = "gtbench"
REQUIRED = ("agents", "game")
OPTIONAL = ("match_id", "models", "winner", "scores", "status", "forfeit", "seed", "started_at", "notes")
STATUSES = ("completed", "forfeit", "aborted")
NOBODY = (None, "draw", "tie", -1)


def sniff(path: Path, head: str, sample: list) -> float:
    """The share of sampled JSON lines that carry `game`, a list of `agents` and a `winner` or `scores`."""
    if path.suffix.lower() != ".jsonl":
        return 0.0
    return share(sample, lambda r: "game" in r and isinstance(r.get("agents"), list)
                 and ("winner" in r or "scores" in r) and "participants" not in r and "format" not in r)


def _seat(value: object, agents: list[str], field: str) -> int | None:
    """A seat given as an index or an agent name (None when nobody)."""
    if value in NOBODY:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(agents):
        return value
    if isinstance(value, str) and value in agents:
        if agents.count(value) > 1:
            raise RecordError("ambiguous seat", field, f"agent {value!r} sits in more than one seat: give the index")
        return agents.index(value)
    raise RecordError("wrong value", field, f"expected a seat index or one of the agents {agents}, got {value!r}")


def _scores(value: object, agents: list[str]) -> list[float | None] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(agents))
        if unknown:
            raise RecordError("wrong value", f"scores.{unknown[0]}", f"{unknown[0]!r} is not one of the agents")
        value = [value.get(a) for a in agents]
    if not isinstance(value, list) or len(value) != len(agents):
        raise RecordError("wrong type", "scores", f"expected {len(agents)} scores (one per seat), got {value!r}")
    out = []
    for i, v in enumerate(value):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            raise RecordError("wrong type", f"scores[{i}]", f"expected a finite number, got {v!r}")
        out.append(None if v is None else float(v))
    return out


def parse_record(record: object, options: LoadOptions) -> dict[str, list[dict]]:
    """Canonical rows for one match line (match_id filled by the caller); raises RecordError naming the field."""
    if not isinstance(record, dict):
        raise RecordError("wrong type", None, f"expected a match object, got {type(record).__name__}")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise RecordError("missing field", missing[0], f"a match line carries '{missing[0]}'")
    extra = sorted(set(record) - set(REQUIRED) - set(OPTIONAL))
    if extra:
        raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a GTBench-style match")
    game, agents = record["game"], record["agents"]
    if not isinstance(game, str) or not game:
        raise RecordError("wrong type", "game", f"expected the game's name, got {game!r}")
    if not isinstance(agents, list) or len(agents) < 2 or not all(isinstance(a, str) and a.strip() for a in agents):
        raise RecordError("wrong type", "agents", "expected two or more agent names, one per seat")
    models = record.get("models")
    if models is not None and (not isinstance(models, list) or len(models) != len(agents)
                               or not all(isinstance(m, str) and m.strip() for m in models)):
        raise RecordError("wrong type", "models", f"expected {len(agents)} model names (one per seat)")
    status = record.get("status") or "completed"
    if status not in STATUSES:
        raise RecordError("wrong value", "status", f"expected one of {STATUSES}, got {status!r}")
    names = [a.strip() for a in agents]
    winner = _seat(record.get("winner"), names, "winner")
    forfeit = _seat(record.get("forfeit"), names, "forfeit")
    if status == "forfeit" and forfeit is None:
        raise RecordError("missing field", "forfeit", "a forfeited match names the seat that forfeited")
    scores = _scores(record.get("scores"), names)
    seats = range(len(names))
    if status == "aborted":
        outcome, scores = ["aborted"] * len(names), [None] * len(names)
    elif forfeit is not None:
        outcome = ["forfeit" if i == forfeit else "win" for i in seats]
    elif winner is None:
        outcome = ["tie"] * len(names)
    else:
        outcome = ["win" if i == winner else "loss" for i in seats]
    if winner is not None and status == "completed" and scores is not None and None not in scores:
        top = max(scores)
        if scores[winner] != top or scores.count(top) > 1:
            raise RecordError("contradiction", "winner", f"seat {winner} is named the winner but the scores are "
                              f"{scores}: the winner must have the highest score alone")
    if scores is None:
        scores = [{"win": 1.0, "tie": 0.5}.get(o, 0.0) for o in outcome]
    ranks = ranks_from_scores([math.nan if s is None else s for s in scores])
    who = [f"{models[i].strip()}/{names[i]}" if models else names[i] for i in seats]
    twice = sorted({w for w in who if who.count(w) > 1})
    if twice:
        raise RecordError("self-play", "agents", f"{twice[0]!r} sits in more than one seat: a match compares "
                          "different agents")
    seed = record.get("seed")
    match = {"runner": NAME, "game": game, "n_players": len(names),
             "repetition": None if seed is None else str(seed), "given_id": given_id(record.get("match_id"), "match_id"),
             "started_at": parse_time(record.get("started_at"), "started_at"),
             "attrs": json.dumps({k: record[k] for k in ("status", "notes") if record.get(k)})}
    results = [{"player": f"seat {i}", "agent": who[i], "score": scores[i],
                "rank": None if math.isnan(ranks[i]) else ranks[i], "outcome": outcome[i],
                "attrs": json.dumps({"agent": names[i]} | ({"model": models[i].strip()} if models else {}))}
               for i in seats]
    return {"matches": [match], "results": results}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read a GTBench-style match file (JSON lines); a bad line is quarantined by line number and field."""
    return load_match_lines(path, content_hash, NAME, lambda record: parse_record(record, options), prefix="gtbench:")
