"""Coverage of the leaderboard's rank sets (issue 48): simultaneous 95 % rank sets cover every established agent's
true rank at once in >= 95 % of simulated tournaments, and the confidence set of the best holds the true best in
>= 95 %, rare agents included in the tournaments.

Run: .venv/bin/python -m benchmarks.rank_sets [--tournaments 200] [--agents 40] [--games 1500] [--rare 6]

Each tournament: agents with strengths ~ N(0, 0.6) in log-odds, two-seat games between uniformly drawn pairs of
the common agents, the last `rare` agents playing 3 games each; Bradley-Terry with a 200-replicate cluster
bootstrap (`referee.run.ratings.rate`) and the leaderboard's ranked block (`referee.run.leaderboard.ranked_block`,
established agents only, rank sets from the fit's cluster-robust covariance as the leaderboard draws them). The true ranks are the established agents' order by their simulated strength. Prints
the coverage of the simultaneous sets, the marginal sets' average per-agent coverage, the best set's coverage
and its mean size, and the seconds per tournament.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from referee.run.leaderboard import covariance_draws, ranked_block
from referee.run.ratings import rate


def tournament(agents: int, games: int, rare: int, seed: int) -> tuple[pd.DataFrame, dict[str, float]]:
    """A comparisons table (a, b, outcome, cluster, game) of two-seat games, and the true strengths."""
    rng = np.random.default_rng(seed)
    names = [f"ag{i:03d}" for i in range(agents)]
    strength = rng.normal(0, 0.6, agents)
    common = agents - rare
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
    parser.add_argument("--games", type=int, default=1500)
    parser.add_argument("--rare", type=int, default=6)
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()
    joint = best = 0
    marginal, best_size, established = [], [], []
    start = time.perf_counter()
    for seed in range(args.tournaments):
        comparisons, strength = tournament(args.agents, args.games, args.rare, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bt = rate(comparisons, "bt", bootstrap=args.bootstrap, seed=seed)
        table = bt.table()
        ranked, _, _ = ranked_block(table, covariance_draws(bt.fit, comparisons, table.set_index("agent")["rating"],
                                                         seed), 0.95)
        truth = ranked["agent"].map(strength).rank(ascending=False, method="first").to_numpy()
        inside = (ranked["joint_lower"] <= truth) & (truth <= ranked["joint_upper"])
        joint += bool(inside.all())
        marginal.append(float(((ranked["rank_lower"] <= truth) & (truth <= ranked["rank_upper"])).mean()))
        top = ranked["agent"].iloc[int(np.argmin(truth))]
        best += bool(ranked.set_index("agent").at[top, "could_be_first"])
        best_size.append(int(ranked["could_be_first"].sum()))
        established.append(len(ranked))
    n = args.tournaments
    seconds = (time.perf_counter() - start) / n
    print(f"{n} tournaments of {args.agents} agents ({args.rare} rare), {args.games} games, "
          f"{args.bootstrap} bootstrap replicates; {np.mean(established):.1f} established agents ranked on average")
    print(f"simultaneous rank sets cover every true rank at once: {joint / n:.3f} (target >= 0.95)")
    print(f"marginal rank sets, mean per-agent coverage:          {np.mean(marginal):.3f} (target >= 0.95)")
    print(f"confidence set of the best holds the true best:       {best / n:.3f} (target >= 0.95); "
          f"mean size {np.mean(best_size):.2f}")
    print(f"{seconds:.2f} s per tournament (fit, bootstrap and rank sets)")
    return 0 if joint / n >= 0.95 and best / n >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
