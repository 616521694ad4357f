"""Sweeps on one executor: the same bootstrap, cross-validation and calibration here, in local processes and on
a real Dask LocalCluster (scheduler and workers as processes on loopback); retries and failures by name;
Parquet export; and simulation-based calibration that passes on the models and fails on a broken one.

Bounded in CI (a few simulations per model); REFEREE_FULL=1 runs 100 per model."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.io.store import Store
from referee.present.plan_figures import plot_rank_histograms
from referee.run.scores.calibrate import calibrate
from referee.run.executor import Executor, SweepError, Task, run_tasks, start_tasks, task_seeds
from referee.run.ratings.ratings import rate
from referee.run.ratings.ratings_cv import cross_validate
from referee.models import calibration
from tests.figure_checks import figure_problems
from tests.helpers import simulate

FULL = bool(os.environ.get("REFEREE_FULL"))


@pytest.fixture(scope="module")
def cluster():
    """A Dask LocalCluster of two worker processes on 127.0.0.1, shared by this module's tests."""
    with Executor(scheduler="local:2") as executor:
        assert executor.workers == 2
        yield executor


@pytest.fixture(scope="module")
def comparisons():
    strengths = np.random.default_rng(0).normal(0, 1, size=(2, 10))
    return simulate(strengths, ["g1", "g2"], 1500, seed=1)


def test_task_seeds_depend_on_the_seed_and_the_index_only():
    assert task_seeds(7, 5) == task_seeds(7, 5)
    assert task_seeds(7, 5)[:3] == task_seeds(7, 3)  # adding tasks does not change the first ones' seeds
    assert len(set(task_seeds(7, 50))) == 50 and task_seeds(8, 3) != task_seeds(7, 3)


@pytest.mark.parametrize("method, by", [("bt", None), ("elo", "game")])
def test_bootstrap_is_identical_on_every_executor(comparisons, cluster, method, by):
    here = rate(comparisons, method, by=by, bootstrap=120, seed=5).bootstrap.ratings
    with Executor(jobs=2) as local:
        processes = rate(comparisons, method, by=by, bootstrap=120, seed=5, executor=local).bootstrap.ratings
    dask = rate(comparisons, method, by=by, bootstrap=120, seed=5, executor=cluster).bootstrap.ratings
    assert here.shape[0] == 120
    np.testing.assert_array_equal(here, processes)
    np.testing.assert_array_equal(here, dask)


def test_cross_validation_is_identical_on_every_executor(comparisons, cluster):
    here = cross_validate(comparisons, folds=3, dims=[1, 2], seed=2)
    dask = cross_validate(comparisons, folds=3, dims=[1, 2], seed=2, executor=cluster)
    assert len(here) == 3 * 4  # bt, bt-per-game, bt-md 1 and 2 in each fold
    pd.testing.assert_frame_equal(here, dask)


def test_calibration_is_identical_on_every_executor(cluster):
    options = dict(draws=100, tune=100, chains=2, seed=3, sampler="pymc")  # the executors, not the sampler, on test
    here = calibrate("audit-regression", 3, **options)
    dask = calibrate("audit-regression", 3, executor=cluster, **options)
    pd.testing.assert_frame_equal(here.ranks, dask.ranks)
    pd.testing.assert_frame_equal(here.summary, dask.summary)


def flaky(marker: str, value: int) -> int:
    """Fails the first time it runs for `marker` (a file), then succeeds: a task worth one retry."""
    path = Path(marker)
    if not path.exists():
        path.write_text("tried")
        raise RuntimeError("first attempt fails")
    return value


def broken(value: int) -> int:
    raise ValueError(f"task {value} always fails")


def done(folder: str, value: int) -> int:
    Path(folder, f"done-{value}").write_text("ok")
    return value * 10


@pytest.mark.parametrize("where", ["here", "processes", "dask"])
def test_a_failed_task_is_retried_once_then_named_and_the_rest_still_run(tmp_path, cluster, where):
    executor = {"here": None, "processes": Executor(jobs=2), "dask": cluster}[where]
    try:
        tasks = [Task(f"flaky-{i}", flaky, (str(tmp_path / f"marker-{i}"), i)) for i in range(3)]
        assert run_tasks(tasks, executor) == [0, 1, 2]  # each failed once, passed on its retry
        tasks = [Task(f"ok-{i}", done, (str(tmp_path), i)) for i in range(4)] + [Task("bad-one", broken, (9,))]
        with pytest.raises(SweepError) as caught:
            run_tasks(tasks, executor)
        assert caught.value.failures.keys() == {"bad-one"} and "task 9 always fails" in str(caught.value)
        assert sorted(p.name for p in tmp_path.glob("done-*")) == [f"done-{i}" for i in range(4)]
    finally:
        if where == "processes":
            executor.close()


def waits_for(folder: str, value: int) -> int:
    """A task that says it has begun, then waits (up to 60 s) for the caller's word that it went on meanwhile."""
    import time

    Path(folder, f"begun-{value}").write_text("ok")
    deadline = time.monotonic() + 60
    while not Path(folder, "went-on").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return value * 10 if Path(folder, "went-on").exists() else -1


