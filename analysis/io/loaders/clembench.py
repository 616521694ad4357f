"""clembench records (clemcore's `clem run` and `clem score`), read from its documented records tree:

    <results>/<model pair>/<game>/<experiment>/<episode>/interactions.json   (`clem run`)
    <results>/<model pair>/<game>/<experiment>/<episode>/scores.json         (`clem score`)

`interactions.json` is one match: `meta` (game_name, experiment_name, game_id, results_folder), `players`
({"GM": ..., "Player 1": {"game_role": ..., "model_name": ...}, ...}; older records write "Player 1": "Role,
model"), `turns` (a list per round of actions {from, to, timestamp, action: {type, content}}) and the episode's
`Aborted` / `Lose` / `Success` flags. Canonical: match_id = 'clembench:<model pair>/<game>/<experiment>/<episode>',
game = game_name, scenario = '<game>/<experiment>', repetition = the instance (meta's game_id, else the episode
folder's name); one result per player (not the GM): agent = the model, role = the game role, group `background`
for clem's scripted partner (`programmatic`: a role, not a rated agent) and `focal` for a model; score = the
episode's `Main Score` from the sibling scores.json (clembench's main score, shared by the players; missing when
the episode was not scored or was aborted), outcome `forfeit` when Aborted is 1 (the model broke the game's
rules, which clem counts against its % played: it loses to every model that played the instance, never a zero
score), else `win` for every player on Success and `loss` on Lose (clembench's games are played together);
every action is an event (round = the turn index, actor = from, target = to, type = the action's type).

Comparison unit (`COMPARISON_UNIT`): clem plays every model on the same instances in separate episodes (its
self-play and single-player games have no second model in the episode; two-player games pair a model with
itself or with the scripted partner), so the models are compared instance by instance across episodes
(`separate_episodes`), each model's score against each other's, as clem's own table compares them.

`scores.json` adds the episode's scores (`episode scores`: Aborted, Lose, Success, Main Score as outcome
measures, the request counts and any other as telemetry) and the per-round scores (`round scores`/`turn
scores`, measures with their round) to the same match; NaN scores (an aborted episode's Main Score) are left
out, not stored as zero. The other files clem writes beside them (instance.json, experiment.json, run.json,
completed.json, error.json, the per-player requests, clem eval's raw.csv and results.csv) hold settings or
aggregates of these same episodes: a folder ingest leaves them out and says how many (`COMPANIONS`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
from pathlib import Path

from referee.io.loaders.clem_table import clem_headline, self_play
from referee.io.loaders.runner import Headline, Runner
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    NotThisRunner,
    RecordError,
    ResultBuilder,
    parse_time,
    read_json,
    score_value,
)
from referee.io.loaders.files import repeated_key
from referee.io.loaders.detect import share

NAME = "clembench"
COMPARISON_UNIT = ("the instance (game, experiment, instance id): each model's episode score against every other "
                   "model's on the same instance; clem's episodes hold one model (self-play, single-player, or "
                   "against its scripted partner), so within an episode there is nothing to compare")
SCRIPTED = ("programmatic",)  # clem's scripted partner: stored as group `background`, not rated
PRIMARY = "interactions.json"
SCORES = "scores.json"
INTERACTION_KEYS = ("players", "turns")  # clemcore adds `meta`; the clembench of 2023-2024 (v0.9-v2.0) wrote none
SCORE_KEYS = ("episode scores",)
SCORE_GROUPS = ("episode scores", "round scores", "turn scores")  # the scores, each value read alone
FLAGS = ("Aborted", "Lose", "Success")
MAIN = "Main Score"
OUTCOME_MEASURES = FLAGS + (MAIN,)
# files clem writes beside its records that hold no results of their own (settings, requests, aggregates)
COMPANIONS = ("instance.json", "experiment.json", "experiment_*.json", "run.json", "completed.json", "error.json",
              "*.requests.json", "requests.json", "raw.csv", "results.csv", "results.html")
TEXT_CAP = 4000  # characters of an action's content kept in its event


OUTCOME_DIRECTIONS = {"Success": "higher", "Lose": "lower", "Aborted": "lower", "Main Score": "higher"}  # for the audit

def sniff(path: Path, head: str, sample: list) -> float:
    """1 for clem's interactions.json or scores.json (by name and keys)."""
    if path.name not in (PRIMARY, SCORES):
        return 0.0
    keys = INTERACTION_KEYS if path.name == PRIMARY else SCORE_KEYS
    if sample:
        return share(sample, lambda r: all(k in r for k in keys))
    return 1.0 if all(f'"{k}"' in head for k in keys) else 0.0


