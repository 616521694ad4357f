"""Drafting a runner mapping (`data/formats/mapped.md`) from a sample of a runner's JSON-lines logs.

`draft_mapping(paths)` reads a bounded sample (the first HEAD_LINES lines and the last TAIL_BYTES of up to
SAMPLE_FILES files, spread over the sorted list) and guesses, each guess with its evidence:

- the event type: a text key on (nearly) every line with a few distinct values;
- how a game's result is laid out: an object keyed by player of scores or of ranks, a list of players best
  first, parallel lists of players and scores, or one result line per player; it is looked for in the
  event types that end the files;
- the player: the key whose values are the players the results name;
- the agent: a seat table (an object player -> model in some line of every match), a key beside the player,
  a pattern that strips the parts of the player id that change from game to game, or the player id itself;
- the match: a key constant within each file and different between files, else the file's name;
- time, round, text and target, and each other event type's stage (message, vote, action).

A `Draft` holds the mapping as TOML text with every guess commented, and the problems that leave it
incomplete (no result line found: then ratings have nothing to read, and the draft says so).
"""

from __future__ import annotations

import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from referee.io.draft_roles import event_roles, is_target_name, role_tables
from referee.io.id_patterns import id_pattern, resolve_player, resolve_reference
from referee.io.toml_file import toml_line, toml_value
from referee.io.loaders.base import RecordError, is_number, parse_time
from referee.io.loaders.mapped_results import value_at
from referee.io.loaders.registry import MAPPED, reserved_runner_name
from referee.io.draft_sample import (  # noqa: F401  (sample_files and SAMPLE_FILES: the command line's)
    SAMPLE_FILES,
    HEAD_LINES,
    TAIL_BYTES,
    SUFFIXES,
    TYPE_NAMES,
    MATCH_NAMES,
    PLAYER_NAMES,
    AGENT_NAMES,
    TIME_NAMES,
    ROUND_NAMES,
    TEXT_NAMES,
    TARGET_NAMES,
    VOTER_NAMES,
    RANK_WORDS,
    SCORE_WORDS,
    WINNER_WORDS,
    MESSAGE_WORDS,
    sample_file,
    sample_files,
    _named,
    _mentions,
    _example,
    Evidence,
)


@dataclass
class Draft:
    """A drafted mapping: `text` (TOML, every guess commented with its evidence), `problems` (what leaves it
    incomplete), `files` (the sampled files) and `guesses` (field -> chosen key, for tests and --json)."""

    text: str
    problems: list[str]
    files: list[Path]
    guesses: dict = field(default_factory=dict)


def _type_key(ev: Evidence) -> tuple[str | None, str]:
    best, why, score_best = None, "", -1.0
    for path in ev.candidates((str,), least=0.8):
        values = Counter(r[path] for f in ev.flat for r in f if isinstance(r.get(path), str))
        if not 2 <= len(values) <= 60:
            continue
        varies = sum(1 for f in ev.flat if len({r.get(path) for r in f}) > 1) / len(ev.flat)
        score = ev.coverage(path) + varies + (1.0 if _named(path, TYPE_NAMES) else 0.0) - (0.5 if len(values) > 30 else 0)
        if score > score_best:
            common = ", ".join(f"{v} ({c:,})" for v, c in values.most_common(6))
            best, score_best = path, score
            why = f"{len(values)} values on {ev.coverage(path):.0%} of sampled lines: {common}"
    return best, why


@dataclass
class _Layout:
    event: str
    layout: str  # scores / ranks / order / parallel-scores / parallel-ranks / per-player
    key: str
    players_key: str | None
    players: list[set[str]]  # per file, the players the results name
    ends: float  # share of files whose last line is this event type
    example: dict
    why: str
    rank_key: str | None = None  # per-player lines: the rank beside the score
    share: float = 1.0  # share of the files holding this event type whose lines carry the layout


