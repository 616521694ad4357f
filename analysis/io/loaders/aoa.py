"""Age-of-Agents-style seasons: a season summary (JSON) and an event log (JSON lines).

Format: `data/formats/aoa.md`. The season is one match (`aoa:{season}`); each governing agent is a
player (codename) whose agent is its model, whose team is its nation and whose role is its mission.
Counters become `telemetry` measures, recorded score components `component` measures, and the nation's
end state (`nation_power`, `nation_alive`) `outcome` measures of each agent governing it. Snapshots and
nation end states become events (stage `snapshot`/`final`, actor = nation, types `power`, `alive`,
`agents`); the engine's board-wide peace timer (`peace`) becomes events of stage `snapshot`, type
`peace_timer`, no actor, value in minutes. Each line of the event log is one event: actions (stage `act`) and
proposals (stage `propose`) typed by their name, messages (stage `communicate`, type `message`), spectator-
channel events (stage `spectator`; the only events that need no agent), harness events (stage `harness`) by
their kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from referee.io.loaders.runner import Runner
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    RecordError,
    ResultBuilder,
    parse_time,
    ranks_from_scores,
    read_json,
    check_record,
    require,
    score_value,
)
from referee.io.loaders.detect import share
from referee.io.loaders.jsonl import not_in, read_records, repeated_keys, screen
from referee.io.schema import columns

NAME = "aoa"
GAME = "age_of_agents"
COUNTERS = (
    "actions_total", "votes_cast", "late_votes", "messages_sent", "generic_messages", "trades_completed",
    "alliances_formed", "ceasefires_brokered", "spy_successes", "nations_influenced", "wasted_actions",
    "nations_eliminated", "attacks_won", "attacks_launched", "sabotage_successes", "peak_power_gap",
    "longest_peace_streak",
)
MISSIONS = ("World Peace", "Total Control", "Last Standing")
EVENT_TYPES = ("action", "proposal", "parse_failure", "turn_skip", "missing_thought", "message", "spectator")
REJECTION_REASONS = ("cooldown", "duplicate", "invalid_target", "malformed")
SEASON_KEYS = {"format", "season", "started_at", "ended_at", "agents", "nations", "snapshots", "peace", "notes",
               "source"}
AGENT_KEYS = {"agent", "model", "nation", "mission", "counters", "components", "final_score", "notes"}
EVENT_FIELDS = {
    "season": pa.string(), "seq": pa.int64(), "tick": pa.int64(), "time": pa.string(), "agent": pa.string(),
    "type": pa.string(), "action": pa.string(), "target": pa.string(), "status": pa.string(),
    "reason": pa.string(), "text": pa.string(), "value": pa.float64(),
}


OUTCOME_DIRECTIONS = {"nation_power": "higher", "nation_alive": "higher"}  # what the audit reads as better

def sniff(path: Path, head: str, sample: list) -> float:
    """1 for a season JSON (keys season, agents, mission); for an event log, the share of sampled lines that
    carry season and seq."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return float('"season"' in head and '"agents"' in head and '"mission"' in head)
    return share(sample, lambda r: "season" in r and "seq" in r) if suffix == ".jsonl" else 0.0


def _count(value, field: str) -> float:
    return score_value(value, field, allow_neg_inf=False)


def _agent_rows(entry: object, match_id: str, nations: dict[str, dict]) -> tuple[dict, list[dict]]:
    if not isinstance(entry, dict):
        raise RecordError("wrong type", None, f"expected an agent object, got {type(entry).__name__}")
    extra = sorted(set(entry) - AGENT_KEYS)
    if extra:
        raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of an agent entry")
    name = require(entry, "agent", (str,), "a codename")
    model = require(entry, "model", (str,), "a model name")
    nation = require(entry, "nation", (str,), "a nation name")
    mission = require(entry, "mission", (str,), "a mission")
    if mission not in MISSIONS:
        raise RecordError("unknown mission", "mission", f"mission {mission!r} is not one of {list(MISSIONS)}")
    if nations and nation not in nations:
        raise RecordError("unknown nation", "nation", f"nation {nation!r} is not in the season's nations")
    final = score_value(require(entry, "final_score", (int, float), "a number"), "final_score", allow_neg_inf=False)
    measures = []
    counters = entry.get("counters") or {}
    if not isinstance(counters, dict):
        raise RecordError("wrong type", "counters", "expected an object of counter -> number")
    for key, value in counters.items():
        if key not in COUNTERS:
            raise RecordError("unexpected field", f"counters.{key}", f"'{key}' is not a season counter")
        measures.append({"name": key, "value": _count(value, f"counters.{key}"), "kind": "telemetry"})
    components = entry.get("components") or {}
    if not isinstance(components, dict):
        raise RecordError("wrong type", "components", "expected an object of component -> number")
    for key, value in components.items():
        measures.append({"name": key, "value": _count(value, f"components.{key}"), "kind": "component"})
    state = nations.get(nation, {})
    for key in ("power", "alive"):
        if state.get(key) is not None:
            measures.append({"name": f"nation_{key}", "value": float(state[key]), "kind": "outcome"})
    for m in measures:
        m.update(match_id=match_id, player=name)
    result = {"match_id": match_id, "player": name, "agent": model, "team": nation, "role": mission,
              "score": final}
    return result, measures


