"""Who acted, at whom, and how much, per event type, for `referee map`'s draft (`mapping_draft.py`).

A person reading a log line takes the speaker of a private message as its actor and its recipient as its target,
a ballot's voter as its actor and its candidate as its target, and a bid's amount as its value, whatever key the
runner chose for each kind of line. `event_roles(ev, type_key, players)` does the same per event type from a
sample (`draft_sample.Evidence`): among the keys on (most of) that type's lines whose values are players the
results name (in full, or by another form of the id: `id_patterns.resolve_reference`),

- the target: a key whose name says at whom (target, recipient, to, candidate, receiver, ...) or on whom the act
  fell (a past participle: `eliminated_player`, `accepted`); a key read as a target is never an actor;
- the actor: a key whose name says who acted (speaker, sender, from, voter, proposer, bidder, punisher, player,
  actor, source, ...), in that order of preference; else, by position, the only player-valued key left;
- the value: the numeric key whose name says it is the act's number (amount, bid, contribution, offer, spend,
  fine, move, steps, ...), the others named as alternatives (never a round, a time or a score);
- the text: the key holding prose (words with spaces, PROSE characters or more on average), the longest.

Each role comes with its evidence (how many lines, how many name a player) for the draft's comments.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from referee.io.draft_sample import ROUND_NAMES, SCORE_WORDS, TIME_NAMES, _named
from referee.io.id_patterns import resolve_reference
from referee.io.loaders.base import is_number
from referee.io.toml_file import toml_value

# who acted, most telling first; a bare 'player' or 'seat' only after every word that names an act
ACTOR_WORDS = ("speaker", "sender", "from", "voter", "proposer", "bidder", "punisher", "caster", "author", "actor",
               "source", "by", "player", "seat", "agent")
TARGET_WORDS = ("target", "recipient", "to", "candidate", "receiver", "for", "whom", "addressee", "nominee",
                "accused", "suspect", "victim", "against", "choice")
VALUE_WORDS = ("amount", "bid", "contribution", "contribute", "offer", "spend", "fine", "stake", "price", "quantity",
               "move", "steps", "units", "value", "tokens", "damage")
NOT_AN_ACT = {"time", "s", "ms", "seconds", "latency", "id", "seed", "round", "turn", "step", "index", "seq", "phase",
              "subround", "tick", "day", "night"}
PROSE = 12  # characters on average of a key read as an event's text (words with spaces between them)
LEAST = 0.5  # share of a type's lines a key must be on to be read as one of its roles
PLAYERS = 0.9  # share of those lines on which its values must name a player of the results


def _tokens(path: str) -> list[str]:
    """The words of a key's last part: 'voter_id' -> ['voter', 'id'], 'targetPlayer' -> ['target', 'player']."""
    last = path.split(".")[-1]
    last = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", last)
    return [t for t in re.split(r"[^a-z0-9]+", last.lower()) if t]


def _word(path: str, words: tuple[str, ...]) -> int | None:
    """The position in `words` of the first of them among the key's words (None: none)."""
    found = [words.index(t) for t in _tokens(path) if t in words]
    return min(found) if found else None


def _passive(path: str) -> bool:
    """A key named by a past participle ('eliminated_player', 'accepted'): the one the act fell on."""
    return any(len(t) > 4 and t.endswith("ed") for t in _tokens(path))


def is_target_name(path: str) -> bool:
    """Whether a key's name says at whom an act is aimed or on whom it fell ('target_id', 'recipient',
    'eliminated_player'): never an actor."""
    return _word(path, TARGET_WORDS) is not None or _passive(path)


@dataclass
class Roles:
    """One event type's roles: its `lines` in the sample, the `actor`, `target`, `value` and `text` keys (None:
    none found), `why` (field -> evidence), `alternatives` (other numeric keys of its lines) and `unresolved` (lines
    whose actor names no player of the results)."""

    kind: str
    lines: int
    actor: str | None = None
    target: str | None = None
    value: str | None = None
    text: str | None = None
    why: dict = field(default_factory=dict)
    alternatives: list[str] = field(default_factory=list)
    unresolved: int = 0


