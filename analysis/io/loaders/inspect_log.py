"""Inspect AI eval logs (UK AISI's `inspect_ai`): `.eval` files (a ZIP of `header.json` and one
`samples/{id}_epoch_{n}.json` per sample; members zstd-compressed since inspect 0.3.206, deflated before) and
`.json` files (one `EvalLog`: `version`, `status`, `eval`, `results`, `samples`). Both are read sample by
sample: one ZIP member at a time, or the JSON's `samples` array streamed with ijson, so a log of any size is
never read whole. Format document: `data/formats/inspect.md`.

Canonical: each sample epoch of a log is a match, `{eval_id}:{sample id}:{epoch}`, with game = the task,
scenario = `{task}/{sample id}` and repetition = the epoch. Inspect writes one log per model, so two models'
runs of one task are separate episodes of one (scenario, repetition), compared sample by sample across logs
(`separate_episodes`, as Concordia's focal agents). Its players: the model (player `model`, agent = the
log's model), or in a multi-agent log one player per model role (agent = the role's model). The score is the
primary scorer's value (the headline scorer, else the first) as Inspect's `value_to_float` reads it: C 1,
P 0.5, I 0, N 0, yes/true 1, no/false 0, numbers as they are; a value keyed by role scores each role, any
other object scores the mean of its values. Every scorer's value is a measure (kind outcome; an object's
keys as `scorer.key`), tokens and working time telemetry. A sample with an `error` is `aborted` (no score:
left out of ratings, counted); one that hit a `limit` is a `forfeit` (it loses to every model that finished).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from referee.io.loaders.inspect_table import MEANS, inspect_headline, pooled_unit
from referee.io.loaders.runner import Headline, Runner
from referee.io.loaders.base import (LoadOptions, LoadResult, RecordError, ResultBuilder, file_key, is_number,
                                     parse_time, score_value)
from referee.io.loaders.files import lenient_loads, repeated_key

NAME = "inspect"
COMPARISON_UNIT = ("the sample (task, sample id, epoch): each model's score against every other model's on the "
                   "same sample and epoch; Inspect writes one log per model, so there is nothing to compare "
                   "within a log")
ZSTD = 93  # the ZIP compression method of zstd members
VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0, "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
SAMPLE_KEYS = ("id", "epoch", "scores", "model_usage", "role_usage", "error", "limit", "total_time", "working_time")
UNSCORED = "no scorer ran on this sample"  # stored without a score, left out of ratings, counted at ingest
COMPANION_NAMES = ("eval-set.json", "logs.json")  # an eval-set folder's spec and its index of log headers
MAX_MEMBER = 1 << 30  # a single sample's JSON larger than this is set aside, not inflated


def companions(files: list[Path]) -> set[Path]:
    """An `inspect eval-set` folder's own files beside its logs: `eval-set.json` (the set's tasks and models)
    and `logs.json` (an index of the folder's log headers), where the folder holds a log (.eval or .json)."""
    folders = {f.parent for f in files if f.suffix.lower() == ".eval" or (f.suffix.lower() == ".json"
                                                                         and f.name not in COMPANION_NAMES)}
    return {f for f in files if f.name in COMPANION_NAMES and f.parent in folders}


def sniff(path: Path, head: str, sample: list) -> float:
    """1 for a ZIP named .eval, or a .json whose head opens an EvalLog (`version`, `eval` with a `task`)."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return 1.0 if head.startswith("PK") else 0.0
    if suffix != ".json":
        return 0.0
    start = head.lstrip()[:4096]
    return 1.0 if start.startswith("{") and '"version"' in start and '"eval"' in start and '"task"' in head else 0.0


def _member(archive: zipfile.ZipFile, raw: io.BufferedReader, info: zipfile.ZipInfo) -> bytes:
    """One ZIP member's bytes: zstd members decompressed here (zipfile cannot), others through zipfile."""
    if info.file_size > MAX_MEMBER:
        raise RecordError("too large", None, f"{info.filename} inflates to {info.file_size:,} bytes")
    if info.compress_type != ZSTD:
        return archive.read(info)
    import zstandard

    raw.seek(info.header_offset)
    local = raw.read(30)
    if local[:4] != b"PK\x03\x04":
        raise RecordError("malformed file", None, f"{info.filename}: no local ZIP header at its offset")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    raw.seek(info.header_offset + 30 + name_len + extra_len)
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw.read(info.compress_size))) as reader:
        data = reader.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise RecordError("truncated file", None, f"{info.filename}: {len(data):,} bytes inflated, "
                          f"{info.file_size:,} recorded")
    return data


