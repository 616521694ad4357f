"""Anchors, components, provisional labels and the bootstrap's resample unit, on generated tournaments of the
shapes real data has (60-200 agents, a long tail of rare agents, 3- and 8-player matches, games nobody wins,
a comparison graph in pieces)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.prepare.comparisons import comparisons_from_tables, with_resample
from referee.run.ratings.board import infer_board
from referee.run.ratings.rating_labels import components, parse_anchor
from referee.run.ratings.ratings import rate
from referee.models.ratings.bootstrap import MIN_MATCHES


def tournament(agents: int, matches: int, seed: int, rare: int = 0, islands: int = 1,
               sizes=(3, 8)) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Multiplayer matches with Plackett-Luce outcomes: `rare` agents play one match each; `islands` groups
    of agents never meet. Returns (matches, results, true log-strengths)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.7, agents)
    island = np.arange(agents) % islands
    rows, games = [], []
    for m in range(matches):
        home = rng.integers(islands)
        pool = np.flatnonzero((island == home) & (np.arange(agents) >= rare))
        size = min(int(rng.choice(sizes)), len(pool))
        seated = list(rng.choice(pool, size, replace=False))
        if m < rare:
            seated[0] = m  # each rare agent plays once, in its own island
            seated = [s for s in seated if island[s] == island[m]] or [m]
            seated += [s for s in rng.choice(np.flatnonzero(island == island[m]), 3) if s not in seated]
        order, left = [], list(dict.fromkeys(seated))
        while left:
            w = np.exp(theta[left])
            order.append(left.pop(rng.choice(len(left), p=w / w.sum())))
        games.append({"match_id": f"m{m:05d}", "runner": "table", "game": "g", "scenario": f"s{m % 7}",
                      "repetition": str(m % 5), "n_players": len(order), "communication": None, "started_at": None,
                      "phase": None, "variant": None})
        rows += [{"match_id": f"m{m:05d}", "player": f"p{k}", "agent": f"a{i:03d}", "score": float(len(order) - k),
                  "rank": float(k + 1), "outcome": None} for k, i in enumerate(order)]
    return pd.DataFrame(games), pd.DataFrame(rows), theta


@pytest.fixture(scope="module")
def big():
    return tournament(agents=80, matches=900, seed=1, rare=12)


def test_anchor_is_held_exactly_in_the_point_fit_and_every_replicate(big):
    matches, results, _ = big
    comparisons = comparisons_from_tables(matches, results)
    for method in ("bt", "plackett-luce"):
        result = rate(comparisons, method, bootstrap=60, seed=3, anchor=("a050", 1234.0))
        table = result.table().set_index("agent")
        assert table.loc["a050", "rating"] == pytest.approx(1234.0, abs=1e-9)
        assert (table["anchor"] == "a050=1234").all()
        column = result.bootstrap.agents.index("a050")
        drawn = ~np.isnan(result.bootstrap.ratings[:, column])
        assert np.allclose(result.bootstrap.ratings[drawn, column], 1234.0, atol=1e-9)
        assert table.loc["a050", "lower"] == pytest.approx(1234.0) and table.loc["a050", "upper"] == pytest.approx(1234.0)
        free = rate(comparisons, method).table().set_index("agent")
        gaps = (table["rating"] - free["rating"]).dropna()
        assert np.allclose(gaps, gaps.iloc[0], atol=1e-6)  # a shift, nothing else
    with pytest.raises(ValueError, match="has none to fix"):
        rate(comparisons, "trueskill", anchor=("a050", 25.0))
    with pytest.raises(ValueError, match="AGENT=RATING"):
        parse_anchor("a050")


def test_rare_agents_are_provisional_by_the_stated_rule(big):
    matches, results, _ = big
    comparisons = comparisons_from_tables(matches, results)
    result = rate(comparisons, "bt", bootstrap=60, seed=2)
    table = result.table()
    rare = table[table["agent"] < "a012"]
    assert (rare["matches"] < MIN_MATCHES).all() and rare["status"].str.startswith("provisional").all()
    # one rule for every method: the status is the information the data hold (matches), never the interval's
    # width, so the bootstrap table and the plain BT table agree agent by agent
    plain = rate(comparisons, "bt").table().set_index("agent")
    established = plain["matches"] >= MIN_MATCHES
    assert ((plain["status"] == "established") == established).all()
    assert (table.set_index("agent")["status"] == plain["status"]).all()
    assert (rate(comparisons, "online-elo").table().set_index("agent")["status"] == plain["status"]).all()
    assert established.any() and any("established" in n for n in result.notes)


def test_a_disconnected_graph_is_reported_by_component_and_not_ranked_across():
    matches, results, _ = tournament(agents=60, matches=500, seed=4, islands=3)
    comparisons = comparisons_from_tables(matches, results)
    parts = components(comparisons, sorted(set(comparisons["a"]) | set(comparisons["b"])))
    assert parts.nunique() == 3
    result = rate(comparisons, "bt", bootstrap=40, seed=1)
    table = result.table()
    assert set(table["component"]) == {1, 2, 3}
    for _, group in table.groupby("component"):  # every component has its own first place
        assert sorted(group["rank"].astype(int)) == list(range(1, len(group) + 1))
        board = infer_board(comparisons, bootstrap=40, seed=1).table
        part = board[(board["component"] == group["component"].iloc[0]) & (board["block"] == "ranked")]
        assert part["joint_upper"].max() <= len(part)  # rank sets within the component's ranked agents
    assert any("3 components" in n for n in result.notes)


def test_the_resample_unit_sets_the_bootstrap_cluster(big):
    matches, results, _ = big
    comparisons = comparisons_from_tables(matches, results)
    by_scenario, note = with_resample(comparisons, matches, "scenario")
    assert by_scenario["resample"].nunique() == 7 and "7 clusters" in note
    by_seed, _ = with_resample(comparisons, matches, "seed")
    assert by_seed["resample"].nunique() == 5
    wide = rate(by_scenario, "bt", bootstrap=80, seed=5).table().set_index("agent")
    narrow = rate(comparisons, "bt", bootstrap=80, seed=5).table().set_index("agent")
    assert np.allclose(wide["rating"], narrow["rating"])  # the point fit does not change
    assert not np.allclose(wide["lower"], narrow["lower"])  # the intervals do


def test_ratings_command_flags(sample_store, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["ratings", "--store", str(sample_store), "--runner", "compact", "--method", "bt", "--ties",
                 "davidson", "--bootstrap", "20", "--anchor", "llm_01=1000", "--resample", "seed",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out / "ratings.csv").set_index("agent")
    assert table.loc["llm_01", "rating"] == pytest.approx(1000.0) and (table["anchor"] == "llm_01=1000").all()
    ties = pd.read_csv(out / "ties.csv")
    from referee.io.store import Store

    with Store(sample_store, read_only=True) as s:  # the tie share counted from the store's own comparisons
        matches = s.table("matches")
        matches = matches[matches["runner"] == "compact"]
        comparisons = comparisons_from_tables(matches, s.table("results"))
    assert ties.loc[0, "observed_tie_rate"] == pytest.approx((comparisons["outcome"] == 0.5).mean())
    assert ties.loc[0, "nu"] >= 0
    assert main(["ratings", "--store", str(sample_store), "--runner", "compact", "--method", "elo", "--ties",
                 "davidson", "--out", str(tmp_path / "x")]) != 0  # davidson models ties in bt only


def test_per_slice_leaderboards_in_one_call(sample_store, tmp_path):
    from referee.io.store import Store
    from referee.prepare.slices import slices

    out = tmp_path / "tags"
    assert main(["ratings", "--store", str(sample_store), "--runner", "concordia", "--method", "bt", "--by", "tag",
                 "--out", str(out)]) == 0
    table, sizes = pd.read_csv(out / "ratings.csv"), pd.read_csv(out / "slices.csv")
    with Store(sample_store, read_only=True) as s:
        matches = s.table("matches")
        matches = matches[matches["runner"] == "concordia"]
        tags = s.table("scenario_tags")
    expected = tags[tags["scenario"].isin(matches["scenario"])].groupby("tag")["scenario"].apply(set)
    assert set(sizes["slice"]) == set(expected.index)
    for tag, scenarios in expected.items():  # each slice holds exactly its tag's matches
        assert sizes.set_index("slice").loc[tag, "matches"] == matches["scenario"].isin(scenarios).sum()
    for tag, group in table.groupby("slice"):  # and has its own leaderboard
        assert sorted(group["rank"].dropna().astype(int))[0] == 1
    matches_r, results_r, _ = tournament(agents=20, matches=120, seed=9)
    results_r = results_r.assign(role=np.where(results_r["player"] == "p0", "leader", "crew"))
    got = {name: (m, r) for name, m, r in slices(matches_r, results_r, pd.DataFrame(columns=["scenario", "tag"]),
                                                 "role")}
    assert set(got) == {"crew", "leader"} and (got["leader"][1]["role"] == "leader").all()
