"""Plackett-Luce: against choix's estimate on the same rankings (3- and 8-player matches, 60 agents with a
long tail of rare ones), a closed form on two agents, ties by Breslow's rule, and the ratings command."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from referee.models.ratings.bradley_terry import to_elo
from referee.models.ratings.plackett_luce import fit_plackett_luce, rankings_from_comparisons


def simulate(theta: np.ndarray, matches: int, sizes: tuple[int, ...], seed: int,
             weights: np.ndarray | None = None) -> list[list[int]]:
    """Full rankings drawn from Plackett-Luce with log-strengths theta (agents drawn by `weights`)."""
    rng = np.random.default_rng(seed)
    n = len(theta)
    p = None if weights is None else weights / weights.sum()
    out = []
    for _ in range(matches):
        left = list(rng.choice(n, rng.choice(sizes), replace=False, p=p))
        order = []
        while left:
            w = np.exp(theta[left])
            order.append(left.pop(rng.choice(len(left), p=w / w.sum())))
        out.append(order)
    return out


def test_matches_choix_to_a_hundredth_of_an_elo_point():
    choix = pytest.importorskip("choix")
    rng = np.random.default_rng(1)
    n = 60
    theta = rng.normal(0, 0.8, n)
    weights = np.r_[np.ones(40) * 5, np.ones(20)]  # 20 rarer agents
    rankings = simulate(theta, 1500, (3, 8), seed=2, weights=weights)
    fit = fit_plackett_luce([[[i] for i in r] for r in rankings], [f"a{i}" for i in range(n)])
    # ILSR (Maystre & Grossglauser 2015) converges to the same maximum-likelihood estimate
    theirs = choix.ilsr_rankings(n, [list(map(int, r)) for r in rankings], alpha=0.0, tol=1e-12)
    assert fit.method == "mle" and fit.converged
    assert np.abs(to_elo(fit.theta) - to_elo(theirs - theirs.mean())).max() < 0.01
    assert np.corrcoef(fit.theta, theta)[0, 1] > 0.9  # and it recovers the truth


def test_two_agents_closed_form_and_ties_one_win_each_way():
    # a beat b 7 times and lost 3: theta_a - theta_b = ln(7/3)
    fit = fit_plackett_luce([[[0], [1]]] * 7 + [[[1], [0]]] * 3, ["a", "b"])
    assert fit.theta[0] - fit.theta[1] == pytest.approx(math.log(7 / 3), abs=1e-9)
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(7 / 3), abs=1e-6)
    # a tie is a win each way (Breslow): 7 wins, 3 losses and 2 ties -> ln(9/5)
    fit = fit_plackett_luce([[[0], [1]]] * 7 + [[[1], [0]]] * 3 + [[[0, 1]]] * 2, ["a", "b"])
    assert fit.theta[0] - fit.theta[1] == pytest.approx(math.log(9 / 5), abs=1e-9)


def test_three_agent_rankings_closed_form():
    # every match ranks a > b > c: no MLE (a never lost) -> a stated MAP fallback, warned
    with pytest.warns(UserWarning, match="does not exist"):
        fit = fit_plackett_luce([[[0], [1], [2]]] * 4, ["a", "b", "c"])
    assert fit.method == "map" and fit.theta[0] > fit.theta[1] > fit.theta[2]
    # the two orders a>b>c and c>b>a once each: by symmetry a and c are equal; b's first-stage share is 0
    # and its second-stage wins 2 of 2, so the likelihood is exchangeable in a and c: theta_a = theta_c
    fit = fit_plackett_luce([[[0], [1], [2]], [[2], [1], [0]], [[1], [0], [2]], [[1], [2], [0]]], ["a", "b", "c"])
    assert fit.theta[0] == pytest.approx(fit.theta[2], abs=1e-9) and fit.theta[1] > fit.theta[0]
    # and theta solves its score equations: b wins 2 of 4 first stages and both its second stages
    e = np.exp(fit.theta)
    first = 4 * e / e.sum()
    assert first[1] + 2 * (e[1] / (e[1] + e[0])) == pytest.approx(4.0, abs=1e-8)


def test_rankings_from_a_matchs_pairwise_comparisons():
    # one match: 0 first, 1 and 2 tied, 3 last (every pair compared); a second match: 3 beat 0
    frame = pd.DataFrame({"a": [0, 0, 0, 1, 1, 2, 3], "b": [1, 2, 3, 2, 3, 3, 0],
                          "outcome": [1, 1, 1, 0.5, 1, 1, 1], "cluster": ["m"] * 6 + ["n"]})
    rankings = rankings_from_comparisons(frame["a"].to_numpy(), frame["b"].to_numpy(), frame["outcome"].to_numpy(),
                                         frame["cluster"].to_numpy(), 4)
    assert rankings == [[[0], [1, 2], [3]], [[3], [0]]]


def _comparisons(rankings: list[list[int]], names: list[str]) -> pd.DataFrame:
    """Every pair of each ranking as comparisons (cluster = match, time = its order)."""
    rows = []
    for m, order in enumerate(rankings):
        for x in range(len(order)):
            for y in range(x + 1, len(order)):
                rows.append({"a": names[order[x]], "b": names[order[y]], "outcome": 1.0, "cluster": f"m{m:04d}",
                             "game": "g", "kind": "match", "time": pd.Timestamp("2026-01-01") + pd.Timedelta(m, "s")})
    return pd.DataFrame(rows)


def test_trueskill_and_openskill_equal_the_packages_called_directly():
    import trueskill
    from openskill.models import PlackettLuce

    from referee.run.ratings.ratings import rate

    names = [f"p{i}" for i in range(7)]
    rankings = simulate(np.linspace(-1, 1, 7), 60, (2, 3, 5), seed=4)
    comparisons = _comparisons(rankings, names).sample(frac=1.0, random_state=0)  # order restored by time
    env, model = trueskill.TrueSkill(), PlackettLuce()
    ts = {n: env.create_rating() for n in names}
    os_ = {n: model.rating(name=n) for n in names}
    for order in rankings:
        who = [names[i] for i in order]
        for n, (r,) in zip(who, env.rate([(ts[n],) for n in who], ranks=list(range(len(who))))):
            ts[n] = r
        for n, (r,) in zip(who, model.rate([[os_[n]] for n in who], ranks=list(range(1, len(who) + 1)))):
            os_[n] = r
    for method, direct in (("trueskill", ts), ("openskill", os_)):
        result = rate(comparisons, method)
        table = result.table().set_index("agent")
        for n in names:
            assert table.loc[n, "rating"] == pytest.approx(direct[n].mu, abs=1e-9)
            assert table.loc[n, "sigma"] == pytest.approx(direct[n].sigma, abs=1e-9)
            assert table.loc[n, "leaderboard"] == pytest.approx(direct[n].mu - 3 * direct[n].sigma, abs=1e-9)
        # the order public leaderboards print: by mu - 3 sigma, computed from the packages' own ratings
        conservative = sorted(names, key=lambda n: -(direct[n].mu - 3 * direct[n].sigma))
        assert table.sort_values("leaderboard_rank").index.tolist() == conservative
        assert any("fed 60 matches in time order" in n for n in result.notes), result.notes
    untimed = comparisons.sort_index().drop(columns="time")  # no time: fed as the store holds them, and said
    assert any("in the store's order" in n for n in rate(untimed, "trueskill").notes)


def test_plackett_luce_through_the_ratings_entry_point_with_a_bootstrap():
    from referee.run.ratings.ratings import rate

    names = [f"p{i}" for i in range(6)]
    rankings = simulate(np.linspace(-1, 1, 6), 150, (3, 6), seed=5)
    comparisons = _comparisons(rankings, names)
    result = rate(comparisons, "plackett-luce", bootstrap=100, seed=1)
    table = result.table().set_index("agent")
    direct = fit_plackett_luce([[[i] for i in r] for r in rankings], names)
    assert np.allclose(table.loc[names, "rating"], direct.ratings, atol=1e-6)
    assert (table["lower"] < table["rating"]).all() and (table["rating"] < table["upper"]).all()
    assert table.loc["p5", "rank"] == 1
