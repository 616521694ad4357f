"""Concordia 2.x structured simulation logs for tests, written as gdm-concordia 2.4's `SimulationLog.to_json()`
writes them (concordia/utils/structured_logging.py): entries converted from the engine's raw log by
`from_raw_log` (an entity's entry per action, the game master's per step), every string of 50 characters or more
stored once in `content_store` under the first 16 hex digits of its sha256 and replaced by {"_ref": id}.
gdm-concordia 2.4 needs Python >= 3.12 and does not install here, so these logs are written to its format
rather than played (tests/test_concordia_log.py).

`python -m tests.concordia_log_fixture OUT.json` writes the bundled sample (data/sample/concordia_log/).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

MIN_CHUNK = 50  # Concordia's _DEFAULT_MIN_CHUNK_LENGTH
PAYOFF = {("cooperate", "cooperate"): 3.0, ("cooperate", "defect"): 0.0, ("defect", "cooperate"): 5.0,
          ("defect", "defect"): 1.0}


class Log:
    """Entries and a content store, deduplicated as Concordia does."""

    def __init__(self):
        self.store: dict[str, str] = {}
        self.entries: list[dict] = []

    def dedup(self, value):
        if isinstance(value, str):
            if len(value) >= MIN_CHUNK:
                key = hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
                self.store.setdefault(key, value)
                return {"_ref": key}
            return value
        if isinstance(value, list):
            return [self.dedup(v) for v in value]
        if isinstance(value, dict):
            return {k: self.dedup(v) for k, v in value.items()}
        return value

    def add(self, step, name, component, entry_type, summary, raw):
        self.entries.append({"step": step, "timestamp": f"2026-11-30T10:{step:02d}:00", "entity_name": name,
                             "component_name": component, "entry_type": entry_type, "summary": summary,
                             "deduplicated_data": self.dedup(raw)})

    def to_dict(self):
        return {"content_store": dict(self.store), "entries": self.entries}


def simulate(players: list[str], rounds: int, seed: int, master: str = "dilemma rules",
             scores: bool = True) -> tuple[dict, dict[str, float]]:
    """A repeated n-player prisoner's dilemma logged as Concordia would; returns (log dict, final scores)."""
    rng = random.Random(seed)
    lean = {p: rng.random() for p in players}
    total = {p: 0.0 for p in players}
    log = Log()
    for step in range(1, rounds + 1):
        choice = {p: "cooperate" if rng.random() < lean[p] else "defect" for p in players}
        for p in players:
            prompt = [f"{p} is in a village where everyone must choose to cooperate or defect each day.",
                      f"Day {step}. What does {p} do? Answer with one of: cooperate, defect."]
            log.add(step, p, "entity_action", "entity", f"Step {step} {master}",
                    {"key": f"Entity [{p}]", "value": {"__act__": {"Summary": f"Action: {choice[p]}",
                                                                    "Value": f"{p} chooses to {choice[p]}",
                                                                    "Prompt": prompt}}})
        for p in players:
            others = [q for q in players if q != p]
            total[p] += sum(PAYOFF[(choice[p], choice[q])] for q in others) / len(others)
        event = "; ".join(f"{p} chose to {choice[p]}" for p in players)
        value = {"resolve": {"__act__": {"Key": "Event", "Value": event,
                                         "Prompt": [f"What happened on day {step} given every choice made?"]}}}
        if scores:
            value["resolve"]["payoff"] = {"Joint Action": dict(choice), "Player Scores": dict(total),
                                          "Action Complete": True, "Key": "payoff", "Value": "free"}
        log.add(step, master, "game_master", "step", f"Step {step} {master}",
                {"key": f"{master} --- {event}", "value": value})
    return log.to_dict(), total


if __name__ == "__main__":
    doc, _ = simulate(["Alice", "Bob", "Cat", "Dan"], rounds=4, seed=3)
    Path(sys.argv[1]).parent.mkdir(parents=True, exist_ok=True)
    Path(sys.argv[1]).write_text(json.dumps(doc, indent=2))
