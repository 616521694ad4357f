"""Simulated logs in the shapes public multiplayer benchmarks write, with known skills, for the mapping file
(`data/formats/mapped.md`), `referee map` and the ingest benchmark.

- `points_logs`: 3-player games, one file each; `move` lines, then one `final` line holding every player's
  points in an object keyed by player ids that embed the model (`Player2_Game17_model-c`).
- `seat_logs`: 6-player games, one file each, no match id in any line; a `setup` line maps seats to models,
  `act` lines, and an `end` line ranks the seats best first (every fifth game two seats tie: a nested list).
- `auction_logs`: 4-bidder auctions, one file each (about 55 KB with the default rounds), in no runner's
  keys: `bid` lines naming the bidder and its model with a reasoning text, then one `settle` line holding
  every bidder's utility in an object keyed by bidder.
- `walk_logs`: 3-player races; the `end` line holds a winners list and each player's steps walked (a number
  that is not the result: the winner is who reached the goal, often in fewer steps).
- `werewolf_logs`: 8-player games with votes (`voter` casts, `player` is the one voted for), ids written as
  numbers past 64 bits on some lines and as text on others, and an `end` line whose `final_ranks` leaves out
  the players eliminated early in one game of ten while `final_ranks_full` ranks everyone.

In both, a player's performance is its model's skill plus a standard Gumbel draw, so the finishing order is
Plackett-Luce with weights exp(skill): Bradley-Terry on the stored results recovers the skills' order.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

MODELS = tuple(f"model-{c}" for c in "abcdefgh")


def skills(seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """The generating skill of each model: standard normal draws (logit scale), seeded."""
    return dict(zip(models, np.random.default_rng(seed).normal(0, 1, len(models))))


def _write_games(folder, games: int, seed: int, models: tuple[str, ...], size: int, name: str, game) -> dict[str, float]:
    """Write `games` files `{name}{g:04d}.jsonl` into a new `folder`, each the lines `game(g, rng, who, skill)`
    returns for `size` distinct models; returns the skills."""
    folder = Path(folder)
    rng, skill = np.random.default_rng(seed), skills(seed, models)
    folder.mkdir(parents=True)
    for g in range(games):
        lines = game(g, rng, rng.choice(models, size, replace=False), skill)
        (folder / f"{name}{g:04d}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return skill


TALK = ("I propose we split the remaining resources evenly, but only if you commit to supporting my claim on the "
        "northern region in the next round; otherwise I will have to reconsider our arrangement. ")


def points_logs(folder: str | Path, games: int, seed: int, models: tuple[str, ...] = MODELS, turns: int = 3,
                talk: int = 0) -> dict[str, float]:
    """Write `games` files `game_NNNN.jsonl` of 3-player games into a new `folder`; returns the skills. Each game
    has `turns` rounds of one move per player, each move carrying `talk` copies of a 172-character message (60
    turns and 2 copies make a file of about 70 KB, the size public benchmarks write)."""

    def game(g, rng, who, skill):
        ids = [f"Player{k + 1}_Game{g}_{m}" for k, m in enumerate(who)]
        points = np.round(10 * (np.array([skill[m] for m in who]) + rng.gumbel(size=3)), 1)
        lines = [{"game_id": f"G{g}", "type": "move", "player": p, "turn": t, **({"message": TALK * talk} if talk else {})}
                 for t in range(turns) for p in ids]
        lines.append({"game_id": f"G{g}", "type": "final", "final_positions": dict(zip(ids, points.tolist()))})
        return lines

    return _write_games(folder, games, seed, models, 3, "game_", game)


def seat_logs(folder: str | Path, games: int, seed: int, models: tuple[str, ...] = MODELS, rounds: int = 2,
              talk: int = 0) -> dict[str, float]:
    """Write `games` files `table-NNNN.jsonl` of 6-player games into a new `folder`; returns the skills. Each game
    has `rounds` rounds of one `act` line per seat, each carrying `talk` copies of a 172-character message (40
    rounds and 2 copies make a file of about 115 KB)."""

    def game(g, rng, who, skill):
        seats = [f"s{k}" for k in range(6)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=6)
        order = [seats[k] for k in np.argsort(-perf)]
        ranking = [order[0], [order[1], order[2]], order[3], order[4], order[5]] if g % 5 == 0 else order
        lines = [{"event": "setup", "seats": dict(zip(seats, who.tolist()))}]
        lines += [{"event": "act", "seat": s, "round": r, **({"say": TALK * talk} if talk else {})}
                  for r in range(rounds) for s in seats]
        lines.append({"event": "end", "ranking": ranking})
        return lines

    return _write_games(folder, games, seed, models, 6, "table-", game)


def auction_logs(folder: str | Path, games: int, seed: int, models: tuple[str, ...] = MODELS,
                 rounds: int = 25) -> dict[str, float]:
    """Write `games` files `auction-NNNN.jsonl` of 4-bidder auctions into a new `folder`; returns the skills.
    Each auction has `rounds` rounds of one bid per bidder (`bid` lines: auction, step, bidder, model, amount,
    reasoning), then a `settle` line with every bidder's utility ({bidder: utility})."""

    def game(g, rng, who, skill):
        bidders = [f"bidder_{k}" for k in range(4)]
        utility = np.round(10 * (np.array([skill[m] for m in who]) + rng.gumbel(size=4)), 2)
        lines = [{"auction": f"A{g}", "step": r * 4 + k, "kind": "bid", "bidder": b, "model": str(m),
                  "amount": round(float(rng.uniform(1, 100)), 2), "reasoning": TALK * 2}
                 for r in range(rounds) for k, (b, m) in enumerate(zip(bidders, who))]
        lines.append({"auction": f"A{g}", "step": rounds * 4, "kind": "settle",
                      "utilities": dict(zip(bidders, utility.tolist()))})
        return lines

    return _write_games(folder, games, seed, models, 4, "auction-", game)


