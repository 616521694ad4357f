"""Reading a runner's files: text with a cap, JSON and JSON lines with the record-level errors a quarantine
names (line, field, reason), content hashes, and the fault finder for values JSON allows but a record cannot
use (`referee.io.loaders.base` re-exports them for the loaders)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from referee.io.loaders.errors import FILE_RAW_CAP, RecordError, storable_text, whole_number


def file_text(path: Path, cap: int = FILE_RAW_CAP) -> str:
    """A file's text (UTF-8, undecodable bytes replaced) up to `cap` bytes, with a note of what was cut:
    the raw text of a file set aside whole (the file itself, named with its sha256, holds the rest)."""
    with open(path, "rb") as fh:
        data = fh.read(cap + 1)
    text = data[:cap].decode("utf-8", errors="replace")
    if len(data) > cap:
        size = path.stat().st_size
        text += (f"[... {size - cap} more bytes not kept: a file set aside whole keeps its first {cap >> 10} KiB "
                 "as raw text; the source file holds the rest]")
    return text


def json_error(exc: json.JSONDecodeError, text: str, last: bool = True) -> RecordError:
    """A RecordError for JSON that does not parse: 'truncated file' when the text ends inside a value and it
    is the end of the file (`last`), 'truncated line' when a line other than the last ends early, else
    'malformed JSON'; the detail names the line and column."""
    cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")  # the text stops mid-value
    kind = ("truncated file" if last else "truncated line") if cut else "malformed JSON"
    return RecordError(kind, None, f"{exc.msg}: line {exc.lineno}, column {exc.colno}" if exc.lineno > 1
                       else f"{exc.msg}: column {exc.colno}")


KEY_END = re.compile(r'"\s*:')  # every key of a JSON text ends so (and a few escaped quotes inside strings)
SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate (a JSON escape, or a byte the decoder escaped)
PAST_64_BITS = float(1 << 63)  # orjson reads an integer past 64 bits as a float: none of these is exact


def _shape(value: Any) -> int:
    """How many keys the objects of a parsed JSON value hold, nested ones included; -1 when a number in it is
    a float at or past +-2**63 (what orjson makes of an integer past 64 bits, which the standard library keeps
    exact: such a text is left to it)."""
    kind = type(value)
    if kind is dict:
        n, values = len(value), value.values()
    elif kind is list:
        n, values = 0, value
    else:
        return 0
    for v in values:
        kind = type(v)
        if kind is dict or kind is list:
            inner = _shape(v)
            if inner < 0:
                return -1
            n += inner
        elif kind is float and not -PAST_64_BITS < v < PAST_64_BITS:
            return -1
    return n


def fast_loads(text: str) -> Any:
    """`text` parsed by orjson when that is exactly what the standard library's strict parse gives, else the
    `UNREAD` marker: orjson refuses NaN, infinities, lone surrogates and deep nesting (the caller's own parser
    then reads or names them), reads an integer past 64 bits as a float (so a text holding a float at or past
    +-2**63 is left to the caller), and keeps the last of a repeated key silently, so a parse counts as exact
    only when the objects hold as many keys as the text ends keys (`KEY_END`: never fewer than the text's
    keys, so a repeated key always shows)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return UNREAD
    kind = type(value)
    if kind is dict or kind is list:
        if _shape(value) != len(KEY_END.findall(text)):
            return UNREAD
    elif kind is float and not -PAST_64_BITS < value < PAST_64_BITS:
        return UNREAD
    return value


UNREAD = object()  # fast_loads could not read the text exactly


def parse_json_line(line: str, last: bool = False) -> Any:
    """One JSON-lines record, strictly (duplicate keys raise); raises RecordError via `json_error`, or the fault
    of one of its values (`parsed_json_line`)."""
    value, fault = parsed_json_line(line, last)
    if fault is not None:
        raise fault
    return value