def is_companion(path: Path) -> bool:
    """Whether a file's name is one clem writes beside its records (see COMPANIONS)."""
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in COMPANIONS)


def companions(files: list[Path]) -> set[Path]:
    """The companion files among `files` (found by expanding folders): those named as in COMPANIONS that sit in
    an episode folder holding interactions.json or in a folder above one (run.json, experiment.json, raw.csv)."""
    roots: set[Path] = set()
    for f in files:
        if f.name == PRIMARY:
            roots.update(f.parent.parents)
            roots.add(f.parent)
    return {f for f in files if f.parent in roots and is_companion(f)}


def identity(path: Path) -> str | None:
    """What, besides its bytes, makes an episode file the record it is. An interactions.json is its bytes alone:
    it holds the episode's turns with their timestamps, so a byte-identical one is the same episode wherever it
    lies (a run copied under a second folder name is said to be already ingested, never stored twice). A
    scores.json is its bytes and its episode's: clem writes byte-identical scores.json for different episodes
    (4,053 in one clemcore run), each its own, so it is told apart by the interactions.json beside it
    (`_head_digest`; else by its episode's key, `episode_key`)."""
    if path.name != SCORES:
        return None
    try:
        return "episode " + _head_digest(path.parent / PRIMARY)
    except OSError:
        return episode_key(path)


IDENTITY_HEAD = 1 << 16  # bytes of an interactions.json that tell its episode apart (its players and first turns)


def _head_digest(path: Path) -> str:
    """sha256 of a file's size and first IDENTITY_HEAD bytes: an interactions.json's players, meta and first
    timestamped turns tell its episode apart without reading it whole a second time (it is hashed whole, and
    parsed, when it is ingested itself)."""
    with open(path, "rb") as fh:
        return hashlib.sha256(f"{path.stat().st_size}:".encode() + fh.read(IDENTITY_HEAD)).hexdigest()


def episode_key(path: Path) -> str:
    """The match id of the episode an interactions.json or scores.json belongs to: from the file's own `meta`
    (clemcore writes it), else its sibling interactions.json's `meta`, else the folder names (the clembench of
    2023-2024 wrote no meta). A run folder renamed after the run keeps its episodes' ids where meta names them."""
    meta = _meta_of(path)
    if not names_episode(meta) and path.name == SCORES and (path.parent / PRIMARY).exists():
        meta = _meta_of(path.parent / PRIMARY)
    try:
        return match_key({"meta": meta} if isinstance(meta, dict) else {}, path)
    except RecordError:  # a meta of the wrong type: the folders name the episode (the file itself says why)
        return match_key({}, path)


def names_episode(meta: object) -> bool:
    """Whether a file's `meta` names its episode (any of EPISODE_KEYS): clemcore's scores.json may carry an
    empty `meta` ({}), which names nothing, so the episode is its interactions.json's, matched by path."""
    return isinstance(meta, dict) and any(key in meta for key in EPISODE_KEYS)