def walk_logs(folder: str | Path, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `race-NNNN.jsonl` of 3-player races into a new `folder`; returns the skills. The best
    performer wins (`winners`, a list of one); `steps_walked` is a count unrelated to skill (the winner stops
    early, the others walk on), so a draft that rates by it gets the order wrong."""

    def game(g, rng, who, skill):
        seats = [f"p{k}" for k in range(3)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=3)
        winner = seats[int(np.argmax(perf))]
        steps = {s: int(rng.integers(20, 40)) if s == winner else int(rng.integers(35, 80)) for s in seats}
        lines = [{"type": "start", "game": f"R{g}", "seats": dict(zip(seats, who.tolist()))}]
        lines += [{"type": "step", "game": f"R{g}", "player": s, "turn": t} for t in range(3) for s in seats]
        lines.append({"type": "end", "game": f"R{g}", "steps_walked": steps, "winners": [winner],
                      "players": seats})
        return lines

    return _write_games(folder, games, seed, models, 3, "race-", game)


BIG_ID = 18446744073709551616  # 2**64: past the 64-bit whole numbers, as some runners write a game's id


def werewolf_logs(folder: str | Path, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `wolf-NNNN.jsonl` of 8-player games into a new `folder`; returns the skills. Votes name
    the voter in `voter` and the one voted for in `player`; the game's id is a number past 64 bits on its
    `vote` lines and the same id as text elsewhere; the `end` line's `final_ranks_full` ranks all 8 players by
    performance, and `final_ranks` is the same but, in every tenth game, leaves out the two ranked last."""

    def game(g, rng, who, skill):
        seats = [f"player_{k}" for k in range(8)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=8)
        ranks = {seats[k]: int(r) + 1 for r, k in enumerate(np.argsort(-perf))}
        gid = BIG_ID + g
        lines = [{"event": "setup", "game_id": str(gid), "roles": dict(zip(seats, who.tolist()))}]
        for r in range(2):
            lines += [{"event": "speak", "game_id": str(gid), "player": s, "round": r, "text": "I suspect someone."}
                      for s in seats]
            lines += [{"event": "vote", "game_id": gid, "voter": s, "player": seats[1] if k == 0 else seats[0],
                       "round": r} for k, s in enumerate(seats)]  # all accuse player_0; player_0 accuses player_1
        partial = {s: v for s, v in ranks.items() if v <= 6} if g % 10 == 0 else ranks
        lines.append({"event": "end", "game_id": str(gid), "final_ranks": partial, "final_ranks_full": ranks})
        return lines

    return _write_games(folder, games, seed, models, 8, "wolf-", game)


def race_positions_logs(folder: str | Path, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `race-NNNN.jsonl` of 3-player races into a new `folder`; returns the skills (issue 84's
    shape): player ids embed the model (`Player2_<model>`), no line lists the players, and the `final` line holds
    `winners` (a list of one) beside `final_positions`, an object keyed by player of cells reached, larger for
    the players who walked on after the winner stopped: the players exist on that line only as its keys."""

    def game(g, rng, who, skill):
        ids = [f"Player{k + 1}_{m}" for k, m in enumerate(who)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=3)
        winner = ids[int(np.argmax(perf))]
        positions = {p: int(rng.integers(3, 8)) if p == winner else int(rng.integers(6, 14)) for p in ids}
        lines = [{"type": "move", "game": f"R{g}", "player_id": p, "turn": t} for t in range(3) for p in ids]
        lines.append({"type": "final", "game": f"R{g}", "winners": [winner], "final_positions": positions})
        return lines

    return _write_games(folder, games, seed, models, 3, "race-", game)


def elimination_logs(folder: str | Path, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `elim-NNNN.jsonl` of 8-player elimination games into a new `folder`; returns the skills
    (issue 84's shape): `setup` names each player in full (`Player5_<model>`) with its model in a seat table;
    votes carry `target_id` before `voter_id`; the `result` line ranks the players by a short id (`P5`)."""

    def game(g, rng, who, skill):
        ids = [f"Player{k + 1}_{m}" for k, m in enumerate(who)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=8)
        lines = [{"event": "setup", "game_id": f"E{g}", "players": dict(zip(ids, who.tolist()))}]
        for r in range(2):
            lines += [{"event": "speak", "game_id": f"E{g}", "player_id": p, "round": r, "text": "I trust no one."}
                      for p in ids]
            lines += [{"event": "vote", "game_id": f"E{g}", "round": r, "target_id": ids[1] if k == 0 else ids[0],
                       "voter_id": p} for k, p in enumerate(ids)]
        ranks = {f"P{k + 1}": int(r) + 1 for r, k in enumerate(np.argsort(-perf))}
        lines.append({"event": "result", "game_id": f"E{g}", "final_ranks": dict(sorted(ranks.items()))})
        return lines

    return _write_games(folder, games, seed, models, 8, "elim-", game)
