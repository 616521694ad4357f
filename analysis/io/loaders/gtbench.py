"""GTBench-style match files: one JSON line per match of a game-theoretic benchmark (GTBench and the harnesses
modelled on it), naming the agents (reasoning methods), the models behind them, the winner and the scores:

    {"match_id": "m1", "game": "tictactoe", "agents": ["cot", "prompt"], "models": ["gpt-4", "llama-3"],
     "winner": 0, "scores": [1, 0], "status": "completed", "forfeit": null}

Fields: `agents` (two or more seats) and `game` are required; `models` (one per seat), `winner` (a seat index, an
agent name, or null / "draw" / -1 when nobody wins), `scores` (a list per seat or an object by agent name),
`status` (`completed`, `forfeit` or `aborted`; default completed), `forfeit` (the seat index or agent name that
moved illegally or timed out), `match_id`, `seed`, `started_at` and `notes` are optional.

Canonical: one match per line (match_id, else file and line; game; repetition = seed); one result per seat
(player = 'seat {i}'; agent = 'MODEL/AGENT' when models are given, else the agent name; score = the given score,
else 1 for the winner, 0.5 each when nobody wins, 0 otherwise; rank from the scores). Outcome: `aborted` for
every seat of an aborted match (no scores kept), `forfeit` for the forfeiting seat and `win` for the others of
a forfeited match, else `win` for the winner and `loss` for the rest, `tie` for everyone when nobody wins.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from referee.io.loaders.runner import Runner
from referee.io.loaders.errors import checked_keys
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    RecordError,
    ResultBuilder,
    file_key,
    given_id,
    parse_time,
    ranks_from_scores,
    score_value,
)
from referee.io.loaders.detect import share
from referee.io.loaders.files import json_records, record_fault

NAME = "gtbench"
REQUIRED = ("agents", "game")
OPTIONAL = ("match_id", "models", "winner", "scores", "status", "forfeit", "seed", "started_at", "notes")
STATUSES = ("completed", "forfeit", "aborted")
NOBODY = (None, "draw", "tie", -1)


RUN_KEYS = ("game_config", "agents_config", "models_config", "matches")  # what GTBench's runner writes per run
RUN_OPTIONAL = ("win_rate", "token_size")
MATCH_KEYS = ("winner", "agents", "steps", "status", "agents_at_fault", "winner_score", "loser_score", "token_size")
NORMAL = "Normal"  # GTBench's status of a match played to its end; any other is re-run by GTBench and left out


def is_run(record: object) -> bool:
    """Whether a record is GTBench's own run object (game_config, agents_config, models_config, matches)."""
    return isinstance(record, dict) and all(k in record for k in RUN_KEYS)


def sniff(path: Path, head: str, sample: list) -> float:
    """The share of sampled records that are GTBench run objects, or (JSON lines) referee-shaped match lines
    carrying `game`, a list of `agents` and a `winner` or `scores`."""
    if path.suffix.lower() not in (".jsonl", ".json"):
        return 0.0
    runs = share(sample, is_run)
    if runs or path.suffix.lower() != ".jsonl":
        return runs
    return share(sample, lambda r: "game" in r and isinstance(r.get("agents"), list)
                 and ("winner" in r or "scores" in r) and "participants" not in r and "format" not in r)