# What a person reading the logs takes as a game's result, first: who won or the final ranking, over any
# numeric field (a count of steps or tokens beside a winners list is telemetry, not the result).
LAYOUT_PREFERENCE = {"winners": 0, "ranks": 0, "parallel-ranks": 0, "order": 1, "scores": 2, "parallel-scores": 2}


def _result_layouts(ev: Evidence, type_key: str) -> list[_Layout]:
    """Every way a game's result could be laid out in one line, best first."""
    by_type: dict[str, list[tuple[int, dict, dict]]] = defaultdict(list)
    for i, (s, f) in enumerate(zip(ev.files, ev.flat)):
        for record, flat in zip(s.records, f):
            kind = record.get(type_key)
            if isinstance(kind, str):
                by_type[kind].append((i, record, flat))
    last = ev.ends(type_key)
    found = []
    for kind, rows in by_type.items():
        ends = last.get(kind, 0) / len(ev.files)
        files = {i for i, _, _ in rows}
        once = Counter(Counter(i for i, _, _ in rows).values())[1] / len(files)
        if once < 0.8:  # a game's result line comes once per match; several a file are per-player lines
            continue
        shapes: dict[tuple[str, str, str | None], dict[int, set[str]]] = defaultdict(dict)
        examples: dict = {}
        numbers: dict[tuple, list[list]] = defaultdict(list)
        for i, record, flat in rows:
            strings = {p: v for p, v in flat.items() if isinstance(v, list) and len(v) >= 2
                       and all(isinstance(x, str) or (isinstance(x, list) and x and all(isinstance(y, str) for y in x))
                               for x in v)}
            seats = {p: list(v) for p, v in flat.items() if isinstance(v, dict) and len(v) >= 2
                     and all(isinstance(x, str) for x in v.values())}  # a seat table: its keys are the players
            # an object keyed by player of numbers (steps, positions, tokens) names the players by its keys too: a
            # winners list beside it is read among them, with no other list of the players on the line
            seats |= {p: list(v) for p, v in flat.items() if isinstance(v, dict) and len(v) >= 2
                      and all(is_number(x) for x in v.values())}
            for p, v in flat.items():
                if isinstance(v, dict) and len(v) >= 2 and all(is_number(x) for x in v.values()):
                    shape = (p, "keyed", None)
                    shapes[shape].setdefault(i, set()).update(v)
                    numbers[shape].append(list(v.values()))
                elif _mentions(p, WINNER_WORDS) and (v is None or isinstance(v, str) or (
                        isinstance(v, list) and all(isinstance(x, str) for x in v))):
                    # an empty or null winners list is a draw; a winner may be named by a short form of its id
                    named = set() if v is None else {v} if isinstance(v, str) else set(v)
                    for q, names in {**strings, **seats}.items():
                        if q != p and all(isinstance(x, str) for x in names) and all(
                                resolve_player(w, set(names)) is not None for w in named):
                            shape = (p, "winners", q)
                            shapes[shape].setdefault(i, set()).update(names)
                elif p in strings:
                    shape = (p, "order", None)
                    shapes[shape].setdefault(i, set()).update(x for e in v for x in (e if isinstance(e, list) else [e]))
                elif isinstance(v, list) and len(v) >= 2 and all(is_number(x) for x in v):
                    for q, names in {**strings, **seats}.items():
                        if len(names) == len(v) and all(isinstance(x, str) for x in names):
                            shape = (p, "parallel", q)
                            shapes[shape].setdefault(i, set()).update(names)
                            numbers[shape].append(v)
                examples.setdefault((p,), record)
        for (p, shape, q), per_file in shapes.items():
            share = len(per_file) / len(files)
            if share < 0.8:
                continue
            ranks = _looks_like_ranks(p, numbers[(p, shape, q)]) if shape not in ("order", "winners") else False
            layout = {"keyed": "ranks" if ranks else "scores", "order": "order", "winners": "winners",
                      "parallel": "parallel-ranks" if ranks else "parallel-scores"}[shape]
            why = (f"'{kind}' lines end {ends:.0%} of the sampled files; '{p}' holds "
                   + {"keyed": f"an object keyed by player of {'ranks' if ranks else 'points'}",
                      "order": "a list of players (read as best first; a nested list: players tied)",
                      "winners": f"the winners among the players in '{q}' (winners tied first, the others tied below)",
                      "parallel": f"a list of {'ranks' if ranks else 'points'} parallel to the players in '{q}'"}[shape]
                   + f" in {len(per_file)} of {len(files)} files")
            players = [per_file.get(i, set()) for i in range(len(ev.files))]
            found.append(_Layout(kind, layout, p, q, players, ends, examples[(p,)], why, share=share))
    found.sort(key=_preference)
    return found


