"""Every speed target of issue 38 in one run, side by side in one process, as one Markdown table.

Run: .venv/bin/python -m benchmarks.run_all [--judgments 1000000] [--agents 100] [--no-bayes]

1. Bradley-Terry on the same comparisons: referee against evalica (Rust) and choix (dense ILSR on the win
   counts), and the largest rating difference in Elo points;
2. the 1,000-replicate cluster bootstrap of 1M comparisons, on the quiet machine and beside two busy
   processes (`benchmarks.load.busy`), with the ratio;
3. the contextual Bradley-Terry (style control) against statsmodels' GLM and scikit-learn's logistic regression
   on a 100,000-judgment subsample (the same model: coefficients compared), and referee's alone on all;
4. end to end from the command line on simulated arena judgments with answer lengths: `referee ingest`
   (against pandas.read_csv of the same file), `referee ratings --method bt --bootstrap 1000` and
   `referee ratings --covariate style:length`, each quiet and beside two busy processes, the covariate's
   interval checked against the generating effect;
5. every Bayesian model at contest scale with nutpie and with PyMC's NUTS (`benchmarks.beta_regression`):
   wall time, compile time apart, min-ESS/s, max R-hat.

The table is printed and written to `benchmarks/results.md`, which the manual's speed and reading-the-numbers
pages include as it is (one source: the numbers there come from one run).
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.load import busy, timed
from benchmarks.ratings import evalica_bt, referee_bt, simulate
from referee.models.ratings.bootstrap import bootstrap_bt
from referee.models.ratings.bradley_terry import to_elo

ROOT = Path(__file__).resolve().parent.parent
REFEREE = [sys.executable, "-m", "referee.cli"]
STYLE = 0.3  # the generating style effect (log-odds per sd of the feature)


def choix_bt(xs, ys, outcome) -> pd.Series:
    """choix's dense ILSR (Maystre and Grossglauser 2015) on the win-count matrix, ties as half wins."""
    import choix

    codes, agents = pd.factorize(np.concatenate([xs, ys]))
    a, b, n = codes[: len(xs)], codes[len(xs):], len(agents)
    wins = np.bincount(a * n + b, outcome, n * n) + np.bincount(b * n + a, 1 - outcome, n * n)
    params = choix.ilsr_pairwise_dense(wins.reshape(n, n), alpha=0.0, tol=1e-12, max_iter=1000)  # [i, j]: i beat j
    return pd.Series(to_elo(params), index=agents)


def bt_rows(n: int, agents: int) -> list[list[str]]:
    xs, ys, outcome = simulate(agents, n)
    (ours, _), t_ours = timed(referee_bt, xs, ys, outcome)
    rows = [["BT point fit", f"{n:,} comparisons, {agents} agents", f"{t_ours:.2f} s", "", "", ""]]
    for name, fn in (("evalica", evalica_bt), ("choix (ILSR)", choix_bt)):
        theirs, t = timed(fn, xs, ys, outcome)
        diff = float((ours - theirs.reindex(ours.index)).abs().max())
        rows.append([f"BT: {name}", f"{n:,} comparisons", f"{t:.2f} s", f"referee {t / t_ours:.1f}x faster",
                     f"max diff {diff:.4f} Elo", ""])
    return rows


def bootstrap_rows(n: int, agents: int, replicates: int) -> list[list[str]]:
    xs, ys, outcome = simulate(agents, n)
    _, (a, b, fit) = referee_bt(xs, ys, outcome)
    cluster = np.arange(n)
    args = (a, b, outcome, cluster, fit.agents, fit.theta, replicates, 0, None)
    _, quiet = timed(bootstrap_bt, *args)
    with busy(2):
        _, loaded = timed(bootstrap_bt, *args)
    return [["BT bootstrap", f"{replicates:,} replicates of {n:,}", f"{quiet:.2f} s quiet", f"{loaded:.2f} s loaded",
             f"loaded / quiet {loaded / quiet:.2f}", ""]]