def _seats(run: dict) -> list[dict]:
    """One seat per (agent config, model config) pair, in order: GTBench's participant key `{agent}_{nick}`
    (what its `winner` and `win_rate` name), the agent (reasoning method) and the model behind it."""
    agents, models = run["agents_config"], run["models_config"]
    if not isinstance(agents, list) or not isinstance(models, list) or len(agents) != len(models) or len(agents) < 2:
        raise RecordError("wrong type", "agents_config", "expected one agent config per model config, two or more")
    seats = []
    for i, (agent, model) in enumerate(zip(agents, models)):
        name = agent.get("agent_name") if isinstance(agent, dict) else None
        nick = model.get("nick_name") if isinstance(model, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise RecordError("missing field", f"agents_config[{i}].agent_name", "a seat's agent needs a name")
        if not isinstance(nick, str) or not nick.strip():
            raise RecordError("missing field", f"models_config[{i}].nick_name", "a seat's model needs its nick_name")
        path = model.get("llm_model_path")
        seats.append({"key": f"{name.strip()}_{nick.strip()}", "agent": name.strip(), "nick": nick.strip(),
                      "model": path if isinstance(path, str) else None})
    keys = [s["key"] for s in seats]
    if len(set(keys)) < len(keys):
        raise RecordError("duplicate value", "models_config", f"two seats share the participant {keys}: GTBench "
                          "names each seat by agent and model nick_name")
    return seats


def _run_score(value: object, field: str) -> float | None:
    """A match's winner_score or loser_score: None where absent, else a finite number (`score_value`)."""
    return None if value is None else score_value(value, field, allow_neg_inf=False)


def parse_run_match(run: dict, k: int, options: LoadOptions) -> dict[str, list[dict]]:
    """Canonical rows for match `k` of a GTBench run object (the runner's own output); RecordError naming the
    field. Outcome: `win` for the seat `winner` names and `loss` for the others (score winner_score and
    loser_score), `tie` for every seat when `winner` is empty; a match whose status is not Normal is `aborted`
    for every seat (GTBench re-runs such matches and leaves them out of its win rate), its agents at fault kept."""
    game_config = run["game_config"]
    game = game_config.get("game_name") if isinstance(game_config, dict) else None
    if not isinstance(game, str) or not game.strip():
        raise RecordError("missing field", "game_config.game_name", "the run names no game")
    seats = _seats(run)
    match = run["matches"][k]
    where = f"matches[{k}]"
    if not isinstance(match, dict):
        raise RecordError("wrong type", where, f"expected a match object, got {type(match).__name__}")
    extra = sorted(set(match) - set(MATCH_KEYS))
    if extra:
        raise RecordError("unexpected field", f"{where}.{extra[0]}",
                          f"field '{extra[0]}' is not part of a GTBench match")
    status = match.get("status", NORMAL)
    if not isinstance(status, str):
        raise RecordError("wrong type", f"{where}.status", f"expected a status, got {status!r}")
    keys = [s["key"] for s in seats]
    winner = match.get("winner", "")
    if winner is None:
        winner = ""
    if not isinstance(winner, str) or (winner and winner not in keys):
        raise RecordError("wrong value", f"{where}.winner", f"expected one of {keys} or an empty winner (a draw), "
                          f"got {winner!r}")
    high = _run_score(match.get("winner_score"), f"{where}.winner_score")
    low = _run_score(match.get("loser_score"), f"{where}.loser_score")
    if winner and high is not None and low is not None and high < low:
        raise RecordError("contradiction", f"{where}.winner_score", f"the winner's score {high} is below the "
                          f"loser's {low}")
    fault = match.get("agents_at_fault") or []
    if not isinstance(fault, list):
        raise RecordError("wrong type", f"{where}.agents_at_fault", f"expected a list of agents, got {fault!r}")
    names = {s["agent"] for s in seats} | set(keys)  # GameMatch appends the faulting agent's agent_name
    strangers = [a for a in fault if a not in names]
    if strangers:
        raise RecordError("wrong value", f"{where}.agents_at_fault", f"{strangers[0]!r} is none of the match's "
                          f"agents ({', '.join(sorted(map(str, names)))})"[:300])
    seat_range = range(len(seats))
    outcome = seat_outcomes(len(seats), keys.index(winner) if winner else None, aborted=status != NORMAL)
    if status != NORMAL:
        scores = [None] * len(seats)
    elif not winner:  # a draw: the scores GTBench wrote where they agree, else half a win each
        scores = [high if high is not None and high == low else 0.5] * len(seats)
    elif high is not None and low is not None:
        scores = [high if o == "win" else low for o in outcome]
    else:
        scores = [1.0 if o == "win" else 0.0 for o in outcome]
    ranks = ranks_from_scores([math.nan if v is None else v for v in scores])
    steps = match.get("steps") or []
    if not isinstance(steps, list):
        raise RecordError("wrong type", f"{where}.steps", "expected a list of steps")
    events = []
    for t, step in enumerate(steps):
        if not isinstance(step, dict):
            raise RecordError("wrong type", f"{where}.steps[{t}]", "expected a step object")
        move = step.get("move")
        actor = f"{step.get('agent')}_{step.get('model_name')}"
        events.append({"seq": t, "round": t, "actor": f"seat {keys.index(actor)}" if actor in keys else actor,
                       "type": "move", "text": None if move is None else str(move)[:2000]})
    tokens = match.get("token_size")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0):
        raise RecordError("wrong value", f"{where}.token_size", f"a count of tokens (GameMatch sums its agents' "
                          f"token sizes: a whole number, 0 or more), got {tokens!r}"[:300])
    attrs = {"status": status, "agents_at_fault": fault or None, "gtbench_run": True, "token_size": tokens}
    row = {"runner": NAME, "game": game.strip(), "n_players": len(seats), "repetition": None,
           "attrs": json.dumps({a: v for a, v in attrs.items() if v is not None})}
    results = [{"player": f"seat {i}", "agent": keys[i], "score": scores[i],
                "rank": None if math.isnan(ranks[i]) else ranks[i], "outcome": outcome[i],
                "attrs": json.dumps({"agent": seats[i]["agent"], "nick_name": seats[i]["nick"]}
                                    | ({"model": seats[i]["model"]} if seats[i]["model"] else {}))}
               for i in seat_range]
    return {"matches": [row], "results": results, "events": events}


