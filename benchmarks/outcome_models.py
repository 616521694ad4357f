"""The per-sample outcome models (`referee fit pass-fail`, issue 52): nutpie (referee's default) against PyMC's
NUTS on the same model and data, convergence and coverage over generated data sets, and the real Inspect logs.

4. Reuse (issue 72): `--reuse-fits` crossed fits on data sets of other sizes in one process, through the
   structure compiled once and through nutpie's compile per model: seconds until sampling starts (target under
   2 s after the first) and resident memory after each fit.
5. Issue 85's small and unbalanced crossed designs (8 x 10 x 5, 6 x 4 x 20, 8 x 10 x 5 with one agent of 5
   samples), `--seeds` data sets each at the defaults (`--only-small` runs this section alone).

Run: PYTHONPATH=. .venv/bin/python -m benchmarks.outcome_models [--seeds 10] [--no-pymc] [--inspect PATH]
     [--reuse-fits 6] [--only-reuse] [--only-small]

1. Issue 52's design (12 agents x 8 tasks x 40 items x 2 epochs, the last two agents alone on a task each):
   for each of `--seeds` generated data sets, the crossed model at its defaults; per data set its wall time,
   max R-hat, min bulk/tail ESS, divergences, how many of the 12 true agent effects its 94 % HDIs cover, whether
   exactly the two aliased agents are flagged, and whether PSIS-LOO prefers crossed over agent-only (the
   ladder on the first data set only). Targets: R-hat <= 1.01, ESS >= 400, coverage >= 90 % (pooled), the
   aliased flagged, LOO preferring crossed.
2. nutpie against PyMC's NUTS on the first data set, side by side in this process (each after one untimed
   small fit: the process's one-time costs): wall time, sampling time, min ESS per second.
3. The real Inspect logs (`../shared/data/real/inspect`): ingest, then the agent + task fit as the command line
   runs it; target under 15 s on 2 cores (HiBayES: 84-113 s per run, 14-24 s per model).
HiBayES itself cannot run here (Python 3.12 and JAX); its published model forms are in the outcome models'
module docstring (`referee.models.scores.outcome_glm`).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

from referee.models.fit import ConvergenceWarning
from referee.models.scores import outcome_glm as og
from referee.simulators.pass_fail import pass_fail_samples

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "real" / "inspect"


def fit_one(frame, truth, seed: int, sampler: str = "auto", **kwargs) -> dict:
    """One crossed fit timed, with its convergence, coverage and identification against `truth`."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the row reports convergence itself
        fit = og.fit_outcomes(frame, seed=seed, sampler=sampler, **kwargs)
    seconds = time.perf_counter() - start
    table = fit.table().set_index("agent")
    centred = (truth["agent"] - truth["agent"].mean())[table.index]
    covered = int(((table["hdi_low"] <= centred) & (centred <= table["hdi_high"])).sum())
    flagged = table.index[table["identified"] == og.NOT_IDENTIFIED].tolist()
    d = fit.diagnostics
    return {"fit": fit, "seconds": seconds, "sampling": d["sampling_seconds"], "r_hat": d["max_r_hat"],
            "ess_bulk": d["min_ess_bulk"], "ess_tail": d["min_ess_tail"], "divergences": d["divergences"],
            "covered": covered, "agents": len(table), "aliased_flagged": flagged == truth["aliased"]}


