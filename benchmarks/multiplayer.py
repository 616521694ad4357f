"""Multiplayer matches: the pairwise shortcut's intervals against Plackett-Luce's, on the same data.

Run: .venv/bin/python -m benchmarks.multiplayer [--tournaments 30] [--agents 12] [--matches 150] [--sizes 3 8]

Each tournament draws matches of N players ordered by Plackett-Luce from known log-strengths, then rates them
four ways: Bradley-Terry on every pair of every match with Wald intervals (pairs treated as independent),
the same with the cluster bootstrap (whole matches resampled), and Plackett-Luce on the full rankings with
Wald and with bootstrap intervals. It prints, per match size, each way's mean 95 % interval width (Elo points)
and how often the interval held the true centred rating (nominal 95 %).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from referee.run.ratings.ratings import rate
from referee.models.ratings.bradley_terry import to_elo
from tests.test_interval_coverage import tournament


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=30)
    parser.add_argument("--agents", type=int, default=12)
    parser.add_argument("--matches", type=int, default=150)
    parser.add_argument("--sizes", type=int, nargs="+", default=[3, 8])
    parser.add_argument("--replicates", type=int, default=200)
    args = parser.parse_args()
    theta = np.linspace(-1.0, 1.0, args.agents)
    truth = pd.Series(to_elo(theta), index=[f"a{i:02d}" for i in range(args.agents)])
    rows = []
    for size in args.sizes:
        rng = np.random.default_rng(size)
        stats: dict[str, list] = {}
        for t in range(args.tournaments):
            comparisons = tournament(theta, args.matches, size, rng)
            ways = {"BT on pairs, Wald": rate(comparisons, "bt"),
                    "BT on pairs, cluster bootstrap": rate(comparisons, "bt", bootstrap=args.replicates, seed=t),
                    "Plackett-Luce, Wald": rate(comparisons, "plackett-luce"),
                    "Plackett-Luce, bootstrap": rate(comparisons, "plackett-luce", bootstrap=args.replicates, seed=t)}
            for name, result in ways.items():
                table = result.table().set_index("agent")
                true = truth[table.index]
                inside = ((table["lower"] <= true) & (true <= table["upper"])).mean()
                stats.setdefault(name, []).append(((table["upper"] - table["lower"]).mean(), inside))
        for name, values in stats.items():
            width, cover = np.mean(values, axis=0)
            rows.append({"players per match": size, "intervals": name, "mean width (Elo)": round(width, 1),
                         "coverage": f"{100 * cover:.1f} %"})
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
