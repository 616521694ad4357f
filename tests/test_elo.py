"""Elo: the contest's published test vectors, OpenSpiel's profile, the NaN fallback, online Elo by hand."""

import warnings

import numpy as np
import pytest

from referee.models.ratings.bradley_terry import RatingWarning
from referee.models.ratings.elo import contest_elo, online_elo


@pytest.mark.parametrize("W, expected", [
    ([[0, 2, 0, 1], [3, 0, 5, 0], [0, 3, 0, 1], [4, 0, 3, 0]], [1422, 1507, 1428, 1642]),
    ([[0, 8, 8, 10, 9], [2, 0, 6, 6, 6], [2, 4, 0, 6, 4], [0, 4, 4, 0, 5], [1, 4, 6, 5, 0]], [1773, 1491, 1428, 1380, 1428]),
    # OpenSpiel's ballots A>B>C>D, B>C>D>A, C>A>D>B, D>A>B>C, A>C>B>D as a win-loss matrix
    ([[0, 4, 3, 3], [1, 0, 3, 3], [2, 2, 0, 4], [2, 2, 1, 0]], [1592, 1482, 1518, 1408]),
])
def test_published_vectors(W, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the exact path must not fall back
        assert contest_elo(np.array(W)).tolist() == expected


@pytest.mark.parametrize("W, culprit", [
    ([[0, 2, 1], [0, 0, 1], [0, 1, 0]], "never lost: a"),         # a never loses
    ([[0, 1, 1], [1, 0, 1], [0, 0, 0]], "never won: c"),           # c never wins
    ([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], "disconnected"),  # two separate pairs
])
def test_undefined_contest_elo_warns_and_gives_finite_map(W, culprit):
    with pytest.warns(RatingWarning, match="MAP Bradley-Terry") as caught:
        elo = contest_elo(np.array(W, float), ["a", "b", "c", "d"][: len(W)])
    assert culprit in str(caught[0].message) or culprit == "disconnected"
    assert np.isfinite(elo).all() and abs(elo.mean() - 1500) < 1
    if culprit.startswith("never lost"):
        assert elo[0] == elo.max()


def test_online_elo_by_hand():
    # equal ratings: expected 0.5, so K/2 moves; then 1516 beats... 1484 draws 1516
    r = online_elo(np.array([0, 1]), np.array([1, 0]), np.array([1.0, 0.5]), 2, k=32)
    first = 16.0
    expected_second = 0.5 - 1 / (1 + 10 ** ((1500 + first - (1500 - first)) / 400))
    assert r[0] == pytest.approx(1500 + first - 32 * expected_second)
    assert r[1] == pytest.approx(1500 - first + 32 * expected_second)
    assert r.sum() == pytest.approx(3000)
