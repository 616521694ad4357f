"""PyTensor with and without a BLAS (issue 53): the same PyMC NUTS fits, PyTensor linked to the OpenBLAS of the
`scipy-openblas32` wheel (referee's default, `referee.models.blas`) against PyTensor's own fallback without a
BLAS (`REFEREE_BLAS=system` on a machine with no system BLAS: the state that warned "could not link to a BLAS
installation").

Run: PYTHONPATH=. .venv/bin/python -m benchmarks.blas [--models "tag effects" "baseline contrast"] [--seed 0]

The link is fixed when PyTensor first compiles, so each setting runs in a process of its own (one after the
other, the same models, data and seeds), each after one untimed small fit; the table gives each fit's sampling
and wall time side by side and their ratio. The default fits sample with nutpie, whose numba code calls numpy's
own BLAS either way; the BLAS link matters for PyMC's NUTS (`--sampler pymc`) and every PyTensor function
compiled in C (prior draws, predictive checks).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = """
import json, sys, time, warnings
import referee.models  # links PyTensor to a BLAS unless REFEREE_BLAS=system
from referee.models.fit import ConvergenceWarning
from referee.run.scores.convergence import fit_at_contest_scale
models, seed = json.loads(sys.argv[1]), int(sys.argv[2])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fit_at_contest_scale("audit regression", seed=seed, sampler="pymc", draws=50, tune=50)
    rows = {}
    for model in models:
        d = fit_at_contest_scale(model, seed=seed, sampler="pymc")
        rows[model] = {"wall": d["seconds"], "sampling": d["sampling_seconds"], "r_hat": d["max_r_hat"]}
import pytensor
print(json.dumps({"ldflags": bool(pytensor.config.blas__ldflags), "rows": rows}))
"""


def run(models: list[str], seed: int, system: bool) -> dict:
    env = dict(os.environ, **({"REFEREE_BLAS": "system"} if system else {}))
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(models), str(seed)], capture_output=True,
                          text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["baseline contrast", "tag effects", "bayes-bt"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    linked, fallback = run(args.models, args.seed, False), run(args.models, args.seed, True)
    print(f"linked to a BLAS: {linked['ldflags']}; the fallback: {fallback['ldflags']}")
    print("| model (PyMC NUTS, contest scale) | sampling s, linked | sampling s, no BLAS | ratio | wall s, linked | "
          "wall s, no BLAS |")
    print("|---|---|---|---|---|---|")
    for model in args.models:
        a, b = linked["rows"][model], fallback["rows"][model]
        print(f"| {model} | {a['sampling']:.1f} | {b['sampling']:.1f} | {b['sampling'] / a['sampling']:.2f}x | "
              f"{a['wall']:.1f} | {b['wall']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