def episode_names(record: dict, path: Path) -> tuple[str, str, str]:
    """(model pair, game, experiment) of an episode: from the record's `meta` where it says them, else from the
    folder names (<model pair>/<game>/<experiment>/<episode>/)."""
    meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
    parts = path.parent.parts
    folders = list(parts[-4:-1]) if len(parts) >= 4 else ["", "", ""]
    for key in ("results_folder", "game_name", "experiment_name"):  # clemcore writes each as the folder's name
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise RecordError("wrong type", f"meta.{key}", f"expected the {key.replace('_', ' ')} as text (clemcore "
                              f"writes the folder's name), got {meta[key]!r}"[:300])
    return (meta.get("results_folder") or folders[0], meta.get("game_name") or folders[1],
            meta.get("experiment_name") or folders[2])


def match_key(record: dict, path: Path) -> str:
    """The match id both files of an episode name: 'clembench:<model pair>/<game>/<experiment>/<episode>'."""
    pair, game, experiment = episode_names(record, path)
    return f"clembench:{pair}/{game}/{experiment}/{path.parent.name}"


def _players(players: object, pair: str) -> list[dict]:
    if not isinstance(players, dict):
        raise RecordError("wrong type", "players", "expected an object of players")
    out = []
    models = pair.split("--") if pair else []
    for name, info in players.items():
        if name == "GM":
            continue
        if isinstance(info, dict):
            model, role = info.get("model_name"), info.get("game_role")
        elif isinstance(info, str):  # older records: "Role, model"
            role, _, model = info.rpartition(", ")
            role = role or None
        else:
            raise RecordError("wrong type", f"players.{name}", f"expected a player object, got {info!r}")
        if not isinstance(model, str) or not model.strip():
            index = len(out)
            model = models[index] if index < len(models) else None
        if not model:
            raise RecordError("missing field", f"players.{name}.model_name", "a player needs the model that played it")
        model = model.strip()
        out.append({"player": name, "agent": model, "role": role,
                    "group": "background" if model in SCRIPTED else "focal"})
    if not out:
        raise RecordError("missing field", "players", "the episode has no players besides the game master")
    return out


def _flag(record: dict, name: str) -> int | None:
    """An episode flag as 0 or 1: clem writes 0/1, and JSON booleans in interactions.json (`Aborted: true`)."""
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, (int, float)) or value not in (0, 1):
        raise RecordError("wrong type", name, f"expected 0 or 1, got {value!r}")
    return int(value)


def outcome(flags: dict[str, int | None]) -> str | None:
    """The players' shared outcome from the episode flags: forfeit (Aborted: the model broke the game's rules), win
    (Success), loss (Lose), else None."""
    if flags.get("Aborted") == 1:
        return "forfeit"
    if flags.get("Success") == 1:
        return "win"
    if flags.get("Lose") == 1:
        return "loss"
    return None


EPISODE_KEYS = ("results_folder", "game_name", "experiment_name", "game_id")  # what names an episode in `meta`


