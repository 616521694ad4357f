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
        out.note(f"result(s) naming a player by a shorter form of its id (e.g. {row['player']!r} for {full!r}) read "
                 "as that player")
        row["player"] = full
    return agent


def named_agent(mapping: RunnerMap, player: str) -> str | None:
    """A player's agent by [agents] pattern (its group `agent`) or constant; None when neither gives one."""
    if mapping.agent_pattern is not None:
        found = mapping.agent_pattern.search(str(player))
        return found.group("agent") if found and found.group("agent") else None
    return mapping.agent_constant
