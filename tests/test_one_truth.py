"""One truth per quantity (issue 66): every number referee prints about an agent comes from one inference, the
strongest agent is ranked, and the self-check (`referee check`) finds no contradiction between ratings,
leaderboard and compare on generated boards of every shape and on the real runners' output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import referee
from referee.cli import main
from referee.io.store import Store
from referee.models.ratings.rank_sets import rank_sets
from referee.readings import p_text
from referee.run.ratings.self_check import check_outputs
from tests.conftest import SHARED


def _duels(n: int, games: int, seed: int, leader: float | None = None, rare: int = 0, ties: bool = False
           ) -> pd.DataFrame:
    """A long table of two-player games (match, agent, player, score): strengths ~ N(0, 0.6) in log-odds, the
    first agent's set to `leader`, the last `rare` agents in 3 games each; every game a tie with `ties`."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.6, n)
    if leader is not None:
        strength[0] = leader
    common = n - rare
    rows = []
    for m in range(games):
        i, j = rng.choice(common, 2, replace=False)
        if m < 3 * rare:
            i = common + m // 3
        won = rng.random() < 1 / (1 + np.exp(strength[j] - strength[i]))
        a, b = (0.5, 0.5) if ties else (float(won), float(not won))
        rows += [{"match": f"m{m}", "agent": f"ag{i:02d}", "player": "p0", "score": a},
                 {"match": f"m{m}", "agent": f"ag{j:02d}", "player": "p1", "score": b}]
    return pd.DataFrame(rows)


def _store(tmp_path, name: str, table: pd.DataFrame) -> str:
    path, store = tmp_path / f"{name}.csv", tmp_path / f"{name}.duckdb"
    table.to_csv(path, index=False)
    assert main(["ingest", str(path), "--store", str(store)]) == 0
    return str(store)


def test_a_far_stronger_agent_is_ranked_and_could_be_first(tmp_path):
    store = _store(tmp_path, "leader", _duels(40, 2100, seed=1, leader=2.5, rare=4))
    board = referee.leaderboard(store)
    row = board.table().set_index("agent").loc["ag00"]
    assert row["block"] == "ranked" and row["rank"] == 1 and bool(row["could_be_first"]), row
    assert row["tier"] == 1 and row["rank_set"].startswith("1")
    # the ratings print the board's numbers for it, not a second computation
    ratings = referee.ratings(store).table().set_index("agent").loc["ag00"]
    assert ratings["rank_set"] == row["rank_set"] and ratings["status"] == row["status"] == "established"
    assert referee.check(store).violations == 0


def test_the_board_says_cluster_robust_only_where_the_fit_is(tmp_path, sample_store):
    """The leaderboard said its intervals came from a cluster-robust covariance on every store; with one pair per
    match (duels, arena) the fit is the plain Wald one, as the ratings table says: the two now say the same."""
    from referee.run.ratings.intervals import ROBUST_WALD

    duels = _store(tmp_path, "duels", _duels(8, 300, seed=2))
    for store, runner in ((duels, None), (str(sample_store), "concordia")):
        board = referee.leaderboard(store, runner=runner)
        intervals = set(referee.ratings(store, runner=runner).table()["interval"].dropna())
        robust = ROBUST_WALD in intervals
        assert ("cluster-robust" in board.value.inference.source) == robust, (runner, intervals)
        assert robust == (runner == "concordia")  # concordia's matches hold several pairs each


