"""Scenario selection for the Measurement Layout (models/scores/layout_design.py): the ordered-beta moments against
closed forms and simulation, the expected information against its one-demand closed form, the linearised gain
against a second method (importance-sampled preposterior variance), and the plan's choices on posteriors whose
least known capability is known by construction."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import beta as beta_dist

from referee.models.scores.beta_regression import draw_ordered_beta, expected_score
from referee.models.scores.layout_design import (LayoutDraws, expected_information, layout_profiles, next_layout_scenarios,
                                         ordered_beta_moments, split_merged, with_prior_demands)

K1, K2, NU, BASE = -3.0, 3.0, 8.0, 0.05


def _draws(cap: np.ndarray, demands: list[str]) -> LayoutDraws:
    """LayoutDraws with capability draws `cap` (S, A, D), the same base, precision and cutpoints everywhere."""
    S, A, _ = cap.shape
    return LayoutDraws([f"a{k}" for k in range(A)], demands, cap, np.full((S, A), BASE), np.full((S, A), NU),
                       np.tile([K1, K2], (S, 1)))


def _ridge_posterior(S: int, agents: int = 1, seed: int = 1) -> LayoutDraws:
    """d0 well known (~0.9), d1 unknown (Beta(2, 2)), d2 and d3 on a ridge: only their product (0.35) is known."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.35, 1.0, (S, agents))
    cap = np.stack([rng.beta(90, 10, (S, agents)), rng.beta(2, 2, (S, agents)), t, 0.35 / t], axis=2)
    return _draws(np.clip(cap, 1e-6, 0.999), ["d0", "d1", "d2", "d3"])


def test_ordered_beta_moments_against_expected_score_and_simulation():
    mu = np.array([0.1, 0.4, 0.75, 0.97])
    mean, var, slope = ordered_beta_moments(mu, K1, K2, NU)
    eta = np.log(mu / (1 - mu))
    np.testing.assert_allclose(mean, expected_score(eta, (K1, K2)), rtol=1e-12)
    h = 1e-6  # the slope against a finite difference of the independent expected_score
    fd = (expected_score(np.log((mu + h) / (1 - mu - h)), (K1, K2))
          - expected_score(np.log((mu - h) / (1 - mu + h)), (K1, K2))) / (2 * h)
    np.testing.assert_allclose(slope, fd, rtol=1e-5)
    rng = np.random.default_rng(0)
    for m, v in zip(eta, var):
        y = draw_ordered_beta(rng, np.full(200_000, m), K1, K2, NU)
        assert y.var() == pytest.approx(v, rel=0.02)


def test_expected_information_matches_its_one_demand_closed_form():
    # b = 0 and cutpoints far out: y ~ Beta(c nu, (1 - c) nu), E[y] = c, dE/dlog c = c, Var = c (1 - c) / (1 + nu)
    rng = np.random.default_rng(2)
    c = rng.beta(3, 2, 500)
    draws = LayoutDraws(["a"], ["d"], c[:, None, None], np.zeros((500, 1)), np.full((500, 1), NU),
                        np.tile([-60.0, 60.0], (500, 1)))
    info = expected_information(draws, np.array([[1.0], [0.0]]))
    assert info[0, 0, 0, 0] == pytest.approx(np.mean(c * (1 + NU) / (1 - c)), rel=1e-6)
    assert info[0, 1, 0, 0] == 0.0


def _preposterior_variance(draws: LayoutDraws, x: np.ndarray, repeats: int, rng, replicates: int = 200) -> np.ndarray:
    """Expected posterior variance of every capability after `repeats` episodes of profile x, by simulation:
    a truth drawn from the posterior, its scores simulated, the draws reweighted by their likelihood
    (importance sampling). Returns (D,)."""
    cap = draws.capability[:, 0, :]
    mu = np.clip(BASE + (1 - BASE) * np.prod(cap**x, axis=1), 1e-9, 1 - 1e-9)
    eta = np.log(mu / (1 - mu))
    out = np.zeros(cap.shape[1])
    for _ in range(replicates):
        y = draw_ordered_beta(rng, np.full(repeats, eta[rng.integers(len(eta))]), K1, K2, NU)
        logw = np.zeros(len(eta))
        for value in y:
            if value == 0:
                logw += np.log1p(-expit(eta - K1))
            elif value == 1:
                logw += np.log(expit(eta - K2))
            else:
                logw += np.log(expit(eta - K1) - expit(eta - K2)) + beta_dist.logpdf(value, mu * NU, (1 - mu) * NU)
        w = np.exp(logw - logw.max())
        w /= w.sum()
        mean = w @ cap
        out += w @ (cap - mean) ** 2
    return out / replicates


