"""A simulated clemcore run with known skills, written as `clem run` and `clem score` write it.

    <out>/<model>-t0.0--<model>-t0.0/<game>/<experiment>/instance_<id>/interactions.json and scores.json

Each model plays every instance of every game once: the single-player games alone (Player 1), the two-player
games with clem's scripted partner as Player 2 (`programmatic`). An instance has a difficulty d; a model of
skill s aborts (breaks the game's rules) with probability sigmoid(-1 - s + d / 2), else scores Main Score =
100 * sigmoid(s - d + noise) (noise ~ Normal(0, 0.5)), Success when it is 50 or more, Lose otherwise. clem's
own leaderboard (`referee.io.loaders.clem_table.clem_results`) and referee's ratings should both order the models
by skill.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

CLEM_MODELS = ("model-a", "model-b", "model-c", "model-d", "model-e", "model-f", "model-g", "model-h")
CLEM_SKILL = dict(zip(CLEM_MODELS, (1.6, 1.1, 0.7, 0.3, -0.1, -0.5, -0.9, -1.4)))
CLEM_GAMES = {"wordle": 1, "taboo": 2, "imagegame": 2, "referencegame": 2, "privateshared": 1, "codenames": 2}


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


TALK = "Let me think about which word fits every clue so far before I answer. " * 4  # 288 characters


def clem_run(out: str | Path, instances: int = 12, experiments: int = 2, seed: int = 0, turns: int = 1,
             companions: bool = False) -> dict[str, float]:
    """Write a clemcore records tree of 8 models x 6 games (`CLEM_GAMES`: players per game) x `experiments` x
    `instances` to `out`; returns each model's generating skill (`CLEM_SKILL`). Each episode has `turns` turns
    of two messages (one turn: about 1 KB of interactions; 20 turns of talk: about 30 KB); with `companions`,
    clem's other files are written beside them as a real run holds them (each episode's instance.json and
    requests.json, each experiment's experiment.json), which ingest leaves out."""
    rng = np.random.default_rng(seed)
    out = Path(out)
    for game, players in CLEM_GAMES.items():
        for e in range(experiments):
            experiment = f"{e}_level_{e + 1}"
            difficulty = rng.normal(0.0, 1.0, instances)
            for model in CLEM_MODELS:
                folder = f"{model}-t0.0--{model}-t0.0"
                for i, d in enumerate(difficulty):
                    s = CLEM_SKILL[model]
                    aborted = rng.random() < _sigmoid(-1.0 - s + d / 2)
                    main = None if aborted else round(float(100 * _sigmoid(s - d + rng.normal(0, 0.5))), 2)
                    success = int(main is not None and main >= 50)
                    flags = {"Aborted": int(aborted), "Lose": int(not aborted and not success), "Success": success}
                    meta = {"game_name": game, "experiment_name": experiment, "game_id": i,
                            "results_folder": folder, "clem_version": "3.3.0"}
                    roster = {"GM": {"game_role": "Game Master", "model_name": "programmatic"},
                              "Player 1": {"game_role": "Player", "model_name": f"{model}-t0.0"}}
                    if players == 2:
                        roster["Player 2"] = {"game_role": "Partner", "model_name": "programmatic"}
                    talk = TALK if turns > 1 else ""
                    played = [[{"from": "GM", "to": "Player 1", "timestamp": "2025-01-01T00:00:00",
                                "action": {"type": "send message", "content": f"instance {i} {talk}".strip()}},
                               {"from": "Player 1", "to": "GM", "timestamp": "2025-01-01T00:00:01",
                                "action": {"type": "get message", "content": f"answer {talk}".strip()}}]
                              for _ in range(turns)]
                    episode = out / folder / game / experiment / f"instance_{i:05d}"
                    episode.mkdir(parents=True, exist_ok=True)
                    if companions:
                        (episode / "instance.json").write_text(json.dumps({"game_id": i, "difficulty": float(d)}))
                        (episode / "requests.json").write_text(json.dumps(
                            [{"model_name": f"{model}-t0.0", "manipulated_prompt_obj": [{"role": "user", "content": t}],
                              "raw_response_obj": {"content": t}} for _ in range(turns) for t in (talk or "x",)]))
                        (episode.parent / "experiment.json").write_text(json.dumps({"name": experiment, "game": game}))
                    (episode / "interactions.json").write_text(json.dumps(
                        {"meta": meta, "players": roster, "turns": played, **flags}))
                    scores = {**flags, "Main Score": float("nan") if main is None else main, "Request Count": 2}
                    (episode / "scores.json").write_text(json.dumps(
                        {"meta": meta, "turn scores": {"0": {"Request Count": 2}}, "episode scores": scores}))
    return dict(CLEM_SKILL)
