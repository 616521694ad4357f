"""Concordia 2.x structured simulation logs (`gdm-concordia` >= 2.4: `SimulationLog.to_json()`, the log that
`Simulation.play()` returns), one simulation per file:

    {"content_store": {"3f2a...": "a long string", ...},
     "entries": [{"step": 1, "timestamp": "...", "entity_name": "Alice", "component_name": "entity_action",
                  "entry_type": "entity", "summary": "Step 1 ...",
                  "deduplicated_data": {"key": "Entity [Alice]", "value": {"__act__": {"Value": "...", ...}}}},
                 {"step": 1, ..., "entity_name": "rules", "component_name": "game_master", "entry_type": "step",
                  "deduplicated_data": {"key": "rules --- Alice ...", "value": {"resolve": {...}}}}, ...],
     "entity_memories": {...}, "game_master_memories": [...]}

Strings of 50 characters or more are stored once in `content_store` and replaced by {"_ref": id}; the loader
resolves them (an id missing from the store is a fault of that entry, named by its index).

Canonical: one match per file (match_id from the file's name and content; game = the first game master's name,
since the log does not name the scenario; n_players = the entities that acted); one result per acting entity
(player = agent = the entity's name: the log names characters, not the models behind them), score = the entity's
last cumulative score where the log carries one (a game master component's `Player Scores`, as Concordia's
payoff-matrix and similar components log it; else missing), rank from the scores, no outcome (scores are not
wins). Events: each entity's action (type `action`, text = its act component's `Value`) and each game master
step (type `resolution`, text = the event it resolved), round = step. Entries that Concordia 1.x's
`from_raw_log` conversion writes (timestamp '') read the same way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from referee.io.loaders.runner import Runner
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    NotThisRunner,
    RecordError,
    ResultBuilder,
    file_key,
    parse_time,
    ranks_from_scores,
    read_json,
    score_value,
)

NAME = "concordia-log"
KEYS = ("content_store", "entries")
OPTIONAL = ("entity_memories", "game_master_memories")
ENTRY_KEYS = ("step", "timestamp", "entity_name", "component_name", "entry_type", "summary", "deduplicated_data")
SCORE_KEYS = ("Player Scores", "player_scores")  # what Concordia's scoring components log, cumulative per player
ACT = "__act__"  # Concordia's default act component key (its channel holds the action as `Value`)
TEXT_CAP = 4000  # characters of an action or resolution kept in its event


def sniff(path: Path, head: str, sample: list) -> float:
    """1 for a .json object whose first key is `content_store` and which has `entries` (or a head too short to
    reach them: to_json writes the content store first)."""
    if path.suffix.lower() != ".json":
        return 0.0
    if sample:
        return 1.0 if isinstance(sample[0], dict) and all(k in sample[0] for k in KEYS) else 0.0
    text = head.lstrip()
    return 1.0 if text.startswith("{") and '"content_store"' in text[:200] else 0.0


def resolve(value: object, store: dict, where: str) -> object:
    """`value` with every {"_ref": id} replaced by the content store's string; RecordError naming `where` for an
    id the store lacks."""
    if isinstance(value, dict):
        if len(value) == 1 and "_ref" in value:
            ref = value["_ref"]
            if not isinstance(ref, str) or ref not in store:
                raise RecordError("missing reference", where, f"content reference {ref!r} is not in content_store")
            return store[ref]
        return {k: resolve(v, store, where) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, store, where) for v in value]
    return value


def _scores(value: object, where: str = "") -> dict[str, float] | None:
    """The last scores mapping (player -> number) nested anywhere in a game master's step log, or None;
    RecordError naming the player's field for a score that is not a finite number (text, NaN, an infinity), or
    the scores' field when they are not an object of player -> score (a list, a number):
    a step whose scores cannot be read never falls back to an earlier step's."""
    found = None
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{where}.{k}" if where else str(k)
            if k in SCORE_KEYS and not isinstance(v, dict):
                raise RecordError("wrong type", here, f"expected an object of player -> score, got {v!r}")
            if k in SCORE_KEYS and v:
                found = {str(name): score_value(x, f"{here}.{name}", allow_neg_inf=False) for name, x in v.items()}
            else:
                inner = _scores(v, here)
                found = inner if inner is not None else found
    return found