def score_number(value: object, field: str) -> float | None:
    """One of clem's scores: None where missing or NaN (clem's 'undefined', as an aborted episode's Main
    Score), else `score_value`'s finite number; RecordError naming `field` for text or an infinity, and for an
    episode flag (Aborted, Lose, Success) other than 0 or 1 (a boolean flag is its 0 or 1: clem's games log
    them as `int(flag)` or the flag itself). A Main Score has no range: each game computes its own BENCH_SCORE,
    and eqbench's is negative for poor answers (clem's results.csv averages them in)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    name = field.rpartition(".")[2]
    if name in FLAGS and isinstance(value, bool):
        return float(value)
    number = score_value(value, field, allow_neg_inf=False)
    if name in FLAGS and number not in (0, 1):
        raise RecordError("out of range", field, f"clem's {name} flag is 0 or 1, got {value!r}")
    return number


def other_episode(meta: object, other: object) -> str | None:
    """Why two files of one episode folder describe different episodes (the first key of EPISODE_KEYS both
    name with different values), or None when they agree."""
    if not isinstance(meta, dict) or not isinstance(other, dict):
        return None
    for key in EPISODE_KEYS:
        if key in meta and key in other and meta[key] != other[key]:
            return f"meta.{key} is {other[key]!r} here but {meta[key]!r} in its episode's other file"
    return None


META_HEAD = 1 << 16  # bytes of an episode file read for its `meta` (clem writes it first)


def _meta_of(path: Path) -> object:
    """The `meta` object of an episode file, from its first META_HEAD bytes (clem writes `meta` first: the turns
    are not parsed; a file whose head names no `meta`, as the clembench of 2023-2024 wrote them, is not read
    further), streamed on only when `meta` itself runs past the head; None where the file has none or cannot be
    read (it is set aside on its own)."""
    import io

    import ijson

    try:
        with open(path, "rb") as fh:
            head = fh.read(META_HEAD)
            if b'"meta"' not in head:
                return None
            try:
                return next(ijson.items(io.BytesIO(head), "meta", use_float=True), None)
            except ijson.IncompleteJSONError:
                fh.seek(0)
                return next(ijson.items(fh, "meta", use_float=True), None)
    except (ijson.JSONError, OSError, ValueError):
        return None


def contradicts(flags: dict[str, int | None]) -> bool:
    """Whether an episode's parsed flags say both Success and Lose (clem's own output does, e.g. 119 clean_up
    episodes of a clemcore 3.7 run): clem counts such an episode as played and scores it by its Main Score;
    referee stores it so, with the outcome unknown (neither a win nor a loss) and a note in the match's attrs."""
    return flags.get("Success") == 1 and flags.get("Lose") == 1


def _main_score(path: Path, meta: dict) -> tuple[float | None, dict, bool]:
    """(the sibling scores.json's Main Score, None when missing or NaN; its episode scores; whether the
    scores are unreadable): a Main Score that is not a number, or a scores.json naming another episode,
    leaves the score unknown (that file is set aside on its own, naming why)."""
    scores = path.parent / SCORES
    if not scores.exists():
        return None, {}, False
    try:
        doc = read_json(scores, within=SCORE_GROUPS)  # its scores read one at a time below
    except RecordError:
        return None, {}, True  # set aside on its own when the folder is ingested
    episode = doc.get("episode scores") if isinstance(doc, dict) else None
    if not isinstance(episode, dict) or other_episode(meta, doc.get("meta")):
        return None, {}, True
    try:
        for name in FLAGS:  # a flag other than 0 or 1 (clem writes 0/1 or booleans) makes the scores unreadable too
            _flag(episode, name)
        return score_number(episode.get(MAIN), f"episode scores.{MAIN}"), episode, False
    except RecordError:
        return None, episode, True


def _events(turns: object) -> list[dict]:
    if not isinstance(turns, list):
        raise RecordError("wrong type", "turns", "expected a list of rounds")
    events = []
    for r, actions in enumerate(turns):
        if not isinstance(actions, list):
            raise RecordError("wrong type", f"turns[{r}]", "expected a list of actions")
        for k, entry in enumerate(actions):
            action = entry.get("action") if isinstance(entry, dict) else None
            if not isinstance(action, dict) or not isinstance(action.get("type"), str):
                raise RecordError("wrong type", f"turns[{r}][{k}].action", "expected an action with a type")
            content = action.get("content")
            text = content if isinstance(content, str) else None if content is None else json.dumps(content)
            try:
                time = parse_time(entry.get("timestamp"), f"turns[{r}][{k}].timestamp")
            except RecordError:
                time = None
            events.append({"seq": len(events), "round": r, "time": time, "actor": entry.get("from"),
                           "target": entry.get("to"), "type": action["type"],
                           "text": None if text is None else text[:TEXT_CAP]})
    return events