def event_roles(ev, type_key: str, players: list[set[str]], skip: set[str]) -> list[Roles]:
    """The roles of every event type of the sample `ev` but those in `skip` (the result line's), most lines first.
    `players`: per sampled file, the players its results name."""
    by_kind: dict[str, list[tuple[int, dict]]] = {}
    for i, flat in enumerate(ev.flat):
        for r in flat:
            kind = r.get(type_key)
            if isinstance(kind, str) and kind not in skip:
                by_kind.setdefault(kind, []).append((i, r))
    return [_roles(kind, rows, players, type_key) for kind, rows in
            sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def _names_player(value, players: set[str]) -> bool:
    return isinstance(value, str) and (value in players or resolve_reference(value, players) is not None)


def _roles(kind: str, rows: list[tuple[int, dict]], players: list[set[str]], type_key: str) -> Roles:
    n = len(rows)
    found = Roles(kind, n)
    keys = Counter(p for _, r in rows for p, v in r.items() if p != type_key and v is not None)
    common = [p for p, c in keys.items() if c >= LEAST * n]
    named: dict[str, tuple[int, int]] = {}  # player-valued key -> (lines naming a player, lines with text there)
    for path in common:
        texts = [(i, r[path]) for i, r in rows if isinstance(r.get(path), str)]
        if len(texts) < LEAST * n:
            continue
        hits = sum(_names_player(v, players[i]) for i, v in texts)
        if hits >= PLAYERS * len(texts):
            named[path] = (hits, len(texts))
    targets = sorted((p for p in named if is_target_name(p)),
                     key=lambda p: (_word(p, TARGET_WORDS) is None, _word(p, TARGET_WORDS) or 0, p))
    actors = sorted((p for p in named if p not in targets and _word(p, ACTOR_WORDS) is not None),
                    key=lambda p: (_word(p, ACTOR_WORDS), p))
    left = [p for p in named if p not in targets]
    if not actors and len(left) == 1:
        actors, how = left, "the only key of these lines naming a player that is not a target"
    else:
        how = "named for who acted"
    if actors:
        found.actor = actors[0]
        hits, total = named[found.actor]
        found.unresolved = total - hits
        found.why["player"] = (f"'{found.actor}' ({how}) names a player of the results on {hits:,} of {total:,} "
                               f"'{kind}' lines" + (f"; also player-valued: {', '.join(actors[1:])}" if actors[1:]
                                                    else ""))
    if targets:
        found.target = targets[0]
        hits, total = named[found.target]
        found.why["target"] = (f"'{found.target}' (named for whom the act is at) names a player on {hits:,} of "
                               f"{total:,} lines; never the actor")
    prose = {}
    for path in common:
        texts = [r[path] for _, r in rows if isinstance(r.get(path), str)]
        if path not in named and len(texts) >= LEAST * n and sum(" " in t for t in texts) >= LEAST * len(texts):
            prose[path] = sum(map(len, texts)) / len(texts)
    if prose and max(prose.values()) >= PROSE:
        found.text = max(prose, key=lambda p: (prose[p], p))
        found.why["text"] = (f"'{found.text}' holds prose on most '{kind}' lines ({prose[found.text]:.0f} characters "
                             "on average)")
    numeric = [p for p in common if p not in named and not _named(p, ROUND_NAMES + TIME_NAMES)
               and not any(w in p.lower() for w in SCORE_WORDS) and not set(_tokens(p)) & NOT_AN_ACT
               and sum(1 for _, r in rows if is_number(r.get(p)) and not isinstance(r.get(p), bool)) >= 0.8 * n]
    values = sorted((p for p in numeric if _word(p, VALUE_WORDS) is not None), key=lambda p: (_word(p, VALUE_WORDS), p))
    if values:
        found.value = values[0]
        found.alternatives = [p for p in numeric if p != found.value]
        count = sum(1 for _, r in rows if is_number(r.get(found.value)) and not isinstance(r.get(found.value), bool))
        found.why["value"] = (f"'{found.value}' (named for the act's number) is a number on {count:,} of {n:,} lines"
                              + (f"; also numeric: {', '.join(found.alternatives)}" if found.alternatives else ""))
    return found


BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # a TOML key written without quotes


def role_tables(roles: list[Roles]) -> list[str]:
    """The draft's [event_keys.TYPE] tables (lines of TOML): per event type, who acted, at whom and how much, each
    with its evidence; a type with none of the three gets no table (it reads [keys])."""
    out = []
    for r in roles:
        fields = [(f, getattr(r, a)) for f, a in (("player", "actor"), ("target", "target"), ("value", "value"),
                                                  ("text", "text")) if getattr(r, a)]
        if not fields:
            continue
        header = r.kind if BARE_KEY.match(r.kind) else toml_value(r.kind)
        out.append(f"[event_keys.{header}]  # {r.lines:,} '{r.kind}' line(s) sampled"
                   + (f"; {r.unresolved:,} of them name no player of the results as actor" if r.unresolved else ""))
        out += [f"{f} = {toml_value(key)}  # {r.why[f]}" for f, key in fields] + [""]
    return out

