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


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The folders `referee ratings`, `leaderboard` and `compare --all` wrote for one board of 20 agents with a
    leader (two tiers), as a user publishes them."""
    tmp = tmp_path_factory.mktemp("written")
    store = _store(tmp, "board", _duels(20, 800, seed=3, leader=3.0))
    for job, extra in (("ratings", []), ("leaderboard", []), ("compare", ["--all"])):
        assert main([job, *extra, "--store", store, "--out", str(tmp / job), "-q"]) == 0
    return tmp, store


def _planted(tmp_path, written, folder: str, name: str, change) -> list[str]:
    """Copies of the written folders with `change` (DataFrame -> DataFrame) applied to folder/name and its
    manifest's hash rewritten, as a regression in the code that printed it would write it."""
    import hashlib
    import json
    import shutil

    source, _ = written
    for job in ("ratings", "leaderboard", "compare"):
        shutil.copytree(source / job, tmp_path / job)
    path = tmp_path / folder / name
    change(pd.read_csv(path, keep_default_na=False, na_values=[""])).to_csv(path, index=False)
    manifest = json.loads((tmp_path / folder / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["name"] == name:
            entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (tmp_path / folder / "manifest.json").write_text(json.dumps(manifest))
    return [str(tmp_path / job) for job in ("ratings", "leaderboard", "compare")]


def _row(frame: pd.DataFrame, agent: str) -> int:
    return int(np.flatnonzero(frame["agent"].to_numpy() == agent)[0])


def _half_interval(frame):
    i = _row(frame, frame["agent"].iloc[3])
    middle, half = (frame.at[i, "lower"] + frame.at[i, "upper"]) / 2, (frame.at[i, "upper"] - frame.at[i, "lower"]) / 4
    frame.loc[i, ["lower", "upper"]] = [middle - half, middle + half]
    return frame


def _swap_ranks(frame):
    frame.loc[[2, 3], "rank"] = frame.loc[[3, 2], "rank"].to_numpy()
    return frame


def _flip_first(frame):
    frame["could_be_first"] = frame["could_be_first"].astype(object)
    frame.loc[2, "could_be_first"] = not bool(frame.at[2, "could_be_first"])
    return frame


def _scale_compare(frame):
    return frame.assign(**{c: frame[c] * 1.25 for c in ("difference", "se", "lower", "upper")})


def _rewrite_holm(frame):
    frame.loc[1, "p_holm"] = 0.5 if frame.at[1, "p_holm"] < 0.5 else 0.01
    return frame


def _too_few_matches(frame):
    frame.loc[4, "matches"] = 3
    return frame


PLANTED = {"an interval at half width": ("ratings", "ratings.csv", _half_interval, {"one truth"}),
           "two ranks swapped": ("leaderboard", "leaderboard.csv", _swap_ranks, {"ranks in order", "one truth"}),
           "could be first flipped": ("leaderboard", "rank_sets.csv", _flip_first, {"set of the best", "one truth"}),
           "compare x1.25": ("compare", "pairs.csv", _scale_compare, {"one truth"}),
           "the tier tests' Holm p": ("leaderboard", "tier_tests.csv", _rewrite_holm, {"Holm recomputed", "one truth"}),
           "an established agent's match count": ("ratings", "ratings.csv", _too_few_matches,
                                                  {"status by information", "one truth"})}


def test_the_check_passes_the_folders_as_written(written):
    tmp, store = written
    folders = [str(tmp / job) for job in ("ratings", "leaderboard", "compare")]
    found = referee.check(results=folders)
    assert found.violations == 0, found.table().to_string()
    assert "20 agents, 190 pairs, 19 neighbour tests from 3 folder(s)" in found.checked
    again = referee.check(store, results=folders)  # and against a recomputation on the store
    assert again.violations == 0 and "recomputation" in again.checked
    assert main(["check", "--results", *folders, "--out", str(tmp / "check"), "-q"]) == 0


@pytest.mark.parametrize("plant", list(PLANTED))
def test_the_check_fails_on_each_planted_contradiction(tmp_path, written, plant):
    folder, name, change, invariants = PLANTED[plant]
    folders = _planted(tmp_path, written, folder, name, change)
    found = referee.check(results=folders)
    assert found.violations > 0 and set(found.table()["invariant"]) & invariants, found.table()
    assert main(["check", "--results", *folders, "--out", str(tmp_path / "check"), "-q"]) == 1


def test_a_file_changed_after_its_manifest_is_named(tmp_path, written):
    import shutil

    source, _ = written
    shutil.copytree(source / "ratings", tmp_path / "ratings")
    (tmp_path / "ratings" / "ratings.csv").write_text((tmp_path / "ratings" / "ratings.csv").read_text() + "\n")
    found = referee.check(results=[str(tmp_path / "ratings")]).table()
    assert found["invariant"].tolist() == ["files as written"] and "ratings.csv" in found["where"].iloc[0]


def test_folders_of_two_boards_are_refused(tmp_path, written):
    source, store = written
    assert main(["ratings", "--store", store, "--seed", "4", "--out", str(tmp_path / "other"), "-q"]) == 0
    with pytest.raises(ValueError, match="different boards"):
        referee.check(results=[str(source / "leaderboard"), str(tmp_path / "other")])
    with pytest.raises(ValueError, match="not a results folder"):
        referee.check(results=[str(tmp_path)])


def test_a_seat_effect_needs_a_seat_in_the_stored_data(tmp_path, written):
    """The seat invariant reads the store's seat field, not `covariates.seats`: a leaderboard that printed a seat
    effect on a seatless store fails, whatever the code that printed it decided."""
    import shutil

    from referee.run.ratings.self_check import seats_recorded

    source, store = written
    shutil.copytree(source / "leaderboard", tmp_path / "leaderboard")
    with Store(store, read_only=True) as s:
        assert not seats_recorded(s)
    from referee.run.ratings.invariants import Printed, check_outputs

    printed = Printed(board=pd.read_csv(tmp_path / "leaderboard" / "leaderboard.csv"), seat_printed=True)
    assert set(check_outputs(printed, seats_recorded=False)["invariant"]) == {"seats only from the data"}
    assert check_outputs(printed, seats_recorded=True).empty


def test_every_cyclic_share_lies_inside_an_interval_with_width():
    """The cyclic share's bootstrap is biased upward (noise is cyclic): Efron's bias correction collapsed onto the
    resamples' edge, 0.41-0.41 beside 0.39. `holding_interval` holds the estimate and has width, or gives none."""
    from referee.run.ratings.game_theory import holding_interval
    from referee.run.ratings.invariants import Printed, check_outputs

    rng = np.random.default_rng(0)
    above = 0.41 + 0.002 * rng.standard_normal(200)  # every resample above the estimate, nearly alike
    lower, upper, how = holding_interval(above, 0.39, (0.0, 1.0))
    assert lower < 0.39 <= upper and upper - lower > 0.01 and "basic" in how and "widened" in how
    both = 0.39 + 0.03 * rng.standard_normal(500)  # draws on both sides: Efron's BC, as a plain percentile here
    lower, upper, how = holding_interval(both, 0.39)
    assert "bias-corrected" in how and abs(lower - np.quantile(both, 0.025)) < 0.01
    assert np.isnan(holding_interval(np.full(50, 0.2), 0.2)[0])  # no width: none, and said
    cyclic = pd.DataFrame({"component": [1, 2], "cyclic_share": [0.39, 0.08], "lower": [0.41, 0.0],
                           "upper": [0.41, 0.08]})
    found = check_outputs(Printed(cyclic=cyclic))
    assert len(found) == 2 and set(found["where"]) == {"cyclic: group 1"}  # outside, and no width


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


def test_compare_gives_the_boards_joint_p_and_no_boundary_sits_beside_a_pair_it_does_not_separate(
        tmp_path, sample_store, capsys):
    """compare prints the pair's p in the joint family the tiers read (with Holm's beside it) and says when the
    pair alone is separated while one tier holds both; every tier boundary of the sample's board sits beside a
    neighbour test that separates the pair, in the family the boundary reads (issue 99: ag029 | ag033 was a
    boundary beside Holm p = 0.070)."""
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
        if row.family == "joint":
            assert found["p_joint"] == pytest.approx(row.p)
        assert f"(the joint family its tiers read): p {p_text(found['p_joint'])}" in printed
        says = "one tier holds both" in printed
        assert says == (found["p_value"] < 0.05 and tier[row.agent] == tier[row.next] and found["p_joint"] >= 0.05)
        assert bool(row.new_tier) == (tier[row.next] == tier[row.agent] + 1)
        assert not row.new_tier or (row.separable and row.p < 0.05)


def test_no_tier_boundary_beside_a_neighbour_test_that_does_not_separate():
    """The held-out board of issue 99 (ag029 tier 1, ag033 tier 2 beside Holm p = 0.070): every boundary now sits
    beside a separable test of its own family, and compare --all's neighbours are the board's ranked ones."""
    from benchmarks.rank_sets import tournament
    from referee.run.ratings.board import infer_board
    from referee.run.ratings.compare import compare_all

    comparisons, _ = tournament(40, 2000, 6, 1001, 2.5, -2.5)
    board = infer_board(comparisons)
    tests = board.tier_tests
    assert (~tests["new_tier"] | tests["separable"]).all() and tests["new_tier"].any()
    pairs = compare_all(comparisons, board=board)
    adjacent = pairs[pairs["adjacent"]]
    ranked = board.ranked["agent"].tolist()
    assert list(zip(adjacent["agent_a"], adjacent["agent_b"])) == list(zip(ranked[:-1], ranked[1:]))
    assert (adjacent["separable"].to_numpy() == tests["separable"].to_numpy()).all()


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
                assert row.marginal_sets_apart and row.own_test_separates
    assert apart_pairs >= 1
