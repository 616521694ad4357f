"""Bring your own runner: JSON-lines event logs described by a mapping file, no Python module needed.

Format and a worked example: `data/formats/mapped.md`. A mapping (TOML) names which JSON keys hold the
match, player, agent, event type, score and rank, and which event types are messages, actions, votes and
results:

    name = "tavern"                 # the runner's name in the store
    game = "public_goods"           # optional: the game of every match (else the `game` key, else name)
    [keys]                          # canonical field = JSON key; dots reach into objects ("payload.text");
    match = "episode"               # a list tries each key in turn (["payload.to", "payload.for"])
    player = "seat"
    agent = "model"
    type = "event"
    score = "payload.points"
    [events]                        # event type values -> stage
    message = ["say"]
    action = ["contribute"]
    vote = ["vote"]
    result = ["final"]              # lines that carry a player's score and/or rank
    ignore = ["heartbeat"]          # read, counted as accepted, not stored
    [event_keys.punish]             # per event type, read before [keys]: who acted, at whom, how much
    player = "punisher"
    target = "payload.target"
    value = "payload.fine"

Every line is one record. A `result` line becomes a `results` row; every other line an `events` row
(stage message/action/vote, or NULL for a type the mapping does not list, type = the raw value). A player's
agent comes from the result line or, failing that, from any line of the same match that names it. Each
match id seen in a file becomes a match (n_players = its result rows, else its distinct players;
started_at = its earliest time); ranks missing everywhere in a match are derived from scores. An event's actor
or target that names a player of its match's results by another form of the id (a short 'P7', a long
'Player4_Game17_mistral' where the results say 'mistral') is stored as that player (`mapped_agents.events_as_players`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from referee.io.loaders.registry import MAPPED, reserved_runner_name
from referee.io.loaders.runner import Runner
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    RecordError,
    ResultBuilder,
    Rows,
    suggest,
    rank_value,
    ranks_from_scores,
)
from referee.io.loaders.files import document_lines
from referee.io.loaders.mapped_results import game_results, key_getter, key_label, value_at
from referee.io.loaders.mapped_agents import by_full_id, events_as_players, named_agent, seat_table
from referee.io.loaders.mapped_values import KINDS as _KINDS, number as _number, text as _text
from referee.models.registry import DIRECTIONS
from referee.names import MEASURE_KINDS, MappingError  # noqa: F401  (MappingError defined light, for the command line)
from referee.io.toml_file import read_toml

KEYS = ("match", "player", "agent", "type", "time", "round", "seq", "text", "target", "value", "score", "rank",
        "team", "role", "game", "scenario", "phase")
REQUIRED_KEYS = ("match", "type")
STAGES = ("message", "action", "vote", "result", "ignore")
TOP = ("name", "game", "keys", "events", "event_keys", "match", "results", "agents", "measures")
TYPE_KEYS = ("player", "target", "value", "text", "round")  # [event_keys.TYPE]: who acted, at whom, how much
RESULT_LAYOUTS = ("scores", "ranks", "order", "winners")  # [results]: how one line holds every player's result
RESULT_KEYS = ("event", "players") + RESULT_LAYOUTS  # players: a list the scores or ranks list runs parallel to
MEASURE_FIELDS = ("key", "kind", "direction", "event")  # [measures] NAME = {key, kind, direction, event}
AGENT_KEYS = ("pattern", "table", "constant")
MATCH_KEYS = ("from",)
EXTENSIONS = (".jsonl", ".json", ".ndjson", ".log")


@dataclass(frozen=True)
class MeasureSpec:
    """One [measures] declaration: the measure's name, its key paths, kind (outcome, telemetry, component,
    judge), an outcome's better direction ('higher' or 'lower'), and the event types whose lines carry it."""

    name: str
    key: tuple[tuple[str, ...], ...]
    kind: str
    direction: str | None
    events: tuple[str, ...]