def parse_interactions(record: object, path: Path) -> dict[str, list[dict]]:
    """Canonical rows (matches, results, events) for one episode's interactions.json."""
    if not isinstance(record, dict):
        raise RecordError("wrong type", None, f"expected an episode object, got {type(record).__name__}")
    missing = [k for k in INTERACTION_KEYS if k not in record]
    if missing:
        raise RecordError("missing field", missing[0], f"clem's interactions.json carries '{missing[0]}'")
    meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
    flags = {name: _flag(record, name) for name in FLAGS}
    pair, game, experiment = episode_names(record, path)
    players = _players(record["players"], pair)
    main, episode, unreadable = _main_score(path, meta)
    scored = {k: _flag_or_none(episode, k) for k in FLAGS}  # the scores.json's flags (bad ones set aside there)
    both = contradicts(flags) or contradicts(scored)
    shared = outcome(flags) or outcome(scored)
    if (unreadable or both) and shared != "forfeit":  # scores unreadable or contradicting: never a win
        shared = None
    if not game:
        raise RecordError("missing field", "meta.game_name", "the episode names no game")
    game_id = meta.get("game_id")
    if game_id is not None and (isinstance(game_id, bool) or not isinstance(game_id, (int, str))):
        raise RecordError("wrong type", "meta.game_id", f"clem numbers an episode, got {game_id!r}")
    instance = path.parent.name if game_id is None else str(game_id)
    events = _events(record["turns"])
    strangers = _strangers(events, record["players"])
    match = {"runner": NAME, "game": game, "scenario": f"{game}/{experiment}", "n_players": len(players),
             "repetition": instance,
             "attrs": json.dumps({"experiment_name": experiment, "results_folder": pair,
                                  "episode": path.parent.name}
                                 | {k: meta[k] for k in ("clem_version", "round_count") if k in meta}
                                 | ({"note": "Success and Lose both 1 (clem's own output): counted as played, "
                                     "outcome unknown"} if both else {})
                                 | ({"unknown_actors": strangers} if strangers else {}))}
    known = shared != "forfeit" and not unreadable
    results = [{**p, "score": main if known else None, "rank": 1.0 if known else None, "outcome": shared}
               for p in players]
    return {"matches": [match], "results": results, "events": events}


def _strangers(events: list[dict], players: dict) -> list[str]:
    """Who sends or receives a turn but is neither the game master nor one of the episode's `players`: stored
    as clem wrote it, and named in the match's attrs (`unknown_actors`)."""
    known = set(players) | {"GM"}
    return sorted({str(e[k]) for e in events for k in ("actor", "target") if e[k] is not None and e[k] not in known})


def _flag_or_none(record: dict, name: str) -> int | None:
    try:
        return _flag(record, name)
    except RecordError:
        return None


def _measures(record: dict) -> tuple[list[dict], list[tuple[RecordError, object]]]:
    """(measure rows, the values set aside one at a time with their errors): a score that is not a number
    (clem writes text or lists among the episode scores, e.g. `Moves`) is set aside alone, never its file."""
    rows, aside = [], []
    episode = record.get("episode scores")
    if not isinstance(episode, dict):
        raise RecordError("wrong type", "episode scores", "expected an object of episode scores")
    _scored({n: int(v) if isinstance(v, bool) and n in FLAGS else v for n, v in episode.items()}, "episode scores",
            None, rows, aside)
    rounds = record.get("round scores", record.get("turn scores")) or {}
    if not isinstance(rounds, dict):
        raise RecordError("wrong type", "round scores", "expected an object of round scores")
    for index, scores in rounds.items():
        if not isinstance(scores, dict) or not str(index).isdigit():
            raise RecordError("wrong type", f"round scores.{index}", "expected scores under a round number")
        _scored(scores, f"round scores.{index}", int(index), rows, aside)
    return rows, aside


