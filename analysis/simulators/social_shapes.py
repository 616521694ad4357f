"""Simulated social-game logs whose events have an actor, a target and a value, with known skills, for `referee map`'s
drafts (issue 100): who spoke, voted, proposed, bid or punished, at whom, and how much.

- `elimination_game_logs`: the line shapes lechmazur/elimination_game's logs hold (its `logs/*.jsonl`): `conversation`
  (`player_id`, a long id `PlayerN_Game<id>_<model>`, and `message`), `preference_proposal` (`proposer` and
  `target` by the short id `PN`), `preference_outcome` (`target` and `accepted`/`rejected`), `private` (`speaker_id`
  -> `target_id`), `private_vote_reason` and `vote` (`voter_id` -> `target_id`), `elimination`
  (`eliminated_player`), and `final_results` (`winners`, `final_ranks` keyed by the long ids).
- `public_goods_logs`: the shapes of lechmazur/pgg_bench's logs: `init` (a `short_name_map` of long id ->
  {short_label, model_name}), `public_message` (`player_id` long), `contribution` (`player_id`, `model_name`,
  `contribution`, `current_tokens`, `response_time_s`), `punishment` (`punisher_id` -> `target_id`,
  `punisher_spend`, `target_damage`), `round_end` and `final` (`final_tokens` keyed by model name).
- `whisper_logs` (held out: no runner's keys): 5-player games, players by a long id (`seat-3/<model>/<run>`),
  `whisper` lines (`sender` -> `recipient`), `ballot` lines (`voter` -> `candidate`), `bid` lines (`bidder`,
  `amount`), and a `placements` line keyed by model.
- `numbered_winners_logs` (held out): 8-player games whose players are `llm-0` ... `llm-7`, the same model
  behind each id in every game, and a `winners` list beside the seat list.

In each, a player's performance is its model's skill plus a standard Gumbel draw, so the order of finish is
Plackett-Luce with weights exp(skill); the actors, targets and values are known by construction for the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from referee.simulators.benchmark_shapes import MODELS, _write_games


def elimination_game_logs(folder, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `game_NNNN.jsonl` of 8-player elimination games; returns the skills."""

    def game(g, rng, who, skill):
        gid = 1739758867671791 + g
        ids = [f"Player{k + 1}_Game{gid}_{m}" for k, m in enumerate(who)]
        short = [f"P{k + 1}" for k in range(8)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=8)
        order = list(np.argsort(-perf))  # best first
        lines = [{"game_id": gid, "type": "conversation", "round": 1, "subround": 1, "player_id": p,
                  "message": f"I'm {s}. Let's build trust.", "timestamp": "2025-02-16 21:21:15"}
                 for p, s in zip(ids, short)]
        for k in range(8):
            target = (k + 1 + int(rng.integers(7))) % 8
            lines += [{"game_id": gid, "type": "preference_proposal", "round": 1, "proposer": short[k],
                       "target": short[target], "rank_of_target": 0},
                      {"game_id": gid, "type": "preference_outcome", "round": 1, "target": short[target],
                       ("accepted" if rng.random() < 0.5 else "rejected"): short[k]}]
        alive = list(range(8))
        for r, out in enumerate(reversed(order[2:]), start=1):  # the weakest go first
            for k in alive:
                other = [j for j in alive if j != k]
                to = int(rng.choice(other))
                lines.append({"game_id": gid, "type": "private", "round": r, "subround": 2, "speaker_id": ids[k],
                              "target_id": ids[to], "message": f"{short[to]}, shall we vote together?",
                              "timestamp": "2025-02-16 21:22:27"})
            for k in alive:
                target = out if k != out else int(rng.choice([j for j in alive if j != k]))
                lines += [{"game_id": gid, "type": "private_vote_reason", "round": r, "voter_id": ids[k],
                           "target_id": ids[target], "reason": "a threat"},
                          {"game_id": gid, "type": "vote", "round": r, "voter_id": ids[k], "target_id": ids[target],
                           "public_vote": True, "timestamp": "2025-02-16 21:36:21"}]
            lines.append({"game_id": gid, "type": "elimination", "round": r, "eliminated_player": ids[out],
                          "tie_break": False})
            alive.remove(out)
        ranks = {ids[k]: rank for rank, k in enumerate(order, start=1)}
        lines.append({"game_id": gid, "type": "final_results", "winners": [ids[order[0]]],
                      "final_ranks": dict(sorted(ranks.items(), key=lambda kv: -kv[1])),
                      "partial_points": {p: (8 - rk) / 7 for p, rk in ranks.items()}})
        return lines

    return _write_games(folder, games, seed, models, 8, "game_", game)