@dataclass(frozen=True)
class RunnerMap:
    """A parsed runner mapping: its name, default game, canonical field -> candidate key paths, and event
    type -> stage."""

    name: str
    game: str | None
    keys: dict[str, tuple[tuple[str, ...], ...]]
    stages: dict[str, str]
    source: Path
    match_from_file: bool = False  # [match] from = "file": the file's stem is the match id
    result_events: tuple[str, ...] = ()  # [results] event: lines holding every player's result
    result_layout: str | None = None  # 'scores', 'ranks', 'order' or 'winners'
    result_key: tuple[tuple[str, ...], ...] = ()
    result_players: tuple[tuple[str, ...], ...] = ()  # [results] players: the list the result list parallels
    measures: tuple[MeasureSpec, ...] = ()  # [measures]
    agent_pattern: object | None = None  # [agents] pattern: a compiled regex with a group named agent
    agent_table: tuple[tuple[str, ...], ...] = ()  # [agents] table: key of {player: agent} in a line
    agent_constant: str | None = None
    # [event_keys.TYPE]: event type -> canonical field -> key paths, read on that type's lines before [keys]
    type_keys: dict = field(default_factory=dict)
    # a runner entry's interface (`name`, `load`), so a mapping runs where a built-in runner would (only ever forced)
    def load(self, path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
        """Read one event log with this mapping (see the module docstring)."""
        return load(path, content_hash, self)


def read_runner_map(path: str | Path) -> RunnerMap:
    """Parse and check a runner mapping TOML file; raises MappingError naming the file and the key
    (unknown keys get a close-match suggestion; every missing required key is named at once)."""
    path = Path(path)
    doc = read_toml(path, "runner mapping", MappingError)
    for key in doc:
        if key not in TOP:
            raise MappingError(f"{path}: unknown top-level key '{key}'{suggest(key, TOP)}; keys: {list(TOP)}")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise MappingError(f"{path}: 'name' (the runner's name, text) is required")
    if reserved_runner_name(name):
        raise MappingError(f"{path}: 'name' {name.strip()!r} is a built-in runner's name (or the mapping format's, "
                           "'mapped'); choose another name")
    keys_doc = doc.get("keys", {})
    if not isinstance(keys_doc, dict):
        raise MappingError(f"{path}: [keys] must be a table of canonical field = JSON key")
    keys: dict[str, tuple[tuple[str, ...], ...]] = {}
    for field, value in keys_doc.items():
        if field not in KEYS:
            raise MappingError(f"{path}: [keys] '{field}' is not a canonical field{suggest(field, KEYS)}; "
                               f"fields: {list(KEYS)}")
        keys[field] = _key_paths(path, f"[keys] {field}", value)
    extra = _v2_tables(path, doc)
    missing = [k for k in REQUIRED_KEYS if k not in keys and not (k == "match" and extra["match_from_file"])]
    if missing:
        raise MappingError(f"{path}: [keys] must name {', '.join(missing)} (required: {list(REQUIRED_KEYS)}; "
                           "or [match] from = \"file\" for the match id)")
    events_doc = doc.get("events", {})
    if not isinstance(events_doc, dict):
        raise MappingError(f"{path}: [events] must be a table of stage = [event types]")
    stages: dict[str, str] = {}
    for stage, types in events_doc.items():
        if stage not in STAGES:
            raise MappingError(f"{path}: [events] '{stage}' is not a stage{suggest(stage, STAGES)}; stages: {list(STAGES)}")
        types = [types] if isinstance(types, str) else types
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise MappingError(f"{path}: [events] {stage} must be a list of event types, got {types!r}")
        for t in types:
            if t in stages:
                raise MappingError(f"{path}: [events] event type '{t}' is listed under both {stages[t]} and {stage}")
            stages[t] = stage
    if "result" in stages.values() and not ({"score", "rank"} & set(keys)):
        raise MappingError(f"{path}: [events] lists result events, so [keys] must name score or rank (or both)")
    both = set(extra["result_events"]) & set(stages)
    if both:
        raise MappingError(f"{path}: event type(s) {sorted(both)} are listed in [events] and as [results] event; "
                           "a game's result line belongs in [results] only")
    game = doc.get("game")
    if game is not None and not isinstance(game, str):
        raise MappingError(f"{path}: 'game' must be text, got {game!r}")
    result_types = extra["result_events"] + tuple(t for t, stage in stages.items() if stage == "result")
    measures = _measures(path, doc, result_types)
    return RunnerMap(name=name.strip(), game=game, keys=keys, stages=stages, source=path, measures=measures,
                     type_keys=_type_keys(path, doc), **extra)


def _type_keys(path: Path, doc: dict) -> dict:
    """[event_keys.TYPE]: per event type, the keys of who acted (`player`), at whom (`target`), how much (`value`),
    the text and the round on that type's lines, read before [keys] (a runner whose speaker is `speaker_id` on
    private messages and `voter_id` on votes); MappingError naming the type and the key."""
    table = doc.get("event_keys", {})
    if not isinstance(table, dict):
        raise MappingError(f"{path}: [event_keys] must hold one table per event type ([event_keys.vote] ...)")
    out = {}
    for kind, fields in table.items():
        if not isinstance(fields, dict):
            raise MappingError(f"{path}: [event_keys.{kind}] must be a table of canonical field = JSON key")
        for name, value in fields.items():
            if name not in TYPE_KEYS:
                raise MappingError(f"{path}: [event_keys.{kind}] '{name}' is not a field read per event type"
                                   f"{suggest(name, TYPE_KEYS)}; fields: {list(TYPE_KEYS)}")
        out[kind] = {name: _key_paths(path, f"[event_keys.{kind}] {name}", value) for name, value in fields.items()}
    return out


def _measures(path: Path, doc: dict, result_types: tuple[str, ...]) -> tuple[MeasureSpec, ...]:
    """[measures]: NAME = {key = "JSON key", kind = "outcome" | "telemetry" | ..., direction = "higher" |
    "lower" (required for an outcome, for the audit), event = the event type(s) carrying it (default: the
    result lines)}; MappingError naming the measure and the key."""
    table = doc.get("measures", {})
    if not isinstance(table, dict):
        raise MappingError(f"{path}: [measures] must be a table of NAME = {{key = ..., kind = ...}}")
    specs = []
    for name, spec in table.items():
        where = f"[measures] {name}"
        if not name.strip() or not name.isprintable():
            raise MappingError(f"{path}: [measures] a measure's name is printable text, not blank, got {name!r}")
        if not isinstance(spec, dict):
            raise MappingError(f"{path}: {where} must be an inline table {{key = \"JSON key\", kind = \"outcome\", "
                               f"direction = \"higher\"}}, got {spec!r}")
        for key in spec:
            if key not in MEASURE_FIELDS:
                raise MappingError(f"{path}: {where}: '{key}' is not a key of a measure{suggest(key, MEASURE_FIELDS)}; "
                                   f"keys: {list(MEASURE_FIELDS)}")
        if "key" not in spec:
            raise MappingError(f"{path}: {where} needs key (the JSON key holding it)")
        kind = spec.get("kind")
        if kind not in MEASURE_KINDS:
            raise MappingError(f"{path}: {where}: kind must be one of {list(MEASURE_KINDS)}, got {kind!r}"
                               + (suggest(kind, MEASURE_KINDS) if isinstance(kind, str) else ""))
        direction = spec.get("direction")
        if kind == "outcome" and direction not in DIRECTIONS:
            raise MappingError(f"{path}: {where} is an outcome: direction must say which way is better, one of "
                               f"{list(DIRECTIONS)}, got {direction!r}")
        if kind != "outcome" and direction is not None:
            raise MappingError(f"{path}: {where}: direction is declared for outcomes only (kind is {kind!r})")
        events = spec.get("event", list(result_types))
        events = [events] if isinstance(events, str) else events
        if not isinstance(events, list) or not events or not all(isinstance(t, str) and t for t in events):
            raise MappingError(f"{path}: {where}: event must name the event type(s) whose lines carry it (default: "
                               f"the result lines, and this mapping has none), got {spec.get('event')!r}")
        specs.append(MeasureSpec(str(name), _key_paths(path, f"{where} key", spec["key"]), kind, direction,
                                 tuple(events)))
    return tuple(specs)


def _table(path: Path, doc: dict, name: str, allowed: tuple[str, ...]) -> dict:
    """The mapping's table `name` (empty when absent), its keys checked against `allowed`."""
    table = doc.get(name, {})
    if not isinstance(table, dict):
        raise MappingError(f"{path}: [{name}] must be a table")
    for key in table:
        if key not in allowed:
            raise MappingError(f"{path}: [{name}] '{key}' is not a key of [{name}]{suggest(key, allowed)}; "
                               f"keys: {list(allowed)}")
    return table


def _key_paths(path: Path, where: str, value) -> tuple[tuple[str, ...], ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
        raise MappingError(f"{path}: {where} must be a JSON key or a list of keys, got {value!r}")
    paths = tuple(tuple(v.split(".")) for v in values)
    if any("" in p for p in paths):
        raise MappingError(f"{path}: {where}: a key path names a key between each '.', got {value!r}")
    return paths


def _v2_tables(path: Path, doc: dict) -> dict:
    """[match], [results] and [agents] (format v2: a game's result in one line, agents from the player id or a
    seat table, match ids from file names) as RunnerMap fields; MappingError naming the key."""
    match = _table(path, doc, "match", MATCH_KEYS)
    if "from" in match and match["from"] != "file":
        raise MappingError(f"{path}: [match] from must be \"file\" (the file's name is the match id), got "
                           f"{match['from']!r}")
    results = _table(path, doc, "results", RESULT_KEYS)
    layouts = [k for k in RESULT_LAYOUTS if k in results]
    events: tuple[str, ...] = ()
    if results:
        if len(layouts) != 1:
            raise MappingError(f"{path}: [results] needs exactly one of {list(RESULT_LAYOUTS)} (an object keyed by "
                               f"player of scores or of ranks, or a list of players best first), got {layouts}")
        found = results.get("event")
        found = [found] if isinstance(found, str) else found
        if not isinstance(found, list) or not found or not all(isinstance(t, str) and t for t in found):
            raise MappingError(f"{path}: [results] event must name the event type(s) of the result line, got "
                               f"{results.get('event')!r}")
        events = tuple(found)
        if "players" in results and layouts == ["order"]:
            raise MappingError(f"{path}: [results] players goes with scores or ranks (lists parallel to it); order "
                               "is itself a list of players")
        if "players" not in results and layouts == ["winners"]:
            raise MappingError(f"{path}: [results] winners needs players (the list, or seat table, of everyone in "
                               "the game): the winners are tied first and every other player tied below them")
    agents = _table(path, doc, "agents", AGENT_KEYS)
    if len(agents) > 1:
        raise MappingError(f"{path}: [agents] takes one of {list(AGENT_KEYS)}, got {sorted(agents)}")
    pattern = None
    if "pattern" in agents:
        try:
            pattern = re.compile(agents["pattern"])
        except (re.error, TypeError) as exc:
            raise MappingError(f"{path}: [agents] pattern is not a regular expression: {exc}") from exc
        if "agent" not in pattern.groupindex:
            raise MappingError(f"{path}: [agents] pattern needs a group named agent, e.g. "
                               "'^Player\\d+_Game\\d+_(?P<agent>.+)$'")
    constant = agents.get("constant")
    if constant is not None and (not isinstance(constant, str) or not constant.strip()):
        raise MappingError(f"{path}: [agents] constant must be the agent's name, got {constant!r}")
    return {"match_from_file": match.get("from") == "file", "result_events": events,
            "result_layout": layouts[0] if layouts else None,
            "result_key": _key_paths(path, f"[results] {layouts[0]}", results[layouts[0]]) if layouts else (),
            "result_players": _key_paths(path, "[results] players", results["players"]) if "players" in results else (),
            "agent_pattern": pattern,
            "agent_table": _key_paths(path, "[agents] table", agents["table"]) if "table" in agents else (),
            "agent_constant": constant}


def _readers(keys: dict) -> dict:
    """field -> function(record) -> the field's value, typed and checked (RecordError naming the JSON key), for a
    mapping's `keys` (canonical field -> key paths); fields it does not name read as None."""
    readers = {}
    for f in KEYS:
        if f not in keys:
            readers[f] = _none
            continue
        get, label, convert = key_getter(keys[f]), key_label(keys[f]), _KINDS.get(f, _text)
        if convert is _text and len(keys[f]) == 1 and len(keys[f][0]) == 1:
            readers[f] = _plain_text(keys[f][0][0], label)
        else:
            readers[f] = lambda record, get=get, label=label, convert=convert: convert(get(record), label)
    return readers


def _none(record: dict) -> None:
    return None


def _plain_text(key: str, label: str):
    """A text field's reader for one plain key: the value itself when it is text or missing (no further call)."""
    def read(record: dict):
        value = record.get(key)
        return value if value is None or (type(value) is str and value.isascii()) else _text(value, label)
    return read


def _tuple_reader(read: dict, fields: tuple[str, ...]):
    """A function record -> the list of these fields' values, calling only the readers of fields the mapping
    names (the others are None)."""
    live = [(i, read[f]) for i, f in enumerate(fields) if read[f] is not _none]
    size = len(fields)

    def values(record: dict) -> list:
        row = [None] * size
        for i, reader in live:
            row[i] = reader(record)
        return row
    return values


def load(path: Path, content_hash: str, mapping: RunnerMap) -> LoadResult:
    """Read one JSON-lines event log through `mapping` into canonical tables (one record per line)."""
    out = ResultBuilder(path, content_hash, mapping.name, many_records_per_match=True)
    if path.stat().st_size == 0:
        return out.reject_file(RecordError("empty file", None, "the file is empty"))
    k = mapping.keys
    label = {f: key_label(k[f]) if f in k else f for f in KEYS}
    read = _readers(mapping.keys)
    tail = _tuple_reader(read, ("seq", "round", "target", "text", "value"))  # an event's own fields
    typed = {}  # [event_keys.TYPE]: that type's (player reader, own fields reader), its keys before [keys]'
    for kind_, over in mapping.type_keys.items():
        own = _readers({**mapping.keys, **over})
        typed[kind_] = (own["player"], _tuple_reader(own, ("seq", "round", "target", "text", "value")))
    info_fields = [f for f in ("game", "scenario", "phase") if f in k]
    events, results, lines, measures = [], [], [], []
    agents: dict[tuple[str, str], str] = {}
    meta: dict[str, dict] = {}
    seen_results: set[tuple[str, str]] = set()
    read_match, read_type, read_player, read_agent, read_time = (read[f] for f in ("match", "type", "player", "agent", "time"))
    stages, result_events, seat_tables = mapping.stages, mapping.result_events, bool(mapping.agent_table)
    for line in document_lines(path):
        number = line.number
        out.saw()
        try:
            record = _mapped_record(line)
            if not isinstance(record, dict):
                raise RecordError("wrong type", None, f"expected a JSON object, got {type(record).__name__}")
            match = read_match(record)
            if match is None and mapping.match_from_file:
                match = path.stem
            if match is None:
                raise RecordError("missing field", label["match"], f"the match key '{label['match']}' is missing")
            kind = read_type(record)
            if kind is None:
                raise RecordError("missing field", label["type"], f"the event type key '{label['type']}' is missing")
            stage = stages.get(kind)
            own = typed.get(kind)
            player = read_player(record) if own is None else own[0](record)
            agent, time = read_agent(record), read_time(record)
            info = {f: read[f](record) for f in info_fields} if info_fields else {}
            earlier = meta.get(match)
            if earlier is not None and info:
                for f, v in info.items():
                    if v is not None and earlier[f] is not None and v != earlier[f]:
                        raise RecordError("inconsistent", label[f], f"match {match!r} has {f} {earlier[f]!r} "
                                          f"on earlier lines, {v!r} here")
            table = seat_table(record, mapping) if seat_tables else None
            game_rows = game_results(record, mapping, match, number, seen_results) \
                if kind in result_events else None
            found = [m for spec in mapping.measures if kind in spec.events
                     for m in _measure_rows(record, spec, match, player,
                                            [r["player"] for r in game_rows] if game_rows else None, number)] \
                if mapping.measures else ()
            if stage == "result":
                row = _result_row(record, read, label, match, player, agent, number, seen_results, "player" in k)
            elif stage == "ignore":
                row = None
            else:  # an events row as a tuple of EVENT_COLUMNS (the loader hands the events over as columns)
                seq, round_, target, text, value = (tail if own is None else own[1])(record)  # no seq: the line
                row = (match, number if seq is None else seq, round_, time, stage, player, kind, target, text, value)
        except RecordError as exc:
            out.quarantine(str(number), exc, line)
            continue
        slot = meta.get(match)
        if slot is None:
            slot = meta[match] = {"game": None, "scenario": None, "phase": None, "first": number,
                                  "time": None, "players": set()}
        if info:
            for f, v in info.items():
                slot[f] = slot[f] or v
        if time is not None and (slot["time"] is None or time < slot["time"]):
            slot["time"] = time
        if player is not None:
            slot["players"].add(player)
            if agent is not None:
                agents.setdefault((match, player), agent)
        if table:
            for seat, model in table.items():
                agents.setdefault((match, seat), model)
        measures += found
        if game_rows is not None:
            for row_ in game_rows:
                seen_results.add((match, row_["player"]))
                slot["players"].add(row_["player"])
            results.extend(game_rows)
            lines.append((match, number))
            out.passed()
            continue
        if stage == "result":
            seen_results.add((match, player))
            results.append(row)
        elif row is not None:
            events.append(row)
        lines.append((match, number))
        out.passed()
    _finish(out, path, content_hash, mapping, events, results, lines, agents, meta, measures)
    return out.build()


def _mapped_record(line) -> object:
    """The line's JSON value. A whole number past the store's 64 bits is a fault only where it would be stored:
    the mapping stores its own keys only, each read by its typed reader (a text key keeps the digits, so an id
    written as a number on one line and as text on another is one id; `round` or `seq` past 64 bits is set
    aside by its reader, naming the key). So such a line is read past that fault (`Line.value`)."""
    try:
        return line.parsed()
    except RecordError as exc:
        if exc.reason != "out of range" or line.value is None:
            raise
        return line.value


def _result_row(record, read, label, match, player, agent, number, seen_results, has_player) -> dict:
    """The results row of one result line; raises RecordError."""
    if player is None:
        raise RecordError("missing field", label["player"], "a result line needs the player key" if has_player
                          else "the mapping names no player key, so results cannot be read")
    score, rank = read["score"](record), read["rank"](record)
    if score is None and rank is None:
        raise RecordError("missing field", label["score"], "a result line needs a score or a rank")
    if rank is not None:
        rank = rank_value(rank, label["rank"])
    if (match, player) in seen_results:
        raise RecordError("player listed twice", label["player"],
                          f"player {player!r} has two result lines in match {match!r}")
    return {"match_id": match, "player": player, "agent": agent, "score": score, "rank": rank,
            "team": read["team"](record), "role": read["role"](record), "_line": number}


def _measure_rows(record: dict, spec: MeasureSpec, match: str, player: str | None, listed: list[str] | None,
                  number: int) -> list[dict]:
    """The measures rows one line carries for `spec`: an object keyed by player (one row per player), a list
    parallel to the result line's players (`listed`), or one number (the line's player, else the match).
    Absent: none. RecordError naming the key when a value is not a finite number or the shape does not fit."""
    value, key = value_at(record, spec.key), key_label(spec.key)
    if value is None:
        return []
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        if listed is None or len(value) != len(listed):
            raise RecordError("wrong type", key, f"measure {spec.name!r}: a list needs the result line's players "
                              f"([results] players) of the same length, got {value!r}"[:300])
        pairs = list(zip(listed, value))
    else:
        pairs = [(player, value)]
    return [{"match_id": match, "player": who, "name": spec.name, "value": _number(v, f"{key}.{who}" if who else key),
             "kind": spec.kind, "direction": spec.direction, "_line": number} for who, v in pairs if v is not None]


def _measures_of_players(out, measures: list[dict], meta: dict, agents: dict) -> list[dict]:
    """`measures` without those of a player the match never names (no line of it has that player, no result
    lists them, no seat table seats them): each such value is set aside alone as a record of its own ('unknown
    player', naming its line and key), the rest of its line kept."""
    kept = []
    for row in measures:
        who, match = row["player"], row["match_id"]
        if who is None or who in meta.get(match, {}).get("players", ()) or (match, who) in agents:
            kept.append(row)
            continue
        out.saw(1)
        out.quarantine(f"{row['_line']}.{who}", RecordError(
            "unknown player", f"{row['name']}.{who}", f"measure {row['name']!r} names player {who!r}, who is not "
            f"in match {match!r}"), json.dumps({who: row["value"]}))
    return kept


EVENT_COLUMNS = ("match_id", "seq", "round", "time", "stage", "actor", "type", "target", "text", "value")


def _event_table(events: list[tuple]) -> Rows | None:
    """The events rows (tuples of EVENT_COLUMNS) as they are (`Rows`): the store makes a batch of files' events
    Arrow at once (a long file's in the reader), as dicts where a value breaks the schema (and then names it)."""
    return Rows(EVENT_COLUMNS, events) if events else None


def _finish(out, path, content_hash, mapping, events, results, lines, agents, meta, measures) -> None:
    """Resolve agents, derive ranks, build matches, and hand everything to the builder."""
    failed: dict[int, tuple[dict, RecordError]] = {}  # a line whose result has no agent is set aside whole
    full_ids: dict[str, set[str]] = {}  # per match, the players its lines name with an agent (table, key)
    for match, player in agents:
        full_ids.setdefault(match, set()).add(player)
    for row in results:
        agent = row["agent"] or agents.get((row["match_id"], row["player"])) or named_agent(mapping, row["player"])
        if agent is None:  # a result that names its player by a shorter form of an id the match's lines use
            agent = by_full_id(out, row, agents, full_ids.get(row["match_id"], set()) or
                                meta.get(row["match_id"], {}).get("players", set()) - {row["player"]}, mapping)
        if agent is not None:
            row["agent"] = agent
            continue
        if mapping.agent_pattern is not None:
            error = RecordError("missing field", "[agents] pattern", f"the [agents] pattern "
                                f"{mapping.agent_pattern.pattern!r} finds no agent in player {row['player']!r}")
        else:
            key = key_label(mapping.keys["agent"]) if "agent" in mapping.keys else None
            where = f"'{key}'" if key else "(the mapping names no agent key)"
            error = RecordError("missing field", key or "agent", f"no line of match {row['match_id']!r} names the "
                                f"agent of player {row['player']!r} {where}")
        failed.setdefault(row["_line"], (row, error))
    for number, (row, error) in failed.items():
        out.quarantine(str(number), error, json.dumps({k: v for k, v in row.items() if k != "_line"}))
        lines.remove((row["match_id"], number))
    kept_results = [row for row in results if row["_line"] not in failed]
    by_match: dict[str, list[dict]] = {}
    for row in kept_results:
        by_match.setdefault(row["match_id"], []).append(row)
    for rows in by_match.values():
        if any(r["rank"] is None for r in rows) and all(r["score"] is not None for r in rows):
            for r, rank in zip(rows, ranks_from_scores([r["score"] for r in rows])):
                r["rank"] = rank
    ids = {m for m, _ in lines}
    matches = [{"match_id": m, "runner": mapping.name, "game": slot["game"] or mapping.game or mapping.name,
                "scenario": slot["scenario"], "phase": slot["phase"],
                "n_players": len(by_match.get(m, [])) or len(slot["players"]), "started_at": slot["time"],
                "source_file": str(path), "content_hash": content_hash, "record_index": str(slot["first"])}
               for m, slot in meta.items() if m in ids]
    measures = _measures_of_players(out, [row for row in measures if row["_line"] not in failed], meta, agents)
    for row in kept_results + measures:
        del row["_line"]
    events = events_as_players(out, events, by_match)
    out.accept_bulk(len(lines), matches=matches, results=kept_results, measures=measures or None,
                    events=_event_table(events))
    out.add_records([m for m, _ in lines], [n for _, n in lines])


def _forced_only(path: Path, head: str, sample: list) -> float:
    """A mapping is never detected: it is named (`--runner FILE.toml`)."""
    return 0.0


def _no_mapping(path: Path, content_hash: str, options) -> LoadResult:
    raise ValueError(f"{path}: a runner mapping's logs are read with --runner FILE.toml (data/formats/mapped.md)")


# the entry of every runner a mapping file describes (its matches carry the mapping's own name): no trait beyond
# the defaults, a runner of matches whose players meet in them
RUNNER = Runner(MAPPED, _forced_only, _no_mapping, {
    "[keys]": list(KEYS), "[events]": list(STAGES), "[results]": list(RESULT_KEYS), "[agents]": list(AGENT_KEYS),
    "[match]": list(MATCH_KEYS), "[measures] NAME = {...}": list(MEASURE_FIELDS)})
