"""Pairwise arenas: one row per judgment (CSV, Parquet or JSONL).

Canonical columns: `first`, `second` (the two contestants), `winner` (`first`, `second`, `tie`,
`tie-both-bad`), optional `judge`, `prompt`, `time`, `id`. Common spellings are recognised without a
mapping: LLMFAO's `left`/`right`/`worker` with winner `left`/`right`/`tie`; Chatbot Arena's
`model_a`/`model_b`/`judge`/`tstamp` with winner `model_a`/`model_b`/`tie`/`tie (bothbad)`. Anything else
maps with `--map first=COLUMN`.

Each judgment is one match (`{file stem}-{first 8 hex digits of the file's sha256}:{line}`, unique across
folders) with two results: the winner scores 1 and the loser 0; a
tie scores 0.5 each and a both-bad tie 0 each (ranks 1 and 1). `results.role` keeps the position (first or
second); judge and id go to `matches.attrs`, the prompt or category to `matches.game`.

Per-side numbers (answer length, markdown counts: Chatbot Arena's style features) are read from column pairs
whose names differ only in the side: `length_a` / `length_b`, `sum_assistant_a_tokens` /
`sum_assistant_b_tokens`, `len_first` / `len_second` or `len_left` / `len_right`. Each pair becomes a
telemetry measure of each player named without the side (`length`, `sum_assistant_tokens`), which
`referee ratings --covariate style:NAME` (or `measure:NAME`) controls for. A blank cell is no measure; a cell
that is not a finite number (text, NaN, infinity, digit separators) sets its row aside, naming the column.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from referee.io.loaders.base import LoadOptions, LoadResult, RecordError, file_key
from referee.io.loaders.table import open_rows

NAME = "arena"
ALIASES = {
    "first": ("first", "left", "model_a", "contestant_a"),
    "second": ("second", "right", "model_b", "contestant_b"),
    "winner": ("winner",),
    "judge": ("judge", "worker", "annotator"),
    "prompt": ("prompt", "category", "question_id"),
    "time": ("time", "tstamp", "timestamp"),
    "id": ("id",),
}
WINNERS = {
    "first": "first", "left": "first", "model_a": "first", "a": "first",
    "second": "second", "right": "second", "model_b": "second", "b": "second",
    "tie": "tie", "draw": "tie",
    "tie-both-bad": "tie-both-bad", "tie (bothbad)": "tie-both-bad", "both_bad": "tie-both-bad",
    "bothbad": "tie-both-bad",
}
SCORES = {"first": (1.0, 0.0), "second": (0.0, 1.0), "tie": (0.5, 0.5), "tie-both-bad": (0.0, 0.0)}
SIDE_TOKENS = (("a", "b"), ("first", "second"), ("left", "right"))  # how a per-side column names its side


def side_columns(columns: list[str], used: set[str]) -> list[tuple[str, str, str]]:
    """(measure name, first side's column, second side's column) for every pair of `columns` whose names
    differ only in one '_'-separated side token (SIDE_TOKENS), leaving out the columns in `used`."""
    present, pairs = set(columns), []
    for column in columns:
        if column in used:
            continue
        words = column.split("_")
        for first, second in SIDE_TOKENS:
            for k, word in enumerate(words):
                if word.lower() != first or len(words) < 2:
                    continue
                partner = "_".join(words[:k] + [second if word == first else second.upper()] + words[k + 1:])
                if partner in present and partner not in used:
                    pairs.append(("_".join(words[:k] + words[k + 1:]), column, partner))
    return pairs


def _numbers(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(numbers (NaN where blank), bad mask) of one column's cells: bad where a cell is not blank and not a
    finite number (text, NaN, infinity, a digit separator '1_000', a boolean)."""
    text = values.astype("string").str.strip()
    blank = (text.isna() | (text == "")).to_numpy(bool)
    number = pd.to_numeric(text.where(~blank), errors="coerce").to_numpy(float)
    separator = text.str.contains("_", regex=False).fillna(False).to_numpy(bool)
    boolean = text.str.lower().isin(["true", "false"]).fillna(False).to_numpy(bool)
    bad = ~blank & (~np.isfinite(number) | separator | boolean)
    return np.where(blank, np.nan, number), bad


def sniff(path: Path, head: str, sample: list) -> float:
    """1 for a tabular file whose first line names a winner column and a recognised pair of contestants."""
    if path.suffix.lower() not in (".csv", ".jsonl"):
        return 0.0
    first = head.split("\n", 1)[0].lower()
    return float("winner" in first and any(a in first and b in first for a, b in zip(ALIASES["first"], ALIASES["second"])))


def _column(frame: pd.DataFrame, name: str, mapping: dict[str, str]) -> str | None:
    if name in mapping:
        return mapping[name]
    return next((c for c in ALIASES[name] if c in frame.columns), None)


UNIX_MAX = 1e11  # seconds: a Unix time past the year 5000 is not a time (pandas' range ends in 2262)


