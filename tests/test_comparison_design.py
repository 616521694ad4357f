"""COMPACT's comparison design: parallel games matched on framing and communication too, restriction to one
condition, whole games resampled, and the per-game model's plain maximum likelihood against per-game fits."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from referee.prepare.comparisons import comparison_games, parallel_comparisons, select_matches
from referee.run.ratings.ratings import encode, rate
from referee.models.ratings.bootstrap import game_weights
from referee.models.ratings.bradley_terry import fit_bt
from referee.models.ratings.bt_per_game import fit_bt_per_game
from tests.helpers import simulate


def _matches():
    # m1 and m2: same game, size and opponents; m3 the same but another framing; m4 without communication
    matches = pd.DataFrame({"match_id": ["m1", "m2", "m3", "m4"], "game": "survivor", "n_players": 2,
                            "variant": ["cowboys", "cowboys", "pirates", "cowboys"],
                            "communication": [True, True, True, False]})
    results = pd.DataFrame({"match_id": np.repeat(["m1", "m2", "m3", "m4"], 2),
                            "player": ["P", "Q"] * 4, "agent": ["x", "z", "y", "z", "y", "z", "y", "z"],
                            "score": [3.0, 1.0, 2.0, 2.5, 5.0, 0.0, 4.0, 1.0]})
    return matches, results


def test_parallel_games_match_framing_and_communication():
    matches, results = _matches()
    pairs = parallel_comparisons(matches, results)
    # only m1 and m2 are parallel: x (score 3 against z) and y (2 against z) in the same framing and condition
    assert set(pairs["cluster"]) == {"m1|m2"}
    xy = pairs[(pairs["a"] == "x") & (pairs["b"] == "y")]
    assert len(xy) == 1 and xy["outcome"].iloc[0] == 1.0
    first, second = comparison_games(pairs)
    assert set(first) == {"m1"} and set(second) == {"m2"}


def test_where_restricts_to_one_condition():
    matches, _ = _matches()
    assert list(select_matches(matches, ["communication=true"])["match_id"]) == ["m1", "m2", "m3"]
    assert list(select_matches(matches, ["communication=False", "variant=cowboys"])["match_id"]) == ["m4"]
    with pytest.raises(ValueError, match="match column among"):
        select_matches(matches, ["framing=pirates"])
    with pytest.raises(ValueError, match="leaves no match"):
        select_matches(matches, ["variant=knights"])


def test_game_weights_resample_whole_games():
    rng = np.random.default_rng(0)
    first = np.array([0, 0, 1, 2, 0])
    second = np.array([0, 0, 1, 2, 2])  # the last comparison is parallel across games 0 and 2
    for _ in range(50):
        draws_rng = np.random.default_rng(rng.integers(1 << 30))
        w = game_weights(first, second, draws_rng)
        assert w[0] == w[1]  # two comparisons of one game are drawn together
        assert w[4] == w[0] * w[3]  # a parallel comparison counts as often as both its games
    # over many draws each game is drawn once on average, so a within-game weight averages 1
    many = np.array([game_weights(first, second, np.random.default_rng(s)) for s in range(4000)])
    assert many[:, 0].mean() == pytest.approx(1.0, abs=0.05)


def test_bootstrap_with_parallel_comparisons_gives_intervals():
    # 120 two-player matches among 4 agents of known strength: many share game, framing and opponent
    rng = np.random.default_rng(2)
    strength = {"a": 1.0, "b": 0.3, "c": -0.3, "d": -1.0}
    rows, games = [], []
    for m in range(120):
        x, y = rng.choice(list(strength), size=2, replace=False)
        games.append({"match_id": f"m{m:03d}", "game": "hupi", "n_players": 2, "variant": "auction",
                      "communication": bool(m % 2)})
        for player, agent in (("P", x), ("Q", y)):
            rows.append({"match_id": f"m{m:03d}", "player": player, "agent": agent,
                         "score": strength[agent] + rng.normal()})
    pairs = parallel_comparisons(pd.DataFrame(games), pd.DataFrame(rows))
    assert len(pairs) and (pairs["kind"] == "parallel").all()
    out = rate(pairs, "bt", bootstrap=40, seed=1).table().set_index("agent")
    assert (out["lower"] <= out["rating"]).all() and (out["rating"] <= out["upper"]).all()
    assert list(out.sort_values("rating", ascending=False).index) == ["a", "b", "c", "d"]
    per_game = rate(pairs, "elo", bootstrap=20, seed=1).table()  # the generic bootstrap resamples games too
    assert per_game["upper"].notna().all()


def test_plain_per_game_mle_is_each_games_own_fit():
    rng = np.random.default_rng(3)
    strengths = rng.normal(0, 0.8, (3, 5))
    data = simulate(strengths, ["g0", "g1", "g2"], 6000, seed=4)
    coded = encode(data)
    fit = fit_bt_per_game(coded.game_counts(), coded.agents, coded.games, tau_elo=None)
    theta = fit.mu[None, :] + fit.delta
    assert np.allclose(fit.delta.sum(axis=0), 0.0, atol=1e-6)  # deviations sum to zero over games
    for k in range(3):
        own = fit_bt(coded.game_counts()[k], coded.agents).theta  # the game's own MLE, centred
        assert np.allclose(theta[k] - theta[k].mean(), own - own.mean(), atol=1e-4)
    # the Kendall tau the per-game rating reports is each game's ranking against the global one
    result = rate(data, "bt-per-game", tau_elo=None)
    tau = result.kendall_tau.set_index("game")["kendall_tau"]
    for k, game in enumerate(coded.games):
        assert tau[game] == pytest.approx(kendalltau(theta[k], fit.mu).statistic)
