"""Cross-validated AUC: grouped folds, balanced orientation, and models ranked as their data demand."""

import numpy as np
import pandas as pd

import referee
from referee.run.ratings.ratings_cv import cross_validate, game_folds, summarise_cv, win_matrix
from tests.helpers import simulate


def test_folds_never_split_a_game():
    clusters = np.repeat(np.arange(50).astype(str), 3)
    within = pd.DataFrame({"cluster": clusters, "kind": "match"})
    fold, same = game_folds(within, 5, seed=0)
    per_cluster = pd.Series(fold).groupby(clusters).nunique()
    assert (per_cluster == 1).all() and set(fold) == set(range(5)) and (fold == same).all()
    # a parallel comparison belongs to both its games: held out only where both are, trained only where neither is
    parallel = pd.DataFrame({"cluster": ["0|1", "0|2", "1|2"], "kind": "parallel"})
    both = pd.concat([within, parallel], ignore_index=True)
    fa, fb = game_folds(both, 5, seed=0)
    game_fold = dict(zip(clusters, fold))
    assert list(fa[-3:]) == [game_fold["0"], game_fold["0"], game_fold["1"]]
    assert list(fb[-3:]) == [game_fold["1"], game_fold["2"], game_fold["2"]]
    for f in range(5):
        train = both[(fa != f) & (fb != f)]
        test = both[(fa == f) & (fb == f)]
        train_games = set(train["cluster"].str.split("|").sum())
        test_games = set(test["cluster"].str.split("|").sum())
        assert not train_games & test_games


def test_per_game_structure_is_rewarded_out_of_sample():
    rng = np.random.default_rng(0)
    s = rng.normal(0, 1.5, 6)
    strengths = np.stack([s, -s])  # the games disagree completely: no scalar rating can predict
    data = simulate(strengths, ["g0", "g1"], 6000, seed=1)
    summary = summarise_cv(cross_validate(data, folds=5, dims=[1, 2], seed=0)).set_index(["model", "dims"])["auc"]
    assert summary[("bt-per-game", 0)] > 0.68
    assert summary[("bt", 0)] < 0.6 and summary[("bt-per-game", 0)] > summary[("bt", 0)] + 0.15
    # one dimension with a signed loading per game captures the flip as well as per-game ratings do
    assert abs(summary[("bt-md", 1)] - summary[("bt-per-game", 0)]) < 0.03


def test_scalar_signal_auc_matches_its_closed_form():
    # one game, strengths -1, 0, 1: the Bayes-optimal AUC is computed from the true probabilities
    strengths = np.array([[-1.0, 0.0, 1.0]])
    data = simulate(strengths, ["g"], 20000, seed=2)
    cv = cross_validate(data, folds=5, models=("bt",), seed=0)
    from sklearn.metrics import roc_auc_score
    idx = {"ag0": 0, "ag1": 1, "ag2": 2}
    p = 1 / (1 + np.exp(-(strengths[0, data["a"].map(idx)] - strengths[0, data["b"].map(idx)])))
    optimal = roc_auc_score(data["outcome"] == 1.0, p)
    assert abs(cv["auc"].mean() - optimal) < 0.02
    assert cv["n_test"].sum() == len(data)


def test_win_matrix_split():
    data = simulate(np.array([[0.0, 1.0, 2.0]]), ["g"], 3000, seed=3)
    data["communication"] = np.where(np.arange(len(data)) % 2 == 0, True, False)
    out = win_matrix(data, split="communication")
    assert set(out) == {"communication=True", "communication=False"}
    for matrix in out.values():
        assert list(matrix.index) == ["ag2", "ag1", "ag0"]
        np.testing.assert_allclose(matrix.to_numpy() + matrix.to_numpy().T, 1.0)
        assert 0.8 < matrix.loc["ag2", "ag0"] < 0.95  # true 0.88


def test_the_per_game_model_in_every_fold_by_maximum_likelihood_or_with_its_prior():
    """tau_elo=None fits each fold's per-game model by plain maximum likelihood (the COMPACT paper's): on few
    comparisons per game its held-out AUC differs from the shrunk default's, while the scalar model's does not
    move; with a huge prior sd the two protocols agree."""
    rng = np.random.default_rng(2)
    strengths = np.stack([rng.normal(0, 1.0, 6) for _ in range(4)])
    data = simulate(strengths, ["g0", "g1", "g2", "g3"], 300, seed=3)
    by = {tau: summarise_cv(cross_validate(data, folds=5, dims=[1], models=("bt", "bt-per-game"), seed=0,
                                           tau_elo=tau)).set_index("model")["auc"] for tau in (None, 100.0, 1e6)}
    assert by[None]["bt"] == by[100.0]["bt"]
    assert abs(by[None]["bt-per-game"] - by[100.0]["bt-per-game"]) > 1e-3
    assert abs(by[None]["bt-per-game"] - by[1e6]["bt-per-game"]) < 1e-3


def test_no_multidimensional_fold_is_counted_unpenalised_where_no_per_game_estimate_exists(tmp_path):
    """Issue 106: equation 3 is fitted with its ridge, so every bt-md fold it scores is a penalised fit (counted in
    folds_with_prior); at as many dimensions as games it is the per-game model, and under the paper's plain protocol
    a fold whose per-game estimate does not exist (checked apart by the per-game fit) is not scored, as the
    per-game row's is not."""
    from referee.reporting import SAMPLE

    store = referee.open(SAMPLE / "compact" / "logs", store=tmp_path / "c.duckdb")
    found = referee.ratings_cv(store, per_game_prior_sd=None).table("cv_auc")
    md = found[found["model"] == "bt-md"]
    scored = md[md["folds"] > 0]
    assert len(scored) and (scored["folds_with_prior"] == scored["folds"]).all()
    games = store.matches()["game"].nunique()
    per_game = found[found["model"] == "bt-per-game"].iloc[0]
    at_least = md[md["dims"] >= games]
    assert len(at_least) and (at_least["folds"] == per_game["folds"]).all()
    assert (at_least["auc"].isna() == pd.isna(per_game["auc"])).all()
