"""COMPACT's consistency (Figures 4-5) at the size of a simulated 120-game run: the similarity matrix of every
(agent, category) metric vector, all pairs at once (`referee.models.social.consistency.similarity`), against its
peer, numpy's Pearson r of one pair at a time over the metrics both rows have (`tests.helpers.pairwise_pearson`;
what the bootstrap did 201 times before: 4M np.corrcoef calls, 5 min 37 s of `referee paper compact`); the ratio
and the largest difference.

Run: PYTHONPATH=. .venv/bin/python -m benchmarks.consistency [--rows 200] [--metrics 9] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from referee.models.social.consistency import similarity
from tests.helpers import pairwise_pearson


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--metrics", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    values = rng.normal(size=(args.rows, args.metrics))
    values[rng.random(values.shape) < 0.1] = np.nan
    frame = pd.DataFrame(values)
    start = time.perf_counter()
    for _ in range(args.repeats):
        ours = similarity(frame).to_numpy()
    mine = (time.perf_counter() - start) / args.repeats
    start = time.perf_counter()
    peer = pairwise_pearson(values)
    theirs = time.perf_counter() - start
    print(f"| {args.rows} vectors x {args.metrics} metrics | all pairs at once {mine * 1e3:.1f} ms | one pair at a time "
          f"{theirs * 1e3:.0f} ms | ratio {theirs / mine:.0f}x | largest difference "
          f"{np.nanmax(np.abs(ours - peer)):.1e} | same missing pairs {np.array_equal(np.isnan(ours), np.isnan(peer))} |")


if __name__ == "__main__":
    main()
