"""Sotopia episodes (CMU's social-intelligence benchmark): the published JSON-lines export, one episode per line
(`episode_id`, `environment_id`, `agent_ids`, `experiment_tag`, `experiment_model_name_pairs` = [environment
model, agent 1 model, agent 2 model], `raw_messages`, `raw_rewards`, `codename`, ...), or `EpisodeLog` JSON
(`pk`, `environment`, `agents`, `tag`, `models`, `messages`, `rewards`), one object or a list of them.
Format document: `data/formats/sotopia.md`.

Canonical: one match per episode (`sotopia:{episode id}`; game `sotopia`, scenario = the environment id,
repetition = the agent profile ids in order, joined by '+': the instance, see `COMPARISON_UNIT`); one
result per agent (player = its character id, agent = its model), score = its SOTOPIA-EVAL `goal` unless
`--score` names another dimension; the seven dimensions and `overall_score` are measures of kind `judge`
rated by the environment model; messages are events (sender, receiver, text; the environment's
observations as type `observation`). An unknown or missing dimension, an overall that is not the mean of the
seven (or whose two copies disagree), and a dimension outside its range (believability 0..10, relationship
-5..5, knowledge 0..10, secret -10..0, social_rules -10..0, financial_and_material_benefits -5..5, goal
0..10) sets the episode aside naming it.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pandas as pd

from referee.io.loaders.runner import Headline, Runner, Tables, headline_rows
from referee.io.loaders.base import (LoadOptions, LoadResult, RecordError, ResultBuilder, file_key, is_number,
                                     json_lines, ranks_from_scores, score_value)
from referee.io.loaders.detect import share
from referee.io.loaders.files import read_json

NAME = "sotopia"
COMPARISON_UNIT = ("the instance (environment and agent profiles, in order): every model's score against every "
                   "other model's that played it, in the same episode (its partner, when a different model) or "
                   "in another; episodes without profile ids, and the tournament logs, are compared within "
                   "the episode")
DIMENSIONS = {"believability": (0, 10), "relationship": (-5, 5), "knowledge": (0, 10), "secret": (-10, 0),
              "social_rules": (-10, 0), "financial_and_material_benefits": (-5, 5), "goal": (0, 10)}
OVERALL = "overall_score"  # the unweighted mean of the seven
MEAN_TOLERANCE = 0.006  # Sotopia writes the overall rounded (to 4 or to 2 decimals): a mean further off is wrong
OVERALL_RANGE = (sum(lo for lo, _ in DIMENSIONS.values()) / 7, sum(hi for _, hi in DIMENSIONS.values()) / 7)
DEFAULT_SCORE = "goal"
EXPORT_KEYS = ("episode_id", "environment_id", "agent_ids", "experiment_tag", "experiment_model_name_pairs",
               "raw_messages", "raw_rewards")
LOG_KEYS = ("pk", "environment", "agents", "tag", "models", "messages", "rewards")
ALIASES = {"episode": ("episode_id", "pk"), "environment": ("environment_id", "environment"),
           "agents": ("agent_ids", "agents"), "tag": ("experiment_tag", "tag"),
           "models": ("experiment_model_name_pairs", "models"), "messages": ("raw_messages", "messages"),
           "rewards": ("raw_rewards", "rewards")}


TOURNAMENT_KEYS = ("pk", "model_mapping", "rewards", "turns")  # the tournament examples' episode logs (werewolves)


def _fits(record: dict) -> bool:
    return ("experiment_model_name_pairs" in record and "raw_rewards" in record) or (
        "environment" in record and "models" in record and "rewards" in record and "agents" in record) or (
        all(k in record for k in TOURNAMENT_KEYS))


def _literal(value, field: str, kind: type):
    """A value the tournament logs write as a Python literal's text (`str(dict)`, `str(list)`), or as JSON."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise RecordError("wrong type", field, f"expected a {kind.__name__} literal, got {value[:120]!r}") from exc
    if not isinstance(value, kind):
        raise RecordError("wrong type", field, f"expected a {kind.__name__}, got {type(value).__name__}")
    return value


