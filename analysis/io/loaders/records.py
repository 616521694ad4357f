"""One record per match, agent -> score: `[{"game": NAME, AGENT: score, AGENT: score, ...}, ...]`.

The shape of GameBench's `matches.json`. Every object is one match (match_id `{file stem}:{index}`);
every key other than the reserved ones below is an agent (also its player name) whose value is its
score. Reserved keys, all optional: `game`, `scenario`, `phase`, `repetition`, `match` (an id to use
instead of the index). Ranks are derived from scores (1 = best, ties share the best rank).
"""

from __future__ import annotations

from pathlib import Path

from analysis.io.loaders.base import (
    LoadOptions,
    LoadResult,
    RecordError,
    ResultBuilder,
    ranks_from_scores,
    read_json,
    score_value,
)

NAME = "records"
RESERVED = ("game", "scenario", "phase", "repetition", "match")


def sniff(path: Path, head: str) -> bool:
    """True for a JSON list of objects with a `game` key and no Concordia keys."""
    text = head.lstrip()
    return (path.suffix.lower() == ".json" and text.startswith("[") and '"game"' in head
            and '"focal_agent"' not in head)


def parse_record(record: object, options: LoadOptions) -> dict[str, list[dict]]:
    """Canonical rows for one match record (match_id filled by the caller); raises RecordError."""
    if not isinstance(record, dict):
        raise RecordError("wrong type", None, f"expected an object, got {type(record).__name__}")
    meta = {}
    for key in RESERVED:
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
            raise RecordError("wrong type", key, f"expected text, got {value!r}")
        meta[key] = None if value is None else str(value)
    scores = {k: score_value(v, k, allow_neg_inf=False) for k, v in record.items() if k not in RESERVED}
    if len(scores) < 2:
        raise RecordError("missing field", None, f"a match needs at least two agents with scores, got {len(scores)}")
    if options.catalogue is not None and meta["scenario"] is not None \
            and meta["scenario"] not in options.catalogue.names:
        raise RecordError("unknown scenario", "scenario", f"scenario {meta['scenario']!r} is not in the catalogue")
    ranks = ranks_from_scores(list(scores.values()))
    match = {"runner": NAME, "game": meta["game"], "scenario": meta["scenario"], "phase": meta["phase"],
             "repetition": meta["repetition"], "n_players": len(scores), "given_id": meta["match"]}
    results = [{"player": a, "agent": a, "score": s, "rank": r} for (a, s), r in zip(scores.items(), ranks)]
    return {"matches": [match], "results": results}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read a JSON list of match records into canonical tables; bad records are quarantined by index."""
    out = ResultBuilder(path, content_hash, NAME)
    try:
        doc = read_json(path)
        if not isinstance(doc, list):
            raise RecordError("not this runner", None, "expected a JSON list of match records")
    except RecordError as exc:
        return out.reject_file(exc)
    def match_id(match: dict, index: int) -> str:
        given = match.pop("given_id")
        return given if given is not None else f"{path.stem}:{index}"

    out.accept_records(doc, lambda record: parse_record(record, options), match_id)
    return out.build()
