"""Which runner wrote a file, and how sure that is.

`sample_records(path, head)` parses the first complete records of the file's head (up to SAMPLE JSON
lines, or the first elements of a JSON array); each runner's `sniff(path, head, sample)` returns the share
of evidence that fits it, from 0 (not this runner) to 1 (every sampled record fits). `detection` ranks the
runners by that share: the best is tried first, and the others follow when a loader finds that the file's
first records do not fit it (`NotThisRunner`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from referee.io.loaders.errors import PROBE
from referee.io.loaders.files import head_text, is_document, skeleton

HEAD = 65536  # bytes of a file read for detection
SAMPLE = 50  # records parsed for detection


@dataclass
class Detection:
    """What detection found for one file.

    candidates : runner names to try, best first (empty: no runner recognises the file).
    scores : share of evidence (0-1) that fits each candidate.
    sampled : records parsed from the head (0 for CSV, Parquet or a JSON object file).
    keys : top-level keys seen in the sampled records (what a user needs to write a mapping).
    """

    candidates: list[str]
    scores: dict[str, float]
    sampled: int
    keys: list[str] = field(default_factory=list)

    @property
    def runner(self) -> str | None:
        """The best candidate, or None."""
        return self.candidates[0] if self.candidates else None

    @property
    def confidence(self) -> float:
        """The best candidate's share of fitting evidence (0 when nothing fits)."""
        return self.scores[self.candidates[0]] if self.candidates else 0.0

    def describe(self) -> str:
        """e.g. 'ranked, 50 of 50 sampled records fit' or 'table, by file type'."""
        if not self.candidates:
            return "no runner recognises it"
        if not self.sampled:
            return f"{self.runner}, by file type and header"
        return f"{self.runner}, {round(self.confidence * self.sampled)} of {self.sampled} sampled records fit"


def read_head(path: Path, size: int = HEAD) -> str:
    """The first `size` bytes of a file as text (`files.head_text`)."""
    with open(path, "rb") as fh:
        return head_text(fh.read(size))


def sample_records(path: Path, head: str, limit: int = SAMPLE) -> list:
    """Up to `limit` complete records parsed from `head`: JSON lines for .jsonl, the leading elements of a
    JSON array for .json (a lone object counts as one record when the head holds all of it); [] otherwise."""
    suffix = path.suffix.lower()
    out: list = []
    if suffix in (".json", ".jsonl") and is_document(path, head):
        return document_sample(path, head, limit)
    if suffix == ".jsonl":
        lines = head.split("\n")
        if path.stat().st_size > HEAD:
            lines = lines[:-1]  # the head stops inside the file: its last line is incomplete
        for line in lines:
            if len(out) >= limit:
                break
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    out.append(None)
        return out
    if suffix != ".json":
        return out
    text = head.lstrip()
    decoder = json.JSONDecoder()
    if text.startswith("["):
        pos = 1
        while len(out) < limit:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text) or text[pos] == "]":
                break
            try:
                value, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError:
                break
            out.append(value)
    elif text.startswith("{"):
        try:
            out.append(json.loads(text))
        except json.JSONDecodeError:
            pass
    return out


def document_sample(path: Path, head: str, limit: int = SAMPLE) -> list:
    """The sample of a file that is one JSON document: the document itself when the head holds all of it,
    else its `skeleton` (streamed, bounded memory); a top-level array gives its first `limit` elements."""
    doc = None
    if path.stat().st_size <= HEAD:
        try:
            doc = json.loads(head)
        except (json.JSONDecodeError, RecursionError):
            doc = None
    if doc is None:
        doc = skeleton(path, items=limit)
    if isinstance(doc, list):
        return doc[:limit]
    return [] if doc is None else [doc]


def share(sample: list, fits: Callable[[dict], bool]) -> float:
    """The share of sampled records that are JSON objects satisfying `fits`; 0 for an empty sample, and 0 when
    none of the first PROBE records fits (the runner's loader would refuse such a file by its first records:
    the rest of the sample is not looked at)."""
    if not sample or not any(isinstance(r, dict) and fits(r) for r in sample[:PROBE]):
        return 0.0
    return sum(1 for r in sample if isinstance(r, dict) and fits(r)) / len(sample)


def detection(path: Path, runners: dict, head: str | None = None) -> Detection:
    """Rank `runners` (name -> runner entry, `referee.io.loaders.runner.Runner`, with `sniff(path, head, sample) -> float`) for `path` (whose
    first HEAD bytes as text may be given as `head`, to spare a read).

    Runners scoring 0 are left out; fallback runners (an entry's `fallback`: the table runner) come after every
    specific one; ties keep the registry's order.
    """
    head = read_head(path) if head is None else head
    sample = sample_records(path, head)
    scores = {name: float(runner.sniff(path, head, sample)) for name, runner in runners.items()}
    fallback = {n: r.fallback for n, r in runners.items()}
    candidates = sorted((n for n, s in scores.items() if s > 0), key=lambda n: (fallback[n], -scores[n]))
    keys: list[str] = []
    for record in sample:
        if isinstance(record, dict):
            keys += [k for k in record if k not in keys]
    return Detection(candidates=candidates, scores={n: scores[n] for n in candidates},
                     sampled=len(sample), keys=keys)