def _records(path: Path):
    """(label, value) per match: each line (or the one pretty-printed document) of the file; a GTBench run
    object gives one record per element of its `matches` (label 'LINE.matches[k]')."""
    for line in json_records(path, within=("matches",)):  # a fault inside one match is that match's
        run = _run_value(line)
        if run is not None:
            extra = sorted(set(run) - set(RUN_KEYS) - set(RUN_OPTIONAL))
            for k in range(len(run["matches"])):
                yield f"{line.number}.matches[{k}]", (run, k, extra)
        else:
            yield line.number, line


def _run_value(line) -> dict | None:
    """The GTBench run object a line holds, or None. A fault inside one of its matches (a number past 64 bits,
    nesting too deep) is that match's (`parse` checks each match on its own), so the run is read past it
    (`Line.value`); a fault in the run's own keys, or a line that does not parse at all, is the line's."""
    value = line.value
    if not (isinstance(value, dict) and is_run(value) and isinstance(value["matches"], list)):
        return None
    if line.error is not None and record_fault({k: v for k, v in value.items() if k != "matches"}) is not None:
        return None
    return value


def seat_outcomes(n: int, winner: int | None, aborted: bool = False, forfeit: int | None = None) -> list[str]:
    """Each of `n` seats' outcome: `aborted` for every seat of an aborted match, `forfeit` for the forfeiting
    seat and `win` for the others, else `win` for the winner and `loss` for the rest, `tie` for all when nobody
    wins (both GTBench's run objects and referee's match lines)."""
    if aborted:
        return ["aborted"] * n
    if forfeit is not None:
        return ["forfeit" if i == forfeit else "win" for i in range(n)]
    if winner is None:
        return ["tie"] * n
    return ["win" if i == winner else "loss" for i in range(n)]


def _seat(value: object, agents: list[str], field: str) -> int | None:
    """A seat given as an index or an agent name (None when nobody)."""
    if value in NOBODY:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(agents):
        return value
    if isinstance(value, str) and value in agents:
        if agents.count(value) > 1:
            raise RecordError("ambiguous seat", field, f"agent {value!r} sits in more than one seat: give the index")
        return agents.index(value)
    raise RecordError("wrong value", field, f"expected a seat index or one of the agents {agents}, got {value!r}")


def _scores(value: object, agents: list[str]) -> list[float | None] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(agents))
        if unknown:
            raise RecordError("wrong value", f"scores.{unknown[0]}", f"{unknown[0]!r} is not one of the agents")
        value = [value.get(a) for a in agents]
    if not isinstance(value, list) or len(value) != len(agents):
        raise RecordError("wrong type", "scores", f"expected {len(agents)} scores (one per seat), got {value!r}")
    out = []
    for i, v in enumerate(value):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            raise RecordError("wrong type", f"scores[{i}]", f"expected a finite number, got {v!r}")
        out.append(None if v is None else float(v))
    return out