def parse_tournament(record: dict) -> dict[str, list[dict]]:
    """Canonical rows of one episode of Sotopia's tournament examples (the werewolves Elo tournament: `pk`,
    `tag`, `model_mapping` = {character: model}, `rewards` = one reward per character in model_mapping's order
    (each either JSON or a Python literal's text), `turns` = [{turn_number, agent_name, model_name, prompt,
    response}]): one result per character (agent = its model, score = its reward: +1 for the winning side, -1
    for the losing), game = the tag (the tournament), every turn's response an event."""
    mapping = _literal(record["model_mapping"], "model_mapping", dict)
    rewards = _literal(record["rewards"], "rewards", list)
    if not mapping or not all(isinstance(k, str) and k and isinstance(v, str) and v.strip()
                              for k, v in mapping.items()):
        raise RecordError("wrong value", "model_mapping", "expected {character: model}, each a non-empty name")
    if len(rewards) != len(mapping):
        raise RecordError("wrong value", "rewards", f"expected {len(mapping)} rewards (one per character of "
                          f"model_mapping), got {len(rewards)}")
    scores = [score_value(r, f"rewards[{i}]", allow_neg_inf=False) for i, r in enumerate(rewards)]
    ranks = ranks_from_scores(scores)
    top, tied = max(scores), len(set(scores)) == 1
    players = list(mapping)
    results = [{"player": name, "agent": mapping[name].strip(), "score": scores[i], "rank": ranks[i],
                "outcome": "tie" if tied else ("win" if scores[i] == top else "loss")}
               for i, name in enumerate(players)]
    turns = record["turns"]
    if not isinstance(turns, list):
        raise RecordError("wrong type", "turns", "expected a list of turns")
    events = []
    for k, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise RecordError("wrong type", f"turns[{k}]", "expected a turn object")
        number = turn.get("turn_number")
        round_ = int(number) if isinstance(number, (int, str)) and str(number).strip().isdigit() else None
        text = turn.get("response")
        events.append({"seq": k, "round": round_, "actor": turn.get("agent_name"), "type": "message",
                       "text": None if text is None else str(text)[:4000]})
    tag = record.get("tag")
    match = {"runner": NAME, "game": tag if isinstance(tag, str) and tag else "sotopia", "scenario": None,
             "n_players": len(players), "given_id": record.get("pk"),
             "attrs": json.dumps({"tag": tag, "log": "tournament"} if isinstance(tag, str) else {"log": "tournament"})}
    return {"matches": [match], "results": results, "events": events}


def sniff(path: Path, head: str, sample: list) -> float:
    """The share of sampled records that carry a Sotopia episode's models and rewards."""
    if path.suffix.lower() not in (".jsonl", ".json"):
        return 0.0
    return share(sample, _fits)


def _get(record: dict, name: str):
    for key in ALIASES[name]:
        if key in record:
            return record[key], key
    return None, ALIASES[name][0]


def _reward(entry, i: int, key: str) -> dict[str, float]:
    """{dimension: value} of one agent's reward: (overall, {dimension: value}) or a bare overall number."""
    where = f"{key}[{i}]"
    if isinstance(entry, (int, float)) and not isinstance(entry, bool):
        values = {OVERALL: entry}
    elif isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict):
        copy = entry[1].get(OVERALL)
        if is_number(entry[0], finite=True) and is_number(copy, finite=True) and abs(entry[0] - copy) > MEAN_TOLERANCE:
            raise RecordError("wrong value", f"{where}.{OVERALL}", f"the overall score is written twice and the copies "
                              f"disagree: {entry[0]!r} beside its dimensions, {copy!r} among them")
        values = {OVERALL: entry[0], **entry[1]}
    elif isinstance(entry, dict):
        values = dict(entry)
    else:
        raise RecordError("wrong type", where, f"expected (overall, {{dimension: score}}), got {entry!r}"[:200])
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        value = score_value(value, f"{where}.{name}", allow_neg_inf=False)
        lo, hi = DIMENSIONS.get(name, OVERALL_RANGE if name == OVERALL else (-math.inf, math.inf))
        if not lo - 1e-9 <= value <= hi + 1e-9:
            raise RecordError("wrong value", f"{where}.{name}", f"{name} {value} is outside its range {lo:g}..{hi:g}")
        out[name] = float(value)
    _check_dimensions(out, where, len(values) > 1)
    return out