def _preference(layout: _Layout) -> tuple:
    """Sort key of candidate result layouts, best first: the event type that ends the most files; then the
    layout found in the most of its files, naming the most players (a full ranking over one that leaves some
    players out); then a winners list or a ranking over numbers (`LAYOUT_PREFERENCE`; a list of players
    counts as a ranking only when its key says so, 'final_ranking', else it is read after numbers); then a key
    named like a result."""
    named = sum(len(p) for p in layout.players) / max(1, sum(1 for p in layout.players if p))
    ranked = layout.layout == "order" and _mentions(layout.key, RANK_WORDS + WINNER_WORDS)
    preference = 0 if ranked else 3 if layout.layout == "order" else LAYOUT_PREFERENCE[layout.layout]
    # a list of players whose key does not say it is an order of finish (a seating list) never outranks a
    # result found in most of its event's files: a draw or an odd winner in a few games costs those games only
    result = layout.share >= RESULT_SHARE and (layout.layout != "order" or ranked)
    return (-round(layout.ends, 2), -result, -round(layout.share, 2), -round(named, 1), preference,
            -_mentions(layout.key, RANK_WORDS + SCORE_WORDS))


RESULT_SHARE = 0.5  # a result layout on at least this share of its event's files outranks a seating list


def _why_not(chosen: _Layout, other: _Layout) -> str:
    """Why `other` was set aside for `chosen`, from the first field of `_preference` where they differ."""
    mine, theirs = _preference(chosen), _preference(other)
    reasons = (f"its lines end fewer files ({other.ends:.0%} against {chosen.ends:.0%})",
               "a list of players whose key does not say it is an order of finish is a seating list: it never "
               "outranks a result on most of its event's files",
               f"it is on fewer of its event's files ({other.share:.0%} against {chosen.share:.0%})",
               "it names fewer players",
               "who won or the order of finish decides a game; a number beside it (steps, positions, tokens) is "
               "telemetry" if chosen.layout in ("winners", "ranks", "parallel-ranks", "order") else
               "a ranking of the players over a list read as an order",
               "its key is not named like a result")
    return next((why for a, b, why in zip(mine, theirs, reasons) if a != b), "an equal candidate after it")


def _looks_like_ranks(path: str, lines: list[list]) -> bool:
    """Ranks when every line's values are whole numbers 1..n (n players) and the key says rank, place or
    position and not score or points; points otherwise."""
    whole = all(all(float(x).is_integer() and 1 <= x <= len(v) for x in v) and min(v) == 1 for v in lines)
    return whole and _mentions(path, RANK_WORDS) and not _mentions(path, SCORE_WORDS)