@pytest.mark.parametrize("where", ["processes", "dask"])
def test_started_tasks_run_while_the_caller_goes_on_and_give_run_tasks_results(tmp_path, cluster, where):
    """`start_tasks` returns with the tasks running elsewhere (each has begun before the caller asks for any
    result, and finishes only after the caller has gone on); `finish()` gives what `run_tasks` gives."""
    import time

    executor = {"processes": Executor(jobs=2), "dask": cluster}[where]
    try:
        tasks = [Task(f"wait-{i}", waits_for, (str(tmp_path), i)) for i in range(2)]
        started = start_tasks(tasks, executor)
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("begun-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(list(tmp_path.glob("begun-*"))) == 2  # both under way, no result asked for yet
        (tmp_path / "went-on").write_text("ok")
        assert started.finish() == [0, 10]
        assert run_tasks([Task(f"ok-{i}", done, (str(tmp_path), i)) for i in range(3)], executor) == [0, 10, 20]
    finally:
        if where == "processes":
            executor.close()


def test_export_is_read_back_by_duckdb_pandas_and_dask(sample_store, tmp_path):
    import dask.dataframe as dd

    out = tmp_path / "parquet"
    assert main(["export", "--store", str(sample_store), "--parquet", str(out)]) == 0
    with Store(sample_store, read_only=True) as store:
        counts = {t: len(store.table(t)) for t in ("matches", "results", "events", "scenarios")}
        runners = set(store.table("matches")["runner"])
    assert {p.name.split("=")[1] for p in (out / "matches").iterdir()} == runners
    assert len(pd.read_parquet(out / "results")) == counts["results"]
    assert len(dd.read_parquet(str(out / "matches")).compute()) == counts["matches"]
    query = f"SELECT count(*) FROM read_parquet('{out}/events/**/*.parquet', hive_partitioning = true)"
    assert duckdb.connect().execute(query).fetchone()[0] == counts["events"]
    assert len(pd.read_parquet(out / "scenarios.parquet")) == counts["scenarios"]
    assert main(["export", "--store", str(sample_store), "--parquet", str(out)]) == 1  # never overwrites


SIMS = 100 if FULL else 4


@pytest.mark.bayes
@pytest.mark.slow
@pytest.mark.parametrize("family", [f if f == "bayes-bt" else pytest.param(f, marks=pytest.mark.heavy)
                                    for f in calibration.FAMILIES])
def test_every_bayesian_model_is_calibrated(family):
    result = calibrate(family, SIMS, seed=11, draws=300 if not FULL else 500, tune=300 if not FULL else 500)
    assert len(result.ranks) == SIMS * len(result.ranks[result.ranks["sim"] == 0])
    assert result.ranks["rank"].between(0, result.ranks["draws"]).all()
    assert result.passed, result.summary.to_string()
    assert figure_problems(plot_rank_histograms(result.ranks, result.summary)) == []


def _overdispersed(rng, design, truth):
    """The audit regression's data with three times the noise its prior allows: a model that cannot fit it."""
    mean = truth["intercept"] + truth["slope"] * design["x"] + design["dummies"] @ truth["assignment"]
    return rng.normal(mean, 3 * truth["sigma"])


@pytest.mark.bayes
def test_calibration_fails_a_model_that_does_not_match_its_data(monkeypatch):
    family = calibration.FAMILIES["audit-regression"]
    broken_family = calibration.Family("audit-regression", family.design, family.build, family.ranked,
                                       _overdispersed, family.diagnosed)
    monkeypatch.setitem(calibration.FAMILIES, "audit-regression", broken_family)
    result = calibrate("audit-regression", 12, seed=4, draws=200, tune=200)
    summary = result.summary.set_index("group")
    assert not summary.loc["sigma", "passed"] and summary.loc["sigma", "coverage_94"] < 0.5
    assert any("failed: sigma" in n for n in result.notes)


def test_calibrate_command_records_the_run_and_the_report_links_it(tmp_path):
    store = tmp_path / "s.duckdb"
    out = tmp_path / "calibration"
    assert main(["calibrate", "audit-regression", "--sims", "3", "--draws", "100", "--tune", "100", "--store",
                 str(store), "--out", str(out)]) in (0, 1)
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["group"]) == {"slope", "assignment", "intercept", "sigma"}
    assert (out / "rank_histograms.png").stat().st_size > 5000 and len(pd.read_csv(out / "ranks.csv")) == 3 * 5
    from referee.reporting import build_report

    with Store(store, read_only=True) as s:
        build_report(s, tmp_path / "report", fit_models=False)
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Calibration of the Bayesian models" in text
    assert "../calibration/rank_histograms.png" in text


def test_rank_uniformity_counts_a_simulations_elements_as_one_simulations_evidence():
    """Closed form: 12 simulations whose 18 elements each share their simulation's rank give counts 18 times
    those of the 12 ranks alone, so the corrected chi-square is the 12 ranks' own; the uncorrected one would call
    a fair sample non-uniform. 18 independent elements per simulation keep their evidence (divided, but still
    found when the ranks pile up)."""
    rng = np.random.default_rng(0)
    ranks12 = rng.integers(0, 100, 12)
    copies = pd.DataFrame({"group": "g", "sim": np.repeat(np.arange(12), 18), "element": np.tile(np.arange(18), 12),
                           "rank": np.repeat(ranks12, 18), "draws": 99, "in50": True, "in94": True})
    p = calibration.summarise(copies, 12).set_index("group").loc["g", "p_uniform"]
    counts = np.histogram(ranks12 / 100, bins=calibration.BINS, range=(0, 1))[0]
    from scipy import stats
    assert p == pytest.approx(stats.chisquare(counts).pvalue)
    assert stats.chisquare(counts * 18).pvalue < calibration.P_MIN < p  # uncorrected: a false alarm
    piled = copies.assign(rank=rng.integers(90, 100, len(copies)))  # every rank in the top bin: a broken model
    assert not calibration.summarise(piled, 12).set_index("group").loc["g", "passed"]