def _style_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Pairs (match_id, a, b, outcome, style:length_a/_b) of simulated judgments, as `covariate_pairs` makes."""
    from referee.prepare.covariates import style_feature

    feature, _ = style_feature(frame["length_a"].to_numpy(float), frame["length_b"].to_numpy(float))
    outcome = frame["winner"].map({"first": 1.0, "second": 0.0}).fillna(0.5).to_numpy()
    return pd.DataFrame({"match_id": np.arange(len(frame)).astype(str), "a": frame["first"], "b": frame["second"],
                         "outcome": outcome, "style:length_a": feature, "style:length_b": 0.0})


def contextual_rows(judgments: pd.DataFrame, subsample: int) -> list[list[str]]:
    import statsmodels.api as sm
    from sklearn.linear_model import LogisticRegression

    from referee.models.ratings.contextual import code_pairs, fit_contextual_bt

    rows = []
    pairs = _style_pairs(judgments.iloc[:subsample])
    ours, t_ours = timed(fit_contextual_bt, pairs, ["style:length"])
    agents = list(ours.ratings["agent"])
    coded = code_pairs(pairs, agents, ["style:length"])
    n, m = len(agents), len(pairs)
    X = np.zeros((m, n - 1 + 1))
    r = np.arange(m)
    X[r[coded.a > 0], coded.a[coded.a > 0] - 1] += 1
    X[r[coded.b > 0], coded.b[coded.b > 0] - 1] -= 1
    X[:, -1] = coded.Z[:, 0]
    glm, t_glm = timed(lambda: sm.GLM(coded.y, X, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": coded.cluster}))
    beta = float(ours.effects["estimate"].iloc[0])
    rows.append(["contextual BT (style)", f"{m:,} judgments", f"{t_ours:.2f} s", "", f"effect {beta:.4f}", ""])
    rows.append(["contextual: statsmodels GLM", f"{m:,} judgments", f"{t_glm:.2f} s",
                 f"referee {t_glm / t_ours:.1f}x faster", f"effect diff {abs(glm.params[-1] - beta):.1e}",
                 f"se diff {abs(glm.bse[-1] - ours.effects['se'].iloc[0]):.1e}"])
    ties = coded.y == 0.5  # a tie is half a win each way: both labels at weight 1/2
    Xs, ys = np.vstack([X, X[ties]]), np.r_[coded.y >= 0.5, np.zeros(ties.sum(), bool)]
    w = np.r_[np.where(ties, 0.5, 1.0), np.full(ties.sum(), 0.5)]
    sk = LogisticRegression(penalty=None, fit_intercept=False, tol=1e-10, max_iter=2000)
    _, t_sk = timed(sk.fit, Xs, ys, sample_weight=w)
    rows.append(["contextual: scikit-learn", f"{m:,} judgments", f"{t_sk:.2f} s", f"referee {t_sk / t_ours:.1f}x faster",
                 f"effect diff {abs(sk.coef_[0, -1] - beta):.1e}", "no clustered errors"])
    everything = _style_pairs(judgments)
    fit, t_all = timed(fit_contextual_bt, everything, ["style:length"])
    e = fit.effects.iloc[0]
    rows.append(["contextual BT (style)", f"{len(everything):,} judgments", f"{t_all:.2f} s", "",
                 f"effect {e['estimate']:.3f} [{e['lower']:.3f}, {e['upper']:.3f}], true {STYLE}",
                 "covers" if e["lower"] < STYLE < e["upper"] else "MISSES"])
    return rows


def _cli(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(REFEREE + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def end_to_end_rows(csv: Path, work: Path) -> list[list[str]]:
    store = work / "arena.duckdb"
    _, t_pandas = timed(pd.read_csv, csv)
    t_ingest = _cli(["ingest", str(csv), "--store", str(store)])
    rows = [["ingest (CLI)", f"{csv.stat().st_size / 1e6:.0f} MB CSV", f"{t_ingest:.1f} s quiet", "",
             f"pandas.read_csv {t_pandas:.1f} s", "target < 60 s"]]
    with busy(2):
        loaded_store = work / "arena-loaded.duckdb"
        t_ingest_loaded = _cli(["ingest", str(csv), "--store", str(loaded_store)])
    rows[0][3] = f"{t_ingest_loaded:.1f} s loaded"
    for label, extra, target in (("ratings --bootstrap 1000 (CLI)", ["--bootstrap", "1000"], "target < 30 s loaded"),
                                 ("ratings --covariate style:length (CLI)", ["--covariate", "style:length"],
                                  "target < 60 s loaded")):
        command = ["ratings", "--store", str(store), "--method", "bt", "--out", str(work / "r")] + extra
        quiet = _cli(command)
        with busy(2):
            loaded = _cli(command)
        rows.append([label, "the store above", f"{quiet:.1f} s quiet", f"{loaded:.1f} s loaded",
                     f"loaded / quiet {loaded / quiet:.2f}", target])
    effect = pd.read_csv(work / "r" / "covariates.csv").iloc[0]
    rows[-1][-1] += f"; effect {effect['estimate']:.3f} [{effect['lower']:.3f}, {effect['upper']:.3f}], true {STYLE}"
    return rows


def bayes_rows() -> list[list[str]]:
    from benchmarks.beta_regression import CENTRED, run
    from referee.run.scores.convergence import MODELS, fit_at_contest_scale

    for sampler in ("nutpie", "pymc"):  # the process's one-time costs, untimed
        fit_at_contest_scale("audit regression", sampler=sampler, draws=100, tune=100)
    rows = []
    for model in list(MODELS) + [CENTRED]:
        fits = {sampler: run(model, sampler, 0) for sampler in ("nutpie", "pymc")}
        speed = {s: f["min_ess_bulk"] / f["seconds"] for s, f in fits.items()}
        for sampler, f in fits.items():
            compile_s = f.get("compile_seconds")
            rows.append([f"{model}: {sampler}", "contest scale", f"{f['seconds']:.1f} s",
                         f"compile {compile_s:.1f} s" if compile_s is not None else "",
                         f"min-ESS/s {speed[sampler]:.1f}; R-hat {f['max_r_hat']:.3f}",
                         (f"nutpie / PyMC {speed['nutpie'] / max(speed['pymc'], 1e-9):.1f}x" if sampler == "nutpie"
                          else "") + ("" if f["converged"] else " NOT CONVERGED")])
    return rows


def table(rows: list[list[str]]) -> str:
    head = "| what | size | time | beside two busy processes / compile | against | note |\n|---|---|---|---|---|---|\n"
    return head + "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--subsample", type=int, default=100_000)
    parser.add_argument("--no-bayes", action="store_true", help="leave out the Bayesian models (about 15 minutes)")
    args = parser.parse_args()
    from referee.simulators.arena import simulate_arena, write_arena

    rows: list[list[str]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as tmp:
        work = Path(tmp)
        sim = simulate_arena(n_agents=args.agents, n_judgments=args.judgments, seed=5, tie_rate=0.0,
                             style_effect=STYLE)
        paths = write_arena(sim, work / "sim")
        for part in (lambda: bt_rows(args.judgments, args.agents),
                     lambda: bootstrap_rows(args.judgments, args.agents, args.replicates),
                     lambda: contextual_rows(sim.judgments, args.subsample),
                     lambda: end_to_end_rows(paths["judgments"], work),
                     *(() if args.no_bayes else (bayes_rows,))):
            rows += part()
            print(table(rows[-len(rows):]).splitlines()[-1], flush=True)
    text = (f"One run of `python -m benchmarks.run_all` ({time.strftime('%Y-%m-%d')}, {platform.machine()}, "
            f"{__import__('os').cpu_count()} cores, {(time.perf_counter() - started) / 60:.0f} minutes):\n\n" + table(rows))
    print("\n" + text)
    (ROOT / "benchmarks" / "results.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