def public_goods_logs(folder, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `pgg_NNNN.jsonl` of 5-player public-goods games with punishment; returns the skills."""

    def game(g, rng, who, skill):
        gid = 1741220882524912 + g
        ids = [f"Player{k + 1}_Game{gid}_{m}" for k, m in enumerate(who)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=5)
        lines = [{"game_id": gid, "type": "init", "settings": {"num_players": 5, "multiplier": 1.6},
                  "short_name_map": {p: {"short_label": f"P{k + 1}", "model_name": str(m)}
                                     for k, (p, m) in enumerate(zip(ids, who))}}]
        balance = np.full(5, 20.0)
        for r in range(1, 4):
            lines += [{"game_id": gid, "type": "public_message", "round": r, "player_id": p,
                       "message": "Let's all contribute fairly.", "response_time_s": 2.5} for p in ids]
            give = rng.integers(0, 11, 5)
            lines += [{"game_id": gid, "type": "contribution", "round": r, "player_id": p, "model_name": str(m),
                       "contribution": int(c), "current_tokens": float(b - c), "response_time_s": 3.1}
                      for p, m, c, b in zip(ids, who, give, balance)]
            punisher, target = rng.choice(5, 2, replace=False)
            spend = float(rng.integers(1, 6))
            lines.append({"game_id": gid, "type": "punishment", "round": r, "punisher_id": ids[punisher],
                          "punisher_model": str(who[punisher]), "target_id": ids[target],
                          "target_model": str(who[target]), "punisher_spend": spend, "target_damage": 3 * spend,
                          "response_time_s": 7.35})
            lines.append({"game_id": gid, "type": "round_end", "round": r,
                          "balances": {str(m): float(b) for m, b in zip(who, balance)}})
        final = np.round(20 + 4 * perf, 1)
        lines.append({"game_id": gid, "type": "final", "final_tokens": {str(m): float(t) for m, t in zip(who, final)},
                      "carry_over_fund": 3})
        return lines

    return _write_games(folder, games, seed, models, 5, "pgg_", game)


def whisper_logs(folder, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `night-NNNN.jsonl` of 5-player social games (held out: keys of no runner); returns the
    skills."""

    def game(g, rng, who, skill):
        ids = [f"seat-{k}/{m}/run{g:04d}" for k, m in enumerate(who)]
        perf = np.array([skill[m] for m in who]) + rng.gumbel(size=5)
        lines = []
        for r in range(3):
            for k in range(5):
                to = int(rng.choice([j for j in range(5) if j != k]))
                lines.append({"night": f"N{g}", "what": "whisper", "phase": r, "sender": ids[k], "recipient": ids[to],
                              "words": "Trust me on this one."})
            for k in range(5):
                to = int(rng.choice([j for j in range(5) if j != k]))
                lines.append({"night": f"N{g}", "what": "ballot", "phase": r, "voter": ids[k], "candidate": ids[to]})
            for k in range(5):
                lines.append({"night": f"N{g}", "what": "bid", "phase": r, "bidder": ids[k],
                              "amount": float(rng.integers(1, 50))})
        places = {str(who[k]): rank for rank, k in enumerate(np.argsort(-perf), start=1)}
        lines.append({"night": f"N{g}", "what": "placements", "placements": places})
        return lines

    return _write_games(folder, games, seed, models, 5, "night-", game)


HTML_MESSAGE = '<b>trust me</b><script>alert("x")</script><a href="http://example.invalid">here</a>'


def plant_upset(folder, skill: dict[str, float], name: str = "night-upset", models: tuple[str, ...] = MODELS) -> str:
    """Write one more `whisper_logs` game into `folder` (file `{name}.jsonl`, match id `name`) in which the weakest
    of `models` by `skill` finishes first and the strongest last, and the weakest whispers `HTML_MESSAGE` to the
    strongest; returns the match id."""
    order = sorted(models, key=lambda m: skill[m])  # weakest first
    who = [order[0], order[-2], order[-3], order[-4], order[-1]]  # the weakest against the four strongest
    ids = [f"seat-{k}/{m}/run-upset" for k, m in enumerate(who)]
    lines = [{"night": name, "what": "whisper", "phase": 0, "sender": ids[0], "recipient": ids[4],
              "words": HTML_MESSAGE},
             {"night": name, "what": "ballot", "phase": 0, "voter": ids[4], "candidate": ids[0]},
             {"night": name, "what": "bid", "phase": 0, "bidder": ids[0], "amount": 49.0}]
    places = {who[0]: 1, who[3]: 2, who[2]: 3, who[1]: 4, who[4]: 5}  # the weakest first, the strongest last
    lines.append({"night": name, "what": "placements", "placements": places})
    path = Path(folder) / f"{name}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return name


def numbered_winners_logs(folder, games: int, seed: int, models: tuple[str, ...] = MODELS) -> dict[str, float]:
    """Write `games` files `round-NNNN.jsonl` of 8-player games among `llm-0` ... `llm-7` (held out); returns the
    skills keyed by those ids (the id is the agent: the same model behind it in every game)."""
    ids = [f"llm-{k}" for k in range(8)]
    lookup = dict(zip(models, ids))

    def game(g, rng, who, skill):
        perf = np.array([skill[m] for m in MODELS[:8]]) + rng.gumbel(size=8)
        order = list(np.argsort(-perf))
        lines = [{"round_id": f"R{g}", "event": "turn", "player": ids[k], "turn": t} for t in range(2) for k in range(8)]
        lines.append({"round_id": f"R{g}", "event": "game_over", "players": ids, "winners": [ids[order[0]]]})
        return lines

    skill = _write_games(folder, games, seed, models[:8], 8, "round-", game)
    return {lookup[m]: s for m, s in skill.items()}