def _entry(raw: object, index: int, store: dict) -> dict:
    where = f"entries[{index}]"
    if not isinstance(raw, dict):
        raise RecordError("wrong type", where, "expected an entry object")
    for key in ("step", "entity_name", "component_name", "entry_type"):
        if key not in raw:
            raise RecordError("missing field", f"{where}.{key}", f"an entry carries '{key}'")
    extra = sorted(set(raw) - set(ENTRY_KEYS))
    if extra:
        raise RecordError("unexpected field", f"{where}.{extra[0]}", f"field '{extra[0]}' is not part of an entry")
    step = raw["step"]
    if isinstance(step, bool) or not isinstance(step, int):
        raise RecordError("wrong type", f"{where}.step", f"expected an integer step, got {step!r}")
    if step < 0:
        raise RecordError("out of range", f"{where}.step", f"Concordia counts steps from 0, got {step}")
    name = raw["entity_name"]
    if not isinstance(name, str) or not name:
        raise RecordError("wrong type", f"{where}.entity_name", f"expected a name, got {name!r}")
    data = resolve(raw.get("deduplicated_data") or {}, store, f"{where}.deduplicated_data")
    time = raw.get("timestamp") or None
    return {"step": step, "name": name, "component": raw["component_name"], "type": raw["entry_type"],
            "summary": raw.get("summary") or "", "data": data if isinstance(data, dict) else {},
            "time": parse_time(time, f"{where}.timestamp") if time else None}


def _action(data: dict) -> str | None:
    value = data.get("value")
    if isinstance(value, dict):
        act = value.get(ACT)
        if isinstance(act, dict) and act.get("Value") is not None:
            return str(act["Value"])
        if value.get("Value") is not None:
            return str(value["Value"])
    return None


def parse_log(doc: dict) -> dict[str, list[dict]]:
    """Canonical rows (matches, results, events) of one simulation log; raises RecordError naming the entry."""
    store = doc["content_store"]
    if not isinstance(store, dict) or not all(isinstance(v, str) for v in store.values()):
        raise RecordError("wrong type", "content_store", "expected an object of id -> text")
    entries = doc["entries"]
    if not isinstance(entries, list) or not entries:
        raise RecordError("missing field", "entries", "the log has no entries")
    rows = [_entry(raw, i, store) for i, raw in enumerate(entries)]
    masters = [r["name"] for r in rows if r["component"] == "game_master"]
    acting = list(dict.fromkeys(r["name"] for r in rows if r["component"] != "game_master"))
    if not acting:
        raise RecordError("missing field", "entries", "no entity acted in this log (no entity_action entries)")
    scores: dict[str, float] = {}
    events = []
    for i, r in enumerate(rows):
        if r["component"] == "game_master":
            found = _scores(r["data"].get("value"), f"entries[{i}].deduplicated_data.value")
            scores = found if found is not None else scores
            key = str(r["data"].get("key") or "")
            text = key.split(" --- ", 1)[1] if " --- " in key else r["summary"]
            kind, actor = "resolution", r["name"]
        else:
            text, kind, actor = _action(r["data"]) or r["summary"], "action", r["name"]
        events.append({"seq": len(events), "round": r["step"], "time": r["time"], "actor": actor, "type": kind,
                       "text": (text or None) and text[:TEXT_CAP]})
    unknown = sorted(set(scores) - set(acting))
    values = [scores.get(name) for name in acting]
    ranks = ranks_from_scores([math.nan if v is None else v for v in values]) if scores else [math.nan] * len(acting)
    match = {"runner": NAME, "game": masters[0] if masters else "concordia", "n_players": len(acting),
             "started_at": next((r["time"] for r in rows if r["time"] is not None), None),
             "attrs": json.dumps({"steps": max(r["step"] for r in rows), "entries": len(rows),
                                  "game_masters": list(dict.fromkeys(masters))}
                                 | ({"scored_non_acting": {n: scores[n] for n in unknown}} if unknown else {}))}
    results = [{"player": name, "agent": name, "score": value, "rank": None if math.isnan(rank) else rank,
                "outcome": None} for name, value, rank in zip(acting, values, ranks)]
    return {"matches": [match], "results": results, "events": events}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one Concordia 2.x structured log (one record, one match); a fault is named by entry index and field."""
    out = ResultBuilder(path, content_hash, NAME)
    try:
        doc = read_json(path)
        if not isinstance(doc, dict) or not all(k in doc for k in KEYS):
            raise NotThisRunner("the file is not an object with content_store and entries", runner=NAME,
                                field="content_store")
        extra = sorted(set(doc) - set(KEYS) - set(OPTIONAL))
        if extra:
            raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a simulation log")
    except RecordError as exc:
        return out.reject_file(exc)
    mid = f"concordia-log:{file_key(path, content_hash)}"
    out.accept_records([doc], parse_log, lambda match, label: mid)
    return out.build()


# the runner's own role: a game master's events (type `resolution`, its name as the actor, whatever it is called)
# are neither an agent's nor a spectator's (the audit's spectator check leaves them out)
RUNNER = Runner(NAME, sniff, load, {"log": list(KEYS) + list(OPTIONAL), "entry": list(ENTRY_KEYS),
                                    "scores (a game master's log)": list(SCORE_KEYS)},
                event_types=("resolution",))
