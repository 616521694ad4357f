"""Simulated results in the published formats of two frameworks that cannot run here, with known truth:

- `sotopia_episodes`: Sotopia's JSON-lines episode export (`experiment_model_name_pairs`, `raw_rewards` as
  (overall, {dimension: score}) per agent, `raw_messages`); each model's `goal` is 5 + 1.5 * skill + noise,
  clipped to 0..10, the other six SOTOPIA-EVAL dimensions drawn within their ranges, `overall_score` their mean.
- `meltingpot_results`: a Melting Pot results table (one row per episode of a population on a scenario, with
  `focal_per_capita_return`, `focal_player_returns`, `background_per_capita_return`, ...) written as CSV the
  way pandas writes the evaluation library's DataFrame; focal per-capita return = the scenario's base + its
  scale * the population's skill + noise; and a catalogue of the scenarios' tags.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

SOTOPIA_MODELS = ("gpt-4o", "claude-3.5-sonnet", "llama-3-70b", "mistral-7b", "gpt-3.5-turbo")
SOTOPIA_SKILL = dict(zip(SOTOPIA_MODELS, (1.2, 0.8, 0.0, -0.9, -0.4)))
RANGES = {"believability": (0, 10), "relationship": (-5, 5), "knowledge": (0, 10), "secret": (-10, 0),
          "social_rules": (-10, 0), "financial_and_material_benefits": (-5, 5), "goal": (0, 10)}


def sotopia_episodes(path: str | Path, episodes: int = 120, seed: int = 0) -> dict[str, float]:
    """Write `episodes` Sotopia episodes as JSON lines to `path`; returns each model's generating skill."""
    rng = np.random.default_rng(seed)
    lines = []
    for e in range(episodes):
        pair = rng.choice(SOTOPIA_MODELS, 2, replace=False)
        characters = [f"01H5TNE5P{rng.integers(10 ** 8):08d}", f"01H5TNE5Q{rng.integers(10 ** 8):08d}"]
        rewards = []
        for model in pair:
            dims = {d: float(np.round(rng.uniform(lo, hi), 1)) for d, (lo, hi) in RANGES.items()}
            dims["goal"] = float(np.clip(np.round(5 + 1.5 * SOTOPIA_SKILL[model] + rng.normal(0, 1.5)), 0, 10))
            rewards.append([round(sum(dims.values()) / 7, 4), {**dims, "overall_score": round(sum(dims.values()) / 7, 4)}])
        turns = [[["Environment", characters[0], "Here is the context of this interaction: ..."],
                  ["Environment", characters[1], "Here is the context of this interaction: ..."]]]
        turns += [[[characters[t % 2], "Environment", f"said: \"turn {t}\""]] for t in range(4)]
        lines.append({"episode_id": f"01H8EP{e:06d}", "environment_id": f"01H7VFHN{e % 12:04d}",
                      "agent_ids": characters, "experiment_tag": "referee_simulated",
                      "experiment_model_name_pairs": ["gpt-4", *pair.tolist()], "raw_messages": turns,
                      "raw_rewards": rewards, "codename": f"scenario_{e % 12}"})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(json.dumps(x) + "\n" for x in lines))
    return dict(SOTOPIA_SKILL)


MP_SCENARIOS = {  # scenario -> (base return, scale, tags)
    "clean_up_0": (40.0, 25.0, ["cooperation", "public goods"]),
    "clean_up_1": (55.0, 20.0, ["cooperation", "public goods", "free riding"]),
    "prisoners_dilemma_in_the_matrix__repeated_0": (20.0, 8.0, ["reciprocity"]),
    "prisoners_dilemma_in_the_matrix__repeated_1": (18.0, 10.0, ["reciprocity", "resisting exploitation"]),
    "territory__rooms_0": (90.0, 30.0, ["resisting exploitation", "coordination"]),
    "commons_harvest__open_0": (25.0, 15.0, ["cooperation", "coordination"]),
}
MP_POPULATIONS = {"acb": 0.9, "opre": 0.4, "ops": -0.2, "random": -1.2}


def meltingpot_results(folder: str | Path, episodes: int = 10, seed: int = 0) -> dict[str, float]:
    """Write `folder/results.csv` (6 scenarios x 4 populations x `episodes` rows) and `folder/catalogue.toml`
    (each scenario's substrate and tags); returns each population's generating skill."""
    rng = np.random.default_rng(seed)
    rows = []
    for scenario, (base, scale, _) in MP_SCENARIOS.items():
        substrate = scenario.rsplit("_", 1)[0]
        for population, skill in MP_POPULATIONS.items():
            for episode in range(episodes):
                focal = base + scale * skill + rng.normal(0, scale * 0.6, size=3)
                background = base + rng.normal(0, scale * 0.5, size=4) - 0.3 * scale * skill
                rows.append({"scenario": scenario, "substrate": substrate, "mapla": population,
                             "focal_player_names": repr([f"{population}_{k}" for k in range(3)]),
                             "focal_player_returns": np.array2string(np.round(focal, 3)),
                             "focal_per_capita_return": float(np.round(focal, 3).mean()),
                             "background_player_names": repr([f"bot_{k}" for k in range(4)]),
                             "background_player_returns": np.array2string(np.round(background, 3)),
                             "background_per_capita_return": float(np.round(background, 3).mean())})
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
    catalogue = ["# Melting Pot scenarios of the simulated results: substrate and the demands each tests (tags)"]
    for scenario, (_, _, tags) in MP_SCENARIOS.items():
        catalogue += ["", f"[scenarios.{scenario}]", f'game = "{scenario.rsplit("_", 1)[0]}"', f"tags = {json.dumps(tags)}"]
    (folder / "catalogue.toml").write_text("\n".join(catalogue) + "\n")
    return dict(MP_POPULATIONS)
