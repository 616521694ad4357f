"""Values out of one line of a mapped runner's log: key paths (`value_at`: dots reach into objects, a list of
paths tries each in turn) and a game's result laid out in one line ([results]: an object keyed by player of
scores or ranks, a list parallel to the players, a list of players best first, or the winners among them).
Used by the mapped loader (`mapped.py`) and the mapping drafter."""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from referee.io.loaders.errors import RecordError
from referee.io.loaders.base import rank_value, score_value

class ResultKeys(Protocol):
    """What a game's result is read by: the mapping's [results] keys (`referee.io.loaders.mapped.RunnerMap` has
    them; declared here so that this module needs nothing from the mapping's)."""

    result_key: object  # a key path, or a list of paths tried in turn
    result_layout: str | None  # 'scores', 'ranks', 'order' or 'winners'
    result_players: object  # the players' key path, for a list parallel to them


_MISSING = object()


def key_getter(paths: tuple[tuple[str, ...], ...]):
    """A function record -> value for a field's candidate key paths (plain `dict.get` for one plain key)."""
    if len(paths) == 1 and len(paths[0]) == 1:
        key = paths[0][0]
        return lambda record: record.get(key)
    return lambda record: value_at(record, paths)


def _at(record: dict, path: tuple[str, ...]):
    """The value at one key path of `record` (null included), or _MISSING where the path is not written."""
    value = record
    for part in path:
        value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
        if value is _MISSING:
            break
    return value


def value_at(record: dict, paths: tuple[tuple[str, ...], ...]):
    """The first non-null value among `paths` (each a key path: ("payload", "text") reads
    record["payload"]["text"]), or None."""
    return next((v for v in (_at(record, p) for p in paths) if v is not _MISSING and v is not None), None)


def _written(record: dict, paths: tuple[tuple[str, ...], ...]) -> bool:
    """Whether any of `paths` is written in the record, null included (a null winners list is a draw; a missing
    one is no result)."""
    return any(_at(record, p) is not _MISSING for p in paths)


def key_label(paths: tuple[tuple[str, ...], ...]) -> str:
    return ".".join(paths[0])


def game_results(record: dict, mapping: ResultKeys, match: str, number: int, seen: set) -> list[dict]:
    """The results rows of a line that holds every player's result ([results]): an object keyed by player of
    scores or of ranks, or a list of players best first (a nested list: players tied). RecordError naming
    the key when the value is missing, of the wrong shape, not a number, or lists a player twice."""
    value = value_at(record, mapping.result_key)
    key = key_label(mapping.result_key)
    if value is None and not (mapping.result_layout == "winners" and _written(record, mapping.result_key)):
        raise RecordError("missing field", key, f"the result line has no '{key}'")
    if mapping.result_layout == "order":
        found = _best_first(value, key)
    elif mapping.result_layout == "winners":
        found = _winners(record, mapping, value, key)
    else:  # scores or ranks, keyed by player or in a list parallel to [results] players
        pairs = _parallel(record, mapping, value, key) if mapping.result_players else _keyed(value, key)
        found = [_result_value(mapping.result_layout, player, raw, field) for player, raw, field in pairs]
    listed = Counter(p for p, _, _ in found)
    twice = sorted({p for p, n in listed.items() if n > 1 or (match, p) in seen})
    if twice:
        raise RecordError("player listed twice", key, f"player(s) {twice} have two results in match {match!r}")
    return [{"match_id": match, "player": p, "agent": None, "score": sc, "rank": rk, "team": None, "role": None,
             "_line": number} for p, sc, rk in found]


def _keyed(value, key: str) -> list[tuple[str, object, str]]:
    """(player, raw value, field) of an object keyed by player."""
    if not isinstance(value, dict) or not value:
        raise RecordError("wrong type", key, f"expected an object keyed by player, got {value!r}"[:300])
    return [(player, raw, f"{key}.{player}") for player, raw in value.items()]


def _parallel(record: dict, mapping: ResultKeys, value, key: str) -> list[tuple[str, object, str]]:
    """(player, raw value, field) from [results] players and a scores or ranks list of the same length."""
    names, names_key = _players(record, mapping)
    if not isinstance(value, list) or len(value) != len(names):
        raise RecordError("wrong type", key, f"expected a list of {len(names)} values parallel to "
                          f"'{names_key}', got {value!r}"[:300])
    return [(player, raw, f"{key}[{i}]") for i, (player, raw) in enumerate(zip(names, value))]


def _players(record: dict, mapping: ResultKeys) -> tuple[list[str], str]:
    """([results] players of a line, their key): a list of player ids, or a seat table {player: agent} whose
    keys in order are the players; RecordError naming the key for anything else."""
    names, names_key = value_at(record, mapping.result_players), key_label(mapping.result_players)
    names = list(names) if isinstance(names, dict) else names
    if not isinstance(names, list) or not names or not all(isinstance(p, str) and p for p in names):
        raise RecordError("wrong type", names_key, f"expected a list (or seat table) of player ids, got "
                          f"{names!r}"[:300])
    return names, names_key


def _result_value(layout: str, player: str, raw, field: str) -> tuple[str, float | None, float | None]:
    """(player, score, rank) of one player's value under `layout` ('scores' or 'ranks'; a rank is 1 or more)."""
    got = rank_value(raw, field) if layout == "ranks" else score_value(raw, field, allow_neg_inf=False)
    return (player, got, None) if layout == "scores" else (player, None, got)


def _winners(record: dict, mapping: ResultKeys, value, key: str) -> list[tuple[str, float | None, float | None]]:
    """(player, None, rank) of a winners list: the winners (a list of player ids, or one; a shorter form of a
    player's id, 'P1' for 'Player1_gpt-4o', read as that player: `resolve_player`) tied at rank 1 and every other
    player of [results] players tied at the rank after them; an empty or null list is a draw (every player tied
    at rank 1). RecordError naming the key for a winner who is not among the players."""
    from referee.io.id_patterns import resolve_player

    names, _ = _players(record, mapping)
    winners = [] if value is None else [value] if isinstance(value, str) else value
    if not isinstance(winners, list) or not all(isinstance(w, str) and w for w in winners):
        raise RecordError("wrong type", key, f"expected the winners' player ids, got {value!r}"[:300])
    resolved = [resolve_player(w, set(names)) for w in winners]
    strangers = [w for w, r in zip(winners, resolved) if r is None]
    if strangers:
        raise RecordError("unknown player", key, f"winner {strangers[0]!r} is not one of the players {names}"[:300])
    winners = resolved
    below = float(len(set(winners)) + 1)
    return [(p, None, 1.0 if p in winners else below) for p in names]


def _best_first(value, key: str) -> list[tuple[str, float | None, float | None]]:
    """(player, None, rank) of a list of players best first; a nested list holds players tied."""
    if not isinstance(value, list) or not value:
        raise RecordError("wrong type", key, f"expected a list of players best first, got {value!r}"[:300])
    found, position = [], 1
    for entry in value:
        group = entry if isinstance(entry, list) else [entry]
        if not group or not all(isinstance(p, str) and p for p in group):
            raise RecordError("wrong type", key, f"expected player ids (text), or a list of tied ones, got "
                              f"{entry!r}"[:300])
        found += [(p, None, float(position)) for p in group]
        position += len(group)
    return found


