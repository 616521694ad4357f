"""Bradley-Terry speed: referee vs evalica (Rust) vs scikit-learn logistic regression, 100 agents.

Run: .venv/bin/python -m benchmarks.ratings [--sizes 1000000 5000000] [--bootstrap 1000] [--under-load]
(needs `pip install -e '.[bench]'` for evalica.) `--under-load` times referee's fit and bootstrap again beside
two busy processes (`benchmarks.load.busy`) and prints the ratio to the quiet run.

All three start from the same in-memory comparisons (two arrays of agent names and the outcome) and fit
Bradley-Terry with ties as half wins; the printed difference is the largest rating difference in Elo
points after centring. Targets (issue 4): at least 10x evalica at 5M comparisons (aim 25x) with
differences below 0.01 Elo, and a 1,000-replicate bootstrap on 1M comparisons in under 5 s.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from referee.models.ratings.bootstrap import bootstrap_bt
from referee.models.ratings.bradley_terry import ELO_SCALE, fit_bt, pair_counts, to_elo


def simulate(n_agents: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_agents)
    i = rng.integers(0, n_agents, n)
    j = (i + rng.integers(1, n_agents, n)) % n_agents
    p = 1 / (1 + np.exp(-(theta[i] - theta[j])))
    u = rng.random(n)
    outcome = np.where(u < 0.05, 0.5, np.where(u < 0.05 + 0.95 * p, 1.0, 0.0))
    names = np.array([f"agent_{k:03d}" for k in range(n_agents)], dtype=object)
    return names[i], names[j], outcome


def referee_bt(xs, ys, outcome):
    codes, agents = pd.factorize(np.concatenate([xs, ys]))
    a, b = codes[: len(xs)], codes[len(xs):]
    fit = fit_bt(pair_counts(a, b, outcome, len(agents)), list(agents))
    return pd.Series(fit.ratings, index=agents), (a, b, fit)


def evalica_bt(xs, ys, outcome):
    import evalica

    winners = np.where(outcome == 1.0, evalica.Winner.X, np.where(outcome == 0.0, evalica.Winner.Y, evalica.Winner.Draw))
    result = evalica.bradley_terry(pd.Series(xs), pd.Series(ys), pd.Series(winners), tolerance=1e-12, limit=1000)
    return pd.Series(to_elo(np.log(result.scores.to_numpy())), index=result.scores.index)


def sklearn_bt(xs, ys, outcome):
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    codes, agents = pd.factorize(np.concatenate([xs, ys]))
    a, b = codes[: len(xs)], codes[len(xs):]
    n = len(agents)
    # a tie is half a win each: duplicate ties with both labels at weight 1/2
    tie = outcome == 0.5
    aa, bb = np.r_[a, a[tie]], np.r_[b, b[tie]]
    y = np.r_[outcome == 1.0, np.zeros(tie.sum(), bool)]
    y[np.flatnonzero(tie)] = True
    w = np.where(np.r_[tie, np.ones(tie.sum(), bool)], 0.5, 1.0)
    X = sparse.csr_matrix((np.r_[np.ones(len(aa)), -np.ones(len(aa))], (np.r_[np.arange(len(aa)), np.arange(len(aa))],
                                                                         np.r_[aa, bb])), shape=(len(aa), n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # penalty=None is the spelling every supported version knows
        model = LogisticRegression(penalty=None, fit_intercept=False, tol=1e-10, max_iter=1000)
        model.fit(X, y, sample_weight=w)
    return pd.Series(to_elo(model.coef_[0]), index=agents)


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--skip-sklearn", action="store_true")
    parser.add_argument("--under-load", action="store_true", help="also time referee beside two busy processes")
    args = parser.parse_args()
    for n in args.sizes:
        xs, ys, outcome = simulate(args.agents, n)
        (ours, (a, b, fit)), t_ours = timed(referee_bt, xs, ys, outcome)
        print(f"\n{n:,} comparisons, {args.agents} agents")
        print(f"  referee bt   {t_ours:7.2f} s")
        try:
            theirs, t_evalica = timed(evalica_bt, xs, ys, outcome)
            diff = (ours - theirs.reindex(ours.index)).abs().max()
            print(f"  evalica      {t_evalica:7.2f} s   referee is {t_evalica / t_ours:5.1f}x faster; max |diff| {diff:.4f} Elo")
        except ImportError:
            print("  evalica      not installed (pip install -e '.[bench]')")
        if not args.skip_sklearn:
            sk, t_sk = timed(sklearn_bt, xs, ys, outcome)
            diff = (ours - sk.reindex(ours.index)).abs().max()
            print(f"  scikit-learn {t_sk:7.2f} s   referee is {t_sk / t_ours:5.1f}x faster; max |diff| {diff:.4f} Elo")
        if args.under_load:
            from benchmarks.load import busy

            with busy(2):
                _, t_loaded = timed(referee_bt, xs, ys, outcome)
            print(f"  referee bt   {t_loaded:7.2f} s beside two busy processes ({t_loaded / t_ours:.2f}x the quiet run)")
        if n == 1_000_000 and args.bootstrap:
            cluster = np.arange(n)
            boot, t_boot = timed(bootstrap_bt, a, b, outcome, cluster, fit.agents, fit.theta, args.bootstrap, 0, None)
            se_boot = boot.ratings.std(axis=0).mean()
            print(f"  bootstrap    {t_boot:7.2f} s for {args.bootstrap} replicates (target < 5 s); "
                  f"mean bootstrap sd {se_boot:.2f} Elo vs Wald {(fit.se * ELO_SCALE).mean():.2f}")
            if args.under_load:
                with busy(2):
                    _, t_loaded = timed(bootstrap_bt, a, b, outcome, cluster, fit.agents, fit.theta, args.bootstrap, 0,
                                        None)
                print(f"  bootstrap    {t_loaded:7.2f} s beside two busy processes ({t_loaded / t_boot:.2f}x the quiet run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
