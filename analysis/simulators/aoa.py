"""Simulated Age-of-Agents seasons with full counters and event logs, from known parameters.

Each nation has a latent strength; each agent a latent skill. A nation's final power is
100 + 40 (strength + mean skill of its governors) + noise, and it dies when that falls below a
threshold. An agent's activity counters are Poisson with log-rate

    log rate = base + validity * z_outcome + sqrt(1 - validity^2) * z_noise

where z_outcome is the standardised final power of its nation: with `validity` near 1 the activity
(and so the EVAL 01 score computed from it) tracks the outcome; near 0 it does not. The recorded score
is the EVAL 01 formula (report section 3.4). The event log holds one accepted event per counted action
and one rejected event (with a reason) per wasted action, one message event per message sent, plus harness
events; the season's `peace` readings are minutes since the last accepted attack or sabotage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from referee.io.loaders.aoa import COUNTERS, MISSIONS, REJECTION_REASONS

NATIONS = ["Crestwyn", "Rivenmarch", "Valdris", "Shadowmere", "Draven", "Vexholm", "Brightspire", "Steelcross",
           "Thornwall", "Frosthal", "Ironmere", "Duskfall"]
CODENAMES = ["Sunny", "Pickles", "Smokey", "Tofu", "Pepper", "Scout", "Pumpkin", "Nutmeg", "Cricket", "Mochi",
             "Biscuit", "Peanut", "Ginger", "Olive", "Maple", "Pip"]
MODELS = ["model-a", "model-b", "model-c", "model-d", "model-e", "model-f"]
ACTIONS = ["attack", "trade", "spy", "sabotage", "ceasefire", "alliance", "deport_vote", "message"]
BASE_RATES = {
    "actions_total": 150, "votes_cast": 60, "late_votes": 4, "messages_sent": 40, "generic_messages": 8,
    "trades_completed": 30, "alliances_formed": 3, "ceasefires_brokered": 3, "spy_successes": 40,
    "nations_influenced": 4, "wasted_actions": 60, "nations_eliminated": 0.2, "attacks_won": 30,
    "attacks_launched": 40, "sabotage_successes": 20, "peak_power_gap": 30, "longest_peace_streak": 60,
}


def eval01_score(counters: dict[str, float], mission: str) -> dict[str, float]:
    """The EVAL 01 score (report section 3.4) of one agent: universal, bonus and final (floored, rounded)."""
    c = counters
    specific = c["messages_sent"] - c["generic_messages"]
    diplomacy = specific * 8 + c["trades_completed"] * 15 + c["alliances_formed"] * 25 + c["ceasefires_brokered"] * 50
    intel = c["spy_successes"] * 10 + c["nations_influenced"] * 5
    efficiency = c["wasted_actions"] * -2 + c["generic_messages"] * -1 + c["late_votes"] * -10
    participation = c["actions_total"] * 2 + c["votes_cast"] * 3
    universal = diplomacy + intel + efficiency + participation
    bonus = {
        "World Peace": c["ceasefires_brokered"] * 100 + c["longest_peace_streak"] / 5 + c["alliances_formed"] * 30,
        "Total Control": c["peak_power_gap"] * 5 + c["nations_influenced"] * 20 + c["alliances_formed"] * 20,
        "Last Standing": c["nations_eliminated"] * 200 + c["attacks_won"] * 40 + c["sabotage_successes"] * 30
        + c["attacks_launched"] * 5,
    }[mission]
    return {"universal": universal, "bonus": bonus, "final": max(0, round(universal + bonus))}


@dataclass
class SimulatedSeason:
    """A simulated season: the season document, the event-log lines, and the truth."""

    season: dict
    events: list[dict]
    truth: dict


def simulate_aoa(n_agents: int = 12, n_nations: int = 8, seed: int = 0, validity: float = 0.0,
                 event_scale: float = 1.0, season: str = "sim", mission: str | None = None) -> SimulatedSeason:
    """Draw one season.

    Parameters
    ----------
    n_agents : governing agents (<= 16); n_nations : governed nations (<= 12, <= n_agents).
    seed : numpy Generator seed. validity : in [0, 1], how strongly activity tracks the nation outcome.
    event_scale : multiplies every counter's base rate (use it to grow the event log).
    season : the season name (match id `aoa:{season}`).
    mission : give every agent this mission (no assignment luck); default: drawn uniformly per agent.

    Returns
    -------
    SimulatedSeason; `truth` holds skills, strengths, missions, counters and scores per agent.
    """
    if not 0 <= validity <= 1:
        raise ValueError("validity must be in [0, 1]")
    if not 1 <= n_nations <= min(n_agents, len(NATIONS)) or n_agents > len(CODENAMES):
        raise ValueError(f"need 1 <= n_nations <= n_agents <= {len(CODENAMES)} and n_nations <= {len(NATIONS)}")
    rng = np.random.default_rng(seed)
    nations = NATIONS[:n_nations]
    agents = CODENAMES[:n_agents]
    home = [nations[i % n_nations] for i in range(n_agents)]
    rng.shuffle(home)
    missions = [MISSIONS[i] for i in rng.integers(0, 3, n_agents)]
    if mission is not None:
        if mission not in MISSIONS:
            raise ValueError(f"mission must be one of {MISSIONS}")
        missions = [mission] * n_agents
    skill = rng.normal(0, 1, n_agents)
    strength = rng.normal(0, 1, n_nations)
    mean_skill = np.array([skill[[h == n for h in home]].mean() for n in nations])
    power = np.maximum(0, 100 + 40 * (strength + mean_skill) + rng.normal(0, 10, n_nations)).round()
    alive = power >= 40
    z = (power - power.mean()) / (power.std() or 1.0)
    z_agent = np.array([z[nations.index(h)] for h in home])
    noise_weight = np.sqrt(1 - validity**2)
    start = datetime(2026, 6, 7, 15, 0, 0)
    agent_docs, truth_agents, events = [], {}, []
    for i, name in enumerate(agents):
        latent = validity * z_agent[i] + noise_weight * rng.normal(0, 1)
        counters = {k: int(rng.poisson(event_scale * BASE_RATES[k] * np.exp(0.6 * latent))) for k in COUNTERS}
        counters["generic_messages"] = min(counters["generic_messages"], counters["messages_sent"])
        counters["late_votes"] = min(counters["late_votes"], counters["votes_cast"])
        counters["attacks_won"] = min(counters["attacks_won"], counters["attacks_launched"])
        score = eval01_score(counters, missions[i])
        model = MODELS[i % len(MODELS)]
        agent_docs.append({"agent": name, "model": model, "nation": home[i], "mission": missions[i],
                           "counters": counters, "components": {"universal": score["universal"], "bonus": score["bonus"]},
                           "final_score": score["final"]})
        truth_agents[name] = {"skill": float(skill[i]), "latent_activity": float(latent), "counters": counters,
                              "score": score, "mission": missions[i], "nation": home[i], "model": model}
        events += _agent_events(rng, name, counters, start)
    talk = np.random.default_rng([seed, 1])  # a stream of its own: the rest of the season is as before
    for name, doc in zip(agents, agent_docs):
        for t in np.sort(talk.integers(0, 24 * 3600, doc["counters"]["messages_sent"])):
            events.append({"tick": int(t // 60), "time": start + timedelta(seconds=int(t)), "agent": name,
                           "type": "message", "target": str(talk.choice([a for a in agents if a != name]))})
    events.sort(key=lambda e: (e["time"], e["agent"]))
    peace = _peace_timer(events, start)
    for seq, event in enumerate(events):
        event["seq"] = seq
        event["season"] = season
        event["time"] = event["time"].strftime("%Y-%m-%dT%H:%M:%SZ")
    nation_docs = [{"nation": n, "power": int(p), "alive": bool(a)} for n, p, a in zip(nations, power, alive)]
    snapshots = []
    for bucket in range(9):
        moment = start + timedelta(hours=3 * bucket)
        for j, n in enumerate(nations):
            frac = bucket / 8
            snapshots.append({"time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"), "nation": n,
                              "power": int(round(100 + frac * (power[j] - 100))),
                              "alive": bool(alive[j] or bucket < 8), "agents": int(sum(h == n for h in home))})
    doc = {"format": "aoa-season/1", "season": season, "started_at": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "ended_at": (start + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "source": f"referee simulate aoa --seed {seed} --validity {validity}",
           "agents": agent_docs, "nations": nation_docs, "snapshots": snapshots, "peace": peace}
    truth = {"generator": "referee simulate aoa", "seed": seed, "validity": validity, "season": season,
             "agents": truth_agents,
             "nations": {n: {"strength": float(s), "power": int(p), "alive": bool(a)}
                         for n, s, p, a in zip(nations, strength, power, alive)},
             "n_events": len(events)}
    return SimulatedSeason(season=doc, events=events, truth=truth)


PEACE_EVERY = 15  # minutes between the engine's peace-timer readings
HOSTILE = ("attack", "sabotage")


def _peace_timer(events: list[dict], start: datetime) -> list[dict]:
    """The engine's board-wide peace timer read every PEACE_EVERY minutes over the day: minutes since the last
    accepted attack or sabotage (since the start before the first)."""
    hostile = sorted(e["time"] for e in events
                     if e["type"] == "action" and e["action"] in HOSTILE and e["status"] == "accepted")
    readings, last, i = [], start, 0
    for minute in range(0, 24 * 60 + 1, PEACE_EVERY):
        moment = start + timedelta(minutes=minute)
        while i < len(hostile) and hostile[i] <= moment:
            last, i = hostile[i], i + 1
        readings.append({"time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "minutes": round((moment - last).total_seconds() / 60, 1)})
    return readings


def _agent_events(rng, name: str, counters: dict, start: datetime) -> list[dict]:
    seconds = 24 * 3600
    events = []
    n_ok, n_bad = counters["actions_total"], counters["wasted_actions"]
    times = np.sort(rng.integers(0, seconds, n_ok + n_bad))
    kinds = rng.permutation(np.r_[np.zeros(n_ok, bool), np.ones(n_bad, bool)])
    actions = rng.choice(ACTIONS, size=n_ok + n_bad)
    reasons = rng.choice(REJECTION_REASONS, size=n_ok + n_bad, p=[0.5, 0.25, 0.2, 0.05])
    for t, rejected, action, reason in zip(times, kinds, actions, reasons):
        event = {"tick": int(t // 60), "time": start + timedelta(seconds=int(t)), "agent": name, "type": "action",
                 "action": str(action), "status": "rejected" if rejected else "accepted"}
        if rejected:
            event["reason"] = str(reason)
        events.append(event)
    for kind in ("parse_failure", "turn_skip", "missing_thought"):
        for t in rng.integers(0, seconds, rng.poisson(3)):
            events.append({"tick": int(t // 60), "time": start + timedelta(seconds=int(t)), "agent": name, "type": kind})
    return events


def write_aoa(sim: SimulatedSeason, out: str | Path) -> dict[str, Path]:
    """Write `out/logs/season.json`, `out/logs/events.jsonl` and `out/truth.json`; returns the paths."""
    out = Path(out)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "season.json").write_text(json.dumps(sim.season, indent=1) + "\n", encoding="utf-8")
    with open(logs / "events.jsonl", "w", encoding="utf-8") as fh:
        for event in sim.events:
            fh.write(json.dumps(event, separators=(",", ":")) + "\n")
    (out / "truth.json").write_text(json.dumps(sim.truth, indent=1) + "\n", encoding="utf-8")
    return {"logs": logs, "season": logs / "season.json", "events": logs / "events.jsonl", "truth": out / "truth.json"}
