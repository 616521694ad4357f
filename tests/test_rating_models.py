"""Per-game, multidimensional and bootstrapped ratings: recovery of known parameters and invariances."""

import numpy as np
import pandas as pd
import pytest

from referee.run.ratings.ratings import encode, rate
from referee.models.ratings.bootstrap import bootstrap_bt, bootstrap_generic, cluster_signatures
from referee.models.ratings.bradley_terry import ELO_SCALE, fit_bt, pair_counts
from referee.models.ratings.bt_multidim import canonical, fit_bt_multidim
from referee.models.ratings.bt_per_game import fit_bt_per_game
from tests.helpers import simulate


def test_per_game_recovers_mu_and_deviations():
    rng = np.random.default_rng(3)
    mu = rng.normal(0, 1, 8)
    delta = rng.normal(0, 0.5, (4, 8))
    data = simulate(mu + delta, ["g0", "g1", "g2", "g3"], 40000, seed=4)
    coded = encode(data)
    fit = fit_bt_per_game(coded.game_counts(), coded.agents, coded.games, tau_elo=0.5 * ELO_SCALE)
    true_theta = mu + delta
    assert np.corrcoef(fit.mu, mu + delta.mean(axis=0))[0, 1] > 0.97  # the deviations' mean belongs to mu
    for k in range(4):
        est = fit.theta[k] - fit.theta[k].mean()
        assert np.abs(est - (true_theta[k] - true_theta[k].mean())).max() < 0.25
    # with deviations shrunk to nothing, the global ratings are scalar Bradley-Terry's
    tight = fit_bt_per_game(coded.game_counts(), coded.agents, coded.games, tau_elo=0.1)
    np.testing.assert_allclose(tight.mu, fit_bt(coded.counts(), coded.agents).theta, atol=1e-3)
    assert np.allclose(tight.kendall_tau()["kendall_tau"], 1.0)


def test_multidim_canonical_form_is_invariant():
    rng = np.random.default_rng(0)
    W, G = rng.normal(size=(6, 2)), rng.normal(size=(4, 2))
    A = np.array([[2.0, 0.5], [-0.3, 1.5]])
    W2, G2 = W @ A + 3.0, G @ np.linalg.inv(A).T
    for x, y in zip(canonical(W, G), canonical(W2, G2)):
        np.testing.assert_allclose(x, y, atol=1e-10)
    Wc, Gc = canonical(W, G)
    assert (Gc.sum(axis=0) > 0).all()
    np.testing.assert_allclose(Gc @ (Wc - Wc.mean(0)).T, G @ (W - W.mean(0)).T, atol=1e-10)


def test_multidim_recovers_a_two_dimensional_truth():
    rng = np.random.default_rng(5)
    W, G = rng.normal(0, 1, (7, 2)), np.array([[1.5, 0.0], [0.0, 1.5], [1.0, 1.0], [1.0, -1.0]])
    truth = G @ W.T
    data = simulate(truth, ["g0", "g1", "g2", "g3"], 40000, seed=6)
    coded = encode(data)
    one = fit_bt_multidim(coded.game_counts(), coded.agents, coded.games, dims=1)
    two = fit_bt_multidim(coded.game_counts(), coded.agents, coded.games, dims=2)
    assert two.loglik > one.loglik + 100  # a second dimension is needed
    for k in range(4):
        est, true = two.strengths[k], truth[k]
        assert np.corrcoef(est, true)[0, 1] > 0.97


def test_signatures_preserve_counts():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 4, 500), rng.integers(0, 4, 500)
    keep = a != b
    a, b = a[keep], b[keep]
    outcome = rng.choice([0.0, 0.5, 1.0], size=len(a))
    for cluster in (np.arange(len(a)), np.arange(len(a)) // 3):
        S, counts = cluster_signatures(a, b, outcome, cluster, 4)
        total = np.asarray(counts @ S.toarray()).reshape(4, 4)
        np.testing.assert_allclose(total, pair_counts(a, b, outcome, 4))


def test_fast_bootstrap_agrees_with_generic_resampling():
    rng = np.random.default_rng(2)
    data = simulate(rng.normal(0, 0.8, (1, 6)), ["g"], 3000, seed=7)
    coded = encode(data)
    fit = fit_bt(coded.counts(), coded.agents)
    fast = bootstrap_bt(coded.a, coded.b, coded.outcome, coded.cluster, coded.agents, fit.theta, replicates=400, seed=1)

    def refit(sample):
        c = encode(sample, coded.agents)
        return pd.Series(fit_bt(c.counts(), c.agents).ratings, index=c.agents)

    slow = bootstrap_generic(data, refit, coded.agents, replicates=400, seed=1)
    sd_fast, sd_slow = fast.ratings.std(axis=0), slow.ratings.std(axis=0)
    np.testing.assert_allclose(sd_fast, sd_slow, rtol=0.2)
    # and both agree with the Wald standard errors
    np.testing.assert_allclose(sd_fast, fit.se * ELO_SCALE, rtol=0.2)


def test_rate_by_game_with_bootstrap_ranks_within_games():
    rng = np.random.default_rng(8)
    data = simulate(rng.normal(0, 1, (2, 5)), ["g0", "g1"], 4000, seed=9)
    table = rate(data, "bt", by="game", bootstrap=30).table()
    assert set(table.columns) == {"game", "agent", "rating", "lower", "upper", "rank", "replicates", "flag"}
    assert table.groupby("game")["rank"].max().tolist() == [5, 5]
    assert (table["lower"] <= table["rating"]).all()


@pytest.mark.parametrize("method", ["elo", "bt", "bt-per-game", "bt-md", "online-elo"])
def test_every_method_orders_well_separated_agents(method):
    strengths = np.array([[-2.0, -1.0, 0.0, 1.0, 2.0]])
    data = simulate(strengths, ["g"], 6000, seed=10)
    table = rate(data, method, dims=1).table().sort_values("agent")
    assert table["rank"].tolist() == [5, 4, 3, 2, 1]


def test_bt_replicates_do_not_depend_on_the_chunk_they_are_fitted_in():
    from referee.models.ratings.bootstrap import bt_replicates, bt_resampling

    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, 2000)
    b = (a + rng.integers(1, 5, 2000)) % 5
    outcome = (rng.random(2000) < 0.5).astype(float)
    for second in (None, (np.arange(2000) + 1) % 300):  # one comparison per cluster; parallel across two games
        cluster = np.arange(2000) if second is None else np.arange(2000) % 300
        resampling = bt_resampling(a, b, outcome, cluster, 5, second=second)
        whole = bt_replicates(resampling, np.zeros(5), 60, 3, chunk=60)
        assert np.allclose(whole, bt_replicates(resampling, np.zeros(5), 60, 3, chunk=7), atol=1e-9)
        assert not np.allclose(whole, bt_replicates(resampling, np.zeros(5), 60, 4, chunk=60))  # the seed matters
