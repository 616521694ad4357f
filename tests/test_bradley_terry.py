"""Bradley-Terry: the evalica reference on LLMFAO, existence of the MLE, recovery of known ratings."""

import numpy as np
import pandas as pd
import pytest

from referee.prepare.comparisons import match_comparisons
from referee.io.loaders import arena
from referee.io.loaders.base import LoadOptions, file_hash
from referee.run.ratings.ratings import encode, rate
from referee.simulators.arena import simulate_arena, write_arena
from referee.models.ratings.bradley_terry import RatingWarning, fit_bt, fit_bt_batch, mle_exists, pair_counts
from tests.conftest import shared_file


def _llmfao_comparisons():
    path = shared_file("llmfao", "llmfao.csv")
    result = arena.load(path, file_hash(path), LoadOptions())
    return match_comparisons(result.frame("matches"), result.frame("results"))


def test_llmfao_matches_evalica_reference():
    comparisons = _llmfao_comparisons()
    assert len(comparisons) == 8931
    coded = encode(comparisons)
    fit = fit_bt(coded.counts(), coded.agents)
    assert fit.method == "mle"
    strength = pd.Series(np.exp(fit.theta) / np.exp(fit.theta).sum(), index=coded.agents)
    golden = pd.read_csv(shared_file("llmfao", "llmfao-golden.csv"))
    golden = golden[golden.algorithm == "bradley_terry"].set_index("item")["score"]
    assert len(golden) == 59 and set(golden.index) == set(strength.index)
    np.testing.assert_allclose(strength.reindex(golden.index), golden, rtol=1e-4)


def test_pair_counts_ties():
    W = pair_counts(np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 0.5, 0.5]), 2)
    assert W.tolist() == [[0.0, 2.0], [1.0, 0.0]]  # a: 1 win + two half-ties; b: two half-ties
    W = pair_counts(np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 0.5, 0.5]), 2, ties="ignore")
    assert W.tolist() == [[0.0, 1.0], [0.0, 0.0]]


def test_mle_existence_and_map_fallback():
    assert mle_exists(np.array([[0, 1], [1, 0]]))
    assert not mle_exists(np.array([[0, 2], [0, 0]]))
    with pytest.warns(RatingWarning, match="MLE does not exist"):
        fit = fit_bt(np.array([[0.0, 2.0], [0.0, 0.0]]), ["a", "b"])
    assert fit.method == "map" and fit.ratings[0] > fit.ratings[1] and np.isfinite(fit.ratings).all()
    # MAP with the prior, two wins: theta_a - theta_b solves 2(1 - p) = 2 * d / sd^2 ... check stationarity
    d = fit.theta[0] - fit.theta[1]
    p = 1 / (1 + np.exp(-d))
    assert 2 * (1 - p) == pytest.approx(fit.theta[0] / fit.prior_sd**2, abs=1e-8)


def test_two_agent_mle_closed_form():
    # 7 wins to 3: theta_a - theta_b = log(7/3); Elo difference = 400 log10(7/3)
    fit = fit_bt(np.array([[0.0, 7.0], [3.0, 0.0]]), ["a", "b"])
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * np.log10(7 / 3), abs=1e-9)
    # Wald se of the difference: 1 / sqrt(N p (1-p)) with p = 0.7, N = 10; each theta has half of it
    assert fit.se[0] == pytest.approx(0.5 / np.sqrt(10 * 0.7 * 0.3), rel=1e-6)


def test_recovers_simulated_ratings_with_calibrated_intervals(tmp_path):
    sim = simulate_arena(n_agents=12, n_judgments=20000, seed=11, tie_rate=0.0)
    paths = write_arena(sim, tmp_path)
    result = arena.load(paths["judgments"], file_hash(paths["judgments"]), LoadOptions())
    table = rate(match_comparisons(result.frame("matches"), result.frame("results")), "bt").table()
    truth = pd.Series(sim.truth["ratings"]).reindex(table["agent"]).to_numpy()
    err = table["rating"].to_numpy() - truth
    assert np.abs(err).max() < 40
    covered = (table["lower"].to_numpy() <= truth) & (truth <= table["upper"].to_numpy())
    assert covered.mean() >= 0.75  # nominal 95%, 12 agents


def test_batched_newton_equals_single_fits():
    rng = np.random.default_rng(0)
    Ws = rng.poisson(5, size=(6, 5, 5)).astype(float)
    for W in Ws:
        np.fill_diagonal(W, 0)
    batch = fit_bt_batch(Ws, np.zeros(5))
    for W, theta in zip(Ws, batch):
        np.testing.assert_allclose(theta, fit_bt(W, list("abcde")).theta, atol=1e-7)


def test_bootstrap_replicates_without_an_mle_get_the_prior_not_a_singular_system():
    """Two pairs, a-b and c-d, each with wins both ways, joined by one drawn match b-c: the full data have an
    MLE, but a replicate that leaves out that match splits into two groups never compared, whose batched
    Newton system was singular (LinAlgError). Such replicates take the default prior: finite ratings."""
    import numpy as np

    from referee.models.ratings.bootstrap import bootstrap_bt

    a = np.array([0, 1, 0, 1, 2, 3, 2, 3, 1])
    b = np.array([1, 0, 1, 0, 3, 2, 3, 2, 2])
    outcome = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0.5])
    cluster = np.arange(9)
    result = bootstrap_bt(a, b, outcome, cluster, ["a", "b", "c", "d"], np.zeros(4), replicates=200, seed=1)
    ratings = result.ratings
    present = np.isfinite(ratings).all(axis=1)
    assert present.mean() > 0.9  # replicates missing an agent altogether leave it NaN, as documented
    np.testing.assert_allclose(ratings[present].mean(axis=1), 1500.0, atol=1e-6)  # centred on 1500
    assert np.abs(ratings[present] - 1500).max() < 400  # the prior holds the split groups near the centre
