"""JSON documents a writer appended to one file, each read alone (Concordia's evaluation script opens its results
file in mode 'a', so a rerun writes a second array right after the first): `read_json_documents` gives every
document in order, an array that does not parse (truncated, text between arrays, a NUL) as an `Unread` in its
place, its fault named, so that it costs itself and never the arrays beside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from referee.io.loaders.errors import RecordError
from referee.io.loaders.files import Faulty, json_error, json_text, parse_json_text


def document_spans(text: str) -> list[tuple[int, int, RecordError | None]]:
    """(start, end, fault) of each JSON document written one after another in `text` (a file a writer appended
    to: Concordia's evaluation script opens its results file in mode 'a', so a rerun writes a second array right
    after the first, `][`). A part that does not parse (a truncated array, text between arrays, a NUL) is one
    span with its fault (`json_error`, line and column in the whole file), ending where the next array begins
    (the next `[` after a `]` or at a line's start from which a whole document parses) or at the end: it costs
    itself only. One span, fault None, for an ordinary file."""
    decoder, spans, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return spans
        try:
            _, end = decoder.raw_decode(text, at)
            spans.append((at, end, None))
            at = end
            continue
        except (json.JSONDecodeError, RecursionError) as exc:
            end = _balanced_end(text, at) if isinstance(exc, RecursionError) else None
            if end is not None:  # nested past the stack somewhere inside: a whole document all the same, whose
                spans.append((at, end, None))  # too-deep value costs its own record (`lenient_loads`)
                at = end
                continue
            fault = (json_error(exc, text) if isinstance(exc, json.JSONDecodeError) else
                     RecordError("too deeply nested", None, "the JSON nests deeper than referee reads"))
        resume = _next_array(text, decoder, at + 1)
        spans.append((at, resume, fault))
        at = resume


TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # a JSON string (skipped whole) or a bracket


def _balanced_end(text: str, at: int) -> int | None:
    """Where the document that opens at `at` (`[` or `{`) closes, found by counting brackets outside strings
    without recursion (a value nested past Python's stack is still inside it), or None when it never closes."""
    depth = 0
    for token in TOKEN.finditer(text, at):
        mark = token.group()
        if mark in "[{":
            depth += 1
        elif mark in "]}":
            depth -= 1
            if depth == 0:
                return token.end()
    return None


ARRAY_START = re.compile(r"(?:\]|^)[ \t\r\n]*(\[)", re.MULTILINE)  # a `[` right after a `]`, or at a line's start


def _next_array(text: str, decoder: json.JSONDecoder, at: int) -> int:
    """Where the next whole document after `at` begins: a `[` after a `]` or at a line's start from which a
    document parses; else any later `[` from which an array parses to the end of the text or to another such start
    (text written right before an array on its line: `]done[`); else the end of `text`."""
    for found in ARRAY_START.finditer(text, at):
        try:
            decoder.raw_decode(text, found.start(1))
        except (json.JSONDecodeError, RecursionError):
            continue
        return found.start(1)
    start = text.find("[", at)
    while start >= 0:
        try:
            _, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            start = text.find("[", start + 1)
            continue
        if not text[end:].strip() or text[end:].lstrip().startswith("["):  # the array runs to a document boundary
            return start
        start = text.find("[", start + 1)
    return len(text)


class Unread(Faulty):
    """A part of a file that could not be read as a document (`read_json_documents`): no record of it is known,
    only its `error`, which `record_fault` names where the part's record would be, and its `text` as read, which
    the quarantine keeps as the record's raw text (nothing is lost)."""

    def __init__(self, error: RecordError, text: str):
        super().__init__({}, error)
        self.text = text


def read_json_documents(path: Path, within: tuple[str, ...] = ()) -> list[Any]:
    """Every JSON document of a file, in order: `[read_json(path)]` for an ordinary file, and for a file a writer
    appended arrays to (arrays back to back, `document_spans`) each array parsed alone as `read_json` parses a
    file; an array (or the text where one should be) that does not parse is an `Unread` in its place, its fault
    named (a truncated second array costs that array, never the first). Raises as `read_json` does when the
    first document is not an array (JSON lines of objects are another format: their first error stands) or
    when the first array itself does not parse."""
    text = json_text(path)
    try:
        return [parse_json_text(text, within)]
    except RecordError as exc:
        if not exc.detail.startswith("Extra data"):
            raise
        first = exc
    spans = document_spans(text)
    if not spans or spans[0][2] is not None or text[spans[0][0]] != "[":
        raise first
    docs: list[Any] = []
    for k, (start, end, fault) in enumerate(spans):
        where = f"appended array {k + 1} (from line {text.count(chr(10), 0, start) + 1})"
        if fault is None and text[start] != "[":
            kind = "object" if text[start] == "{" else "value"  # already parsed by `document_spans`: not again
            fault = RecordError("malformed JSON", None, f"a JSON {kind} where an appended array should begin")
        if fault is None:
            try:
                docs.append(parse_json_text(text[start:end], within))
                continue
            except RecordError as exc:
                fault = exc
        docs.append(Unread(RecordError(fault.reason, fault.field, f"{where}: {fault.detail}"), text[start:end]))
    return docs