def test_linearised_gain_agrees_with_importance_sampling_and_sees_the_ridge():
    draws = _ridge_posterior(2000)
    profiles = {"d1": [0, 1, 0, 0], "d0+d1": [1, 1, 0, 0], "d1+d2": [0, 1, 1, 0], "d2": [0, 0, 1, 0],
                "d3": [0, 0, 0, 1], "d2+d3": [0, 0, 1, 1], "d0": [1, 0, 0, 0]}
    rng = np.random.default_rng(3)
    prior = draws.capability[:, 0, :].var(axis=0)
    for name, x in profiles.items():
        simulated = _preposterior_variance(draws, np.array(x, float), 5, rng)
        for d in (1, 2, 3):
            removed_sim = prior[d] - simulated[d]
            removed_lin = prior[d] - _linear_after(draws, x, d, 5)
            assert abs(removed_lin - removed_sim) <= 0.25 * removed_sim + 0.03 * prior[d], (name, d)
    # the ridge: another scenario with both d2 and d3 tells neither (only their known product); both methods agree
    both = np.array(profiles["d2+d3"], float)
    assert prior[2] - _linear_after(draws, profiles["d2+d3"], 2, 5) < 0.02 * prior[2]
    assert prior[2] - _preposterior_variance(draws, both, 5, rng)[2] < 0.05 * prior[2]


def _linear_after(draws: LayoutDraws, x: list, d: int, repeats: int) -> float:
    """The plan's capability variance of demand d (one agent) after `repeats` episodes of profile x."""
    cand = pd.DataFrame([x], columns=draws.demands, dtype=float)
    return next_layout_scenarios(draws, cand, 1, repeats=repeats, target=draws.demands[d]).loc[0, "sd_after"] ** 2


def test_plan_serves_the_least_known_demand_and_breaks_the_ridge():
    draws = _ridge_posterior(1500, agents=3)
    candidates = pd.DataFrame({"known": [1, 0, 0, 0], "both": [0, 0, 1, 1], "ridge-breaker": [0, 0, 1, 0],
                               "unknown": [0, 1, 0, 0]}, index=draws.demands, dtype=float).T
    sd = draws.sd()
    table = next_layout_scenarios(draws, candidates, 3)
    first_target = np.sqrt((sd**2).mean()).idxmax()  # computed from the draws directly
    assert table.loc[0, "target"] == first_target
    serving = {"d1": "unknown", "d2": "ridge-breaker", "d3": "ridge-breaker"}
    assert list(table["scenario"]) == [serving[t] for t in table["target"]]
    assert (table["sd_after"] < table["sd_before"]).all() and "both" not in set(table["scenario"])
    assert table.loc[0, "agents_gaining"] == 3
    # a demand no scenario has exercised: its prior is the widest, so it is served first
    widened = with_prior_demands(draws, ["new"], seed=4)
    assert widened.sd()["new"].mean() > sd.to_numpy().max()
    cand = candidates.assign(new=0.0)
    cand.loc["new alone"] = [0, 0, 0, 0, 1]
    again = next_layout_scenarios(widened, cand, 2)
    assert again.loc[0, "target"] == "new" and again.loc[0, "scenario"] == "new alone"
    # the same seed gives the same draws, hence the same plan
    pd.testing.assert_frame_equal(again, next_layout_scenarios(with_prior_demands(draws, ["new"], seed=4), cand, 2))
    with pytest.raises(ValueError, match="not the layout's demands"):
        next_layout_scenarios(draws, candidates[["d0", "d1"]], 1)


def test_hypothetical_profiles_have_at_most_one_substrate():
    demands = ["a", "b", "substrate: x", "substrate: y + c"]
    table = layout_profiles(demands)
    assert (table[["substrate: x", "substrate: y + c"]].sum(axis=1) <= 1).all()
    # up to three of four demands (4 + 6 + 4 = 14 combinations) less the ones with both substrates (1 + 2)
    assert len(table) == 14 - 3 and set(table.sum(axis=1)) == {1.0, 2.0, 3.0}


def test_merged_demands_split_on_a_ridge_the_plan_breaks():
    rng = np.random.default_rng(5)
    cap = np.stack([rng.beta(20, 5, (800, 2)), rng.beta(30, 30, (800, 2))], axis=2)  # 'x', 'a + b'
    draws = split_merged(_draws(cap, ["x", "a + b"]), seed=6)
    assert draws.demands == ["x", "a", "b"]
    np.testing.assert_allclose(draws.capability[..., 1] * draws.capability[..., 2], cap[..., 1], rtol=1e-9)
    candidates = pd.DataFrame({"both": [0, 1, 1], "a alone": [0, 1, 0], "x": [1, 0, 0]}, index=draws.demands,
                              dtype=float).T
    table = next_layout_scenarios(draws, candidates, 1, target="a")
    assert table.loc[0, "scenario"] == "a alone" and table.loc[0, "sd_after"] < 0.7 * table.loc[0, "sd_before"]
    both = next_layout_scenarios(draws, candidates.loc[["both"]], 1, target="a")
    assert both.loc[0, "sd_after"] > 0.98 * both.loc[0, "sd_before"]  # the product again: nothing apart


def test_an_unplayed_demand_gets_the_layouts_own_prior():
    """The layout's deviations are zero-sum over the agents, so the agents' mean theta of a demand is its mean
    m ~ Normal(1, 1.5) alone: variance 2.25 (closed form), where independent deviations would add E[s^2] / A = 0.5
    for two agents (s ~ HalfNormal(1))."""
    S = 40000
    draws = _draws(np.full((S, 2, 1), 0.5), ["old"])
    cap = with_prior_demands(draws, ["new"], seed=0).capability[:, :, 1]
    mean_theta = np.log(cap / (1 - cap)).mean(axis=1)
    assert mean_theta.mean() == pytest.approx(1.0, abs=0.05)
    assert mean_theta.var() == pytest.approx(2.25, rel=0.04)