def _per_player_results(ev: Evidence, type_key: str, player_key: str) -> _Layout | None:
    """One result line per player: an event type near the files' ends whose lines carry the player and a
    number named like a score or a rank, once per player."""
    best = None
    last = ev.ends(type_key)
    for kind in {r.get(type_key) for f in ev.flat for r in f if isinstance(r.get(type_key), str)}:
        rows = [(i, r) for i, f in enumerate(ev.flat) for r in f if r.get(type_key) == kind and isinstance(r.get(player_key), str)]
        if not rows:
            continue
        keys = Counter(p for _, r in rows for p, v in r.items() if is_number(v) and _mentions(p, SCORE_WORDS + RANK_WORDS))
        scores = Counter({p: c for p, c in keys.items() if _mentions(p, SCORE_WORDS)})
        ranks = Counter({p: c for p, c in keys.items() if p not in scores})
        if not keys:
            continue
        key, hits = (scores or ranks).most_common(1)[0]
        rank_key = ranks.most_common(1)[0][0] if scores and ranks and ranks.most_common(1)[0][1] >= 0.8 * len(rows) else None
        per_file: dict[int, list[str]] = defaultdict(list)
        for i, r in rows:
            per_file[i].append(r[player_key])
        once = sum(1 for names in per_file.values() if len(names) == len(set(names))) / len(per_file)
        if hits / len(rows) < 0.8 or once < 0.9:
            continue
        ends = last.get(kind, 0) / len(ev.files)
        layout = _Layout(kind, "per-player", key, None, [set(per_file.get(i, [])) for i in range(len(ev.files))], ends,
                         next(r for _, r in rows), f"'{kind}' lines carry the player and '{key}' "
                         f"({'points' if scores else 'a rank'}), one per player, in {len(per_file)} files")
        layout.players_key = "score" if scores else "rank"
        layout.rank_key = rank_key
        if best is None or ends > best.ends:
            best = layout
    return best


def _is_player(value: str, players: set[str]) -> bool:
    """Whether `value` is one of the results' `players`, or the full id that one of them shortens ('Player5_x' for a
    result naming 'P5'; `resolve_player`), or a longer form of one ('Player4_Game17_mistral' where the results say
    'mistral'; `resolve_reference`)."""
    return value in players or any(resolve_player(q, {value}) is not None for q in players) \
        or resolve_reference(value, players) is not None


def _players_named(ev: Evidence, path: str, result: _Layout, without: str | None = None) -> tuple[int, int]:
    """(lines whose text value at `path` is a player the results name in that file, lines with a text value at
    `path`), counting only the lines that hold no text at `without` when it is given."""
    inside = total = 0
    for i, f in enumerate(ev.flat):
        for r in f:
            v = r.get(path)
            if isinstance(v, str) and (without is None or not isinstance(r.get(without), str)):
                total += 1
                inside += _is_player(v, result.players[i])
    return inside, total


def _player_key(ev: Evidence, type_key: str, result: _Layout | None) -> tuple[str | None, str]:
    best, why, top = None, "", 0.0
    for path in ev.candidates((str,), least=0.05):
        if path == type_key or is_target_name(path):  # a target names a player too, but not the one who acts
            continue
        if result is not None:
            inside, total = _players_named(ev, path, result)
            fit = inside / total if total else 0.0
            score = fit + ev.coverage(path) + (0.2 if _named(path, PLAYER_NAMES) else 0.0)
            if fit >= 0.9 and score > top:
                best, top = path, score
                why = f"its values are the players the results name on {fit:.0%} of the {total:,} lines that carry it"
        elif _named(path, PLAYER_NAMES):
            per_file = [len({r.get(path) for r in f if isinstance(r.get(path), str)}) for f in ev.flat]
            if per_file and max(per_file) >= 2 and ev.coverage(path) > top:
                best, top = path, ev.coverage(path)
                why = f"named like a player; {max(per_file)} distinct values in a file at most"
    return best, why


def _other_player_keys(ev: Evidence, type_key: str, result: _Layout | None, best: str) -> list[str]:
    """Keys that name the players the results name (on 90 % of the lines without `best`): runners that call a
    seat `agent_id` on one kind of line and `player_id` or `seat_id` on another."""
    if result is None:
        return []
    found = []
    for path in ev.candidates((str,), least=0.01):
        if path in (type_key, best) or "." in path or (_named(path, TARGET_NAMES) and not _named(path, VOTER_NAMES)):
            continue  # a target names a player too, but not the one who acts
        inside, total = _players_named(ev, path, result, without=best)
        if total and inside / total >= 0.9:
            found.append(path)
    return sorted(found, key=lambda path: not _named(path, VOTER_NAMES))