def parsed_json_line(line: str, last: bool = False) -> tuple[Any, RecordError | None]:
    """(value, fault) of one JSON-lines record, parsed strictly (duplicate keys are the line's fault). A fault
    inside one value (an integer past 64 bits, a lone surrogate, nesting deeper than the parser follows, cut out
    as `TOO_DEEP`) leaves the parsed value beside it, for a reader that stores only some keys; a line that does
    not parse gives (None, its error)."""
    line = line.rstrip("\r\n")
    value = fast_loads(line)
    if value is not UNREAD:
        return value, None
    try:
        try:
            value = json.loads(line, object_pairs_hook=_no_duplicate_keys)
        except RecursionError:
            value = json.loads(without_deep_values(line), object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        return None, json_error(exc, line, last)
    except RecordError as exc:  # a key repeated in one object
        return None, exc
    except RecursionError:  # nested deeper than even the cut reaches
        return None, RecordError("too deeply nested", None, "the JSON nests deeper than referee reads")
    # what orjson refused and the standard parse let through: past 64 bits, surrogates, the cut-out nesting
    return value, record_fault(value)


class Line(str):
    """One line of a JSON-lines file: its text (a str, without the line end), `number` (1-based), `value` (the
    parsed JSON, None when the line does not parse) and `error` (the RecordError that sets it aside, or None; a
    fault inside one value leaves `value` beside it, for a reader that stores only some keys)."""

    number: int
    value: Any
    error: RecordError | None

    def parsed(self) -> Any:
        """The parsed JSON, or raise the line's RecordError."""
        if self.error is not None:
            raise self.error
        return self.value


def json_lines(path: Path, parse: bool = True) -> Iterator[Line]:
    """The non-blank lines of a JSON-lines file, each decoded strictly as UTF-8 (a bad byte sets that line
    aside as 'not UTF-8', never a replacement character) and, with `parse`, parsed by `parsed_json_line`
    (duplicate keys, truncation, nesting). A UTF-8 byte-order mark at the start is skipped."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw or raw.isspace():
                continue
            value, error = None, None
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:  # the line is set aside, named by its first bad byte
                text = raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
                error = RecordError("not UTF-8", None, f"byte {raw[exc.start]:#04x} at column {exc.start + 1} is not "
                                    "UTF-8 text")
            if error is None and parse:
                value, error = parsed_json_line(text, last=not raw.endswith(b"\n"))
            line = Line(text)
            line.number, line.value, line.error = number, value, error
            yield line


def raw_lines(path: str, numbers: set[int]) -> dict[int, str]:
    """The text of the given 1-based lines of a text file (for quarantining records by line)."""
    found = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if number in numbers:
                found[number] = line.rstrip("\n")
    return found


def file_key(path: Path, content_hash: str) -> str:
    """A file's name for match ids it makes up: its stem and the first 8 hex digits of its sha256, so that two
    files of one name in different folders never collide (and the same file always gives the same ids)."""
    return f"{path.stem}-{content_hash[:8]}"


def file_hash(path: Path) -> str:
    """sha256 hex digest of a file's bytes, read in 1 MiB blocks."""
    return hash_and_head(path)[0]


def hash_and_head(path: Path, head: int = 65536) -> tuple[str, str]:
    """(sha256 hex digest, the first `head` bytes as text) in one read of the file: what ingest needs
    before it parses (the digest for idempotence, the head for detection)."""
    digest, first = hashlib.sha256(), b""
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            if len(first) < head:
                first += block[:head - len(first)]
            digest.update(block)
    return digest.hexdigest(), head_text(first)


def head_text(first: bytes) -> str:
    """A file's first bytes as the text detection samples: undecodable bytes replaced, a UTF-8 byte-order mark
    left out (as the loaders leave it out, so detection sees what they read)."""
    return first.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise RecordError("duplicate key", key, f"key {key!r} appears twice in one object")
        seen[key] = value
    return seen


class _Marked(dict):
    """A JSON object that repeated a key (the first repeated key in `duplicate`; the last value kept)."""

    duplicate: str | None = None


def repeated_key(value: Any) -> str | None:
    """The first key a JSON object parsed by `lenient_loads` named twice at its own level (not inside its
    values), or None."""
    return value.duplicate if isinstance(value, _Marked) else None


def _lenient_pairs(pairs: list[tuple[str, Any]]) -> dict:
    out = _Marked()
    for key, value in pairs:
        if key in out and out.duplicate is None:
            out.duplicate = key
        out[key] = value
    return out if out.duplicate is not None else dict(out)


class Faulty(dict):
    """A record a loader has already found unusable while reshaping it (e.g. one repetition of a Concordia
    1.8.0 result whose averages disagree): the record as it is, and its `error`, which `record_fault` names,
    so that it is set aside as its neighbours are accepted, by the one path every record takes."""

    def __init__(self, record: dict, error: RecordError):
        super().__init__(record)
        self.error = error


def record_fault(record: Any, path: str = "") -> RecordError | None:
    """What makes one parsed record unusable although its file parsed: a repeated key or a byte that is not
    UTF-8 anywhere inside it (found by `read_json`, which reads on past both), a lone surrogate (a JSON escape
    no UTF-8 text can hold), an integer past the store's 64 bits, nesting too deep to walk, or the error a
    loader attached (`Faulty`); None when there is none."""
    try:
        fault = _fault(record, path)
    except RecursionError:
        return RecordError("too deeply nested", path or None, "the JSON nests deeper than referee reads")
    if fault is not None and fault.field and len(fault.field) > FIELD_SHOWN:  # a path hundreds of levels deep
        fault.field = fault.field[:FIELD_SHOWN] + "..."
    return fault


FIELD_SHOWN = 60  # characters of a fault's key path named (the rest elided)
def check_record(record: Any) -> None:
    """Raise `record_fault(record)`, if the record has one (a text record, a line not yet parsed, has none)."""
    fault = None if isinstance(record, str) else record_fault(record)
    if fault is not None:
        raise fault


def _raised(check: Callable[[Any, str | None], Any], value: Any, path: str) -> RecordError | None:
    """The RecordError one of the store's value checks (`storable_text`, `whole_number`) raises, or None."""
    try:
        check(value, path or None)
    except RecordError as exc:
        return exc
    return None


TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # a JSON string (skipped whole) or a bracket
DEEP = 200  # a container opened deeper than this is cut out when the standard parse runs out of stack
TOO_DEEP = "\u0000referee: nested too deep\u0000"  # what stands in for it; `record_fault` names it


def without_deep_values(text: str, limit: int = DEEP) -> str:
    """`text` with every JSON container opened at a depth past `limit` replaced by the string TOO_DEEP, so that
    the standard parse reads the rest and `record_fault` sets aside only the record that held it. For the
    path where a parse ran out of stack (linear in the text; brackets inside strings are skipped)."""
    out, depth, cut, last = [], 0, None, 0
    for match in TOKEN.finditer(text):
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth == limit + 1:
                cut = match.start()
        elif token == "]" or token == "}":
            if depth == limit + 1 and cut is not None:
                out += [text[last:cut], json.dumps(TOO_DEEP)]
                last, cut = match.end(), None
            depth -= 1
    return "".join(out) + text[last:]


def lenient_loads(text: str) -> Any:
    """The standard library's parse, reading on past faults that belong to one record: a repeated key marks
    its object, a value nested deeper than the stack allows becomes TOO_DEEP (`record_fault` names both);
    NaN and infinities are read. Raises json.JSONDecodeError."""
    try:
        return json.loads(text, object_pairs_hook=_lenient_pairs)
    except RecursionError:
        return json.loads(without_deep_values(text), object_pairs_hook=_lenient_pairs)


def _fault(record: Any, path: str) -> RecordError | None:
    if isinstance(record, Faulty):
        return record.error
    if isinstance(record, _Marked):
        key = f"{path}.{record.duplicate}" if path else record.duplicate
        return RecordError("duplicate key", key, f"key {record.duplicate!r} appears twice in one object")
    if isinstance(record, str):
        if record == TOO_DEEP:
            return RecordError("too deeply nested", path or None, "the JSON nests deeper than referee reads")
        if not SURROGATE.search(record):
            return None
        bad = SURROGATE.search(record).start()
        if "\udc80" <= record[bad] <= "\udcff":  # a byte the decoder escaped
            return RecordError("not UTF-8", path or None, f"byte {ord(record[bad]) - 0xdc00:#04x} in the text "
                               f"{record[:bad]!r}... is not UTF-8")
        return _raised(storable_text, record, path)  # a lone surrogate a JSON escape made
    if type(record) is int:
        return _raised(whole_number, record, path)
    items = record.items() if isinstance(record, dict) else enumerate(record) if isinstance(record, list) else ()
    for key, value in items:
        inner = _fault(key, path) if isinstance(key, str) else None
        inner = inner or _fault(value, f"{path}.{key}" if path else str(key))
        if inner is not None:
            return inner
    return None


def read_json(path: Path, within: tuple[str, ...] = ()) -> Any:
    """Parse a JSON file, reading on past faults that belong to one record: a repeated key or a byte that is
    not UTF-8 inside an array element leaves the element marked, and `record_fault` names it, so one bad
    record does not cost its neighbours. -Infinity is allowed (Concordia writes it); a byte-order mark is
    skipped.

    Raises RecordError('empty file' | 'malformed JSON' | 'truncated file' | 'too deeply nested', or the
    fault of a top-level object) for the whole file, with line and column; a fault inside one item of a
    top-level list named in `within` is left for the caller to find per item (`record_fault`).
    """
    return parse_json_text(json_text(path), within)


def json_text(path: Path) -> str:
    """A JSON file's text: a byte-order mark skipped, bytes that are not UTF-8 kept as marked characters (found
    per record). RecordError('empty file') for a file of whitespace only."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="surrogateescape")  # bad bytes become marked characters, found per record
    if not text.strip():
        raise RecordError("empty file", None, "the file is empty")
    return text


def canonical_json(record: object) -> str:
    """A record as one text whatever its keys' order (sorted keys; a value JSON cannot hold as its text): two
    records are the same record exactly when their texts are equal."""
    return json.dumps(record, sort_keys=True, default=str)


def parse_json_text(text: str, within: tuple[str, ...] = ()) -> Any:
    """`read_json` of a text already read (`json_text`)."""
    doc = fast_loads(text)
    if doc is not UNREAD:
        return doc
    try:
        doc = lenient_loads(text)
    except json.JSONDecodeError as exc:
        raise json_error(exc, text) from exc
    except RecursionError as exc:  # nested deeper than even the cut reaches (a stack already deep)
        raise RecordError("too deeply nested", None, "the JSON nests deeper than referee reads") from exc
    if not isinstance(doc, list):  # one record, but for its lists named in `within` (the caller checks each item)
        check_record(_without(doc, within) if within and isinstance(doc, dict) else doc)
    return doc


def _without(doc: dict, keys: tuple[str, ...]) -> dict:
    """`doc` without `keys`, still marked if it repeated a key (`_Marked`)."""
    out = type(doc)((k, v) for k, v in doc.items() if k not in keys)
    if isinstance(doc, _Marked):
        out.duplicate = doc.duplicate
    return out


SKELETON_ITEMS = 3  # elements of each array a skeleton keeps
SKELETON_TEXT = 256  # characters of each string a skeleton keeps
SKELETON_BYTES = 16 << 20  # bytes of one document a skeleton reads at most (what it saw by then is kept)


class _Budget:
    """A binary file that reads as ended after `left` bytes (a skeleton of a huge document stops there)."""

    def __init__(self, fh, left: int):
        self.fh, self.left = fh, left

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        data = self.fh.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data


def skeleton(path: Path, items: int = SKELETON_ITEMS, text: int = SKELETON_TEXT,
             budget: int = SKELETON_BYTES) -> Any:
    """The shape of a file that is one JSON document, streamed in bounded memory: every object with all its
    keys, every array cut to its first `items` elements, every string to `text` characters; reading stops
    after `budget` bytes and keeps what it saw. None when the file does not open as JSON (its first value
    is not an object or array, or the bytes are not JSON at all).

    What detection samples from a pretty-printed document larger than its head (a 2.5 MB replay, a GTBench
    run file), so that a runner is recognised by its keys, not by a text search of the first 64 KiB."""
    import ijson

    root: Any = None
    stack: list = []  # open containers
    keys: list = []  # per open object, the key its next value goes under
    skip = 0  # depth inside an array element past `items` (not kept)

    def put(value: Any) -> None:
        nonlocal root
        if not stack:
            root = value
        elif isinstance(stack[-1], dict):
            stack[-1][keys[-1]] = value
        else:
            stack[-1].append(value)

    def full() -> bool:
        return bool(stack) and isinstance(stack[-1], list) and len(stack[-1]) >= items

    with open(path, "rb") as fh:
        if fh.read(3) != b"\xef\xbb\xbf":
            fh.seek(0)
        try:
            for event, value in ijson.basic_parse(_Budget(fh, budget), use_float=True):
                if skip:
                    skip += {"start_map": 1, "start_array": 1, "end_map": -1, "end_array": -1}.get(event, 0)
                    continue
                if event in ("start_map", "start_array"):
                    if full():
                        skip = 1
                        continue
                    container: Any = {} if event == "start_map" else []
                    put(container)
                    stack.append(container)
                    if event == "start_map":
                        keys.append(None)
                elif event in ("end_map", "end_array"):
                    if isinstance(stack.pop(), dict):
                        keys.pop()
                elif event == "map_key":
                    keys[-1] = value
                elif not full():
                    put(value[:text] if isinstance(value, str) else value)
        except (ijson.JSONError, ValueError, OSError):
            pass  # a document cut by the budget or broken further on: what was seen is kept
    return root if isinstance(root, (dict, list)) else None


def is_document(path: Path, head: str) -> bool:
    """Whether a .json or .jsonl file reads as one JSON document rather than JSON lines: it opens with { or [
    and its first non-blank line is not a complete JSON value (a pretty-printed object or array)."""
    text = head.lstrip()
    if not text.startswith(("{", "[")):
        return False
    first = text.split("\n", 1)[0].strip()
    try:
        json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return True
    return False


RAW_LINE_CAP = 1 << 20  # characters of a document record's text kept beside its parsed value
RECORD_KEY = "@record"  # the key a document's flattened lines carry: which part of the document each came from
SUMMARY = "document"  # the value of RECORD_KEY on a document's own line (its keys that are not lists of objects)


def _record_line(number: int, value: Any, within: tuple[str, ...] = ()) -> Line:
    """One record of a parsed document as a Line: its JSON text (capped), its value and its fault (None when
    it has none; `parsed()` raises it, while a reader that stores only some keys may read the value past it);
    the items of its lists named in `within` are the caller's to check."""
    fault = record_fault(_without(value, within) if within and isinstance(value, dict) else value)
    line = Line((json.dumps(value, default=str) if fault is None else str(value))[:RAW_LINE_CAP])
    line.number, line.value, line.error = number, value, fault
    return line


def _document_records(path: Path, head: str | None, split: Callable[[Any], list],
                      within: tuple[str, ...] = ()) -> Iterator[Line]:
    """JSON lines as they are, or one JSON document's records as `split(document)` lists them (numbered from 1);
    a document that does not parse is one line carrying its error; a fault inside an item of a top-level list
    named in `within` is left for the caller to find per item (`read_json`)."""
    if head is None:
        with open(path, "rb") as fh:
            head = head_text(fh.read(4096))
    if not is_document(path, head):
        yield from json_lines(path)
        return
    try:
        doc = read_json(path, within)
    except RecordError as exc:
        line = Line(head)
        line.number, line.value, line.error = 1, None, exc
        yield line
        return
    for number, value in enumerate(split(doc), start=1):
        yield _record_line(number, value, within)


def json_records(path: Path, head: str | None = None, within: tuple[str, ...] = ()) -> Iterator[Line]:
    """The records of a JSON-lines file (`json_lines`), or of a file that is one pretty-printed JSON document
    written under either suffix (GTBench writes its run as one indented object in a .jsonl): the document as
    one record (line 1), or each element of a top-level array as a record numbered from 1. A document that
    does not parse is one record carrying its error."""
    return _document_records(path, head, lambda doc: doc if isinstance(doc, list) else [doc], within)


def _is_event_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _event_lines(doc: Any) -> list:
    """A document's event lines: each element of each top-level list of objects tagged with its list's name,
    then the document's other keys tagged 'document'; a top-level array's elements as they are."""
    if isinstance(doc, list):
        return doc
    lines = [{**v, RECORD_KEY: key} for key, value in doc.items() if _is_event_list(value) for v in value]
    return lines + [{**{k: v for k, v in doc.items() if not _is_event_list(v)}, RECORD_KEY: SUMMARY}]


def document_lines(path: Path, head: str | None = None) -> Iterator[Line]:
    """A file read as event lines, whether it is JSON lines (`json_lines`) or one JSON document per file
    (`is_document`): a document object becomes one line per element of each of its top-level lists of objects
    (the turns, steps or events of an episode; `@record` says which list), then one line of its own other
    keys (`@record` = 'document': the episode's result, seats and settings), so that a mapping reads an
    episode file as it reads a log of event lines; a top-level array gives one line per element. Line
    numbers count these lines from 1; a document that does not parse is one line carrying its error."""
    return _document_records(path, head, _event_lines)
