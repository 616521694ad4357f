"""Bayesian Bradley-Terry in PyMC: agrees with the MAP under the same data, converges, labels its dims."""

import numpy as np
import pandas as pd
import pytest

from referee.run.ratings.ratings import encode, rate
from referee.models.ratings.bradley_terry import fit_bt
from tests.helpers import simulate


def _two_games() -> tuple[np.ndarray, pd.DataFrame]:
    """(the true strengths (game, agent), 3000 simulated comparisons in each of two games of five agents)."""
    rng = np.random.default_rng(0)
    strengths = rng.normal(0, 0.7, (2, 5)) + np.linspace(-1, 1, 5)
    return strengths, simulate(strengths, ["g0", "g1"], 3000, seed=1)


@pytest.mark.bayes
def test_scalar_posterior_agrees_with_the_mle_and_converges():
    strengths, data = _two_games()
    result = rate(data, "bayes-bt", seed=2)  # the defaults users get: the fit's own verdict on every seed
    idata = result.idata
    assert idata.posterior["rating"].dims == ("chain", "draw", "agent")
    table = result.table().set_index("agent")
    assert result.diagnostics["converged"], result.diagnostics
    mle = pd.Series(fit_bt(encode(data).counts(), encode(data).agents).ratings, index=encode(data).agents)
    # 3000 comparisons: the weakly informative hierarchical prior barely moves the posterior mean
    assert np.abs(table["rating"] - mle.reindex(table.index)).max() < 15
    assert ((table["lower"] < mle.reindex(table.index)) & (mle.reindex(table.index) < table["upper"])).all()


@pytest.mark.heavy  # a structure of its own (25-30 s cold, no other test compiles it): `make test-all`
@pytest.mark.bayes
def test_per_game_posteriors_rank_agents_like_the_truth_in_each_game():
    strengths, data = _two_games()
    by_game = rate(data, "bayes-bt", by="game", seed=2)
    assert by_game.idata.posterior["game_rating"].dims == ("chain", "draw", "game", "agent")
    assert set(by_game.table()["game"]) == {"g0", "g1"} and by_game.diagnostics["converged"], by_game.diagnostics
    # per-game posterior means rank agents like the truth within each game
    for k, game in enumerate(["g0", "g1"]):
        t = by_game.table()[by_game.table().game == game].set_index("agent")["rating"]
        truth = pd.Series(strengths[k], index=[f"ag{i}" for i in range(5)])
        assert t.rank().corr(truth.reindex(t.index).rank()) > 0.8
