"""Davidson's tie model: the two-agent closed form, recovery of strengths and the tie parameter from simulated
tournaments with known truth, and the ratings entry point reporting the tie rate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from referee.models.ratings.davidson import fit_davidson


def test_two_agents_closed_form():
    # the model is saturated for two agents: P(a), P(b), P(tie) equal the observed shares, so
    # theta_a - theta_b = ln(w / l) and nu = t / sqrt(w l)
    w, lost, t = 12.0, 5.0, 7.0
    W = np.array([[0, w], [lost, 0]])
    T = np.array([[0, t], [t, 0]])
    fit = fit_davidson(W, T, ["a", "b"])
    assert fit.theta[0] - fit.theta[1] == pytest.approx(math.log(w / lost), abs=1e-6)
    assert fit.nu == pytest.approx(t / math.sqrt(w * lost), abs=1e-6)
    assert fit.observed_tie_rate == pytest.approx(t / (w + lost + t))


def simulate(theta: np.ndarray, nu: float, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = len(theta)
    W, T = np.zeros((n, n)), np.zeros((n, n))
    for _ in range(games):
        i, j = rng.choice(n, 2, replace=False)
        pi, pj = math.exp(theta[i]), math.exp(theta[j])
        d = pi + pj + nu * math.sqrt(pi * pj)
        u = rng.random() * d
        if u < pi:
            W[i, j] += 1
        elif u < pi + pj:
            W[j, i] += 1
        else:
            T[i, j] += 1
            T[j, i] += 1
    return W, T


def test_recovers_strengths_and_tie_parameter():
    theta = np.linspace(-1.2, 1.2, 12)
    theta -= theta.mean()
    W, T = simulate(theta, nu=0.8, games=6000, seed=3)
    fit = fit_davidson(W, T, [f"a{i}" for i in range(12)])
    assert fit.converged and fit.method == "mle"
    assert abs(fit.nu - 0.8) < 3 * fit.nu_se + 0.02
    z = (fit.theta - theta) / fit.se
    assert np.abs(z).max() < 4 and np.corrcoef(fit.theta, theta)[0, 1] > 0.98


def test_ratings_entry_point_reports_the_tie_rate():
    from referee.run.ratings.ratings import rate

    theta = np.linspace(-1, 1, 6)
    W, T = simulate(theta, nu=1.0, games=1500, seed=4)
    rows = []
    for i in range(6):
        for j in range(6):
            rows += [{"a": f"a{i}", "b": f"a{j}", "outcome": 1.0}] * int(W[i, j])
            if i < j:
                rows += [{"a": f"a{i}", "b": f"a{j}", "outcome": 0.5}] * int(T[i, j])
    comparisons = pd.DataFrame(rows).assign(cluster=lambda f: [f"m{k}" for k in range(len(f))], game="g", kind="match")
    result = rate(comparisons, "bt-davidson")
    ties = result.ties
    direct = fit_davidson(W, T, [f"a{i}" for i in range(6)])
    assert ties["nu"] == pytest.approx(direct.nu, rel=1e-6)
    assert ties["observed_tie_rate"] == pytest.approx(T.sum() / 2 / (W.sum() + T.sum() / 2))
    table = result.table().set_index("agent")
    assert table.loc["a5", "rank"] == 1 and np.allclose(table["rating"], direct.ratings, atol=1e-3)