def _check_dimensions(values: dict[str, float], where: str, rated: bool) -> None:
    """SOTOPIA-EVAL's own rules for one agent's reward: no dimension but its seven (and the overall), all seven
    where any is given (`rated`: the reward carries its dimensions, not a bare overall), and the overall their
    unweighted mean (to the rounding Sotopia writes it with); RecordError naming the dimension."""
    unknown = [k for k in values if k not in DIMENSIONS and k != OVERALL]
    if unknown:
        raise RecordError("unknown field", f"{where}.{unknown[0]}", f"'{unknown[0]}' is not one of SOTOPIA-EVAL's "
                          f"dimensions {list(DIMENSIONS)} (misspelt, or another evaluator's)")
    if not rated:
        return
    missing = [d for d in DIMENSIONS if d not in values]
    if missing:
        raise RecordError("missing field", f"{where}.{missing[0]}", f"SOTOPIA-EVAL rates seven dimensions; "
                          f"'{missing[0]}' is missing")
    mean = sum(values[d] for d in DIMENSIONS) / len(DIMENSIONS)
    if OVERALL in values and abs(values[OVERALL] - mean) > MEAN_TOLERANCE:
        raise RecordError("wrong value", f"{where}.{OVERALL}", f"overall_score {values[OVERALL]:g} is not the mean "
                          f"of the seven dimensions ({mean:.4f})")


def parse_episode(record, score_name: str) -> dict[str, list[dict]]:
    """Canonical rows of one episode (match id set by the caller); RecordError naming the field."""
    if not isinstance(record, dict):
        raise RecordError("wrong type", None, f"expected an episode object, got {type(record).__name__}")
    if all(k in record for k in TOURNAMENT_KEYS) and "models" not in record:
        return parse_tournament(record)
    agents, agents_key = _get(record, "agents")
    models, models_key = _get(record, "models")
    rewards, rewards_key = _get(record, "rewards")
    if not isinstance(models, list) or len(models) < 3 or not all(isinstance(m, str) and m.strip() for m in models):
        raise RecordError("missing field" if models is None else "wrong type", models_key,
                          "expected [environment model, agent 1 model, agent 2 model, ...]")
    n = len(models) - 1
    profiles = agents is not None
    if agents is None:
        agents = [f"agent{i + 1}" for i in range(n)]
    if not isinstance(agents, list) or len(agents) != n or not all(isinstance(a, str) and a for a in agents):
        raise RecordError("wrong type", agents_key, f"expected {n} agent ids, one per agent model")
    if len(set(agents)) != n:
        raise RecordError("wrong value", agents_key, f"an agent id appears twice: {agents}")
    if not isinstance(rewards, list) or len(rewards) != n:
        raise RecordError("missing field" if rewards is None else "wrong type", rewards_key,
                          f"expected {n} rewards, one per agent")
    values = [_reward(r, i, rewards_key) for i, r in enumerate(rewards)]
    if any(score_name not in v for v in values):
        raise RecordError("missing field", f"{rewards_key}[{next(i for i, v in enumerate(values) if score_name not in v)}]"
                          f".{score_name}", f"the score dimension '{score_name}' is missing (--score names another)")
    scores = [v[score_name] for v in values]
    ranks = ranks_from_scores(scores)
    environment, _ = _get(record, "environment")
    tag, _ = _get(record, "tag")
    rater = models[0].strip()
    results = [{"player": agents[i], "agent": models[i + 1].strip(), "score": scores[i], "rank": ranks[i]}
               for i in range(n)]
    measures = [{"player": agents[i], "name": name, "value": value, "kind": "judge", "rater": rater}
                for i in range(n) for name, value in values[i].items()]
    events = _events(_get(record, "messages")[0])
    attrs = {k: record[k] for k in ("codename",) if isinstance(record.get(k), str)}
    if not profiles:  # said in the match, not invented silently
        attrs["agent_ids"] = f"not in the log: the agents are named {', '.join(agents)} by their position"
    if isinstance(tag, str):
        attrs["tag"] = tag
    environment = environment if isinstance(environment, str) else None
    match = {"runner": NAME, "game": "sotopia", "scenario": environment,
             "repetition": "+".join(agents) if profiles and environment else None, "n_players": n,
             "given_id": _get(record, "episode")[0], "attrs": json.dumps(attrs)}
    return {"matches": [match], "results": results, "measures": measures, "events": events}