def _nation(entry: object) -> dict:
    if not isinstance(entry, dict):
        raise RecordError("wrong type", None, "expected a nation object")
    extra = sorted(set(entry) - {"nation", "power", "alive"})
    if extra:
        raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a nation entry")
    name = require(entry, "nation", (str,), "a nation name")
    power = entry.get("power")
    if power is not None:
        power = _count(power, "power")
    alive = entry.get("alive")
    if alive is not None and not isinstance(alive, bool):
        raise RecordError("wrong type", "alive", f"expected true, false or null, got {alive!r}")
    return {"nation": name, "power": power, "alive": alive}


def _snapshot(entry: object) -> dict:
    if not isinstance(entry, dict):
        raise RecordError("wrong type", None, "expected a snapshot object")
    extra = sorted(set(entry) - {"time", "nation", "power", "alive", "agents"})
    if extra:
        raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a snapshot")
    snap = _nation({k: entry.get(k) for k in ("nation", "power", "alive") if k in entry})
    snap["time"] = parse_time(require(entry, "time", (str,), "an ISO 8601 time"), "time")
    agents = entry.get("agents")
    snap["agents"] = None if agents is None else _count(agents, "agents")
    return snap


def _peace(entry: object) -> dict:
    """One reading of the engine's peace timer: {"time": ISO 8601, "minutes": >= 0}."""
    if not isinstance(entry, dict):
        raise RecordError("wrong type", None, "expected a peace-timer object")
    extra = sorted(set(entry) - {"time", "minutes"})
    if extra:
        raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a peace-timer reading")
    time = parse_time(require(entry, "time", (str,), "an ISO 8601 time"), "time")
    minutes = score_value(require(entry, "minutes", (int, float), "minutes of unbroken peace"), "minutes",
                          allow_neg_inf=False)
    if minutes < 0:
        raise RecordError("wrong value", "minutes", f"expected a finite number of minutes >= 0, got {minutes!r}")
    return {"time": time, "stage": "snapshot", "actor": None, "type": "peace_timer", "value": float(minutes)}


def _state_events(match_id: str, state: dict, stage: str, time) -> list[dict]:
    return [{"match_id": match_id, "time": time, "stage": stage, "actor": state["nation"], "type": kind,
             "value": float(state[kind])} for kind in ("power", "alive", "agents") if state.get(kind) is not None]