def _voter_key(ev: Evidence, type_key: str, result: _Layout | None, player_key: str) -> tuple[str | None, str]:
    """A key named like a voter ('voter', 'by', 'from') on the lines of vote events whose values are the players
    the results name: a vote's actor is who cast it, even where the line's player key holds the one voted for."""
    if result is None:
        return None, ""
    votes = {r.get(type_key) for f in ev.flat for r in f if isinstance(r.get(type_key), str) and "vote" in r[type_key].lower()}
    if not votes:
        return None, ""
    for path in ev.candidates((str,), least=0.0):
        if path == player_key or not _named(path, VOTER_NAMES):
            continue
        inside = total = 0
        for i, f in enumerate(ev.flat):
            for r in f:
                if r.get(type_key) in votes and isinstance(r.get(path), str):
                    total += 1
                    inside += _is_player(r[path], result.players[i])
        if total and inside / total >= 0.9:
            return path, (f"on {', '.join(sorted(votes))} lines '{path}' names who voted ({inside:,} of {total:,} lines "
                          "name a player), so it is tried first: a vote's actor is its voter")
    return None, ""


def _match_key(ev: Evidence, exclude: set[str]) -> tuple[str | None, str]:
    if len(ev.files) < 2:
        for path in ev.candidates((str, int), least=0.95):
            if path not in exclude and _named(path, MATCH_NAMES):
                return path, "named like a match id (one file sampled: constancy between files not checked)"
        return None, "one file sampled and no key named like a match id"
    best, why, top = None, "", 0.0
    for path in ev.candidates((str, int), least=0.9):
        if path in exclude:
            continue
        values = [[str(r[path]) for r in f if isinstance(r.get(path), (str, int)) and not isinstance(r[path], bool)]
                  for f in ev.flat]  # an id is read as text: 17 and "17" are one id, as the mapped loader stores it
        runs = sum(sum(1 for a, b in zip(v, v[1:]) if a != b) + (1 if v else 0) for v in values)
        distinct = {x for v in values for x in v}
        constant = all(len(set(v)) <= 1 for v in values)
        contiguous = runs == sum(len(set(v)) for v in values)  # each value in one run: several matches per file
        if len(distinct) < 2 or not contiguous or (not constant and not _named(path, MATCH_NAMES)):
            continue
        score = ev.coverage(path, (str, int)) + (1.0 if constant else 0.0) + (0.5 if _named(path, MATCH_NAMES) else 0.0)
        if score > top:
            best, top = path, score
            why = (f"constant within each of the {len(ev.files)} sampled files and {len(distinct)} distinct between "
                   "them" if constant else f"named like a match id; each value in one run of lines ({len(distinct)} matches)")
    return best, why or "no key is constant within each file and different between files"


def _seat_table(ev: Evidence, type_key: str, result: _Layout) -> tuple[str | None, str | None, str]:
    """A key holding an object player -> agent name in some line of each match (a setup or join line)."""
    hits: Counter = Counter()
    kinds: dict[str, Counter] = defaultdict(Counter)
    short: set[str] = set()  # tables that name some player in full where the results shorten it
    for i, (s, f) in enumerate(zip(ev.files, ev.flat)):
        for record, flat in zip(s.records, f):
            for p, v in flat.items():
                if isinstance(v, dict) and len(v) >= 2 and all(isinstance(x, str) and x for x in v.values()) \
                        and result.players[i] and all(resolve_player(q, set(v)) for q in result.players[i]):
                    hits[p] += 1
                    kinds[p][record.get(type_key)] += 1
                    if not result.players[i] <= set(v):
                        short.add(p)
    for p, c in hits.most_common():
        files = sum(1 for i, f in enumerate(ev.flat) if any(isinstance(r.get(p), dict) for r in f))
        if files >= 0.8 * len(ev.files):
            kind = kinds[p].most_common(1)[0][0]
            return p, kind, (f"'{p}' in '{kind}' lines maps every player the results name to a name, in {files} of "
                             f"{len(ev.files)} files" + ("; the results name some players by a shorter form of "
                                                         "the ids there (e.g. 'P5' for 'Player5_...'), read as those "
                                                         "players" if p in short else ""))
    return None, None, ""


