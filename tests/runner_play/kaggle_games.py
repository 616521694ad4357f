"""Play real Kaggle Environments episodes offline and write their replays (run by the kaggle runner's own
Python, .cache/runners/kaggle; see tests/test_runners.py).

    python kaggle_games.py OUT_DIR

Writes OUT_DIR/episode-NN.json (`env.toJSON()`, the replay Kaggle serves) and OUT_DIR/expected.json: for each
episode what the runner reported (final rewards and statuses) and what the harness knows (the agents it seated,
the seat it made move illegally or crash).
"""

import json
import random
import sys
from pathlib import Path

import pyspiel
from kaggle_environments import make


def legal_moves(observation, configuration, seat=0):
    """The legal moves of the state the observation carries (OpenSpiel's own serialisation of it; the first
    observation carries none, and the game's initial state is meant); at a simultaneous-move node, seat's own."""
    if "serializedGameAndState" in observation:
        _, state = pyspiel.deserialize_game_and_state(observation["serializedGameAndState"])
    else:
        state = pyspiel.load_game(configuration["openSpielGameString"]).new_initial_state()
    return state.legal_actions(seat) if state.is_simultaneous_node() else state.legal_actions()


def legal_random(seed, seat=0):
    """An OpenSpiel agent that plays a uniformly random legal move (as `seat` in a simultaneous-move game)."""
    rng = random.Random(seed)

    def agent(observation, configuration):
        return {"submission": rng.choice(legal_moves(observation, configuration, seat))}
    return agent


def first_legal(observation, configuration):
    return {"submission": legal_moves(observation, configuration)[0]}


def illegal(observation, configuration):
    return {"submission": 999}


def harness_forfeit(observation, configuration):
    """What Kaggle's LLM harness submits when a model fails to give a legal move (illegalMoveForfeit): the invalid
    action, -1, with its status text."""
    return {"submission": -1, "actionString": "Qxz9", "thoughts": "no legal move found",
            "status": "Failed to parse a legal move after 5 attempts; forfeiting."}


def crash(observation, configuration):
    raise RuntimeError("this agent crashes")


def bad_column(observation, configuration):
    return 99


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    random.seed(7)
    osp = {}
    # (environment, configuration, agents seated, their names, the seat the harness made misbehave)
    games = [("connectx", {}, ["random", "negamax"], ["random-bot", "negamax-bot"], None),
             ("connectx", {}, ["negamax", "random"], ["negamax-bot", "random-bot"], None),
             ("connectx", {}, ["negamax", "negamax"], ["negamax-bot", "negamax-bot-2"], None),
             ("connectx", {}, [bad_column, "negamax"], ["bad-bot", "negamax-bot"], 0),
             ("rps", {"episodeSteps": 10}, ["rock", "rock"], ["rock-bot", "rock-bot-2"], None),
             ("hungry_geese", {"episodeSteps": 40}, ["greedy"] * 4, ["goose-1", "goose-2", "goose-3", "goose-4"],
              None),
             ("open_spiel_tic_tac_toe", osp, [legal_random(1), legal_random(2)], ["os-random-1", "os-random-2"], None),
             ("open_spiel_tic_tac_toe", osp, [first_legal, first_legal], ["os-first-1", "os-first-2"], None),
             ("open_spiel_connect_four", osp, [legal_random(3), legal_random(4)], ["os-random-1", "os-random-2"], None),
             ("open_spiel_tic_tac_toe", osp, [legal_random(5), illegal], ["os-random-1", "os-illegal"], 1),
             ("open_spiel_tic_tac_toe", osp, [crash, legal_random(6)], ["os-crash", "os-random-2"], 0),
             ("open_spiel_connect_four", osp, [legal_random(8), harness_forfeit], ["os-random-1", "os-forfeit"], 1),
             # simultaneous-move games (seeds where seat 0 wins, as in Kaggle's own markov_soccer and oshi_zumo
             # test replays)
             ("open_spiel_markov_soccer", {"seed": 0}, [legal_random(1, 0), legal_random(11, 1)], ["soccer-a", "soccer-b"],
              None),
             ("open_spiel_oshi_zumo", {"seed": 0}, [legal_random(2, 0), legal_random(12, 1)], ["zumo-a", "zumo-b"], None)]
    expected = []
    for n, (name, config, agents, names, misbehaves) in enumerate(games):
        env = make(name, configuration=config, info={"TeamNames": names, "EpisodeId": 1000 + n}, debug=False)
        env.run(agents)
        replay = env.toJSON()
        path = out / f"episode-{n:02d}.json"
        path.write_text(json.dumps(replay))
        expected.append({"file": path.name, "id": replay["id"], "env": name, "agents": names,
                         "rewards": [s["reward"] for s in env.state], "statuses": [s["status"] for s in env.state],
                         "misbehaves": misbehaves, "steps": len(env.steps)})
    (out / "expected.json").write_text(json.dumps(expected, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
