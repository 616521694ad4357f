"""Coverage of the board's rank sets (issues 48 and 66): simultaneous 95 % rank sets cover every ranked agent's
true rank at once in >= 95 % of simulated tournaments, the marginal sets cover each agent's rank at 95 % or more
(issue 83: conservative, never a set that the pair's own test contradicts), the confidence set of the best holds
the true best in >= 95 %, and the board has more than one tier (its joint sets part the far stronger leader from
the rest), with one far stronger agent (`--leader`, log-odds above the others' mean), one far weaker (`--bottom`) and rare
agents in every tournament. `--scale` times the board alone at 40, 200 and 1,000 agents instead.

Run: .venv/bin/python -m benchmarks.rank_sets [--tournaments 200] [--agents 40] [--games 2000] [--rare 6]
     [--leader 2.5] [--bootstrap 0] [--scale]

Each tournament: agents with strengths ~ N(0, 0.6) in log-odds, the first raised to `leader` (it wins about 90 %
of its games), two-seat games between uniformly drawn pairs of the common agents, the last `rare` agents
playing 3 games each; the board (`referee.run.ratings.board.infer_board`: Bradley-Terry, statuses by information, rank
sets stepped down from Normal draws with the fit's covariance, or `--bootstrap N` replicates). The true ranks
are the ranked agents' order by their simulated strength. Prints whether the leader was ranked, the coverage
of the simultaneous sets, the marginal sets' mean per-agent coverage, the best set's coverage and mean size,
and the seconds per tournament; exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from referee.run.ratings.board import infer_board


def tournament(agents: int, games: int, rare: int, seed: int, leader: float | None = None,
               bottom: float | None = None) -> tuple[pd.DataFrame, dict[str, float]]:
    """A comparisons table (a, b, outcome, cluster, game) of two-seat games, and the true strengths (the first
    agent's set to `leader` log-odds when given, the last common agent's to `bottom`)."""
    rng = np.random.default_rng(seed)
    names = [f"ag{i:03d}" for i in range(agents)]
    strength = rng.normal(0, 0.6, agents)
    if leader is not None:
        strength[0] = leader
    common = agents - rare
    if bottom is not None:
        strength[common - 1] = bottom
    i = rng.integers(0, common, games)
    j = (i + rng.integers(1, common, games)) % common
    rare_slots = np.repeat(np.arange(common, agents), 3)
    i[: len(rare_slots)] = rare_slots
    p = 1 / (1 + np.exp(-(strength[i] - strength[j])))
    outcome = (rng.random(games) < p).astype(float)
    frame = pd.DataFrame({"a": np.array(names)[i], "b": np.array(names)[j], "outcome": outcome,
                          "cluster": [f"m{k}" for k in range(games)], "game": "g", "kind": "match",
                          "communication": None, "time": None})
    return frame, dict(zip(names, strength))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=200)
    parser.add_argument("--agents", type=int, default=40)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--rare", type=int, default=6)
    parser.add_argument("--leader", type=float, default=2.5)
    parser.add_argument("--bottom", type=float, default=-2.5, help="the last common agent's log-odds (a clear bottom)")
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--scale", action="store_true", help="time the board at 40, 200 and 1,000 agents")
    args = parser.parse_args()
    if args.scale:
        return scale()
    joint = best = leader_ranked = leader_first = 0
    marginal, best_size, established, leader_rate, tiers = [], [], [], [], []
    start = time.perf_counter()
    for seed in range(args.tournaments):
        comparisons, strength = tournament(args.agents, args.games, args.rare, seed, args.leader, args.bottom)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            board = infer_board(comparisons, bootstrap=args.bootstrap, seed=seed)
        ranked = board.ranked
        truth = ranked["agent"].map(strength).rank(ascending=False, method="first").to_numpy()
        inside = (ranked["joint_lower"] <= truth) & (truth <= ranked["joint_upper"])
        joint += bool(inside.all())
        marginal.append(float(((ranked["rank_lower"] <= truth) & (truth <= ranked["rank_upper"])).mean()))
        top = ranked["agent"].iloc[int(np.argmin(truth))]
        best += bool(ranked.set_index("agent").at[top, "could_be_first"])
        best_size.append(int(ranked["could_be_first"].sum()))
        established.append(len(ranked))
        tiers.append(int(ranked["tier"].max()))
        leader_ranked += "ag000" in set(ranked["agent"])
        leader_first += "ag000" in board.could_be_first
        games = comparisons[(comparisons["a"] == "ag000") | (comparisons["b"] == "ag000")]
        won = np.where(games["a"] == "ag000", games["outcome"], 1 - games["outcome"])
        leader_rate.append(float(np.mean(won)))
    n = args.tournaments
    seconds = (time.perf_counter() - start) / n
    marginal_rate = float(np.mean(marginal))
    print(f"{n} tournaments of {args.agents} agents ({args.rare} rare), {args.games} games, leader at "
          f"{args.leader:+.1f} log-odds (wins {np.mean(leader_rate):.0%} of its games), the last at {args.bottom:+.1f}; "
          "draws: "
          f"{board.source}; {np.mean(established):.1f} agents ranked on average")
    print(f"the leader is ranked: {leader_ranked / n:.3f}; could be first: {leader_first / n:.3f}")
    print(f"simultaneous rank sets cover every true rank at once: {joint / n:.3f} (target >= 0.95)")
    print(f"marginal rank sets, mean per-agent coverage:          {marginal_rate:.3f} (target >= 0.95)")
    print(f"tiers per board: mean {np.mean(tiers):.2f}, fewest {min(tiers)}, boards of one tier "
          f"{sum(t == 1 for t in tiers)} (target: more than one on average; a board is one tier where no boundary "
          "has every joint set above it entirely above every one below)")
    print(f"confidence set of the best holds the true best:       {best / n:.3f} (target >= 0.95); "
          f"mean size {np.mean(best_size):.2f}")
    print(f"{seconds:.2f} s per tournament (fit, covariance, rank sets)")
    ok = (joint / n >= 0.95 and best / n >= 0.95 and marginal_rate >= 0.95 and leader_ranked == n
          and np.mean(tiers) > 1)
    return 0 if ok else 1


def scale() -> int:
    """The board of 40, 200 and 1,000 agents (30 games each on average, none rare), timed whole (the fit, its
    covariance and the rank sets), once each."""
    for agents in (40, 200, 1000):
        comparisons, _ = tournament(agents, 30 * agents, 0, 0, 2.5)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            board = infer_board(comparisons, seed=0)
        ranked = board.ranked
        print(f"{agents:5d} agents: the board {time.perf_counter() - start:6.1f} s; {len(ranked)} ranked, "
              f"{int(ranked['tier'].max())} tier(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
