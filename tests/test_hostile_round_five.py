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
