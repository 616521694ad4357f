"""Whose agent a mapped runner's player is (`mapped.py`'s [agents]): a seat table on a line, the [agents] pattern or
constant, or, for a result that names its player by a shorter form of an id the match's lines use ('P5' for
'Player5_gpt-4o'), that id's agent."""

from __future__ import annotations

from typing import Protocol

from referee.io.id_patterns import resolve_player
from referee.io.loaders.errors import RecordError
from referee.io.loaders.mapped_results import key_label, value_at


class RunnerMap(Protocol):
    """What the agents are read by: the mapping's [agents] (`referee.io.loaders.mapped.RunnerMap` has them;
    declared here so that this module needs nothing from the mapping's)."""

    agent_table: object  # a key path of a seat table, or ()
    agent_pattern: object  # a compiled regular expression with a group `agent`, or None
    agent_constant: str | None


def seat_table(record: dict, mapping: RunnerMap) -> dict | None:
    """The {player: agent} table a line carries under [agents] table (None when the line has none)."""
    value = value_at(record, mapping.agent_table)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                              for k, v in value.items()):
        raise RecordError("wrong type", key_label(mapping.agent_table),
                          f"expected an object of player -> agent name, got {value!r}"[:300])
    return value


def by_full_id(out, row: dict, agents: dict, known: set[str], mapping: RunnerMap) -> str | None:
    """The agent of a result row whose player is a shorter form of one `known` id (`resolve_player`); the row then
    names that id, and the ingest notes say so. None when no one id has that form."""
    full = resolve_player(row["player"], known)
    agent = None if full is None else agents.get((row["match_id"], full)) or named_agent(mapping, full)
    if agent is not None:
        out.note("results naming a player by a shorter form of the id the match's other lines use (a short 'P5' for "
                 "'Player5_...', or the name at the id's end) read as that player")  # one wording: counted once
        row["player"] = full
    return agent


def named_agent(mapping: RunnerMap, player: str) -> str | None:
    """A player's agent by [agents] pattern (its group `agent`) or constant; None when neither gives one."""
    if mapping.agent_pattern is not None:
        found = mapping.agent_pattern.search(str(player))
        return found.group("agent") if found and found.group("agent") else None
    return mapping.agent_constant


def events_as_players(out, events: list[tuple], by_match: dict) -> list[tuple]:
    """`events` (EVENT_COLUMNS tuples) with each actor and target that names a player of its match's results by
    another form of the id (a short 'P7', a long 'Player4_Game17_mistral' where the results say 'mistral';
    `resolve_reference`) read as that player, so that an event's actor is the player the results rate; the
    ingest notes count those read so and those that name no player of the results (kept as written)."""
    from referee.io.id_patterns import resolve_reference

    known = {m: {r["player"] for r in rows} for m, rows in by_match.items()}
    cache: dict = {}
    read = unresolved = 0
    out_events = []
    for event in events:
        players = known.get(event[0])
        if not players:
            out_events.append(event)
            continue
        row = list(event)
        for i in (5, 7):  # actor, target
            name = row[i]
            if name is None or name in players:
                continue
            key = (event[0], name)
            if key not in cache:
                cache[key] = resolve_reference(name, players)
            found = cache[key]
            if found is None:
                unresolved += 1
                continue
            read += 1
            row[i] = found
        out_events.append(tuple(row))
    if read:  # one wording for every file, so that the ingest summary counts the files once
        out.note("event actors or targets naming a player by another form of its id (a short 'P7', or a long id "
                 "holding the name the results use) read as that player")
    if unresolved:
        out.note("some event actors or targets name no player of their match's results (kept as written)")
    return out_events
