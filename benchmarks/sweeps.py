"""Sweep wall time: one 200-fit sweep on 1 and 2 local workers and on a 2-worker Dask LocalCluster.

Run: .venv/bin/python -m benchmarks.sweeps [--fits 200] [--agents 12] [--comparisons 6000] [--calibration 0]

The sweep is a bootstrap of the two-dimensional Bradley-Terry model (`rate(..., 'bt-md', bootstrap=N)`): N
refits of a multidimensional model, BLOCK replicates per task, the same replicates on every executor (the
script checks that they are identical). With `--calibration K` it also times K simulations of the tag-effects
calibration (one PyMC compile and fit each). The printed ratio is each executor's wall time against one
worker; startup (processes, the cluster, imports and compilation in each fresh worker) is included, as a
user would pay it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from referee.run.scores.calibrate import calibrate
from referee.run.executor import Executor
from referee.run.ratings.ratings import rate
from tests.helpers import simulate


def timed(label: str, run) -> tuple[float, object]:
    start = time.perf_counter()
    out = run()
    seconds = time.perf_counter() - start
    print(f"  {label:<28} {seconds:8.1f} s", flush=True)
    return seconds, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=200)
    parser.add_argument("--agents", type=int, default=12)
    parser.add_argument("--comparisons", type=int, default=6000)
    parser.add_argument("--calibration", type=int, default=0, help="tag-effects calibration simulations to time")
    args = parser.parse_args()
    strengths = np.random.default_rng(0).normal(0, 1, size=(3, args.agents))
    comparisons = simulate(strengths, ["g1", "g2", "g3"], args.comparisons, seed=1)
    executors = {"1 worker (this process)": lambda: None, "2 local processes": lambda: Executor(jobs=2),
                 "Dask LocalCluster, 2 workers": lambda: Executor(scheduler="local:2")}
    print(f"bootstrap of bt-md (2 dimensions): {args.fits} fits, {args.agents} agents, {args.comparisons} comparisons")
    times, reference = {}, None
    for label, make in executors.items():
        executor = make()
        try:
            seconds, result = timed(label, lambda: rate(comparisons, "bt-md", dims=2, bootstrap=args.fits, seed=0,
                                                        executor=executor))
        finally:
            if executor is not None:
                executor.close()
        ratings = result.bootstrap.ratings
        same = reference is None or np.array_equal(ratings, reference, equal_nan=True)
        reference = ratings if reference is None else reference
        times[label] = seconds
        if not same:
            raise SystemExit(f"{label}: replicates differ from one worker's")
    base = times["1 worker (this process)"]
    for label, seconds in times.items():
        print(f"  ratio {label:<22} {base / seconds:5.2f}x one worker's speed")
    if args.calibration:
        print(f"tag-effects calibration: {args.calibration} simulations")
        ctimes = {}
        for label, make in executors.items():
            executor = make()
            try:
                ctimes[label], _ = timed(label, lambda: calibrate("tag-effects", args.calibration, seed=0,
                                                                  executor=executor))
            finally:
                if executor is not None:
                    executor.close()
        for label, seconds in ctimes.items():
            print(f"  ratio {label:<22} {ctimes['1 worker (this process)'] / seconds:5.2f}x one worker's speed")


if __name__ == "__main__":
    main()
