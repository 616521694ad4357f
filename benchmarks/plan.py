"""Adaptive match planning against uniform allocation: matches needed to rank the agents and to pin their
ratings down.

Run: .venv/bin/python -m benchmarks.plan [--agents 20] [--seeds 8] [--round 10] [--max 6000] [--figure PATH]

Each seed draws agents' true log-strengths (evenly spread over 4 logits, about 700 Elo points), starts from
two matches per agent, then plays rounds: the rule proposes `--round` matches from the current Bradley-Terry
fit, the matches are played with outcomes drawn from the truth, and the fit is redone. For each rule it
records the matches needed until the estimated order has Kendall tau >= 0.9 with the truth (and keeps it for
three rounds), and until every 95 % interval is at most 200 Elo points wide. Rules: uniform pairs (the
baseline), Chatbot Arena's weights, nonparametric active ranking, A- and D-optimal, and `referee plan` with
its default target (adjacent ranks at 95 %: c-optimal, after the thin agents) and with the width target
(width:200, the metric of the second column). Prints the median matches per
rule and the saving against uniform; `--figure` saves the curves of Kendall tau against matches.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from referee.run.ratings.plan import plan
from referee.models.ratings.bradley_terry import DEFAULT_PRIOR_SD, ELO_SCALE, fit_bt, mle_exists
from referee.models.ratings.design import covariance, select

RULES = ("uniform", "arena", "active", "a-optimal", "d-optimal", "referee plan", "referee plan width:200")


def play(pairs, theta, rng) -> list[tuple[int, int, float]]:
    return [(i, j, float(rng.random() < 1 / (1 + math.exp(theta[j] - theta[i])))) for i, j in pairs]


def run(rule: str, truth: np.ndarray, seed: int, round_size: int, most: int) -> tuple[int, int, list]:
    rng = np.random.default_rng(seed)
    n = len(truth)
    names = [f"a{i:02d}" for i in range(n)]
    order = rng.permutation(n)
    games = play([(int(order[k]), int(order[(k + 1) % n])) for k in range(n)] * 1, truth, rng)
    games += play([(int(order[k]), int(order[(k + 2) % n])) for k in range(n)], truth, rng)
    tau_at, width_at, curve, streak = None, None, [], 0
    while len(games) < most and (tau_at is None or width_at is None):
        W = np.zeros((n, n))
        counts = np.zeros((n, n))
        for i, j, won in games:
            W[i, j] += won
            W[j, i] += 1 - won
            counts[i, j] += 1
            counts[j, i] += 1
        fit = fit_bt(W, names, prior_sd=None if mle_exists(W) else DEFAULT_PRIOR_SD)
        tau = kendalltau(fit.theta, truth)[0]
        width = 2 * 1.96 * ELO_SCALE * np.sqrt(np.diag(covariance(fit.theta, counts)))
        curve.append((len(games), tau))
        streak = streak + 1 if tau >= 0.9 else 0
        if tau_at is None and streak >= 3:
            tau_at = len(games)
        if width_at is None and width.max() <= 200:
            width_at = len(games)
        if rule.startswith("referee plan"):
            comparisons = pd.DataFrame({"a": [names[i] for i, _, _ in games], "b": [names[j] for _, j, _ in games],
                                        "outcome": [w for _, _, w in games],
                                        "cluster": [f"m{k}" for k in range(len(games))]})
            target = rule.split()[-1] if rule != "referee plan" else "adjacent:0.95"
            proposed = plan(comparisons, round_size, target=target, seed=int(rng.integers(1 << 31))).matches
            pairs = [(names.index(a), names.index(b)) for a, b in zip(proposed["agent_1"], proposed["agent_2"])]
        else:
            pairs = [(i, j) for i, j, _ in select(rule, fit.theta, counts, round_size, rng, wins=W)]
        games += play(pairs, truth, rng)
    return tau_at or most, width_at or most, curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--round", type=int, default=10)
    parser.add_argument("--max", type=int, default=6000)
    parser.add_argument("--figure")
    args = parser.parse_args()
    truth = np.linspace(-2, 2, args.agents)
    rows, curves = [], {}
    for rule in RULES:
        found = [run(rule, truth, seed, args.round, args.max) for seed in range(args.seeds)]
        curves[rule] = [c for _, _, c in found]
        rows.append({"rule": rule, "matches to tau 0.9": int(np.median([f[0] for f in found])),
                     "matches to width 200": int(np.median([f[1] for f in found]))})
    table = pd.DataFrame(rows)
    base = table.set_index("rule").loc["uniform"]
    table["saving (tau)"] = [f"{100 * (1 - r / base['matches to tau 0.9']):.0f} %" for r in table["matches to tau 0.9"]]
    table["saving (width)"] = [f"{100 * (1 - r / base['matches to width 200']):.0f} %" for r in table["matches to width 200"]]
    print(table.to_string(index=False))
    if args.figure:
        from referee.present.plan_figures import plot_plan_benchmark

        plot_plan_benchmark(curves).savefig(args.figure, dpi=200)
        print(f"wrote {args.figure}")


if __name__ == "__main__":
    main()