def generated(seeds: int) -> None:
    print(f"1. issue 52's design, crossed model at its defaults ({og.OUTCOME_DRAWS} draws, {og.OUTCOME_TUNE} "
          "tuning steps, 4 chains, nutpie)")
    print(f"{'data':>5} {'wall s':>7} {'sample s':>8} {'R-hat':>6} {'ESS bulk':>8} {'ESS tail':>8} {'div':>4} "
          f"{'covered':>8} {'aliased':>8}")
    rows, first = [], None
    for seed in range(seeds):
        frame, truth = pass_fail_samples(seed=20 + seed)
        row = fit_one(frame, truth, seed)
        first = first or (frame, truth, row["fit"])
        rows.append(row)
        print(f"{20 + seed:>5} {row['seconds']:>7.1f} {row['sampling']:>8.1f} {row['r_hat']:>6.3f} "
              f"{row['ess_bulk']:>8.0f} {row['ess_tail']:>8.0f} {row['divergences']:>4} "
              f"{row['covered']:>5}/{row['agents']} {'yes' if row['aliased_flagged'] else 'NO':>8}")
    converged = sum(r["r_hat"] <= 1.01 and min(r["ess_bulk"], r["ess_tail"]) >= 400 and not r["divergences"]
                    for r in rows)
    coverage = sum(r["covered"] for r in rows) / sum(r["agents"] for r in rows)
    print(f"converged {converged}/{len(rows)}; pooled coverage of the true agent effects by the 94 % HDIs "
          f"{coverage:.1%} (target >= 90 %); aliased agents flagged in {sum(r['aliased_flagged'] for r in rows)}"
          f"/{len(rows)}")
    frame, truth, crossed = first
    fits = {name: crossed if name == "crossed" else og.fit_outcomes(frame, effects=name, seed=0)
            for name in og.LADDER}
    table, notes = og.compare_ladder(fits)
    print("ladder on the first data set (PSIS-LOO, per sample):")
    print(table[table["criterion"] == "loo"][["model", "rank", "elpd", "elpd_diff", "dse", "weight"]]
          .to_string(index=False))
    print(notes[0])
    return frame, truth


SMALL = {"8 agents x 10 tasks x 5 items": dict(agents=8, tasks=10, items=5, epochs=1, aliased=0),
         "6 agents x 4 tasks x 20 items": dict(agents=6, tasks=4, items=20, epochs=1, aliased=0),
         "8 x 10 x 5, one agent with 5 samples": dict(agents=8, tasks=10, items=5, epochs=1, aliased=0)}


def small(seeds: int) -> None:
    """5. issue 85's small and unbalanced crossed designs at the defaults, `seeds` data sets each: per design, the
    data sets with 0 divergences (target >= 9 of 10), R-hat <= 1.01 and ESS >= 400, and the pooled coverage of the
    true agent effects by the 94 % HDIs (target 90-98 %), with the coding each fit stood on."""
    print("5. small and unbalanced crossed designs, crossed model at its defaults")
    for name, shape in SMALL.items():
        rows, codings = [], []
        for seed in range(seeds):
            frame, truth = pass_fail_samples(seed=seed, **shape)
            if "one agent" in name:  # the last agent keeps its first 5 samples
                last = frame[frame["agent"] == frame["agent"].max()]
                frame = frame.drop(last.index[5:]).reset_index(drop=True)
            row = fit_one(frame, truth, seed)
            rows.append(row)
            codings.append(", ".join(f"{e} {c}" for e, c in row["fit"].diagnostics.get("coding", {}).items())
                           + (" (refitted)" if any("refitted" in n for n in row["fit"].notes) else ""))
        clean = sum(not r["divergences"] for r in rows)
        converged = sum(r["r_hat"] <= 1.01 and min(r["ess_bulk"], r["ess_tail"]) >= 400 for r in rows)
        coverage = sum(r["covered"] for r in rows) / sum(r["agents"] for r in rows)
        print(f"  {name}: 0 divergences in {clean}/{len(rows)} (target >= {int(0.9 * len(rows))}); R-hat and ESS met "
              f"in {converged}/{len(rows)}; pooled coverage {coverage:.1%} (target 90-98 %); median fit "
              f"{sorted(r['seconds'] for r in rows)[len(rows) // 2]:.1f} s; codings: {sorted(set(codings))}")