def test_too_few_matches_for_cluster_robust_intervals_get_model_based_ones(tmp_path):
    """One 6-player match gave every agent an interval of no width (1831-1831): the cluster-robust covariance of
    one cluster is zero. With no more matches than agents the model-based Wald intervals are taken, and said."""
    from referee.models.ratings.bradley_terry import cluster_reading, clustered

    assert not clustered(np.array(["m1"] * 15), 6) and clustered(np.repeat([f"m{i}" for i in range(7)], 15), 6)
    assert not clustered(np.array([f"m{i}" for i in range(20)]), 6)  # one pair per match: nothing to cluster
    assert [cluster_reading(c, 6) for c in (np.array(["m1"] * 15), np.repeat([f"m{i}" for i in range(7)], 15),
                                            np.array([f"m{i}" for i in range(20)]))] == ["too few", "robust", "independent"]
    one = pd.DataFrame({"match": "m1", "agent": [f"model-{c}" for c in "abcdef"], "player": [f"p{i}" for i in range(6)],
                        "score": [9.0, 7.0, 6.0, 5.0, 3.0, 1.0]})
    found = referee.ratings(_store(tmp_path, "one", one))
    table = found.table()
    held = table[np.isfinite(table["lower"].astype(float)) & np.isfinite(table["upper"].astype(float))]
    assert len(held) >= 4 and (held["upper"].astype(float) - held["lower"].astype(float) > 50).all(), table
    assert set(held["interval"]) == {"Wald 95 %"}
    assert any("too few for cluster-robust intervals" in n for n in found.notes)


@pytest.mark.parametrize("shape", ["sparse", "leader", "seatless", "one established", "all ties", "unbeaten"])
def test_the_self_check_holds_on_generated_boards(tmp_path, shape):
    tables = {"sparse": lambda: _duels(30, 150, seed=2, rare=6),
              "leader": lambda: _duels(20, 800, seed=3, leader=3.0),
              "seatless": lambda: _duels(12, 500, seed=4),
              "one established": lambda: pd.concat([_duels(8, 40, seed=5),
                                                    _duels(2, 12, seed=6).assign(match=lambda f: "x" + f["match"])]),
              "all ties": lambda: pd.concat([_duels(6, 60, seed=7, ties=True),
                                             _duels(6, 200, seed=8).assign(agent=lambda f: "z" + f["agent"],
                                                                          match=lambda f: "y" + f["match"])]),
              "unbeaten": lambda: _duels(10, 300, seed=9, leader=9.0)}
    store = _store(tmp_path, "board", tables[shape]())
    found = referee.check(store)
    assert found.violations == 0, found.table().to_string()
    board = referee.leaderboard(store)
    assert "seat_effect" not in board.tables  # no table here records seats
    assert (board.table()["block"] == "ranked").sum() >= 1  # a board, even where one agent is established


def test_one_established_agent_gets_a_board():
    # the crash of issue 66: rank sets of a single agent (numpy's zero-size reduction) -> rank 1, could be first
    found = rank_sets(np.array([1500.0]), np.full((100, 1), 1500.0))
    assert found.lower.tolist() == found.joint_upper.tolist() == [1] and found.best.tolist() == [True]


def _consistent_outputs():
    """Ratings, a board, its tier tests and compare --all of three agents that every invariant of the check holds
    on: a far above b and c (joint sets 1, 2-3, 2-3: two tiers), a separated from both by its own test."""
    ratings = pd.DataFrame({"agent": ["a", "b", "c"], "rating": [1700.0, 1450.0, 1400.0],
                            "lower": [1650.0, 1400.0, 1350.0], "upper": [1750.0, 1500.0, 1450.0], "rank": [1, 2, 3],
                            "rank_set": ["1", "2-3", "2-3"], "joint_rank_set": ["1", "2-3", "2-3"],
                            "status": ["established"] * 3, "tier": [1, 2, 2], "matches": [40, 40, 40]})
    board = ratings.assign(block="ranked", could_be_first=[True, False, False], component=1)
    tests = pd.DataFrame({"agent": ["a", "b"], "next": ["b", "c"], "p_holm": [0.001, 0.5],
                          "new_tier": [True, False]})
    pairs = pd.DataFrame({"agent_a": ["a", "a", "b"], "agent_b": ["b", "c", "c"],
                          "difference": [250.0, 300.0, 50.0], "lower": [150.0, 200.0, -50.0],
                          "upper": [350.0, 400.0, 150.0], "p_better": [1.0, 1.0, 0.84], "p_value": [1e-6, 1e-8, 0.32]})
    return ratings, board, tests, pairs