def parse_record(record: object, options: LoadOptions) -> dict[str, list[dict]]:
    """Canonical rows for one match line (match_id filled by the caller); raises RecordError naming the field."""
    checked_keys(record, "a GTBench-style match", REQUIRED, set(REQUIRED) | set(OPTIONAL))
    game, agents = record["game"], record["agents"]
    if not isinstance(game, str) or not game:
        raise RecordError("wrong type", "game", f"expected the game's name, got {game!r}")
    if not isinstance(agents, list) or len(agents) < 2 or not all(isinstance(a, str) and a.strip() for a in agents):
        raise RecordError("wrong type", "agents", "expected two or more agent names, one per seat")
    models = record.get("models")
    if models is not None and (not isinstance(models, list) or len(models) != len(agents)
                               or not all(isinstance(m, str) and m.strip() for m in models)):
        raise RecordError("wrong type", "models", f"expected {len(agents)} model names (one per seat)")
    status = record.get("status") or "completed"
    if status not in STATUSES:
        raise RecordError("wrong value", "status", f"expected one of {STATUSES}, got {status!r}")
    names = [a.strip() for a in agents]
    winner = _seat(record.get("winner"), names, "winner")
    forfeit = _seat(record.get("forfeit"), names, "forfeit")
    if status == "forfeit" and forfeit is None:
        raise RecordError("missing field", "forfeit", "a forfeited match names the seat that forfeited")
    scores = _scores(record.get("scores"), names)
    seats = range(len(names))
    outcome = seat_outcomes(len(names), winner, aborted=status == "aborted", forfeit=forfeit)
    if status == "aborted":
        scores = [None] * len(names)
    if winner is not None and status == "completed" and scores is not None and None not in scores:
        top = max(scores)
        if scores[winner] != top or scores.count(top) > 1:
            raise RecordError("contradiction", "winner", f"seat {winner} is named the winner but the scores are "
                              f"{scores}: the winner must have the highest score alone")
    if scores is None:
        scores = [{"win": 1.0, "tie": 0.5}.get(o, 0.0) for o in outcome]
    ranks = ranks_from_scores([math.nan if s is None else s for s in scores])
    who = [f"{models[i].strip()}/{names[i]}" if models else names[i] for i in seats]
    twice = sorted({w for w in who if who.count(w) > 1})
    if twice:
        raise RecordError("self-play", "agents", f"{twice[0]!r} sits in more than one seat: a match compares "
                          "different agents")
    seed = record.get("seed")
    match = {"runner": NAME, "game": game, "n_players": len(names),
             "repetition": None if seed is None else str(seed), "given_id": given_id(record.get("match_id"), "match_id"),
             "started_at": parse_time(record.get("started_at"), "started_at"),
             "attrs": json.dumps({k: record[k] for k in ("status", "notes") if record.get(k)})}
    results = [{"player": f"seat {i}", "agent": who[i], "score": scores[i],
                "rank": None if math.isnan(ranks[i]) else ranks[i], "outcome": outcome[i],
                "attrs": json.dumps({"agent": names[i]} | ({"model": models[i].strip()} if models else {}))}
               for i in seats]
    return {"matches": [match], "results": results}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read GTBench's own output (a run object per line, or one pretty-printed run object: every match of its
    `matches` a record) or a referee-shaped match file (JSON lines); a bad record is quarantined by its line
    (and match) and field."""
    out = ResultBuilder(path, content_hash, NAME)
    if path.stat().st_size == 0:
        return out.reject_file(RecordError("empty file", None, "the file is empty"))

    def parse(value):
        if isinstance(value, tuple):
            run, k, extra = value
            if extra:
                raise RecordError("unexpected field", extra[0], f"field '{extra[0]}' is not part of a GTBench run")
            fault = record_fault(run["matches"][k], f"matches[{k}]")  # this match's alone: the others read on
            if fault is not None:
                raise fault
            return parse_run_match(run, k, options)
        return parse_record(value.parsed(), options)

    def match_id(match: dict, label: str) -> str:
        given = match.pop("given_id", None)
        return f"gtbench:{given}" if given is not None else f"gtbench:{file_key(path, content_hash)}:{label}"

    out.accept_records(_records(path), parse, match_id)
    return out.build()


# the format numbers each player by its seat (turn order): `referee.prepare.covariates.seats`
RUNNER = Runner(NAME, sniff, load, {"match line (required)": list(REQUIRED), "match line (optional)": list(OPTIONAL)},
                seats=True)
