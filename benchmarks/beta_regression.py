"""Every shipped Bayesian model at contest scale: nutpie (referee's default) against PyMC's NUTS, side by side.

Run: .venv/bin/python benchmarks/beta_regression.py [--models "tag effects" ...] [--seed 0] [--no-pymc]

Each model is fitted by `referee.run.scores.convergence.fit_at_contest_scale` (the scale of the papers' data, the
model's own simulator, its shipped defaults: 4 chains, 500 tuning steps, 1,250 draws; 1,000 for the
Measurement Layout) once with nutpie and once with PyMC's own NUTS (`--sampler pymc`, target_accept 0.9) on
the same model and data, in this one process, after one untimed small fit per sampler (the process's
one-time costs). Wall time is the fit's: building and compiling the model (PyTensor's C cache warm,
nutpie's numba compile not cached), sampling and summarising; simulating the data is not timed. Also fitted: the paper's tag-effects structure (agent slopes on every tag)
and the centred tag-effects model (the baseline of issue 5).

Targets (issue 15): every shipped model converged (R-hat <= 1.01, bulk and tail ESS >= 400, no divergence)
within 90 s on 2 cores, and nutpie's min-ESS/s at least 2x PyMC's on every model.

`--sweep 20` (issue 53) instead fits each model at its defaults with nutpie over seeds 0-19 (data and sampler)
and prints how many seeds give no divergence and R-hat <= 1.01 (target: at least 19 of 20), the divergences of
each seed and the R-hat median and maximum.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

from referee.io.catalogue import CONTEST_2024, load_catalogue
from referee.run.scores.convergence import MODELS, contest_scores, fit_at_contest_scale
from referee.models.fit import ConvergenceWarning, sample
from referee.models.scores import beta_regression as br

CENTRED = "tag effects (centred)"


def centred_tag_effects(seed: int, sampler: str) -> dict:
    """The centred tag-effects model (b ~ MvNormal(0, chol=L)) with every tag sloped, timed like the others."""
    tags = load_catalogue(CONTEST_2024).tags
    scores = contest_scores(seed)
    start = time.perf_counter()
    data, agents, scenarios, names = br.design(scores, tags)
    X = br.tag_matrix(scenarios, tags, names)
    kept, _ = br.aliased_tags(X, names)
    model = br.build_tag_effects(data, agents, scenarios, [names[k] for k in kept], X[:, kept], centred=True)
    _, d = sample(model, ["intercept", "beta", "slope", "slope_sd", "agent_intercept", "phi"], seed=seed,
                  sampler=sampler)
    return dict(d, seconds=time.perf_counter() - start, model=CENTRED, sampler=sampler)


def run(model: str, sampler: str, seed: int) -> dict:
    # the table reports each fit's convergence; its ConvergenceWarning says the same and is left out here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if model == CENTRED:
            return centred_tag_effects(seed, sampler)
        return fit_at_contest_scale(model, seed=seed, sampler=sampler)


def row(r: dict) -> str:
    ess = min(r["min_ess_bulk"], r["min_ess_tail"])
    return (f"| {r['model']} | {r['sampler']} | {r['seconds']:.1f} s | {r['min_ess_bulk']:.0f} | {r['min_ess_tail']:.0f} "
            f"| {r['min_ess_bulk'] / r['seconds']:.2f} | {r['divergences']} | {r['max_r_hat']:.3f} | "
            f"{'yes' if r['converged'] else 'NO'} (min ESS {ess:.0f}) |")


def sweep(models: list[str], seeds: int) -> int:
    """Each model at its defaults over `seeds` seeds: divergences and R-hat of every seed, and the count of clean
    seeds (no divergence, R-hat <= 1.01)."""
    print("| model | clean seeds | divergences by seed | R-hat median / max | min ESS min | wall s median |")
    print("|---|---|---|---|---|---|")
    for model in models:
        found = []
        for seed in range(seeds):
            found.append(run(model, "nutpie", seed))
            r = found[-1]
            print(f"  {model} seed {seed}: {r['divergences']} divergences, R-hat {r['max_r_hat']:.4f}, "
                  f"{r['seconds']:.0f} s", file=sys.stderr, flush=True)
        clean = sum(r["divergences"] == 0 and r["max_r_hat"] <= 1.01 for r in found)
        rhat = sorted(r["max_r_hat"] for r in found)
        ess = min(min(r["min_ess_bulk"], r["min_ess_tail"]) for r in found)
        wall = sorted(r["seconds"] for r in found)[len(found) // 2]
        print(f"| {model} | {clean}/{seeds} | {' '.join(str(r['divergences']) for r in found)} | "
              f"{rhat[len(rhat) // 2]:.3f} / {rhat[-1]:.3f} | {ess:.0f} | {wall:.0f} |", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS) + [CENTRED], choices=list(MODELS) + [CENTRED])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-pymc", action="store_true", help="nutpie only (the convergence table, faster)")
    parser.add_argument("--sweep", type=int, default=0, metavar="N",
                        help="instead: each model at its defaults (nutpie) over seeds 0..N-1 (data and sampler): how "
                             "many seeds give no divergence and R-hat <= 1.01 (issue 53: at least 19 of 20)")
    args = parser.parse_args()
    if args.sweep:
        return sweep([m for m in args.models if m != CENTRED], args.sweep)
    print("| model | sampler | wall (compile included) | min bulk ESS | min tail ESS | min-ESS/s | divergences "
          "| max R-hat | converged |")
    print("|---|---|---|---|---|---|---|---|---|")
    # one untimed small fit per sampler first: the process's one-time costs (imports, nutpie's and numba's own
    # compilation of their machinery) would otherwise be charged to whichever model comes first
    for sampler in ("nutpie",) if args.no_pymc else ("nutpie", "pymc"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit_at_contest_scale("audit regression", seed=args.seed, sampler=sampler, draws=100, tune=100)
    ratios = {}
    for model in args.models:
        fast = run(model, "nutpie", args.seed)
        print(row(fast), flush=True)
        if not args.no_pymc:
            slow = run(model, "pymc", args.seed)
            print(row(slow), flush=True)
            ratios[model] = (fast["min_ess_bulk"] / fast["seconds"]) / max(slow["min_ess_bulk"] / slow["seconds"], 1e-9)
    for model, ratio in ratios.items():
        print(f"{model}: nutpie / PyMC min-ESS/s = {ratio:.1f}x (target >= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