def test_the_self_check_holds_on_consistent_outputs_and_fails_on_each_planted_contradiction():
    ratings, board, tests, pairs = _consistent_outputs()
    assert check_outputs(ratings, board, tests, pairs, seat_printed=False, seats_recorded=False).empty

    def broken(**planted) -> set:
        r, b, t, p = (planted.get(k, v) for k, v in zip(("ratings", "board", "tests", "pairs"),
                                                       _consistent_outputs()))
        found = check_outputs(r, b, t, p, seat_printed=planted.get("seat", False), seats_recorded=False)
        return set(found["invariant"])

    r, b, _, p = _consistent_outputs()
    assert broken(ratings=r.assign(rating=[1700.0, 1450.0, 1401.0])) == {"one truth"}
    assert broken(ratings=r.assign(rank=[1, 2, 1])) >= {"rank inside its set"}
    assert broken(pairs=p.assign(lower=[-10.0, 200.0, -50.0])) == {"compare agrees with itself"}
    assert broken(board=b.assign(tier=[1, 1, 1]), ratings=r.assign(tier=[1, 1, 1])) == {"tiers agree with the joint sets"}
    assert broken(board=b.assign(tier=[1, 2, 3]), ratings=r.assign(tier=[1, 2, 3])) == {"tiers agree with the joint sets"}
    assert broken(board=b.assign(rank_set=["1", "2", "3"]), ratings=r.assign(rank_set=["1", "2", "3"])) == \
        {"rank sets agree with the pair's test"}  # b and c apart by their sets, p 0.32 as a pair
    assert broken(board=b.assign(could_be_first=[True, False, False], joint_rank_set=["1", "1-3", "2-3"]),
                  ratings=r.assign(joint_rank_set=["1", "1-3", "2-3"])) >= {"set of the best"}
    assert broken(board=b.assign(matches=[40, 3, 40])) == {"status by information"}
    assert broken(seat=True) == {"seats only from the data"}


def test_the_audit_gives_no_verdict_against_a_constant_outcome(tmp_path):
    table = _duels(6, 60, seed=11).assign(coop=1.0)
    path, store = tmp_path / "c.csv", tmp_path / "c.duckdb"
    table.to_csv(path, index=False)
    assert main(["ingest", str(path), "--store", str(store), "--measure", "coop=outcome"]) == 0
    with pytest.raises(ValueError, match="does not vary"):
        referee.audit(str(store), outcome=["coop:higher"], no_bayes=True)


