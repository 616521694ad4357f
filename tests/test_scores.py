"""Per-agent scores and per-scenario min-max normalisation against hand-computed values."""

import math

import numpy as np
import pandas as pd
import pytest

from referee.run.scores.describe import mean_se
from referee.prepare.scores import BoundsWarning, agent_match_scores, normalise

SCENARIOS = pd.DataFrame({"scenario": ["s1", "s2"], "score_min": [-10.0, None], "score_max": [10.0, None]})


def test_theoretical_bounds_and_negative_infinity():
    scores = pd.DataFrame({"scenario": ["s1"] * 4, "game": ["g"] * 4, "score": [0.0, 10.0, -math.inf, 5.0]})
    out = normalise(scores, SCENARIOS)
    assert out["score_norm"].tolist() == [0.5, 1.0, 0.0, 0.75]
    assert (out["bounds"] == "theoretical").all()


def test_observed_bounds_warn():
    scores = pd.DataFrame({"scenario": ["s2"] * 3, "game": ["g"] * 3, "score": [2.0, 4.0, 3.0]})
    with pytest.warns(BoundsWarning, match=r"no theoretical score bounds for \['s2'\]"):
        out = normalise(scores, SCENARIOS)
    assert out["score_norm"].tolist() == [0.0, 1.0, 0.5]
    assert (out["bounds"] == "observed").all()


def test_out_of_bounds_clipped_with_warning_and_constant_is_nan():
    scores = pd.DataFrame({"scenario": ["s1", "s3", "s3"], "game": ["g"] * 3, "score": [12.0, 1.0, 1.0]})
    with pytest.warns(BoundsWarning) as caught:
        out = normalise(scores, SCENARIOS)
    messages = " ".join(str(w.message) for w in caught)
    assert "outside their theoretical bounds in ['s1']" in messages and "constant scores in ['s3']" in messages
    assert out["score_norm"].iloc[0] == 1.0 and np.isnan(out["score_norm"].iloc[1])


def test_game_is_the_unit_without_scenario():
    scores = pd.DataFrame({"scenario": [None, None, None], "game": ["a", "a", "b"], "score": [1.0, 3.0, 7.0]})
    with pytest.warns(BoundsWarning):
        out = normalise(scores, SCENARIOS)
    assert out["score_norm"].tolist()[:2] == [0.0, 1.0] and np.isnan(out["score_norm"].iloc[2])


def test_agent_match_scores_average_focal_players_only():
    matches = pd.DataFrame({"match_id": ["m"], "runner": ["r"], "game": ["g"], "scenario": ["s"], "variant": [None],
                            "phase": [None], "repetition": ["0"], "communication": [None]})
    results = pd.DataFrame({"match_id": ["m"] * 4, "agent": ["a", "a", "a", "bg"], "player": list("pqrs"),
                            "group": ["focal", "focal", "focal", "background"], "score": [1.0, 2.0, 6.0, 100.0]})
    out = agent_match_scores(matches, results)
    assert out[["agent", "score", "n_players"]].values.tolist() == [["a", 3.0, 3]]


def test_mean_se():
    table = mean_se(pd.DataFrame({"agent": ["a", "a", "a", "b"], "score_norm": [0.0, 0.5, 1.0, 0.2]}), "agent")
    assert table["agent"].tolist() == ["a", "b"]
    assert table.loc[0, "mean"] == 0.5 and table.loc[0, "se"] == pytest.approx(0.5 / math.sqrt(3))
    assert np.isnan(table.loc[1, "se"]) and table.loc[1, "n"] == 1