def _time(values: pd.Series) -> pd.Series:
    """Each cell as a time (NaT where it cannot be read, which the caller sets aside by row): a column mostly
    of numbers is Unix seconds, one cell that is not (NaN, 1e30, text) unreadable on its own, never the
    whole column; anything else is ISO 8601."""
    text = values.astype("string").str.strip()
    filled = text.notna() & (text != "")
    numeric = pd.to_numeric(text.where(filled), errors="coerce")
    if numeric.notna().sum() * 2 > filled.sum():
        seconds = numeric.where(np.isfinite(numeric) & (numeric.abs() < UNIX_MAX))
        return pd.to_datetime(seconds, unit="s")
    return pd.to_datetime(values, errors="coerce", utc=True, format="ISO8601").dt.tz_localize(None)


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one file of pairwise judgments; bad rows are quarantined by line and column."""
    out, frame, labels = open_rows(path, content_hash, NAME)
    if frame is None:
        return out.build()
    cols = {name: _column(frame, name, options.mapping) for name in ALIASES}
    for name in ("first", "second", "winner"):
        if cols[name] is None or cols[name] not in frame.columns:
            return out.reject_file(RecordError("missing field", cols[name] or name,
                                               f"no '{name}' column (looked for {list(ALIASES[name])}); map it with --map"))
    frame = frame.reset_index(drop=True)
    text = {k: frame[c].astype("string").str.strip() for k, c in cols.items() if c is not None and c in frame.columns}
    winner = text["winner"].str.lower().map(WINNERS)
    reasons = [
        (text["first"].isna() | (text["first"] == ""), "missing value", cols["first"], "the first contestant is empty"),
        (text["second"].isna() | (text["second"] == ""), "missing value", cols["second"], "the second contestant is empty"),
        (text["winner"].isna() | (text["winner"] == ""), "missing value", cols["winner"], "the winner is empty"),
        (winner.isna(), "wrong value", cols["winner"], f"winner must be one of {sorted(set(WINNERS))}"),
        (text["first"] == text["second"], "self-comparison", cols["second"], "both contestants are the same"),
    ]
    times = _time(frame[cols["time"]]) if cols["time"] in frame.columns else None
    if times is not None:
        reasons.append((frame[cols["time"]].notna() & times.isna(), "wrong type", cols["time"], "unreadable time"))
    sides = side_columns(list(frame.columns), {c for c in cols.values() if c is not None})
    numbers = {}
    for _, *pair in sides:
        for column in pair:
            numbers[column], bad_cells = _numbers(frame[column])
            reasons.append((pd.Series(bad_cells, index=frame.index), "wrong type", column,
                            "a per-side measure must be a finite number"))
    bad = pd.Series(False, index=frame.index)
    for mask, reason, field, detail in reasons:
        mask = mask.fillna(False).astype(bool) & ~bad
        for i in np.flatnonzero(mask.to_numpy()):
            value = frame.iloc[i].get(field) if field in frame.columns else None
            out.quarantine(labels[i], RecordError(reason, field, f"{detail} (got {value!r})"),
                           frame.iloc[i].to_json())
        bad |= mask
    out.saw(len(frame))
    good = frame.index[~bad]
    if len(good):
        labels_good = [labels[i] for i in good]
        match_ids = [f"{file_key(path, content_hash)}:{label}" for label in labels_good]
        w = winner[good]
        scores = np.array([SCORES[v] for v in w])
        extra = [k for k in ("judge", "id") if k in text]
        attrs = None
        if extra:
            sub = pd.DataFrame({k: text[k][good] for k in extra}).astype(object)
            attrs = [json.dumps({k: v for k, v in r.items() if pd.notna(v)}) for r in sub.to_dict("records")]
        matches = pd.DataFrame({
            "match_id": match_ids, "runner": NAME, "game": text["prompt"][good].to_numpy() if "prompt" in text else None,
            "n_players": 2, "started_at": times[good].to_numpy() if times is not None else None,
            "source_file": str(path), "content_hash": content_hash, "record_index": labels_good, "attrs": attrs})
        tie_rank = np.where(scores[:, 0] == scores[:, 1], 1.0, np.nan)
        players = []
        for side, col in ((0, "first"), (1, "second")):
            other = 1 - side
            rank = np.where(np.isnan(tie_rank), np.where(scores[:, side] > scores[:, other], 1.0, 2.0), 1.0)
            players.append(pd.DataFrame({
                "match_id": match_ids, "player": text[col][good].to_numpy(), "agent": text[col][good].to_numpy(),
                "role": col, "score": scores[:, side], "rank": rank}))
        measures = [pd.DataFrame({"match_id": match_ids, "player": text[col][good].to_numpy(), "name": name,
                                  "value": numbers[column][good], "kind": "telemetry"})
                    for name, first, second in sides for col, column in (("first", first), ("second", second))]
        measures = pd.concat(measures, ignore_index=True).dropna(subset=["value"]) if measures else None
        out.accept_bulk(len(good), matches=matches, results=pd.concat(players, ignore_index=True),
                        measures=measures)
    return out.build()