def load_season(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read a season summary: every agent, nation and snapshot entry is one record."""
    out = ResultBuilder(path, content_hash, NAME)
    try:
        doc = read_json(path, within=SECTIONS)
        if not isinstance(doc, dict):
            raise RecordError("not this runner", None, "expected a season object")
        extra = sorted(set(doc) - SEASON_KEYS)
        if extra:
            raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a season")
        season = require(doc, "season", (str,), "a season name")
        started, ended = parse_time(doc.get("started_at"), "started_at"), parse_time(doc.get("ended_at"), "ended_at")
        for key in ("agents", "nations", "snapshots", "peace"):
            if not isinstance(doc.get(key, []), list):
                raise RecordError("wrong type", key, f"expected a list of {key}")
        if not doc.get("agents"):
            raise RecordError("missing field", "agents", "a season needs at least one agent")
    except RecordError as exc:
        return out.reject_file(exc)
    match_id = f"aoa:{season}"
    nations: dict[str, dict] = {}
    events: list[dict] = []
    accepted = 0  # nations, agents and snapshots accepted; their rows are handed over together below
    for i, entry in enumerate(doc.get("nations", [])):
        out.saw()
        try:
            check_record(entry)
            nation = _nation(entry)
            if nation["nation"] in nations:
                raise RecordError("duplicate nation", "nation", f"nation {nation['nation']!r} is listed twice")
        except RecordError as exc:
            out.quarantine(f"nations[{i}]", exc, entry)
            name = entry.get("nation") if isinstance(entry, dict) else None
            if isinstance(name, str) and name.strip() and name not in nations and exc.reason != "duplicate nation":
                # the nation is named though its state cannot be read: its agents keep it, with no state
                nations[name] = {"nation": name, "power": None, "alive": None}
            continue
        nations[nation["nation"]] = nation
        events += _state_events(match_id, nation, "final", ended)
        accepted += 1
    results, measures = [], []
    for i, entry in enumerate(doc["agents"]):
        out.saw()
        try:
            check_record(entry)
            result, agent_measures = _agent_rows(entry, match_id, nations)
            if any(r["player"] == result["player"] for r in results):
                raise RecordError("player listed twice", "agent", f"agent {result['player']!r} is listed twice")
        except RecordError as exc:
            out.quarantine(f"agents[{i}]", exc, entry)
            continue
        results.append(result)
        measures += agent_measures
        accepted += 1
    for i, entry in enumerate(doc.get("snapshots", [])):
        out.saw()
        try:
            check_record(entry)
            snap = _snapshot(entry)
        except RecordError as exc:
            out.quarantine(f"snapshots[{i}]", exc, entry)
            continue
        events += _state_events(match_id, snap, "snapshot", snap["time"])
        accepted += 1
    for i, entry in enumerate(doc.get("peace", [])):
        out.saw()
        try:
            check_record(entry)
            events.append({"match_id": match_id, **_peace(entry)})
        except RecordError as exc:
            out.quarantine(f"peace[{i}]", exc, entry)
            continue
        accepted += 1
    for i, event in enumerate(events):  # negative seq: never collides with the event log's own numbering
        event["seq"] = -(i + 1)
    for r, rank in zip(results, ranks_from_scores([r["score"] for r in results])):
        r["rank"] = rank
    attrs = {k: doc[k] for k in ("ended_at", "notes", "source", "format") if doc.get(k) is not None}
    match = {"match_id": match_id, "runner": NAME, "game": GAME, "n_players": len(results), "started_at": started,
             "source_file": str(path), "content_hash": content_hash, "record_index": "-",
             "attrs": json.dumps(attrs) if attrs else None}
    out.accept_bulk(accepted, matches=pd.DataFrame([match], columns=columns("matches")),
                    results=pd.DataFrame(results, columns=columns("results")),
                    measures=pd.DataFrame(measures, columns=columns("measures")),
                    events=pd.DataFrame(events, columns=columns("events")))
    return out.build()


SECTIONS = ("agents", "nations", "snapshots", "peace")  # a season's lists: each item is a record of its own, whose
# faults `read_json` leaves for `check_record` to raise item by item


def load_events(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read a season's event log: each line is one event (record = line number)."""
    out, table = read_records(path, content_hash, NAME, EVENT_FIELDS, options.progress)
    if table is None:
        return out.build()
    dup_lines = repeated_keys(table, ["season", "seq"])
    rejected = pc.equal(table["status"], "rejected")
    checks = [
        (pc.is_null(table["season"]), "missing field", "season", "required field 'season' is missing"),
        (pc.is_null(table["seq"]), "missing field", "seq", "required field 'seq' is missing"),
        (pc.and_(pc.is_null(table["agent"]), pc.not_equal(pc.fill_null(table["type"], ""), "spectator")),
         "missing field", "agent", "required field 'agent' is missing"),
        (pc.is_null(table["type"]), "missing field", "type", "required field 'type' is missing"),
        (not_in(table["type"], EVENT_TYPES), "unknown event type", "type", f"type must be one of {list(EVENT_TYPES)}"),
        (pc.and_(pc.is_in(table["type"], value_set=pa.array(["action", "proposal"])), pc.is_null(table["action"])),
         "missing field", "action", "an action or proposal needs 'action'"),
        (not_in(table["status"], ("accepted", "rejected")), "wrong value", "status", "status must be accepted or rejected"),
        (pc.and_(pc.fill_null(rejected, False), pc.is_null(table["reason"])), "missing field", "reason",
         "a rejected event needs a 'reason'"),
        (pc.is_in(table["_line"], value_set=dup_lines), "duplicate event", "seq", "this season's seq appears on an earlier line"),
        (pc.is_inf(pc.fill_null(table["value"], 0.0)), "infinite", "value", "'value' is infinite"),
    ]
    good = screen(out, table, checks, "time")
    kind = good["type"]
    is_act = pc.equal(kind, "action")
    is_prop = pc.equal(kind, "proposal")
    stage = pc.if_else(is_act, "act", pc.if_else(is_prop, "propose", pc.if_else(
        pc.equal(kind, "message"), "communicate", pc.if_else(pc.equal(kind, "spectator"), "spectator", "harness"))))
    events = pa.table({
        "match_id": pc.binary_join_element_wise("aoa:", good["season"], ""),
        "seq": good["seq"], "round": good["tick"], "time": good["_t"], "stage": stage, "actor": good["agent"],
        "type": pc.if_else(pc.or_(is_act, is_prop), good["action"], kind), "target": good["target"],
        "text": good["text"], "value": good["value"], "status": good["status"], "reason": good["reason"],
    })
    out.accept_bulk(events.num_rows, events=events)
    out.add_records(events["match_id"], good["_line"])
    return out.build()


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Dispatch on the file kind: `.jsonl` is an event log, `.json` a season summary."""
    if path.suffix.lower() == ".jsonl":
        return load_events(path, content_hash, options)
    return load_season(path, content_hash, options)


# each match is a season the report audits with the EVAL 01 formula (`referee.run.social.audit`)
RUNNER = Runner(NAME, sniff, load, {"season": sorted(SEASON_KEYS), "agent": sorted(AGENT_KEYS),
                                    "event line": list(EVENT_FIELDS)},
                season_audit=True, outcome_directions=OUTCOME_DIRECTIONS)