def _inflated(archive: zipfile.ZipFile, raw: io.BufferedReader, info: zipfile.ZipInfo) -> bytes:
    """`_member`, with a member that does not inflate (corrupt deflate or zstd data, a CRC that does not match,
    data cut short) as that member's fault, a RecordError naming it: one sample lost, never the log's others."""
    import zlib

    import zstandard

    try:
        return _member(archive, raw, info)
    except (zlib.error, zipfile.BadZipFile, zstandard.ZstdError, EOFError) as exc:
        raise RecordError("corrupt member", None, f"{info.filename} does not inflate: {exc}") from None


def _json(data: bytes, where: str) -> Any:
    """One member's JSON (NaN and infinities read, as Inspect's own reader does; a value nested past the stack
    cut out and named by `record_fault`)."""
    try:
        return lenient_loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError("malformed JSON", None, f"{where}: {exc}") from exc


def _eval_members(path: Path) -> tuple[dict, Iterator[tuple[str, Any]]]:
    """(header, (member name, sample) pairs) of a .eval log; the samples are read one member at a time, the
    archive opened again only when they are iterated (nothing stays open if the header is refused)."""
    with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
        infos = archive.infolist()
        names = {i.filename: i for i in infos}
        head_name = "header.json" if "header.json" in names else "_journal/start.json"
        if head_name not in names:
            raise RecordError("missing field", "header.json",
                              "the .eval log has neither header.json nor _journal/start.json")
        data = _member(archive, raw, names[head_name])
        header = _json(data, head_name)
        repeated = repeated_key(header)
        if repeated is not None:
            raise _named_twice(repeated, head_name)

    twice = Counter(i.filename for i in infos)

    def samples() -> Iterator[tuple[str, Any]]:
        with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
            for name, info in names.items():
                if twice[name] > 1 and name.startswith("samples/"):  # which copy is the sample's cannot be told
                    for _ in range(twice[name]):
                        yield name, RecordError("duplicate member", name, f"the log holds {twice[name]} ZIP members "
                                                "named so; each is set aside, as no one of them is the sample")
                    continue
                if name.startswith("samples/") and name.endswith(".json"):
                    try:
                        yield name, _json(_inflated(archive, raw, info), name)
                    except RecordError as exc:
                        yield name, exc

    return header, samples()


def _named_twice(key: str, where: str) -> RecordError:
    """The fault of a log header that names `key` twice (a JSON reader keeps the last copy without a word), in
    either log form: the log is set aside whole."""
    return RecordError("duplicate key", key, f"{where} names '{key}' twice; which copy describes the run cannot be "
                       "told")


HEADER_KEYS = ("version", "status", "eval", "results")  # what a .json log's header holds for referee


def _json_header(path: Path) -> dict:
    """The EvalLog's top-level HEADER_KEYS, in one pass that stops where `samples` begins (Inspect writes the
    header first), so a log of any size is read only up to its samples."""
    import ijson

    header: dict = {}
    builder, key = None, None
    with _opened(path) as fh:
        try:
            for prefix, event, value in ijson.parse(fh, use_float=True):
                if key == "samples" and prefix == "samples":  # what the samples are: a list (or null), never else
                    if event not in ("start_array", "null"):
                        raise RecordError("wrong type", "samples", f"an Inspect log's samples are a list, got "
                                          f"{event.replace('start_', '')}{'' if value is None else f' {value!r}'}"[:120])
                    break
                if prefix == "" and event in ("map_key", "end_map"):
                    if builder is not None:
                        header[key] = builder.value
                    key, builder = value, None
                    if event == "end_map":
                        break
                    if value in HEADER_KEYS:
                        if value in header:
                            raise _named_twice(value, "the log")
                        builder = ijson.ObjectBuilder()
                elif builder is not None:
                    builder.event(event, value)
        except ijson.JSONError as exc:  # a value the streamed parse cannot read (NaN, a number past 64 bits)
            return _lenient_header(path, key, exc)
    return header


BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark some editors write first: JSON text after it is read as JSON


def _opened(path: Path):
    """The log opened for reading past a UTF-8 byte order mark."""
    fh = open(path, "rb")  # noqa: SIM115 - the caller's `with` closes it
    if fh.read(len(BOM)) != BOM:
        fh.seek(0)
    return fh


def _whole(path: Path) -> Any:
    """A .json log read whole by the standard parse past a byte order mark (`lenient_loads`: NaN, infinities,
    1e400 and numbers past 64 bits read, values nested past the stack cut out, a byte that is not UTF-8 kept
    escaped for `record_fault` to name); raises ValueError or RecursionError when it does not parse even so."""
    return lenient_loads(path.read_bytes().removeprefix(BOM).decode("utf-8", errors="surrogateescape"))


def _lenient_header(path: Path, key: str | None, stopped: Exception) -> dict:
    """The header of a .json log whose streamed parse stopped at a value it cannot read (a metric's NaN, a status
    past 64 bits), from the log read whole (`_whole`), with the log itself under the key WHOLE so that its samples
    are taken from it rather than parsed again; one odd header value is then judged on its own (the header's
    checks) instead of costing every sample. RecordError naming the key when the log does not parse even so."""
    try:
        doc = _whole(path)
    except (ValueError, RecursionError):
        raise RecordError("malformed JSON", key, f"the log does not parse: {stopped}") from None
    if not isinstance(doc, dict):
        raise RecordError("malformed JSON", key, f"the log does not parse: {stopped}")
    return {k: doc[k] for k in HEADER_KEYS if k in doc} | {WHOLE: doc}


WHOLE = "(the log read whole)"  # where `_lenient_header` leaves the log it read, for `_json_log`'s samples


def _json_log(path: Path) -> tuple[dict, Iterator[tuple[str, Any]]]:
    """(header, (samples[i], sample) pairs) of a .json EvalLog, its samples streamed (ijson), never read whole."""
    import ijson

    header = _json_header(path)
    whole = header.pop(WHOLE, None)
    if whole is not None:  # the header needed the log read whole: its samples are taken from that one read
        listed = whole.get("samples")
        if listed is not None and not isinstance(listed, list):
            raise RecordError("wrong type", "samples", f"an Inspect log's samples are a list, got "
                              f"{type(listed).__name__}")
        return header, iter([(f"samples[{i}]", sample) for i, sample in enumerate(listed or [])])

    def samples() -> Iterator[tuple[str, Any]]:
        done = 0
        with _opened(path) as fh:
            try:
                for i, sample in enumerate(ijson.items(fh, "samples.item", use_float=True)):
                    yield f"samples[{i}]", sample
                    done = i + 1
                return
            except (ijson.JSONError, UnicodeDecodeError) as exc:  # NaN, an infinity, 1e400, deep nesting or a
                stopped = exc  # byte that is not UTF-8 in one sample: read on
        yield from _samples_after(path, done, stopped)

    return header, samples()


def _samples_after(path: Path, done: int, stopped: Exception) -> Iterator[tuple[str, Any]]:
    """The samples of a .json log from `done` on, when the streamed parse stopped at one of them: the log read
    whole by the standard parse (which reads NaN, infinities and 1e400, and cuts out values nested past its
    stack, and keeps a byte that is not UTF-8 escaped), each sample then checked on its own (`record_fault`: such
    a byte sets aside its sample only); a log that does not parse even so ends with its samples."""
    try:  # a byte that is not UTF-8 is kept escaped: `record_fault` names it in its sample alone ('not UTF-8')
        doc = _whole(path)
    except (ValueError, RecursionError):
        yield "samples[...]", RecordError("truncated file", "samples", f"the samples stop parsing: {stopped}")
        return
    rest = doc.get("samples") if isinstance(doc, dict) else None
    if not isinstance(rest, list):
        yield "samples[...]", RecordError("malformed file", "samples", f"the samples stop parsing: {stopped}")
        return
    for i in range(done, len(rest)):
        yield f"samples[{i}]", rest[i]


