"""What `referee map` samples of a runner's logs and how it indexes them (`referee.io.mapping_draft` drafts the
mapping from this): the key names it looks for, a bounded sample of each file (`sample_file`: the first HEAD_LINES
lines and the last TAIL_BYTES, or a one-document file's event lines), the files sampled (`sample_files`), and
`Evidence`, every sampled record's flattened key paths per file."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from referee.io.loaders.files import document_lines, head_text, is_document
from referee.io.sampled_values import hashable

SAMPLE_FILES = 300  # files sampled, spread over the sorted list
HEAD_LINES = 200  # lines read from the start of each sampled file
TAIL_BYTES = 32 << 10  # bytes read from the end of each sampled file (results are usually last)
SUFFIXES = (".jsonl", ".ndjson", ".log", ".json")

TYPE_NAMES = ("type", "event", "event_type", "kind", "action_type", "msg_type", "record_type")
MATCH_NAMES = ("match", "match_id", "game_id", "episode", "episode_id", "game", "run_id", "session", "session_id")
PLAYER_NAMES = ("player", "player_id", "seat", "actor", "speaker", "sender", "agent_id", "agent", "name")
AGENT_NAMES = ("model", "agent", "model_name", "policy", "submission", "llm")
TIME_NAMES = ("ts", "time", "timestamp", "created_at", "datetime", "date")
ROUND_NAMES = ("round", "turn", "step", "tick", "iteration", "move_number")
TEXT_NAMES = ("text", "content", "message", "utterance", "msg", "body")
TARGET_NAMES = ("to", "target", "receiver", "recipient", "for", "addressee", "voted_for", "vote_for", "vote",
                "choice", "accused", "nominee", "suspect")
VOTER_NAMES = ("voter", "by", "from", "source", "sender", "caster", "actor")  # who cast a vote
RANK_WORDS = ("rank", "place", "position", "standing", "order", "finish")
SCORE_WORDS = ("score", "point", "reward", "return", "payoff", "utility", "chips", "money")
WINNER_WORDS = ("winner", "winning", "won")
MESSAGE_WORDS = ("say", "message", "chat", "talk", "speak", "utter", "broadcast", "whisper")


@dataclass
class Sampled:
    """One sampled file: its path and the JSON objects of its head and tail, in file order (`last` is the
    file's last object, when the tail was read whole into one)."""

    path: Path
    records: list[dict]
    last: dict | None
    document: bool = False  # one JSON document, read as event lines (`document_lines`)


def _objects(lines: list[str]) -> list[dict]:
    found = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's stack: not sampled
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def sample_file(path: Path) -> Sampled:
    """The first HEAD_LINES lines and the last TAIL_BYTES of `path`, parsed (lines that are not JSON objects
    are skipped); never more than HEAD_LINES lines plus TAIL_BYTES read. A file that is one JSON document
    (an episode per file, pretty-printed) is read as the mapped loader reads it (`document_lines`): its
    lists of event objects, then its own line (`@record` = 'document'), the first HEAD_LINES and the last."""
    with open(path, "rb") as fh:
        head = head_text(fh.read(4096))
    if is_document(path, head):
        lines = [line.value for line in document_lines(path, head) if isinstance(line.value, dict)]
        records = lines[:HEAD_LINES] + lines[max(HEAD_LINES, len(lines) - HEAD_LINES):]
        return Sampled(path, records, records[-1] if records else None, document=True)
    size = path.stat().st_size
    head: list[str] = []
    with open(path, "rb") as fh:
        for _ in range(HEAD_LINES):
            raw = fh.readline()
            if not raw:
                break
            head.append(raw.decode("utf-8", errors="replace"))
        at = fh.tell()
        tail: list[str] = []
        if at < size:
            fh.seek(max(at, size - TAIL_BYTES))
            chunk = fh.read().decode("utf-8", errors="replace")
            tail = chunk.split("\n")[0 if size - TAIL_BYTES <= at else 1:]  # drop a partial first line
    head_objects, tail_objects = _objects(head), _objects(tail)
    records = head_objects + tail_objects
    return Sampled(path, records, records[-1] if records else None)


def sample_files(paths: list[Path], limit: int = SAMPLE_FILES) -> list[Path]:
    """Up to `limit` of `paths` (JSON-lines suffixes), spread evenly over the sorted list."""
    found = sorted(p for p in paths if p.suffix.lower() in SUFFIXES)
    if len(found) <= limit:
        return found
    step = len(found) / limit
    return [found[int(i * step)] for i in range(limit)]


PATH_DEPTH = 3  # objects a key path reaches down ('data.result.final_payoff_map')
PATH_KEYS = 64  # keys of one object a path reaches into; a larger object (keyed by something else) is a value


def _paths(record: dict, prefix: str = "", depth: int = PATH_DEPTH) -> dict[str, object]:
    """Top-level keys and the keys of objects down to PATH_DEPTH levels ('payload.text',
    'data.final_payoff_map'), with their values: a result or a seat table nested in the record is found."""
    out = {}
    for key, value in record.items():
        if not isinstance(key, str):
            continue
        path = f"{prefix}{key}"
        out[path] = hashable(value)
        if depth > 1 and isinstance(value, dict) and len(value) <= PATH_KEYS:
            out.update(_paths(value, f"{path}.", depth - 1))
    return out


def _named(path: str, names: tuple[str, ...]) -> bool:
    """Whether the key's last part is one of `names`, as it is or without an id suffix ('voter_id', 'voterId':
    'voter')."""
    last = path.split(".")[-1].lower()
    bare = last[:-3] if last.endswith("_id") else last[:-2] if last.endswith("id") and len(last) > 3 else last
    return last in names or bare in names


def _mentions(path: str, words: tuple[str, ...]) -> bool:
    last = path.split(".")[-1].lower()
    return any(w in last for w in words)


def _example(record: dict, limit: int = 160) -> str:
    text = json.dumps(record, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + " ..."


class Evidence:
    """The sample, indexed: every record's flattened paths, per file."""

    def __init__(self, sampled: list[Sampled]):
        self.files = [s for s in sampled if s.records]
        self.flat = [[_paths(r) for r in s.records] for s in self.files]
        self.n = sum(len(f) for f in self.flat)

    def ends(self, type_key: str) -> Counter:
        """How many sampled files end with a line of each event type."""
        return Counter(hashable(s.last.get(type_key)) for s in self.files if s.last)

    def coverage(self, path: str, kinds=(str,)) -> float:
        hits = sum(1 for f in self.flat for r in f if isinstance(r.get(path), kinds) and not isinstance(r.get(path), bool))
        return hits / max(1, self.n)

    def candidates(self, kinds=(str,), least: float = 0.0) -> list[str]:
        seen: Counter = Counter()
        for f in self.flat:
            for r in f:
                for p, v in r.items():
                    if isinstance(v, kinds) and not isinstance(v, bool):
                        seen[p] += 1
        return [p for p, c in seen.items() if c / max(1, self.n) >= least]
