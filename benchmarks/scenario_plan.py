"""Scenario planning for the Measurement Layout against random and replayed scenarios: how well the agents'
capabilities are known after the same number of extra episodes.

Run: .venv/bin/python -m benchmarks.scenario_plan [--seeds 4] [--agents 6] [--picks 4] [--repeats 2] (about 7 min)

Each seed draws the agents' true capabilities on four demands (theta ~ Normal(1, 1.2), c = sigmoid(theta);
base chance 0.05, Beta precision 20, cutpoints -3 and 3) and plays a start design whose gaps are the ones real
catalogues have: d0 and d1 only ever together (the fit merges them), d3 in one scenario, and a scenario with no
demand, each played twice by every agent. After the layout is fitted, each arm adds `--picks` scenarios of
`--repeats` episodes per agent, drawn from the same truth, and the layout is refitted:

- plan : `next_layout_scenarios` (each pick for the demand then least known) over all 16 demand profiles;
- random : profiles drawn uniformly from the 16;
- replay : the start's scenarios again, in turn.

Two measures after the refit: the RMSE of the predicted expected score against the true one over every agent
and all 16 profiles (how well any scenario can be predicted), and the largest root-mean-square posterior sd over
the agents of a demand's capability (the plan's own objective; merged demands split as the plan splits them).
Prints each arm's median over seeds and the plan's ratio against the others.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd

from referee.models.scores.beta_regression import draw_ordered_beta, expected_score
from referee.models.scores.layout_design import layout_draws, next_layout_scenarios, split_merged
from referee.models.scores.measurement_layout import fit_layout, success_mean

DEMANDS = ["d0", "d1", "d2", "d3"]
START = [(), ("d0", "d1"), ("d0", "d1", "d2"), ("d2",), ("d0", "d1", "d3")]
PROFILES = [combo for k in range(5) for combo in itertools.combinations(DEMANDS, k)]
BASE, NU, CUTS = 0.05, 20.0, (-3.0, 3.0)


def name(profile: tuple) -> str:
    return " + ".join(profile) or "(none)"


def row(profile: tuple) -> np.ndarray:
    return np.array([float(d in profile) for d in DEMANDS])


def true_eta(cap: np.ndarray, profile: tuple) -> np.ndarray:
    """Every agent's (A,) true logit-mean in a profile."""
    mu = success_mean(np.log(cap) @ row(profile), BASE)
    return np.log(mu / (1 - mu))


def true_mean(cap: np.ndarray, profile: tuple) -> np.ndarray:
    """The true expected score of every agent (A,) in a profile."""
    return expected_score(true_eta(cap, profile), CUTS)


def play(cap: np.ndarray, profiles: list[tuple], repeats: int, rng) -> pd.DataFrame:
    """Scores of every agent in each profile, `repeats` episodes each: agent, profile, score."""
    rows = []
    for profile in profiles:
        for _ in range(repeats):
            y = draw_ordered_beta(rng, true_eta(cap, profile), *CUTS, NU)
            rows += [{"agent": f"a{a}", "profile": profile, "score": float(v)} for a, v in enumerate(y)]
    return pd.DataFrame(rows)


def fit(data: pd.DataFrame, seed: int, sampling: dict):
    X = np.stack([row(p) for p in data["profile"]])
    return fit_layout(data["agent"], X, data["score"].to_numpy(), DEMANDS, seed=seed, **sampling)


def measures(layout, cap: np.ndarray) -> dict:
    agents = [f"a{a}" for a in range(len(cap))]
    errors = [layout.predict(agents, np.tile(row(p), (len(agents), 1))) - true_mean(cap, p) for p in PROFILES]
    draws = split_merged(layout_draws(layout.idata))
    worst = np.sqrt((draws.sd() ** 2).mean()).max()
    return {"rmse": float(np.sqrt(np.mean(np.square(errors)))), "worst_sd": float(worst)}


def run(seed: int, agents: int, picks: int, repeats: int, sampling: dict) -> list[dict]:
    rng = np.random.default_rng(seed)
    cap = 1 / (1 + np.exp(-rng.normal(1.0, 1.2, (agents, len(DEMANDS)))))
    start = play(cap, START, 2, rng)
    layout = fit(start, seed, sampling)
    draws = split_merged(layout_draws(layout.idata), seed=seed)
    names = [name(p) for p in PROFILES]
    candidates = pd.DataFrame([[float(d in p) for d in draws.demands] for p in PROFILES], index=names,
                              columns=draws.demands)
    chosen = next_layout_scenarios(draws, candidates, picks, repeats=repeats)["scenario"]
    arms = {"plan": [PROFILES[names.index(n)] for n in chosen],
            "random": [PROFILES[k] for k in rng.integers(len(PROFILES), size=picks)],
            "replay": [START[k % len(START)] for k in range(picks)]}
    out = [{"seed": seed, "arm": "start", **measures(layout, cap), "picks": ""}]
    for arm, profiles in arms.items():
        refit = fit(pd.concat([start, play(cap, profiles, repeats, rng)]), seed, sampling)
        out.append({"seed": seed, "arm": arm, **measures(refit, cap),
                    "picks": "; ".join(name(p) for p in profiles)})
        print(out[-1], flush=True)
    return out


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--agents", type=int, default=6)
    parser.add_argument("--picks", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    args = parser.parse_args(argv)
    sampling = {"draws": args.draws, "tune": args.tune}
    table = pd.DataFrame([r for s in range(args.seeds) for r in run(s, args.agents, args.picks, args.repeats, sampling)])
    summary = table.groupby("arm")[["rmse", "worst_sd"]].median().loc[["start", "replay", "random", "plan"]]
    print(summary.round(4).to_string())
    for other in ("replay", "random"):
        ratio = summary.loc["plan"] / summary.loc[other]
        print(f"plan / {other}: prediction RMSE x{ratio['rmse']:.2f}, least known capability's sd x{ratio['worst_sd']:.2f}")
    return table


if __name__ == "__main__":
    main()
