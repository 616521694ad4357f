"""One record per match, agent -> score: a JSON array of objects, or JSON lines with one object per line.

Format: `data/formats/records.md`. Two shapes of record, which may be mixed:

- flat, GameBench's `matches.json`: `{"game": NAME, AGENT: score, AGENT: score, ...}`: every key other than
  the reserved ones below is an agent (also its player name) whose value is its score;
- full: `{"match_id": "m1", "timestamp": "...", "scores": {AGENT: score, ...}, ...}`: the agents are the
  keys of `scores`, and every top-level key other than the reserved ones is kept in `matches.attrs`.

Reserved keys, all optional: `game`, `scenario`, `phase`, `variant`, `repetition`; `match` (or `match_id`,
`game_id`), an id used instead of `{file stem}-{8 hex digits of the file's sha256}:{record}` (unique across
folders); `started_at` (or `timestamp`), ISO 8601. Numeric bookkeeping keys that are not agents are reserved
too: `round`, `rounds`, `turns`, `seed`, `duration`, `duration_s`, `elapsed`, `elapsed_s`, `id`, `index`,
`version`.
Records are numbered by array index from 0, or by line from 1 in JSON lines. Ranks are derived from
scores (1 = best, ties share the best rank).
"""

from __future__ import annotations

import json
from pathlib import Path

from referee.io.loaders.runner import Runner
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    RecordError,
    ResultBuilder,
    file_key,
    is_number,
    json_lines,
    parse_time,
    ranks_from_scores,
    read_json,
    score_value,
)
from referee.io.loaders.detect import share

NAME = "records"
META = ("game", "scenario", "phase", "variant", "repetition")
IDS = ("match", "match_id", "game_id")
TIMES = ("started_at", "timestamp")
BOOKKEEPING = ("round", "rounds", "turns", "seed", "duration", "duration_s", "elapsed", "elapsed_s", "id", "index",
               "version")  # numbers a record may carry that are not agents' scores (kept in matches.attrs)
RESERVED = META + IDS + TIMES + BOOKKEEPING + ("scores",)
OTHER_RUNNERS = ("focal_agent", "participants", "record", "season", "turn", "agents")  # keys of other runners' records


def _numbers(values) -> bool:
    return all(is_number(v) for v in values)


def _fits(record: dict) -> bool:
    if any(k in record for k in OTHER_RUNNERS):
        return False
    scores = record.get("scores")
    if isinstance(scores, dict):
        return len(scores) >= 2 and _numbers(scores.values())
    agents = [v for k, v in record.items() if k not in RESERVED]
    return len(agents) >= 2 and _numbers(agents)


def sniff(path: Path, head: str, sample: list) -> float:
    """The share of sampled records (JSON array elements or JSON lines) that are match records: a `scores`
    object of at least two numbers, or at least two agent keys with numbers beside the reserved keys."""
    return share(sample, _fits) if path.suffix.lower() in (".json", ".jsonl") else 0.0


def _text(record: dict, key: str) -> str | None:
    value = record.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
        raise RecordError("wrong type", key, f"expected text, got {value!r}")
    return None if value is None else str(value)


def parse_record(record: object, options: LoadOptions) -> dict[str, list[dict]]:
    """Canonical rows for one match record (match_id filled by the caller); raises RecordError."""
    if not isinstance(record, dict):
        raise RecordError("wrong type", None, f"expected an object, got {type(record).__name__}")
    other = next((k for k in OTHER_RUNNERS if k in record), None)
    if other is not None:
        raise RecordError("not this runner", other, f"'{other}' is a key of another runner's records")
    meta = {key: _text(record, key) for key in META}
    given = next((_text(record, k) for k in IDS if record.get(k) is not None), None)
    time_key = next((k for k in TIMES if record.get(k) is not None), None)
    started = parse_time(record[time_key], time_key) if time_key else None
    if "scores" in record:
        scores_doc = record["scores"]
        if not isinstance(scores_doc, dict):
            raise RecordError("wrong type", "scores", f"expected an object of agent: score, got {scores_doc!r}")
        scores = {k: score_value(v, f"scores.{k}", allow_neg_inf=False) for k, v in scores_doc.items()}
        attrs = {k: v for k, v in record.items() if k not in RESERVED or k in BOOKKEEPING}
    else:
        scores = {k: score_value(v, k, allow_neg_inf=False) for k, v in record.items() if k not in RESERVED}
        attrs = {k: record[k] for k in BOOKKEEPING if k in record}
    if len(scores) < 2:
        raise RecordError("missing field", "scores" if "scores" in record else None,
                          f"a match needs at least two agents with scores, got {len(scores)}")
    if options.catalogue is not None and meta["scenario"] is not None \
            and meta["scenario"] not in options.catalogue.names:
        raise RecordError("unknown scenario", "scenario", f"scenario {meta['scenario']!r} is not in the catalogue")
    ranks = ranks_from_scores(list(scores.values()))
    match = dict(meta, runner=NAME, n_players=len(scores), given_id=given, started_at=started,
                 attrs=json.dumps(attrs, default=str) if attrs else None)
    results = [{"player": a, "agent": a, "score": s, "rank": r} for (a, s), r in zip(scores.items(), ranks)]
    return {"matches": [match], "results": results}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read match records (a JSON array, or JSON lines) into canonical tables; bad records are quarantined
    by index (array) or line (JSON lines)."""
    out = ResultBuilder(path, content_hash, NAME)

    def match_id(match: dict, label: str) -> str:
        given = match.pop("given_id")
        return given if given is not None else f"{file_key(path, content_hash)}:{label}"

    if path.suffix.lower() == ".jsonl":
        if path.stat().st_size == 0:
            return out.reject_file(RecordError("empty file", None, "the file is empty"))
        out.accept_records(((line.number, line) for line in json_lines(path)),
                           lambda line: parse_record(line.parsed(), options), match_id)
        return out.build()
    try:
        doc = read_json(path)
        if not isinstance(doc, list):
            raise RecordError("not this runner", None, "expected a JSON array of match records (or JSON lines)")
    except RecordError as exc:
        return out.reject_file(exc)
    out.accept_records(doc, lambda record: parse_record(record, options), match_id)
    return out.build()


RUNNER = Runner(NAME, sniff, load, {"reserved keys": list(RESERVED),
                                    "agents": ["every other key (flat shape)", "the keys of `scores` (full shape)"]})