def to_float(value: Any, field: str) -> float:
    """A score value as Inspect's value_to_float reads it (C/P/I/N, yes/no, true/false, numbers); RecordError
    naming the field otherwise."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return score_value(value, field, allow_neg_inf=False)
    if isinstance(value, str):
        key = value.strip()
        if key in VALUES or key.lower() in VALUES:
            return VALUES.get(key, VALUES.get(key.lower()))
        try:
            number = float(key)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
    raise RecordError("wrong value", field, f"expected C, P, I, N, yes/no, true/false or a number, got {value!r}"[:200])


class _Log:
    """What every sample of one log shares: task, model, roles, primary scorer, the log's id."""

    def __init__(self, header: dict, path: Path, content_hash: str):
        ev = header.get("eval")
        if not isinstance(ev, dict) or not isinstance(ev.get("task"), str):
            raise RecordError("missing field", "eval.task", "an Inspect log names its task in eval.task")
        self.task = ev["task"]
        self.model = ev.get("model") if isinstance(ev.get("model"), str) and ev["model"].strip() else None
        roles = ev.get("model_roles") or {}
        self.roles = {r: (m.get("model") if isinstance(m, dict) else m) for r, m in roles.items()} \
            if isinstance(roles, dict) else {}
        self.roles = {r: m for r, m in self.roles.items() if isinstance(m, str) and m}
        if self.model is None and not self.roles:
            raise RecordError("missing field", "eval.model", "an Inspect log names its model (eval.model), got "
                              f"{ev.get('model')!r}"[:200])
        results = header.get("results") if isinstance(header.get("results"), dict) else {}
        headline = results.get("headline") if isinstance(results.get("headline"), dict) else {}
        listed = ev.get("scorers") if isinstance(ev.get("scorers"), list) else []  # else a header fault, said
        scorers = [s.get("name") for s in listed if isinstance(s, dict)]
        self.primary = headline.get("scorer") or next((s for s in scorers if isinstance(s, str)), None)
        self.stated, self.reducer, self.cluster = stated_metrics(results, self.primary)
        given = next((ev[k] for k in ("eval_id", "run_id") if ev.get(k) is not None), None)
        if given is not None and not (isinstance(given, str) and given.strip()):
            raise RecordError("wrong type", "eval.eval_id", f"an Inspect log's id is text, got {given!r}"[:160])
        self.log_id = given or file_key(path, content_hash)
        self.total = results.get("total_samples") if isinstance(results.get("total_samples"), int) else None
        self.created = ev.get("created")
        self.status = header.get("status")

    def players(self) -> list[tuple[str, str]]:
        """(player, agent) of every sample: the model roles, else the model."""
        return list(self.roles.items()) if self.roles else [("model", self.model)]


STATUSES = ("started", "success", "cancelled", "error")  # Inspect's EvalStatus


def header_faults(header: dict) -> list[str]:
    """The header fields of a log that do not hold the types Inspect's EvalLog gives them (status one of
    STATUSES; results an object whose scores are a list of objects, each with an object of metrics): each
    'field: what it holds'. The samples do not depend on them: the log's samples are read, and
    what the header states (its metrics, its total) is not."""
    found = []
    if "status" in header and header["status"] not in STATUSES:
        found.append(f"status: {header['status']!r}"[:80])
    results = header.get("results")
    if results is not None and not isinstance(results, dict):
        found.append(f"results: {type(results).__name__}")
    elif isinstance(results, dict):
        scores = results.get("scores")
        if scores is not None and not (isinstance(scores, list) and all(isinstance(e, dict) for e in scores)):
            found.append("results.scores: not a list of scorer objects")
        for k, entry in enumerate(scores if isinstance(scores, list) else []):
            if isinstance(entry, dict) and not isinstance(entry.get("metrics", {}), dict):
                found.append(f"results.scores[{k}].metrics: {type(entry['metrics']).__name__}")
    return found


