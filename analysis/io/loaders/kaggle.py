"""Kaggle Environments replays, Kaggle Game Arena's among them (its OpenSpiel games: `open_spiel_*`).

A replay is one JSON object per episode, as `env.toJSON()` writes it and Kaggle serves it for download:

    {"id": "60d4...", "name": "open_spiel_chess", "version": "1.0.1", "configuration": {...},
     "steps": [[{"action": ..., "reward": ..., "info": {...}, "observation": {...}, "status": "ACTIVE"}, ...], ...],
     "rewards": [1, -1], "statuses": ["DONE", "DONE"], "info": {"TeamNames": ["model-a", "model-b"], ...}}

Canonical: one match per file (match_id = the replay's `id`, else `info.EpisodeId`, else a digest of the replay's
content, so one replay under two file names is one match; game = `name`), one result
per seat (player = 'seat {i}', agent = `info.TeamNames[i]`, else `info.Agents[i].Name`, else 'seat {i} (unnamed)'
with the match marked `unnamed_agents` and left out of ratings; score = the final
reward; rank from the rewards; group `background` for a seat played by one of the environment's built-in agents,
`BUILT_IN`: a scripted opponent, not rated unless asked, else `focal`). A model may play itself (Game Arena's
self-play episodes name one model in both seats): the match is stored whole, its moves and illegal-move forfeits
included, with `self_play` in its attrs, and gives no comparison (a pair is two different agents). Outcome per seat: `forfeit` for a seat whose final
status is INVALID, TIMEOUT or ERROR (Kaggle nulls its reward), and, in Game Arena's OpenSpiel games, for the
seat whose last submitted move was not applied while the game was not over (illegal-move forfeit: Kaggle then
marks every seat DONE and pays -1 / +1; Kaggle's LLM harness forfeits so, submitting -1 with a status saying
'forfeiting'); `aborted` for every seat when no seat ended DONE (the episode has no result, as Kaggle
voids it); otherwise `tie` when every finishing reward is equal, else `win` at the best reward and `loss`
below it. Each applied or refused move is an event (round = step, status accepted / rejected). A replay whose
steps were cut after it was written (`edited`: its final state holds fewer actions than its own
info.actionHistory; Kaggle's test-forfeit replays are made so from a real one, keeping its id) is set aside as an
`edited replay`, so the game as played is the one stored under that match id.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

from referee.io.loaders.runner import Runner
from referee.io.loaders.errors import checked_keys
from referee.io.loaders.files import canonical_json
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    NotThisRunner,
    RecordError,
    ResultBuilder,
    read_json,
    ranks_from_scores,
)
from referee.io.loaders.detect import share

NAME = "kaggle"
KEYS = ("name", "steps")  # what every replay carries
# what `Environment.toJSON` adds from the last step (each seat's `reward` and `status` there): a replay written
# without them (the OpenSpiel repeated-game test replays of Kaggle/kaggle-environments) is read from its last step
FINAL = ("rewards", "statuses")
OPTIONAL = ("id", "title", "description", "version", "module_version", "configuration", "specification",
            "schema_version", "info", "logs")
FAILED = ("INVALID", "TIMEOUT", "ERROR")  # a seat's final status that forfeits (Kaggle nulls its reward)
STATUSES = ("ACTIVE", "INACTIVE", "DONE") + FAILED
TEXT_CAP = 2000  # characters of a move's JSON kept in its event
# A replay may name no agents (56 of the 73 test replays in Kaggle/kaggle-environments carry no info.TeamNames
# or info.Agents: `env.toJSON()` writes `info` only as `make(..., info=...)` was given it). Such a replay is
# stored whole, each seat's agent the placeholder below, and marked `unnamed_agents`, which leaves it out of
# every rating (`referee.prepare.selection`) until it is named and ingested again
UNNAMED = "seat {i} (unnamed)"
UNNAMED_NOTE = ("Kaggle replay(s) naming no agents (no info.TeamNames or info.Agents): stored by seat as "
                "'seat 0 (unnamed)', ...; left out of ratings until named (re-export with make(..., info={'TeamNames': "
                "[...]}) and ingest again with --replace)")
EXCLUDED_WHEN = {"unnamed_agents": "Kaggle replays naming no agents, stored by seat until named"}
# the built-in agents kaggle_environments ships with each environment (its `agents` dict): scripted opponents,
# stored as group `background` (a role, not a rated agent) where a seat's name is one of them
BUILT_IN = {"connectx": ("random", "negamax"), "hungry_geese": ("random", "greedy"), "halite": ("random",),
            "rps": ("rock", "paper", "scissors", "copy_opponent", "reactionary", "counter_reactionary",
                    "statistical"), "mab": ("random", "round_robin"), "kore_fleets": ("random", "miner", "do_nothing",
                                                                                  "balanced", "attacker"),
            "cabt": ("random", "first"), "crawl": ("random",), "word_association": ("random",)}


def built_in(game: str) -> tuple[str, ...]:
    """The built-in agent names of environment `game` (Game Arena's OpenSpiel games: `random`)."""
    return BUILT_IN.get(game, ("random",) if game.startswith("open_spiel") else ())


def sniff(path: Path, head: str, sample: list) -> float:
    """1 for a .json object carrying a replay's keys (steps, rewards, statuses, name) and a configuration."""
    if path.suffix.lower() != ".json":
        return 0.0
    if sample:
        return share(sample, lambda r: all(k in r for k in KEYS) and "configuration" in r)
    # a replay larger than the head: its top-level keys come first in Kaggle's output, the steps follow (a
    # replay without the final rewards and statuses holds its seats' rewards and statuses in each step)
    text = head.lstrip()[:4096]
    final = '"statuses"' in head or ('"steps"' in head and '"status"' in head and '"reward"' in head)
    return 1.0 if text.startswith("{") and '"configuration"' in head and final else 0.0


def _agents(record: dict, seats: int) -> list[str] | None:
    info = record.get("info") or {}
    if not isinstance(info, dict):
        raise RecordError("wrong type", "info", f"expected an object, got {type(info).__name__}")
    names = info.get("TeamNames")
    listed = ([a.get("Name") if isinstance(a, dict) else None for a in info["Agents"]]
              if isinstance(info.get("Agents"), list) else None)
    if names is None:
        names = listed
    elif listed is not None and any(isinstance(n, str) for n in listed) and listed != names:
        raise RecordError("contradiction", "info.Agents", f"the agents' names {listed!r} differ from "
                          f"info.TeamNames {names!r}: which seat is whose cannot be told"[:400])
    if names is None:  # no names: the caller stores the seats under UNNAMED, left out of ratings until named
        return None
    if not isinstance(names, list) or len(names) != seats:
        raise RecordError("wrong type", "info.TeamNames", f"expected {seats} names (one per seat), got {names!r}")
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise RecordError("wrong type", f"info.TeamNames[{i}]", f"expected a name, got {name!r}")
    return [n.strip() for n in names]


def _reward(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RecordError("wrong type", where, f"expected a finite number or null, got {value!r}")
    return float(value)


def _illegal_moves(steps: list, seats: int) -> set[int]:
    """Seats that forfeited by an illegal move while the game was not over (Game Arena's OpenSpiel forfeit, which
    leaves every status DONE and pays the seat DEFAULT_INVALID_ACTION_REWARD = -1, the others +1: open_spiel_env's
    interpreter): the final step's info names a move submitted and none applied, or the seat's action is the LLM
    harness's forfeit (submission -1, pyspiel.INVALID_ACTION, with the status 'Failed to parse a legal move
    after N attempts; forfeiting.', which the env then refuses the same way)."""
    last = steps[-1] if steps else []
    if not isinstance(last, list) or len(last) != seats:
        return set()
    over = [isinstance(s, dict) and isinstance(s.get("observation"), dict) and s["observation"].get("isTerminal")
            for s in last]
    if any(over):
        return set()
    out = set()
    for i, action, info in _last_moves(steps):
        if info is not None and "actionSubmitted" in info and "actionApplied" in info \
                and info["actionApplied"] is None:
            out.add(i)
        elif action is not None and action.get("submission") == INVALID_ACTION \
                and FORFEITING in str(action.get("status") or "").lower():
            out.add(i)
    return out


INVALID_ACTION = -1  # pyspiel.INVALID_ACTION: what Kaggle's LLM harness submits to forfeit (illegalMoveForfeit)
FORFEITING = "forfeit"  # its status text: 'Failed to parse a legal move after 5 attempts; forfeiting.'
HISTORY_LINE = re.compile(r"^-?\d+$")  # one applied action per line of a serialized state's [State] section


def _history_length(serialized: object) -> int | None:
    """How many actions an OpenSpiel `serialize_game_and_state` text holds (its [State] section: one action a
    line, after chess's 'FEN: ...' line; a proxy game's 'history=p:a,p:a,...'), None when it is not one."""
    if not isinstance(serialized, str) or "[State]" not in serialized:
        return None
    body = serialized.split("[State]", 1)[1].strip().splitlines()
    for line in body:
        if line.startswith("history="):
            return len([a for a in line[len("history="):].split(",") if a])
    return sum(bool(HISTORY_LINE.match(line.strip())) for line in body)


def _last_moves(steps: list) -> list[tuple[int, dict | None, dict | None]]:
    """(seat, its action, its step info) in the last step, each None where it is not an object."""
    last = steps[-1] if steps and isinstance(steps[-1], list) else []
    return [(i, *(state.get(k) if isinstance(state, dict) and isinstance(state.get(k), dict) else None
                  for k in ("action", "info"))) for i, state in enumerate(last)]


def _replaced_action(steps: list) -> str | None:
    """Why the last step's actions are not the ones the environment read, or None: open_spiel_env writes each
    acting seat's `info.actionSubmitted` from that very step's `action.submission`, so a seat whose action differs
    from it had its action replaced after the episode was written. Kaggle's test-forfeit replays of its
    simultaneous-move games (markov_soccer, oshi_zumo) are made so: the same steps and info, only the last move
    replaced by the LLM harness's forfeit (submission -1) while `info.actionApplied` still names the real move."""
    for i, action, info in _last_moves(steps):
        if not (info is not None and info.get("actionSubmitted") is not None and action is not None
                and "submission" in action) or _same(action["submission"], info["actionSubmitted"]):
            continue
        applied = info.get("actionApplied")
        return (f"an edited copy of an episode, not the game as played: seat {i}'s last action is submission "
                f"{action['submission']!r}"[:200] + f" while the environment recorded {info['actionSubmitted']!r} "
                f"submitted{'' if applied is None else f' and {applied!r} applied'}"[:200] + " in that step "
                "(open_spiel_env writes info.actionSubmitted from the step's own action, so the action was replaced "
                "after the episode was written, as Kaggle's visualizer guide makes a test-forfeit replay); the "
                "episode's own replay, if beside it, is the one stored")
    return None


def edited(record: dict) -> str | None:
    """Why a replay is an edited copy of an episode rather than the game as played, or None, read from the
    replay's own contradictions, never from its length alone: its final state holds fewer actions than its own
    `info.actionHistory`, which the environment appends to as it applies each one (open_spiel_env), so the steps
    were cut after the episode was written; or a last action unlike the one the environment recorded reading
    (`_replaced_action`). Kaggle's visualizer guide makes its test-forfeit replays so (steps cut or the last move
    replaced, a forfeit injected, rewards set), keeping the episode's id and info: beside the real replay they
    share its match id."""
    steps = record.get("steps")
    if not isinstance(steps, list) or not steps or not isinstance(steps[-1], list):
        return None
    return _cut_steps(record, steps) or _replaced_action(steps)


def _cut_steps(record: dict, steps: list) -> str | None:
    """Why the replay's steps were cut after it was written (its final state holds fewer actions than its own
    info.actionHistory), or None."""
    info = record.get("info")
    history = info.get("actionHistory") if isinstance(info, dict) else None
    if not isinstance(history, list):
        return None
    held = [_history_length(s.get("observation", {}).get("serializedGameAndState"))
            for s in steps[-1] if isinstance(s, dict) and isinstance(s.get("observation"), dict)]
    held = [n for n in held if n is not None]
    if not held or max(held) >= len(history):
        return None
    return (f"an edited copy of an episode, not the game as played: its steps end at step {len(steps) - 1} with "
            f"{max(held)} action(s) applied while its own info.actionHistory records {len(history)} (the steps were "
            "cut after the episode was written, as Kaggle's visualizer guide makes a test-forfeit replay); the "
            "episode's own replay, if beside it, is the one stored")


def outcomes(rewards: list[float | None], statuses: list[str], illegal: set[int]) -> list[str]:
    """Each seat's outcome from the final rewards and statuses and the seats that moved illegally (see the
    module's docstring): forfeit, aborted, tie, win or loss."""
    done = [s == "DONE" for s in statuses]
    if not any(done):
        return ["aborted"] * len(statuses)
    forfeit = [s in FAILED or i in illegal for i, s in enumerate(statuses)]
    standing = [r for r, f in zip(rewards, forfeit) if not f and r is not None]
    best = max(standing) if standing else None
    if not any(forfeit) and standing and all(r == best for r in standing) and len(standing) == len(rewards):
        return ["tie"] * len(rewards)
    return ["forfeit" if f else "win" if r is not None and r == best else "loss"
            for r, f in zip(rewards, forfeit)]


def _events(steps: list, seats: int, illegal: set[int]) -> list[dict]:
    """One event per move a seat made when it was the one to act: round = the step that applied it."""
    events: list[dict] = []
    for t in range(1, len(steps)):
        before, now = steps[t - 1], steps[t]
        if not (isinstance(before, list) and isinstance(now, list)) or len(before) != seats or len(now) != seats:
            raise RecordError("wrong type", f"steps[{t}]", f"expected {seats} seat states per step")
        for i in range(seats):
            if not isinstance(before[i], dict) or before[i].get("status") != "ACTIVE" or not isinstance(now[i], dict):
                continue
            status = now[i].get("status")
            refused = status in FAILED or (t == len(steps) - 1 and i in illegal)
            events.append({"seq": len(events), "round": t, "actor": f"seat {i}", "type": "move",
                           "text": json.dumps(now[i].get("action"), sort_keys=True)[:TEXT_CAP],
                           "status": "rejected" if refused else "accepted",
                           "reason": (status if status in FAILED else "illegal move") if refused else None})
    return events


def _final_from_steps(record: dict) -> dict:
    """`rewards` and `statuses` as `Environment.toJSON` computes them (each seat's `reward` and `status` in the
    last step), for a replay written without them; {} when the last step does not hold them."""
    steps = record.get("steps")
    last = steps[-1] if isinstance(steps, list) and steps and isinstance(steps[-1], list) else None
    if not last or not all(isinstance(s, dict) and "reward" in s and "status" in s for s in last):
        return {}
    return {"rewards": [s["reward"] for s in last], "statuses": [s["status"] for s in last]}


def _same(a: object, b: object) -> bool:
    """Two final values alike (numbers by value: 1 == 1.0; None only with None)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b) or (math.isnan(float(a)) and math.isnan(float(b)))
    return a == b


def _contradictions(given: dict, last: dict, statuses: list, rewards: list, field) -> None:
    """RecordError for what Kaggle's own code never writes: top-level rewards or statuses that differ from the
    last step's (`Environment.toJSON` computes them from it), or a seat DONE with no reward (the environments pay
    every seat that finishes; core.py nulls the reward of a failed seat only: INVALID, TIMEOUT, ERROR)."""
    for key in FINAL:
        if key in given and key in last and isinstance(given[key], list) and (
                len(given[key]) != len(last[key]) or not all(map(_same, given[key], last[key]))):
            raise RecordError("contradiction", key, f"the replay's {key} {given[key]!r} differ from its last "
                              f"step's {last[key]!r}, from which Environment.toJSON computes them"[:400])
    for i, (status, reward) in enumerate(zip(statuses, rewards)):
        if status == "DONE" and reward is None:
            raise RecordError("contradiction", field("rewards", i), f"seat {i} ended DONE with no reward: Kaggle pays "
                              "every seat that finishes (it nulls the reward of a failed seat only)")


def _forfeit_contradictions(steps: list, statuses: list, rewards: list, illegal: set[int], field) -> None:
    """RecordError for forfeits Kaggle's own code never writes: a failed seat (INVALID, TIMEOUT, ERROR) that is
    paid (core.py nulls its reward); an illegal-move forfeit by a seat that was not to move (not ACTIVE in the step
    before), or beside another in one step (open_spiel_env stops reading a step at its first illegal move); a
    forfeiting seat paid as much as a seat that did not forfeit (the environment pays it
    DEFAULT_INVALID_ACTION_REWARD = -1 and every other seat +1), which would rank a forfeit first."""
    for i, (status, reward) in enumerate(zip(statuses, rewards)):
        if status in FAILED and reward is not None:
            raise RecordError("contradiction", field("rewards", i), f"seat {i} ended {status} yet is paid {reward!r}: "
                              "Kaggle nulls the reward of a failed seat (core.py)")
    before = steps[-2] if len(steps) > 1 and isinstance(steps[-2], list) else None
    for i in sorted(illegal):
        if before is not None and isinstance(before[i], dict) and before[i].get("status") != "ACTIVE":
            raise RecordError("contradiction", f"steps[{len(steps) - 1}][{i}].action",
                              f"seat {i} forfeits by an illegal move in the last step though it was not to move "
                              f"(its status in the step before was {before[i].get('status')!r}, not ACTIVE)"[:400])
    if len(illegal) > 1:
        raise RecordError("contradiction", f"steps[{len(steps) - 1}]", f"seats {sorted(illegal)} all forfeit by an "
                          "illegal move in the last step: the environment stops reading a step at its first illegal "
                          "move, so one seat forfeits")
    standing = [r for i, r in enumerate(rewards) if i not in illegal and statuses[i] not in FAILED and r is not None]
    for i in sorted(illegal):
        if rewards[i] is not None and standing and rewards[i] >= min(standing):
            raise RecordError("contradiction", field("rewards", i), f"seat {i} forfeits by an illegal move yet is "
                              f"paid {rewards[i]!r}, as much as a seat that did not forfeit (rewards {rewards!r}): "
                              "the environment pays a forfeiting seat -1 and every other seat +1 (open_spiel_env), "
                              "so the forfeit would rank first"[:400])


def parse_record(record: object, options: LoadOptions) -> dict[str, list[dict]]:
    """Canonical rows (matches, results, events) for one replay; raises RecordError naming the field."""
    checked_keys(record, "a Kaggle replay", KEYS, set(KEYS) | set(FINAL) | set(OPTIONAL))
    game = record["name"]
    if not isinstance(game, str) or not game:
        raise RecordError("wrong type", "name", f"expected the environment's name, got {game!r}")
    given, last = {k: record[k] for k in FINAL if k in record}, _final_from_steps(record)
    record = {**last, **record}
    for key in FINAL:
        if key not in record:
            raise RecordError("missing field", key, f"the replay has no final {key}, nor a last step holding each "
                              "seat's reward and status")
    n_steps = len(record["steps"]) if isinstance(record["steps"], list) else 0

    def field(key: str, i: int) -> str:  # where a seat's final reward or status was read
        return f"{key}[{i}]" if key in given else f"steps[{n_steps - 1}][{i}].{key[:-1]}"
    statuses, rewards_raw, steps = record["statuses"], record["rewards"], record["steps"]
    if not isinstance(statuses, list) or len(statuses) < 2:
        raise RecordError("wrong type", "statuses", "expected one final status per seat, two seats or more")
    for i, s in enumerate(statuses):
        if s not in STATUSES:
            raise RecordError("wrong type", field("statuses", i), f"expected one of {STATUSES}, got {s!r}")
    seats = len(statuses)
    if not isinstance(rewards_raw, list) or len(rewards_raw) != seats:
        raise RecordError("wrong type", "rewards", f"expected {seats} rewards (one per seat), got {rewards_raw!r}")
    rewards = [_reward(r, field("rewards", i)) for i, r in enumerate(rewards_raw)]
    if not isinstance(steps, list):
        raise RecordError("wrong type", "steps", "expected a list of steps")
    if not steps:
        raise RecordError("missing value", "steps", "the replay has no steps: the game was never played")
    for t, step in enumerate(steps):
        if not isinstance(step, list) or len(step) != seats:
            raise RecordError("wrong type", f"steps[{t}]", f"expected {seats} seat states per step")
        for i, state in enumerate(step):
            if not isinstance(state, dict):
                raise RecordError("wrong type", f"steps[{t}][{i}]", f"expected a seat state object, got {state!r}")
    why = edited(record)
    if why:
        raise RecordError("edited replay", "steps", why)
    _contradictions(given, last, statuses, rewards, field)
    named = _agents(record, seats)
    agents = named or [UNNAMED.format(i=i) for i in range(seats)]
    illegal = _illegal_moves(steps, seats)
    _forfeit_contradictions(steps, statuses, rewards, illegal, field)
    seat_outcomes = outcomes(rewards, statuses, illegal)
    ranks = ranks_from_scores([math.nan if r is None else r for r in rewards])
    info = record.get("info") or {}
    config = record.get("configuration") if isinstance(record.get("configuration"), dict) else {}
    given = record.get("id") or info.get("EpisodeId")
    if given is not None and (isinstance(given, bool) or not isinstance(given, (str, int))):  # toJSON: a UUID text
        raise RecordError("wrong type", "id" if record.get("id") else "info.EpisodeId",
                          f"expected the episode's id (text or a whole number), got {given!r}"[:300])
    match = {"runner": NAME, "game": game, "n_players": seats, "given_id": None if given is None else str(given),
             "attrs": json.dumps({k: v for k, v in {
                 "version": record.get("version"), "module_version": record.get("module_version"),
                 "open_spiel_game": config.get("openSpielGameString"), "steps": len(steps),
                 "self_play": len(set(agents)) < seats or None,
                 "unnamed_agents": named is None or None}.items() if v is not None}),
             "unnamed": named is None}  # popped by `load`'s match id, which says so once per file
    scripted = built_in(game)
    results = [{"player": f"seat {i}", "agent": agents[i], "score": rewards[i],
                "group": "background" if agents[i] in scripted else "focal",
                "rank": None if math.isnan(ranks[i]) else ranks[i], "outcome": seat_outcomes[i],
                "attrs": json.dumps({"status": statuses[i]} | ({"illegal_move": True} if i in illegal else {}))}
               for i in range(seats)]
    return {"matches": [match], "results": results, "events": _events(steps, seats, illegal)}


def content_key(record: object) -> str:
    """The name of a replay that carries no id: a digest of its content (its JSON with sorted keys), so that the
    same replay under two file names, or written out again, is one match (the second copy set aside as a
    duplicate instead of stored twice)."""
    return hashlib.sha256(canonical_json(record).encode()).hexdigest()[:20]


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one Kaggle replay file (a JSON object, or a list of them); a bad replay is quarantined with its
    index and field, an unreadable file as a whole."""
    out = ResultBuilder(path, content_hash, NAME)
    try:
        doc = read_json(path)
        if isinstance(doc, dict) and not any(k in doc for k in ("steps", *FINAL)):
            raise NotThisRunner("the object has none of a replay's keys (steps, rewards, statuses)",
                                runner=NAME, field="steps")
    except RecordError as exc:
        return out.reject_file(exc)
    records = doc if isinstance(doc, list) else [doc]

    def match_id(match: dict, label: str) -> str:
        given = match.pop("given_id")
        if match.pop("unnamed"):
            out.note(UNNAMED_NOTE)
        return f"kaggle:{given}" if given else f"kaggle:{content_key(records[int(label)])}"

    out.accept_records(records, lambda record: parse_record(record, options), match_id)
    return out.build()


# the format numbers each player by its seat (turn order): `referee.prepare.covariates.seats`
RUNNER = Runner(NAME, sniff, load, {"replay (required)": list(KEYS), "replay (optional)": list(OPTIONAL),
                                    "agents": ["info.TeamNames", "info.Agents[].Name"]},
                seats=True, excluded_when=EXCLUDED_WHEN)