def _scored(scores: dict, where: str, round_: int | None, rows: list, aside: list) -> None:
    """Each score of `scores` as a measure row (an episode's outcome measures as outcomes, every other score as
    telemetry) into `rows`, or with its RecordError into `aside` (a score that is not a number)."""
    twice = repeated_key(scores)
    if twice:  # which of the two values clem meant is unknowable: the group is set aside whole
        raise RecordError("duplicate key", f"{where}.{twice}", "a score is named twice in one object")
    for name, value in scores.items():
        try:  # each value's own fault (not a number, past 64 bits: `score_value`) costs that value alone
            number = score_number(value, f"{where}.{name}")
        except RecordError as exc:
            aside.append((exc, {name: value}))
            continue
        if number is not None:
            kind = "outcome" if round_ is None and name in OUTCOME_MEASURES else "telemetry"
            rows.append({"player": None, "name": name, "value": number, "round": round_, "kind": kind})


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one clem file: interactions.json (a match) or scores.json (its measures); either is one record."""
    scores = path.name == SCORES
    out = ResultBuilder(path, content_hash, NAME, many_records_per_match=scores)
    try:  # a scores.json's scores are read one value at a time (`_scored`): a bad one costs itself, not the file
        doc = read_json(path, within=SCORE_GROUPS if scores else ())
        keys = SCORE_KEYS if scores else INTERACTION_KEYS
        if not isinstance(doc, dict) or not any(k in doc for k in keys):
            raise NotThisRunner(f"the file has none of clem's keys {list(keys)}", runner=NAME, field=keys[0])
    except RecordError as exc:
        return out.reject_file(exc)
    sibling = path.parent / PRIMARY
    sibling_meta = _meta_of(sibling) if scores and sibling.exists() else None
    # an episode's two files name one match: the scores take the interactions' meta where they carry none
    try:
        mid = match_key(doc if names_episode(doc.get("meta")) or not isinstance(sibling_meta, dict)
                        else {"meta": sibling_meta}, path)
    except RecordError as exc:
        return out.reject_file(exc)
    if not scores:
        out.accept_records([doc], lambda record: parse_interactions(record, path), lambda match, label: mid)
        return out.build()
    out.saw(1)
    try:
        why = other_episode(sibling_meta, doc.get("meta"))
        if why:
            raise RecordError("wrong value", "meta", f"these scores name another episode than the folder's "
                              f"{PRIMARY}: {why}")
        rows, aside = _measures(doc)
    except RecordError as exc:
        out.quarantine("0", exc, doc)
        return out.build()
    out.accept_bulk(1, measures=[{**row, "match_id": mid} for row in rows])
    out.add_records([mid], ["0"])
    for error, raw in aside:  # each value set aside is a record of its own
        out.saw(1)
        out.quarantine(f"0.{error.field}", error, raw)
    return out.build()


# clem's own role: its game master (`players["GM"]`, the actor of its turns' GM actions), neither an agent nor a
# spectator (the audit's spectator check leaves its events out). clem plays each experiment's instances once per
# model pair: no episode is repeated, and the instance number (repetition) names unrelated instances across
# experiments; evaluation without aggregation takes each experiment (the scenario, <game>/<experiment>) as one run
# (ewa_run, `referee.prepare.comparisons.runs_by_scenario`)
RUNNER = Runner(
    NAME, sniff, load,
    {"interactions.json": list(INTERACTION_KEYS) + list(FLAGS), "scores.json": ["episode scores", "round scores"],
     "left out beside them": list(COMPANIONS)},
    identity=identity, companions=companions, home=PRIMARY, separate_episodes=True, comparison_unit=COMPARISON_UNIT,
    ewa_run="scenario", actors=("GM",), outcome_directions=OUTCOME_DIRECTIONS,
    headline=Headline(
        "clemscore",
        "clem multiplies a model's % played by its mean quality score, game by game; referee compares models "
        "instance by instance (an aborted episode loses to every model that played the instance) and rates the "
        "wins: a model that wins few instances by much scores higher with clem than with referee",
        {"clemscore": "clemscore", "% Played": "pct_played", "Quality Score": "quality"}, compute=clem_headline,
        measures=True, own_unit=self_play,
        needs="each episode's scores.json (its Main Score and % Played)"))