def _agent_key(ev: Evidence, player_key: str, exclude: set[str]) -> tuple[str | None, str]:
    for path in ev.candidates((str,), least=0.01):
        if path in exclude or not _named(path, AGENT_NAMES):
            continue
        pairs = defaultdict(set)
        for i, f in enumerate(ev.flat):
            for r in f:
                if isinstance(r.get(player_key), str) and isinstance(r.get(path), str):
                    pairs[(i, r[player_key])].add(r[path])
        if pairs and all(len(v) == 1 for v in pairs.values()):
            return path, f"one value per player in each file, on the lines that name the player ({len(pairs):,} players)"
    return None, ""


def _scalar_key(ev: Evidence, names: tuple[str, ...], test, exclude: set[str]) -> tuple[str | None, str]:
    for path in ev.candidates((str, int, float), least=0.05):
        if path in exclude or not _named(path, names):
            continue
        values = [r[path] for f in ev.flat for r in f if r.get(path) is not None]
        ok = sum(1 for v in values if test(v))
        if values and ok / len(values) >= 0.95:
            return path, f"named '{path.split('.')[-1]}', on {ev.coverage(path, (str, int, float)):.0%} of lines"
    return None, ""


def _iso(v) -> bool:
    """Whether the mapping's time reader (parse_time) reads `v` as an ISO 8601 time."""
    try:
        return parse_time(v, "time") is not None
    except RecordError:
        return False


GENERIC_FOLDERS = {"logs", "log", "data", "results", "runs", "outputs", "output", "games", "episodes", "raw", "jsonl"}


def _title(ev: Evidence) -> str:
    """The mapping's name from the data: the sampled files' common folder, or the first folder above it that is
    not a generic one ('logs', 'results', ...: a benchmark's `bench/logs/` is 'bench'); 'my-runner' when none."""
    import os

    common = Path(os.path.commonpath([str(s.path.resolve().parent) for s in ev.files]))
    for folder in (common, *common.parents):  # a folder named by spaces alone names nothing the mapping can use
        if folder.name.strip() and folder.name.strip().lower() not in GENERIC_FOLDERS:
            return folder.name.strip()
    return "my-runner"


