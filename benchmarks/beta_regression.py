"""Tag-effects beta regression: min-ESS per second as shipped vs a straightforward centred PyMC version.

Run: .venv/bin/python benchmarks/beta_regression.py [--sampler auto|pymc|nutpie]

Contest-scale simulated data (26 agents, the 12 contest scenarios, 3 repetitions). Both models are the
same tag-effects model on the same data and sampler, 2 chains of 1000 draws after 1000 tuning steps:
referee's non-centred Cholesky form (with aliased tags left out) against the centred form
(slopes ~ MvNormal(0, chol=L), agent intercepts ~ Normal(0, sigma)). Targets (issue 5): at least 2x the
centred version's min-ESS/s, no divergences, and a full fit (compile included) under 90 s on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import arviz as az

from analysis.io.catalogue import CONTEST_2024, load_catalogue
from analysis.simulate.concordia import cells_frame, simulate_concordia
from models.scores import beta_regression as br

VARS = ["intercept", "beta", "slope", "slope_sd", "agent_intercept", "phi"]


def run(centred: bool, scores, tags, sampler: str, seed: int) -> dict:
    data, agents, scenarios, names = br.design(scores, tags)
    X = br.tag_matrix(scenarios, tags, names)
    kept, _ = br.aliased_tags(X, names)
    t0 = time.perf_counter()
    model = br.build_tag_effects(data, agents, scenarios, [names[k] for k in kept], X[:, kept], centred=centred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = br.sample(model, draws=1000, tune=1000, chains=2, seed=seed, sampler=sampler)
    seconds = time.perf_counter() - t0
    ess = az.ess(idata, var_names=VARS, method="bulk")
    min_ess = float(min(ess[v].min() for v in VARS))
    rhat = az.rhat(idata, var_names=VARS)
    return {"seconds": seconds, "min_ess": min_ess, "ess_per_s": min_ess / seconds,
            "divergences": int(idata.sample_stats["diverging"].sum()),
            "max_r_hat": float(max(rhat[v].max() for v in VARS))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sampler", default="auto", choices=br.SAMPLERS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    catalogue = load_catalogue(CONTEST_2024)
    sim = simulate_concordia(catalogue, n_agents=26, repetitions=3, seed=args.seed)
    scores = cells_frame(sim.truth).rename(columns={"y": "score_norm"})
    sampler = br.resolve_sampler(args.sampler)
    print(f"26 agents x 12 scenarios x 3 repetitions = {len(scores)} scores; sampler {sampler}; 2 chains x 1000 draws")
    shipped = run(False, scores, catalogue.tags, sampler, args.seed)
    centred = run(True, scores, catalogue.tags, sampler, args.seed)
    for name, r in (("as shipped (non-centred)", shipped), ("centred baseline", centred)):
        print(f"  {name:26s} {r['seconds']:6.1f} s (compile included)  min bulk ESS {r['min_ess']:7.1f}  "
              f"min-ESS/s {r['ess_per_s']:6.2f}  divergences {r['divergences']}  max R-hat {r['max_r_hat']:.3f}")
    print(f"ratio of min-ESS/s, shipped / centred: {shipped['ess_per_s'] / max(centred['ess_per_s'], 1e-9):.1f}x "
          "(target >= 2x; full fit target < 90 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
