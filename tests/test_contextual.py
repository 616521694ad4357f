"""Contextual Bradley-Terry: recovery of a known seat advantage and role effect on simulated matches, the
uncontrolled fit's rank changes, and the ratings command with --covariate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.prepare.covariates import covariate_pairs
from referee.models.ratings.contextual import fit_contextual_bt

SEAT = 0.5  # log-odds per seat position, per pair: later seats do better
ROLE = -0.8  # the 'spy' role does worse


def simulate(agents: int, matches: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.6, agents)
    games, rows = [], []
    for m in range(matches):
        k = int(rng.choice([2, 3, 4]))
        who = rng.choice(agents, k, replace=False)
        spy = rng.integers(k)
        utility = theta[who] + SEAT * np.arange(k) + ROLE * (np.arange(k) == spy) + rng.gumbel(size=k)
        games.append({"match_id": f"m{m:05d}", "runner": "table", "game": "g", "n_players": k})
        rows += [{"match_id": f"m{m:05d}", "player": f"seat {s}", "agent": f"a{who[s]:02d}", "score": float(utility[s]),
                  "rank": None, "role": "spy" if s == spy else "citizen", "outcome": None} for s in range(k)]
    return pd.DataFrame(games), pd.DataFrame(rows), theta


def test_recovers_a_known_seat_advantage_and_role_effect():
    matches, results, theta = simulate(agents=30, matches=3000, seed=1)
    pairs, names, notes = covariate_pairs(matches, results, None, ["seat", "role"])
    assert names == ["seat", "role=spy"] and "citizen" in notes[0]
    fit = fit_contextual_bt(pairs, names)
    effects = fit.effects.set_index("covariate")
    # with Gumbel noise the pairwise model is logistic: the truth lies inside the 95 % intervals
    assert effects.loc["seat", "lower"] < SEAT < effects.loc["seat", "upper"]
    assert effects.loc["role=spy", "lower"] < ROLE < effects.loc["role=spy", "upper"]
    assert effects.loc["seat", "estimate_elo"] == pytest.approx(effects.loc["seat", "estimate"] * 400 / math.log(10))
    table = fit.ratings.set_index("agent")
    truth = pd.Series(theta, index=[f"a{i:02d}" for i in range(30)])
    assert np.corrcoef(table["rating"], truth[table.index])[0, 1] > 0.9
    assert (table["rank_change"] == table["rank_uncontrolled"] - table["rank"]).all()


def test_controlling_for_seat_moves_an_agent_that_always_sat_last():
    # 'lucky' always takes the best seat and is otherwise average: uncontrolled it looks strong
    matches, results, _ = simulate(agents=12, matches=1500, seed=2)
    results = results.copy()
    last = results.groupby("match_id")["player"].transform("max") == results["player"]
    first_match = results["match_id"].isin(results.loc[last, "match_id"].unique()[:400])
    results.loc[last & first_match, "agent"] = "lucky"
    pairs, names, _ = covariate_pairs(matches, results, None, ["seat"])
    fit = fit_contextual_bt(pairs, names).ratings.set_index("agent")
    assert fit.loc["lucky", "rank_uncontrolled"] < fit.loc["lucky", "rank"]  # it falls once seats are accounted for
    assert fit.loc["lucky", "rank_change"] < 0


def test_ratings_command_with_covariates(tmp_path, capsys):
    matches, results, _ = simulate(agents=8, matches=400, seed=3)
    path = tmp_path / "t.csv"
    results.rename(columns={"match_id": "match"})[["match", "player", "agent", "score", "role"]].to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(path), "--map", "role=role"]) == 0
    out = tmp_path / "r"
    assert main(["ratings", "--store", str(store), "--method", "bt", "--covariate", "seat", "--covariate", "role",
                 "--out", str(out)]) == 0
    effects = pd.read_csv(out / "covariates.csv").set_index("covariate")
    assert effects.loc["seat", "estimate"] > 0 and effects.loc["role=spy", "estimate"] < 0
    assert {"rating_uncontrolled", "rank_change"} <= set(pd.read_csv(out / "ratings.csv").columns)
    assert main(["ratings", "--store", str(store), "--method", "elo", "--covariate", "seat", "--out",
                 str(tmp_path / "x")]) != 0