def samplers(frame, truth) -> None:
    print("\n2. nutpie against PyMC's NUTS, the crossed model on the first data set (one process)")
    small, small_truth = pass_fail_samples(agents=4, tasks=2, items=5, aliased=0, seed=1)
    for sampler in ("nutpie", "pymc"):  # the process's one-time costs
        fit_one(small, small_truth, 0, sampler=sampler, draws=50, tune=50)
    print(f"{'sampler':>8} {'wall s':>7} {'sample s':>8} {'R-hat':>6} {'min ESS':>8} {'ESS/s':>7} {'div':>4}")
    found = {}
    for sampler in ("nutpie", "pymc"):
        row = fit_one(frame, truth, 0, sampler=sampler)
        ess = min(row["ess_bulk"], row["ess_tail"])
        found[sampler] = ess / row["seconds"]
        print(f"{sampler:>8} {row['seconds']:>7.1f} {row['sampling']:>8.1f} {row['r_hat']:>6.3f} {ess:>8.0f} "
              f"{ess / row['seconds']:>7.1f} {row['divergences']:>4}")
    print(f"nutpie's min-ESS per wall second is {found['nutpie'] / found['pymc']:.1f}x PyMC's")


def inspect(path: Path) -> None:
    print(f"\n3. real Inspect logs ({path}): agent + task fit as `referee fit pass-fail --effects agent+task` runs it")
    if not path.exists():
        print("   skipped: the shared folder is absent")
        return
    from referee.io.store import Store
    from referee.run.scores.score_jobs import fit

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "i.duckdb")
        start = time.perf_counter()
        store.ingest([str(path)])
        ingest = time.perf_counter() - start
        for label in ("cold", "warm"):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = fit(store, "pass-fail", effects="agent+task", seed=0)
            d = result.diagnostics
            print(f"   {label}: ingest {ingest:.1f} s, fit {time.perf_counter() - start:.1f} s (compile "
                  f"{d['compile_seconds']:.1f} s, sampling {d['sampling_seconds']:.1f} s), R-hat {d['max_r_hat']:.3f}, "
                  f"{d['divergences']} divergences; target under 15 s")


def _coding(model) -> str:
    """How the model codes its agent and task effects (a centred effect has no `z_` variable)."""
    return ", ".join(f"{e} {'non-centred' if f'z_{e}' in model.named_vars else 'centred'}" for e in ("agent", "task"))


def reuse(fits: int) -> None:
    """4. fits of one kind on data sets of other sizes in one process: per fit, the seconds until sampling starts
    and the process's resident memory after it, through the structure compiled once (`reuse`, referee's outcome
    models) and through nutpie's own compile of each model, side by side (the second after the first, so its
    resident memory starts from the first's)."""
    import resource

    from referee.models.fit import sample

    print(f"\n4. {fits} crossed pass-fail fits on data sets of other sizes in one process (500 draws, 2 chains)")
    designs = [(5 + k, 4 + k % 3, 10 + 4 * k) for k in range(fits)]
    for reused in (True, False):
        starts, rss = [], []
        for k, (agents, tasks, items) in enumerate(designs):
            frame, _ = pass_fail_samples(agents=agents, tasks=tasks, items=items, epochs=1, aliased=1, seed=k)
            model = og.build_model(og.design(frame), og.EFFECTS["crossed"], False, False, og.Priors())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, d = sample(model, ["mu"], draws=500, tune=500, chains=2, seed=k, low_rank=True,
                              target_accept=og.TARGET_ACCEPT, reuse=reused)
            starts.append(f"{d['compile_seconds']:.2f}" + ("" if d["compiled_model_reused"] or not k else
                                                            " (new structure: " + _coding(model) + ")"))
            rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        label = "structure compiled once" if reused else "nutpie's compile per model"
        print(f"   {label:27s} seconds to sampling: first {starts[0]}, then "
              f"{', '.join(starts[1:])} (target < 2 s after the first); peak RSS after each "
              f"fit: {', '.join(f'{r:.0f}' for r in rss)} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--no-pymc", action="store_true")
    parser.add_argument("--inspect", type=Path, default=SHARED)
    parser.add_argument("--reuse-fits", type=int, default=6)
    parser.add_argument("--only-reuse", action="store_true")
    parser.add_argument("--only-small", action="store_true", help="section 5 only: the small crossed designs")
    args = parser.parse_args()
    if args.only_reuse:
        reuse(args.reuse_fits)
        return
    if args.only_small:
        small(args.seeds)
        return
    frame, truth = generated(args.seeds)
    if not args.no_pymc:
        samplers(frame, truth)
    inspect(args.inspect)
    reuse(args.reuse_fits)
    small(args.seeds)


if __name__ == "__main__":
    main()