def draft_mapping(paths: list[str | Path], name: str | None = None, limit: int = SAMPLE_FILES) -> Draft:
    """Draft a mapping for the JSON-lines logs under `paths` (files or folders) from a bounded sample.

    Returns a Draft (TOML text with each guess's evidence as comments, problems, the sampled files).
    Raises ValueError naming the paths when no JSON-lines file with JSON objects is found."""
    from referee.io.loaders import data_files

    files = sample_files([p for p in data_files(paths)], limit)
    sampled = [sample_file(p) for p in files]
    ev = Evidence(sampled)
    if not ev.files:
        raise ValueError(f"no JSON-lines file with JSON objects under {', '.join(map(str, paths))} "
                         f"(looked at {len(files)} file(s) ending in {', '.join(SUFFIXES)})")
    problems: list[str] = []
    lines: list[str] = []
    type_key, type_why = _type_key(ev)
    if type_key is None:
        raise ValueError(f"no key holds an event type in {len(ev.files)} sampled file(s) ({ev.n:,} lines): a mapping "
                         "needs one key on every line with a few distinct values (e.g. 'type' or 'event')")
    layouts = _result_layouts(ev, type_key)
    result = layouts[0] if layouts else None
    player_key, player_why = _player_key(ev, type_key, result)
    if result is None and player_key is not None:
        result = _per_player_results(ev, type_key, player_key)
    roles = event_roles(ev, type_key, result.players, {result.event}) if result is not None else []
    aimed = {r.target for r in roles if r.target}  # a key read as a target (or named like one) is never an actor
    aimed |= {k for f in ev.flat for r in f for k in r if is_target_name(k)}
    also = [k for k in (_other_player_keys(ev, type_key, result, player_key) if player_key else []) if k not in aimed]
    voter, voter_why = _voter_key(ev, type_key, result, player_key) if player_key else (None, "")
    used = {type_key} | ({player_key} if player_key else set()) | set(also) | ({voter} if voter else set())
    match_key, match_why = _match_key(ev, used)
    used |= {match_key} if match_key else set()
    title = name or _title(ev)
    if reserved_runner_name(title):
        title = f"{title}-{MAPPED}" if title.strip().lower() != MAPPED else "my-runner"
    total_lines = ev.n
    documents = sum(1 for s in ev.files if s.document)
    how = (f"the first {HEAD_LINES} and the last {TAIL_BYTES >> 10} KiB of each" if not documents else
           f"{documents} of them one JSON document each, read as event lines: its lists of objects "
           f"(@record = the list's key), then its own keys (@record = 'document')")
    lines += [f"# Drafted by `referee map` from {len(ev.files)} sampled file(s) ({total_lines:,} lines: {how}).",
              "# Every guess below says why; correct what is wrong, then `referee map LOGS --out THIS.toml --check`",
              "# or `referee ingest LOGS --runner THIS.toml`. Format: data/formats/mapped.md",
              f"name = {toml_value(title)}", ""]
    keys = [f"type = {toml_value(type_key)}  # {type_why}"]
    if match_key:
        keys.insert(0, f"match = {toml_value(match_key)}  # {match_why}")
    if player_key and voter:
        rest = [k for k in also if k != voter]
        keys.append(f"player = {toml_value([voter, player_key] + rest)}  # '{player_key}': {player_why}; {voter_why}"
                    + ("; on lines without either, " + ", ".join(f"'{k}'" for k in rest) + " names the player"
                       if rest else ""))
    elif player_key and also:
        keys.append(f"player = {toml_value([player_key] + also)}  # {player_why}; on lines without it, "
                    + ", ".join(f"'{k}'" for k in also) + " names the player (each key tried in turn)")
    elif player_key:
        keys.append(f"player = {toml_value(player_key)}  # {player_why}")
    time_key, why = _scalar_key(ev, TIME_NAMES, _iso, used)
    if time_key:
        keys.append(f"time = {toml_value(time_key)}  # ISO 8601 times, {why}")
        used.add(time_key)
    round_key, why = _scalar_key(ev, ROUND_NAMES, lambda v: is_number(v) and float(v).is_integer(), used)
    if round_key:
        keys.append(f"round = {toml_value(round_key)}  # whole numbers, {why}")
        used.add(round_key)
    text_key, why = _scalar_key(ev, TEXT_NAMES, lambda v: isinstance(v, str), used)
    if text_key:
        keys.append(f"text = {toml_value(text_key)}  # {why}")
        used.add(text_key)
    target_key, why = _scalar_key(ev, TARGET_NAMES, lambda v: isinstance(v, str), used)
    if target_key:
        keys.append(f"target = {toml_value(target_key)}  # {why}")
        used.add(target_key)
    agents: list[str] = []
    agent_source = None  # where the draft takes each player's agent from: table, key, pattern
    ignore: list[str] = []
    seat_kind = None
    if result is not None:
        if result.layout == "per-player":
            keys.append(f"{result.players_key} = {toml_value(result.key)}  # {result.why}")
            if result.rank_key:
                keys.append(f"rank = {toml_value(result.rank_key)}  # on the same lines, named like a rank")
            used |= {result.key, result.rank_key}
        table, seat_kind, why = _seat_table(ev, type_key, result)
        if table:
            agents, agent_source = [f"table = {toml_value(table)}  # {why}"], "table"
            if seat_kind is not None and seat_kind != result.event:
                ignore.append(seat_kind)
        else:
            agent_key, why = _agent_key(ev, player_key, used) if player_key else (None, "")
            if agent_key:
                keys.append(f"agent = {toml_value(agent_key)}  # {why}")
                agent_source = "key"
            else:
                regex, why = id_pattern(result.players)
                if regex:
                    agents, agent_source = [f"pattern = {toml_value(regex)}  # {why}"], "pattern"
                else:
                    problems.append("no agent found: no seat table, no model key beside the player, and no pattern "
                                    "on the player ids makes the agents recur across games; add [agents] by hand")
    else:
        problems.append(f"no line in the {len(ev.files)} sampled file(s) holds a game's result (an object keyed by "
                        "player of points or ranks, a list of players best first, parallel lists, or one line per "
                        "player with a score or rank): the draft reads events only, and ratings will have nothing "
                        "to compare; add [results] by hand if the logs carry results under another shape")
    kinds = Counter(r.get(type_key) for f in ev.flat for r in f if isinstance(r.get(type_key), str))
    stages: dict[str, list[str]] = defaultdict(list)
    for kind, count in kinds.most_common():
        if result is not None and kind == result.event:
            continue
        if kind in ignore:
            stages["ignore"].append(kind)
        elif any(w in kind.lower() for w in MESSAGE_WORDS) or (text_key and any(
                r.get(type_key) == kind and value_at(r, (tuple(text_key.split(".")),)) is not None for s in ev.files for r in s.records)):
            stages["message"].append(kind)
        elif "vote" in kind.lower():
            stages["vote"].append(kind)
        else:
            stages["action"].append(kind)
    if result is not None and result.layout == "per-player":
        stages["result"].append(result.event)
    if match_key is None:
        lines += ["[match]", f'from = "file"  # {match_why}: each file\'s name is its match id', ""]
    lines += ["[keys]"] + keys + [""]
    lines += ["[events]  # stage = event types (counts in the sample); types not listed are kept with no stage"]
    for stage in ("message", "action", "vote", "result", "ignore"):
        if stages.get(stage):
            counted = ", ".join(f"{k} {kinds[k]:,}" for k in stages[stage])
            lines.append(f"{stage} = {toml_value(stages[stage])}  # {counted}"
                         + ("; setup lines, read for the seat table" if stage == "ignore" and seat_kind else ""))
    lines.append("")
    lines += role_tables(roles)
    if result is not None and result.layout != "per-player":
        layout = {"scores": "scores", "ranks": "ranks", "order": "order", "parallel-scores": "scores",
                  "parallel-ranks": "ranks", "winners": "winners"}[result.layout]
        others = [o for o in layouts if o is not result][:4]
        seen = [f"#   also seen, not chosen: {o.layout} in '{o.key}' of '{o.event}' lines ({o.why}): "
                f"{_why_not(result, o)}" for o in others]
        lines += ["[results]", f"# chosen: {result.why}", f"# e.g. {_example(result.example)}"] + seen + [
            f"event = {toml_value(result.event)}"]
        if result.players_key:
            lines.append(f"players = {toml_value(result.players_key)}")
        lines += [f"{layout} = {toml_value(result.key)}", ""]
    elif result is None:
        lines += ["# [results]  # no result line found in the sample (see the problems above the draft)",
                  '# event = "EVENT TYPE OF THE LAST LINE"', '# scores = "KEY OF {player: points}"', ""]
    if agents:
        lines += ["[agents]"] + agents + [""]
    if problems:
        lines = [f"# PROBLEM: {p}" for p in problems] + lines
    guesses = {"type": type_key, "match": match_key or "(file name)", "player": player_key,
               "result": None if result is None else {"event": result.event, "layout": result.layout, "key": result.key},
               "agents": agent_source, "voter": voter,
               "roles": {r.kind: {f: getattr(r, a) for f, a in (("player", "actor"), ("target", "target"),
                                                                  ("value", "value"), ("text", "text"))
                                  if getattr(r, a)} for r in roles}}
    text = "\n".join(toml_line(line) for line in lines).rstrip() + "\n"
    tomllib.loads(text)  # the draft is TOML whatever the logs held (a TOMLDecodeError here is a bug in the draft)
    return Draft(text, problems, [s.path for s in ev.files], guesses)