def test_the_derived_win_agrees_with_the_stored_results():
    from referee.run.social.audit import derived_win

    # clem stores a shared rank 1 and the episode's outcome for both players: a won episode is a win for both
    frame = pd.DataFrame({"match_id": ["e1", "e1", "e2", "e2", "d", "d", "d"], "rank": [1.0, 1, 1, 1, 1, 2, 3],
                          "outcome": ["win", "win", "loss", "loss", None, None, None]})
    assert derived_win(frame).tolist() == [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_a_design_where_no_two_agents_share_a_task_flags_every_agent():
    from referee.models.scores import outcome_glm as og

    frame = pd.DataFrame({"agent": ["a", "a", "b", "b", "c"], "task": ["t1", "t2", "t3", "t3", "t4"],
                          "item": ["1", "2", "3", "4", "5"], "y": [1, 0, 1, 1, 0]})
    found, _ = og.identification(og.design(frame), og.EFFECTS["crossed"])
    assert set(found["agent"]["identified"]) == {og.NOT_IDENTIFIED}


REAL = sorted(p.name for p in (SHARED / "data" / "real").iterdir() if p.is_dir()) if (
    SHARED / "data" / "real").is_dir() else []


@pytest.mark.skipif(not REAL, reason=f"shared data not found at {SHARED / 'data' / 'real'} (set REFEREE_SHARED)")
@pytest.mark.parametrize("folder", REAL)
def test_the_self_check_holds_on_every_real_folder(tmp_path, folder):
    store = tmp_path / "real.duckdb"
    with Store(store) as s:
        s.ingest([SHARED / "data" / "real" / folder])
        runners = sorted(s.table("matches")["runner"].unique())
    checked = 0
    for runner in runners:
        try:
            found = referee.check(str(store), runner=runner)
        except ValueError as exc:  # nothing comparable (separate items, one agent): said, and nothing to check
            assert "compar" in str(exc) or "information" in str(exc) or "agent" in str(exc), exc
            continue
        assert found.violations == 0, found.table().to_string()
        checked += 1
    # each runner is checked, or refused with its reason (nothing comparable); a folder whose replays name no
    # agent stores nothing to rate


def test_a_closed_pipe_ends_quietly(tmp_path, monkeypatch, capsys):
    # issue 67/71: `referee formats | head` printed a BrokenPipeError as "a bug in referee"
    import sys

    from referee import cli

    class Closed:
        """Standard output whose reader has gone: every write raises, as a closed pipe does."""

        def __init__(self, fd: int):
            self.fd = fd

        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            return self.fd

    target = open(tmp_path / "sink", "w")
    saved = __import__("os").dup(1)
    monkeypatch.setattr(sys, "stdout", Closed(target.fileno()))
    try:
        code = cli.main(["formats"])
    finally:
        __import__("os").dup2(saved, 1)
    assert code == cli.EXIT_PIPE == 141
    assert "bug" not in capsys.readouterr().err


def test_compare_gives_the_boards_holm_p_and_says_when_its_tiers_keep_a_separated_pair_together(
        tmp_path, sample_store, capsys):
    """compare prints the board's own Holm p of the pair and says when the pair alone is separated while the
    board's simultaneous sets, which cut its tiers, keep the two in one tier; checked on every adjacent pair of the
    sample's board."""
    store = str(sample_store)
    assert main(["leaderboard", "--store", store, "--runner", "concordia", "--out", str(tmp_path / "lb")]) == 0
    tests = pd.read_csv(tmp_path / "lb" / "tier_tests.csv")
    tier = pd.read_csv(tmp_path / "lb" / "leaderboard.csv").set_index("agent")["tier"]
    capsys.readouterr()
    for row in tests.itertuples():
        out = tmp_path / f"c-{row.agent}"
        assert main(["compare", row.agent, row.next, "--store", store, "--runner", "concordia", "--out", str(out)]) == 0
        printed = capsys.readouterr().out
        found = pd.read_csv(out / "compare.csv").iloc[0]
        assert found["p_holm"] == pytest.approx(row.p_holm)
        assert f"over every pair of the board at once (Holm): p {p_text(found['p_holm'])}" in printed
        says = "the tiers keep the two together" in printed
        assert says == (found["p_value"] < 0.05 and tier[row.agent] == tier[row.next])
        assert bool(row.new_tier) == (row.highest_above < row.lowest_below)
        assert bool(row.new_tier) == (tier[row.next] == tier[row.agent] + 1)


def test_two_rank_sets_are_apart_only_where_compare_separates_the_pair(tmp_path, sample_store, capsys):
    """Marginal rank sets "2" and "3" side by side read as an order while compare gave the pair p = 0.25 (issue
    83): the board's sets are now apart only where the pair's own test separates the two, so compare never has to
    say that they read as an order; checked on every pair of the sample's board."""
    store = str(sample_store)
    assert main(["leaderboard", "--store", store, "--runner", "concordia", "--out", str(tmp_path / "lb")]) == 0
    board = pd.read_csv(tmp_path / "lb" / "leaderboard.csv").set_index("agent")
    assert main(["compare", "--all", "--store", store, "--runner", "concordia", "--out", str(tmp_path / "all")]) == 0
    pairs = pd.read_csv(tmp_path / "all" / "pairs.csv")
    bounds = {a: (int(str(t).split("-")[0]), int(str(t).split("-")[-1])) for a, t in board["rank_set"].dropna().items()}
    apart_pairs = 0
    for row in pairs.itertuples():
        if row.agent_a in bounds and row.agent_b in bounds:
            (lo_a, hi_a), (lo_b, hi_b) = bounds[row.agent_a], bounds[row.agent_b]
            if hi_a < lo_b or hi_b < lo_a:
                apart_pairs += 1
                assert row.p_value < 0.05, row
        assert not row.rank_sets_read_as_order
    assert apart_pairs >= 1