def _events(messages) -> list[dict]:
    """Events from raw_messages: turns, each a list of (sender, receiver, text)."""
    events: list[dict] = []
    if not isinstance(messages, list):
        return events
    for turn, entries in enumerate(messages):
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, list) and len(entry) == 3 and all(isinstance(x, str) for x in entry):
                sender, receiver, text = entry
                kind = "observation" if sender == "Environment" else "message"
                events.append({"seq": len(events), "round": turn, "stage": None if kind == "observation" else "message",
                               "actor": sender, "type": kind, "target": receiver, "text": text})
    return events


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read Sotopia episodes (JSON lines, or one EpisodeLog or a list of them in a .json file); a bad episode
    is set aside by its line or index and field."""
    out = ResultBuilder(path, content_hash, NAME)
    if path.stat().st_size == 0:
        return out.reject_file(RecordError("empty file", None, "the file is empty"))
    score_name = options.score or DEFAULT_SCORE
    if score_name not in DIMENSIONS and score_name != OVERALL:
        return out.reject_file(RecordError("wrong value", "--score", f"Sotopia scores are one of "
                                           f"{list(DIMENSIONS) + [OVERALL]}, got {score_name!r}"))

    def match_id(match: dict, label: str) -> str:
        given = match.pop("given_id", None)
        if isinstance(given, int) and not isinstance(given, bool):  # a numeric id names its episode as text does
            given = str(given)
        return f"sotopia:{given}" if isinstance(given, str) and given else f"sotopia:{file_key(path, content_hash)}:{label}"

    if path.suffix.lower() == ".jsonl":
        out.accept_records(((line.number, line) for line in json_lines(path)),
                           lambda line: parse_episode(line.parsed(), score_name), match_id)
        return out.build()
    try:
        doc = read_json(path)
    except RecordError as exc:
        return out.reject_file(exc)
    out.accept_records(doc if isinstance(doc, list) else [doc], lambda record: parse_episode(record, score_name),
                       match_id)
    return out.build()


def headline(tables: Tables) -> pd.DataFrame:
    """The mean of every SOTOPIA-EVAL dimension and of `overall_score` per model over its episodes, with its
    standard error (Sotopia's own aggregation; the runner's `Headline.compute`): HEADLINE_COLUMNS."""
    judged = tables.measures[tables.measures["kind"] == "judge"]
    scored = judged.merge(tables.results[["match_id", "player", "agent"]], on=["match_id", "player"])
    if scored.empty:
        return headline_rows(pd.DataFrame())
    means = scored.groupby(["agent", "name"])["value"].agg(value="mean", stderr="sem")
    means = means.reset_index().rename(columns={"name": "metric"})
    return headline_rows(means.assign(unit="all episodes", headline=means["metric"].isin(["goal", OVERALL])))


# ingest's --score chooses which SOTOPIA-EVAL dimension is the score (score_option)
RUNNER = Runner(
    NAME, sniff, load,
    {"episode (JSON-lines export)": list(EXPORT_KEYS), "EpisodeLog": list(LOG_KEYS),
     "dimensions (measures, kind judge)": list(DIMENSIONS) + [OVERALL]},
    score_option=True, separate_episodes=True, comparison_unit=COMPARISON_UNIT,
    headline=Headline(
        "goal and overall score",
        "Sotopia averages each model's dimension scores over its episodes, whatever the partner and the "
        "environment; referee compares goal scores on the same environment and agent profiles",
        {d: d for d in (OVERALL, "goal", *(d for d in DIMENSIONS if d != "goal"))}, compute=headline, measures=True,
        needs="SOTOPIA-EVAL's judged dimensions (measures of kind judge: an evaluated episode's rewards)"))
