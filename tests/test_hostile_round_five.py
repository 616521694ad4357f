"""Hostile input, round five (issue 89), in part: options that ran until killed or ended in exit 3 are refused
before any work, with exit 2 and the reason (each bound stated in the option's help)."""

from __future__ import annotations

import pytest

from referee.cli import main

CASES = [
    (["ratings", "--method", "online-elo", "--k", "1e308"], "--k: must be at most 1,000 (Elo points"),
    (["plan", "--budget", "1000000000000"], "--budget: must be at most 100,000"),
    (["plan", "--power", "--sims", "1000000000000"], "--sims: must be at most 100,000"),
    (["calibrate", "bayes-bt", "--sims", "1000000000000"], "--sims: must be at most 10,000"),
    (["simulate", "arena", "--agents", "1000000000"], "--agents: must be at most 100,000"),
    (["rank", "--method", "alpha-rank", "--alpha", "1e308"], "--alpha: must be at most 700"),
    (["simulate", "compact", "--games", "1000000000000"], "--games: must be at most 1,000,000"),
    (["simulate", "concordia", "--phases", "--final-repetitions", "1000000000"], "--final-repetitions: must be at most 1,000"),
    (["simulate", "aoa", "--event-scale", "1e300"], "--event-scale: must be at most 1,000"),
    (["simulate", "aoa", "--validity", "1e308"], "--validity: must be a number from 0 to 1"),
    (["simulate", "arena", "--judgments", "1000000000000"], "--judgments: must be at most 1,000,000"),
]


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(c[0][:2]) + " " + c[0][-2] for c in CASES])
def test_an_option_past_its_bound_is_refused_before_any_work(argv, words, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv + ["--out", str(tmp_path / "out")])
    assert exit_.value.code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_anchor_past_its_bound_is_refused_with_its_reason(tmp_path, sample_store, capsys):
    code = main(["ratings", "--store", str(sample_store), "--runner", "concordia", "--anchor", "agent_07=1e308",
                 "--out", str(tmp_path / "out")])
    assert code == 1 and "--anchor's RATING must be within +/-100,000 Elo points" in capsys.readouterr().err


WORK = [
    (["plan", "--power", "--sims", "100000"], "about 1,400,000 Bradley-Terry fits (14 points of the power curve x "
                                              "100,000 simulations each), above the limit of 100,000; lower --sims"),
    (["calibrate", "bayes-bt", "--sims", "10000"], "about 70,000,000 NUTS steps (10,000 cycles x 4 chains x (1,250 "
                                                   "draws + 500 tuning steps)), above the limit of 20,000,000"),
    (["calibrate", "bayes-bt", "--sims", "20", "--draws", "100000", "--chains", "64"], "about 128,640,000 NUTS steps"),
]


@pytest.mark.parametrize("argv, words", WORK, ids=[" ".join(c[0][:3]) for c in WORK])
def test_a_request_whose_options_multiply_past_the_jobs_limit_is_refused_before_it_starts(argv, words, tmp_path,
                                                                                        sample_store, capsys):
    """Issue 89: options each within their bounds can multiply into work no one can wait for (a power curve of
    1.4M fits ran silent past 25 s): the job's estimate is checked against its stated limit before any read,
    refused at once with the estimate, the limit, the options that lower it and --allow-long."""
    import time

    start = time.perf_counter()
    code = main(argv + ["--store", str(sample_store), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1 and words in err and "--allow-long" in err, err
    assert time.perf_counter() - start < 10 and not (tmp_path / "out").exists()


def test_the_power_curves_work_estimate_counts_the_fits_it_makes_and_allow_long_lifts_the_limit():
    """The estimate is the work: the power curve fits POWER_POINTS x sims tournaments (counted here from the curve
    itself), and --allow-long binds the same request without a refusal."""
    import pandas as pd

    from referee.run.job_table import JOBS
    from referee.run.ratings.plan import power_curve
    from referee.run.work import POWER_POINTS, plan_work

    comparisons = pd.DataFrame({"a": ["x", "y", "x"] * 10, "b": ["y", "z", "z"] * 10, "outcome": [1.0, 0.0, 1.0] * 10,
                                "cluster": [str(k) for k in range(30)], "game": None})
    curve = power_curve(comparisons, 50.0, sims=2, seed=0)
    assert len(curve) == POWER_POINTS and plan_work({"power": True, "sims": 2}).units == len(curve) * 2
    bound = JOBS["plan"].bind({"power": True, "sims": 100000, "allow_long": True})
    assert bound["sims"] == 100000
    with pytest.raises(ValueError, match="above the limit"):
        JOBS["plan"].bind({"power": True, "sims": 100000})