def stated_metrics(results: dict, primary: str | None) -> tuple[dict[str, float], str | None, str | None]:
    """(the primary scorer's metrics as the log header states them {name: value}, its epoch reducer, the
    sample-metadata key its `stderr` clusters on): what Inspect itself printed for the log, kept beside the
    samples so that referee's recomputation can be checked against it (`referee.io.loaders.inspect_table`)."""
    entries = [s for s in results.get("scores") or [] if isinstance(s, dict)]
    entry = next((s for s in entries if s.get("name") == primary), entries[0] if entries else None)
    if entry is None or not isinstance(entry.get("metrics"), dict):
        return {}, None, None
    stated, cluster = {}, None
    for name, metric in entry["metrics"].items():
        value = metric.get("value") if isinstance(metric, dict) else None
        if is_number(value, finite=True):
            stated[name] = float(value)
        params = metric.get("params") if isinstance(metric, dict) else None
        if name == "stderr" and isinstance(params, dict) and isinstance(params.get("cluster"), str):
            cluster = params["cluster"]
    reducer = entry.get("reducer") if isinstance(entry.get("reducer"), str) else None
    return stated, reducer, cluster


def parse_sample(sample: Any, log: _Log) -> dict[str, list[dict]]:
    """Canonical rows of one sample epoch (match id set by the caller); RecordError naming the field."""
    if isinstance(sample, RecordError):
        raise sample
    if not isinstance(sample, dict):
        raise RecordError("wrong type", None, f"expected a sample object, got {type(sample).__name__}")
    if sample.get("id") is None or isinstance(sample.get("id"), (dict, list, bool)):
        raise RecordError("missing field", "id", "a sample carries its id (text or a number)")
    epoch = sample.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise RecordError("wrong value", "epoch", f"expected an epoch 1 or more, got {epoch!r}")
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict):
        raise RecordError("wrong type", "scores", f"expected an object of scorer -> score, got {scores!r}"[:200])
    players = log.players()
    primary = log.primary if log.primary in scores else next(iter(scores), None)
    error, limit = sample.get("error"), sample.get("limit")
    measures, score_of = [], {p: None for p, _ in players}
    for scorer, entry in scores.items():
        value = entry.get("value") if isinstance(entry, dict) else entry
        field = f"scores.{scorer}.value"
        if isinstance(value, dict):
            per = {k: to_float(v, f"{field}.{k}") for k, v in value.items() if v is not None}
            by_role = set(per) >= set(score_of) and log.roles
            for k, v in per.items():
                measures.append({"player": k if by_role else None, "name": scorer if by_role else f"{scorer}.{k}",
                                 "value": v, "kind": "outcome"})
            if scorer == primary and per:
                score_of = {p: per[p] for p in score_of} if by_role else {p: sum(per.values()) / len(per) for p in score_of}
        elif value is not None:
            v = to_float(value, field)
            measures += [{"player": p, "name": scorer, "value": v, "kind": "outcome"} for p in score_of]
            if scorer == primary:
                score_of = {p: v for p in score_of}
    usage = sample.get("role_usage") if log.roles else sample.get("model_usage")
    for key, spent in (usage or {}).items() if isinstance(usage, dict) else ():
        player = key if log.roles else ("model" if key == log.model or len(usage) == 1 else None)
        tokens = spent.get("total_tokens") if isinstance(spent, dict) else None
        if player in score_of and is_number(tokens, finite=True):
            measures.append({"player": player, "name": "tokens", "value": float(tokens), "kind": "telemetry"})
    working = sample.get("working_time")
    for key in ("working_time", "total_time"):
        spent = sample.get(key)
        if isinstance(spent, (int, float)) and not isinstance(spent, bool) and spent < 0:
            raise RecordError("wrong value", key, f"{key} {spent:g} s is negative")
    if is_number(working, finite=True):
        measures += [{"player": p, "name": "working_time", "value": float(working), "kind": "telemetry"} for p in score_of]
    outcome = "aborted" if error else ("forfeit" if limit else None)
    sample_id = str(sample["id"])
    attrs = {"sample_id": sample_id, "epoch": epoch, "log": log.log_id}
    if log.stated:
        attrs |= {"stated": log.stated} | ({"reducer": log.reducer} if log.reducer else {})
    if log.cluster:
        metadata = sample.get("metadata") if isinstance(sample.get("metadata"), dict) else {}
        attrs["cluster"] = None if metadata.get(log.cluster) is None else str(metadata[log.cluster])
    if not error and not limit and all(score_of[p] is None for p in score_of):
        attrs["unscored"] = UNSCORED
    if error:
        attrs["error"] = (error.get("message") if isinstance(error, dict) else str(error))[:500]
    if limit:
        attrs["limit"] = limit.get("type") if isinstance(limit, dict) else str(limit)
    match = {"runner": NAME, "game": log.task, "scenario": f"{log.task}/{sample_id}", "repetition": str(epoch),
             "n_players": len(players), "started_at": parse_time(sample.get("started_at") or log.created, "started_at"),
             "attrs": json.dumps(attrs)}
    results = [{"player": p, "agent": a, "score": None if error else score_of[p], "rank": None, "outcome": outcome,
                "attrs": None} for p, a in players]
    return {"matches": [match], "results": results, "measures": measures}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read an Inspect `.eval` or `.json` log, sample by sample; a bad sample is set aside by its member name
    (`samples/q3_epoch_2.json`) or index (`samples[7]`) and field. A log whose header reads as Inspect's is
    Inspect's: a fault in its first samples sets those samples aside, never the file as another runner's."""
    out = ResultBuilder(path, content_hash, NAME, sequential=False)
    if path.stat().st_size == 0:
        return out.reject_file(RecordError("empty file", None, "the file is empty"))
    try:
        header, samples = _eval_members(path) if path.suffix.lower() == ".eval" else _json_log(path)
        log = _Log(header, path, content_hash)
    except zipfile.BadZipFile as exc:
        return out.reject_file(RecordError("malformed file", None, f"not a readable ZIP: {exc}"))
    except RecordError as exc:
        return out.reject_file(exc)
    faults = header_faults(header)
    if faults:
        out.note(f"Inspect log(s) whose header holds values of types Inspect never writes (e.g. {faults[0]}): "
                 "their samples are read, the header's stated numbers are not")

    def parse(sample):
        rows = parse_sample(sample, log)
        if all(r["score"] is None and r["outcome"] is None for r in rows["results"]):  # no error, no limit
            out.note(f"Inspect sample(s) stored without a score: {UNSCORED} (left out of ratings)")
        return rows

    out.accept_records(samples, parse,
                       lambda match, label: f"{log.log_id}:{json.loads(match['attrs'])['sample_id']}:"
                                            f"{match['repetition']}")
    if log.total is not None and out.read < log.total and log.status == "success":
        out.note(f"Inspect log(s) holding fewer samples than their header's results.total_samples (here {out.read} "
                 f"of {log.total}): samples are missing from the file")
    return out.build(empty=f"Inspect log(s) with no samples (status {log.status!r}; a log written with "
                           "log_samples=False, or cancelled before a sample ended, has none to rate)")


RUNNER = Runner(
    NAME, sniff, load,
    {"log (.eval: header.json; .json: the EvalLog)": ["eval.task", "eval.model", "eval.model_roles", "eval.eval_id",
                                                      "results.headline.scorer"],
     "sample (samples/*.json or samples[])": list(SAMPLE_KEYS)},
    companions=companions, separate_episodes=True, comparison_unit=COMPARISON_UNIT,
    headline=Headline(
        "accuracy",
        "Inspect averages each model's scores over the samples of its own log; referee compares models only on "
        "the samples and epochs both ran, so logs of different samples agree on accuracy but not on ratings",
        {m: m for m in MEANS}, compute=inspect_headline, stderr="stderr", own_unit=pooled_unit,
        needs="scored samples"))
