"""`referee calibrate MODEL --sims N`: simulation-based calibration of a Bayesian model as one sweep.

Each simulation is one task (`referee.models.calibration.simulate_and_rank`) with its own seed from `task_seeds`, so
a run gives the same ranks here, in local processes or on a Dask cluster. `calibrate` gathers the ranks,
tests them per parameter group (`referee.models.calibration.summarise`) and returns a `CalibrationResult`.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from referee.run.executor import Executor, Task, run_tasks, task_seeds
from referee.models.calibration import FAMILIES, simulate_and_rank, summarise
from referee.models.fit import FitResult

DRAWS, TUNE, CHAINS = 500, 500, 2  # per simulation: ranks use 99 of the 1,000 draws


@dataclass
class CalibrationResult(FitResult):
    """A calibration run (the `referee.models.fit.FitResult` contract): `summary` per parameter group (group, ranks,
    p_uniform, coverage_50, coverage_94, passed), `ranks` one row per (sim, group, element), `fits` one row
    per simulation with its convergence. `passed` when every group passed. `table()` is the summary."""

    family: str = ""
    sims: int = 0
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    ranks: pd.DataFrame = field(default_factory=pd.DataFrame)
    fits: pd.DataFrame = field(default_factory=pd.DataFrame)

    def table(self) -> pd.DataFrame:
        """The per-group summary."""
        return self.summary

    @property
    def passed(self) -> bool:
        """Whether every parameter group passed."""
        return bool(self.summary["passed"].all())


def _kind(message: str) -> str:
    """A warning's kind: its text up to the first number ('ConvergenceWarning: NOT CONVERGED: max R-hat')."""
    return re.split(r"\d", message, maxsplit=1)[0].rstrip(" :(,")


def calibrate(family: str, sims: int, seed: int = 0, size: int = 0, draws: int = DRAWS, tune: int = TUNE,
              chains: int = CHAINS, sampler: str = "auto", executor: Executor | None = None) -> CalibrationResult:
    """Run `sims` simulations of `family` (a key of `referee.models.calibration.FAMILIES`) and test the ranks.

    size : the design's size (0: the smallest, for quick checks; larger adds agents). seed : the run's seed (the
    design's, and each simulation's through `task_seeds`). draws, tune, chains, sampler : each fit's sampling.
    executor : where the simulations run (`referee.run.executor`; default here).

    Returns a CalibrationResult; its notes say which groups failed and how many fits missed the convergence
    standard (counted, not repeated: calibration fits are short on purpose).
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown model {family!r}; models: {list(FAMILIES)}")
    if sims < 2:
        raise ValueError("a calibration needs at least 2 simulations")
    tasks = [Task(f"{family}-sim-{i}", simulate_and_rank, (family, size, seed, s, draws, tune, chains, sampler))
             for i, s in enumerate(task_seeds(seed, sims))]
    outs = run_tasks(tasks, executor, f"calibrating {family}")
    ranks = pd.concat([o["ranks"].assign(sim=i) for i, o in enumerate(outs)], ignore_index=True)
    ranks = ranks[["sim", "group", "element", "rank", "draws", "in50", "in94"]]
    fits = pd.DataFrame([{"sim": i, **{k: v for k, v in o["diagnostics"].items() if not isinstance(v, dict)}}
                         for i, o in enumerate(outs)])
    summary = summarise(ranks, sims)
    kinds = Counter(kind for o in outs for kind in {_kind(w) for w in o["warnings"]})
    notes = [f"{count} of {sims} simulations warned: {kind}" + (
        f" (each simulation's fit is short on purpose, {draws} draws x {chains} chains: the rank and coverage test "
        "below judges them together; no single one of these fits is for reading)"
        if "NOT CONVERGED" in kind else "") for kind, count in kinds.items()]
    for note in notes:  # raised in the tasks (perhaps on other machines): counted here, once each
        warnings.warn(note, UserWarning, stacklevel=2)
    failed = summary.loc[~summary["passed"], "group"].tolist()
    notes.append(f"{family}: {'every parameter group passed' if not failed else 'failed: ' + ', '.join(failed)} "
                 f"({sims} simulations; ranks uniform at p >= 0.001 and HDI coverage within 3 standard errors)")
    unconverged = int((~fits["converged"].astype(bool)).sum()) if "converged" in fits else 0
    diagnostics = {"converged": True, "sims": sims, "fits_not_meeting_standard": unconverged,
                   "groups_failed": failed, "draws": draws, "tune": tune, "chains": chains}
    return CalibrationResult(model=f"calibration:{family}", family=family, sims=sims, summary=summary, ranks=ranks,
                             fits=fits, notes=notes, diagnostics=diagnostics)
