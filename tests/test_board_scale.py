"""An arena-sized board (issue 107): the compiled loops of the rank sets give exactly the numpy forms they replaced,
the preference profile built from pairs within ballots equals the ballots x agents matrix it replaced, and a board
of more agents than BOARD_EVERY_COLUMN leaves the voting and game columns out, says so, and computes them on
request."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from referee.models.ratings import rank_kernels
from referee.models.voting import PreferenceProfile


def _board(seed: int, n: int = 25, r: int = 300):
    rng = np.random.default_rng(seed)
    estimate = rng.normal(0, 80, n)
    draws = estimate + rng.normal(0, 30, (r, n))
    draws[rng.random(draws.shape) < 0.02] = np.nan  # a replicate that drew none of an agent's matches
    se = np.sqrt(2) * rng.uniform(20, 40, (n, n))
    se = (se + se.T) / 2
    np.fill_diagonal(se, np.nan)
    se[0, 1] = se[1, 0] = np.nan  # an unresolved pair
    return estimate, draws, se


@pytest.mark.parametrize("seed", range(4))
def test_the_pair_maxima_kernel_gives_numpys_maxima_and_first_argmax(seed):
    estimate, draws, se = _board(seed)
    rng = np.random.default_rng(seed)
    rows, cols = np.nonzero(np.triu(np.isfinite(se), 1))
    shift = (estimate[:, None] - estimate[None, :])[rows, cols].astype(np.float32)
    inverse = (1.0 / se[rows, cols]).astype(np.float32)
    forward, backward = rng.random(len(rows)) < 0.7, rng.random(len(rows)) < 0.7
    values = draws.astype(np.float32)
    # the numpy form the kernel replaced
    z = (values[:, rows] - values[:, cols] - shift) * inverse
    best = np.where(forward, z, -np.inf)
    np.maximum(best, np.where(backward, -z, -np.inf), out=best)
    best[~np.isfinite(z)] = -np.inf
    where = np.argmax(best, axis=1)
    largest = best[np.arange(len(values)), where]
    found, at = np.full(len(values), -np.inf, np.float32), np.zeros(len(values), np.int64)
    rank_kernels.pair_maxima(np.ascontiguousarray(values.T), rows, cols, shift, inverse, forward, backward, found, at)
    assert np.array_equal(found, largest)
    assert np.array_equal(at, where)


@pytest.mark.parametrize("seed", range(4))
def test_the_suffix_kernel_gives_numpys_step_down_counts(seed):
    estimate, draws, se = _board(seed)
    d = estimate[:, None] - estimate[None, :]
    with np.errstate(invalid="ignore"):
        t = np.where(np.isfinite(se), d / se, -np.inf)
    rows, cols = np.nonzero(t > 0.5)
    order = np.argsort(-t[rows, cols], kind="stable")
    rows, cols = rows[order], cols[order]
    rest_rows, rest_cols = np.nonzero(np.isfinite(se) & (t <= 0.5))
    observed = t[rows, cols]
    values = draws.astype(np.float32)

    def centred(r, c):
        z = (values[:, r] - values[:, c] - d[r, c].astype(np.float32)) / se[r, c].astype(np.float32)
        return np.where(np.isfinite(z), z, -np.inf)

    base = centred(rest_rows, rest_cols).max(axis=1, initial=-np.inf)
    suffix = np.maximum(np.maximum.accumulate(centred(rows, cols)[:, ::-1], axis=1)[:, ::-1], base[:, None])
    finite = np.isfinite(suffix[:, 0])
    hits, kept = rank_kernels.suffix_hits(
        np.ascontiguousarray(values.T), rows, cols, d[rows, cols].astype(np.float32), se[rows, cols].astype(np.float32),
        rest_rows, rest_cols, d[rest_rows, rest_cols].astype(np.float32), se[rest_rows, rest_cols].astype(np.float32),
        observed)
    assert kept == finite.sum()
    assert np.array_equal(hits, (suffix[finite] >= observed[None, :]).sum(axis=0).astype(float))


@pytest.mark.parametrize("seed", range(4))
def test_the_marginal_kernels_give_numpys_centred_differences_and_row_maxima(seed):
    estimate, draws, se = _board(seed)
    rng = np.random.default_rng(seed)
    n = len(estimate)
    for j in (0, 3, n - 1):
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = (((draws - draws[:, [j]]) - (estimate - estimate[j])[None, :]) / se[j][None, :]).astype(np.float32)
        expected[~np.isfinite(expected)] = np.nan
        found = np.empty((n, len(draws)), np.float32)
        rank_kernels.centred_column(np.ascontiguousarray(draws.T), estimate, se[j], j, found)
        assert np.array_equal(found.T, expected, equal_nan=True)
        up, down = rng.random(n) < 0.6, rng.random(n) < 0.6
        with warnings.catch_warnings(), np.errstate(invalid="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row
            largest = np.fmax(np.nanmax(expected[:, up], axis=1, initial=-np.inf),
                              np.nanmax(-expected[:, down], axis=1, initial=-np.inf))
        got = rank_kernels.row_maxima(found, np.flatnonzero(up), np.flatnonzero(down))
        assert got.dtype == largest.dtype == np.float32
        assert np.array_equal(got, largest)


def _dense_profile(ballots: pd.DataFrame, agents: list[str]):
    """The ballots x agents form `PreferenceProfile.from_ballots` replaced: (preferences, met, support)."""
    scores = ballots.pivot_table(index="ballot", columns="agent", values="score", aggfunc="mean")
    weight = (ballots.groupby("ballot")["weight"].first().reindex(scores.index).to_numpy(float)
              if "weight" in ballots.columns else np.ones(len(scores)))
    scores = scores.reindex(columns=agents).to_numpy(float)
    present = ~np.isnan(scores)
    prefs = np.array([((scores[:, [i]] > scores) * weight[:, None]).sum(axis=0) for i in range(len(agents))])
    met = (present * weight[:, None]).T @ present.astype(float)
    np.fill_diagonal(met, 0.0)
    return prefs, met, (present * weight[:, None]).sum(axis=0)


@pytest.mark.parametrize("seed", range(12))
def test_the_profile_from_pairs_within_ballots_equals_the_ballots_by_agents_matrix(seed, monkeypatch):
    from referee.models.voting import profile

    rng = np.random.default_rng(seed)
    rows = []
    for b in range(int(rng.integers(1, 60))):
        weight = float(rng.integers(1, 4))
        # an agent may be listed twice on a ballot (its mean counts) or have no score (it is off the ballot)
        for agent in rng.choice(list("ABCDEFGH"), int(rng.integers(1, 7)), replace=bool(seed % 2)):
            score = np.nan if rng.random() < 0.1 else float(rng.integers(0, 4))
            rows.append({"ballot": f"b{b}", "agent": agent, "score": score, "weight": weight})
    ballots = pd.DataFrame(rows)
    if seed % 3 == 0:
        ballots = ballots.drop(columns="weight")
    agents = list("ABCDE") if seed % 4 == 0 else sorted(ballots["agent"].unique())
    if seed % 5 == 0:
        monkeypatch.setattr(profile, "PAIRS_AT_ONCE", 7)  # many blocks of pairs: the sums do not depend on them
    built = PreferenceProfile.from_ballots(ballots, agents if seed % 4 == 0 else None)
    prefs, met, support = _dense_profile(ballots, agents)
    assert built.agents == agents
    assert np.array_equal(built.preferences, prefs)
    assert np.array_equal(built.met, met)
    assert np.array_equal(built.support, support)
    direct = PreferenceProfile(agents, built.preferences, ballots)  # a profile built by hand counts the same
    assert np.array_equal(direct.met, met) and np.array_equal(direct.support, support)


def test_a_board_over_the_size_leaves_the_costly_columns_out_says_so_and_computes_them_on_request(tmp_path,
                                                                                                    monkeypatch):
    from referee.io.store import Store
    from referee.models import registry
    from referee.run.ratings import leaderboard as lb
    from referee.simulators.arena import simulate_arena, write_arena

    write_arena(simulate_arena(n_agents=8, n_judgments=1500, seed=3), tmp_path / "arena")
    store = Store(tmp_path / "s.duckdb")
    store.ingest([tmp_path / "arena" / "logs"])
    costly = ["copeland", "ranked-pairs", "maximal-lotteries", "iml", "ewa", "nash_mass", "alpha_rank_mass"]
    whole = lb.leaderboard(store).tables["leaderboard"]
    assert set(costly) <= set(whole.columns)
    monkeypatch.setattr(lb, "BOARD_EVERY_COLUMN", 5)  # 8 agents: a board over the size
    cut = lb.leaderboard(store)
    board = cut.tables["leaderboard"]
    assert not set(costly) & set(board.columns)
    assert {"rating", "rank_set", "joint_rank_set", "elo"} <= set(board.columns)
    assert any("--every-column" in note and "8 agents" in note for note in cut.notes)
    shared = [c for c in board.columns if c in whole.columns]
    pd.testing.assert_frame_equal(board[shared], whole[shared])  # what it computes is what the whole board shows
    asked = lb.leaderboard(store, every_column=True).tables["leaderboard"]
    pd.testing.assert_frame_equal(asked, whole)
    assert registry.BOARD_EVERY_COLUMN == 100
    store.close()


def test_a_large_board_says_its_stages_and_a_small_one_stays_quiet(tmp_path, monkeypatch, capsys):
    """A board of MANY_AGENTS agents or more (tens of seconds at 1,000, each of its loops under the ten seconds after
    which a loop says where it is) says its size, then each stage as it ends; a small board says nothing."""
    from referee.io.store import Store
    from referee.models import progress
    from referee.models.ratings import rank_sets
    from referee.run.ratings import leaderboard as lb
    from referee.simulators.arena import simulate_arena, write_arena

    write_arena(simulate_arena(n_agents=8, n_judgments=800, seed=4), tmp_path / "arena")
    store = Store(tmp_path / "s.duckdb")
    store.ingest([tmp_path / "arena" / "logs"])
    with progress.showing("lines"):
        lb.leaderboard(store)
        assert capsys.readouterr().err == ""
        monkeypatch.setattr(rank_sets, "MANY_AGENTS", 8)
        lb.leaderboard(store)
    said = capsys.readouterr().err.splitlines()
    assert said[0] == "leaderboard: 8 agents, 800 comparisons"
    assert [line.split(":")[0] for line in said[1:]] == ["leaderboard [1/2] the board",
                                                         "leaderboard [2/2] Elo, the seat effect and the other methods' "
                                                         "columns"]
    store.close()


def test_a_large_boards_check_says_its_stages_and_a_small_ones_stays_quiet(tmp_path, monkeypatch, capsys):
    """`referee check` on a store recomputes the leaderboard and compare --all (19,900 pairs at 200 agents, about ten
    seconds): on a board of MANY_AGENTS agents or more it says what it does, then each stage as it ends; on a
    small one nothing."""
    from referee.io.store import Store
    from referee.models import progress
    from referee.models.ratings import rank_sets
    from referee.run.ratings.self_check import check
    from referee.simulators.arena import simulate_arena, write_arena

    write_arena(simulate_arena(n_agents=8, n_judgments=800, seed=4), tmp_path / "arena")
    store = Store(tmp_path / "s.duckdb")
    store.ingest([tmp_path / "arena" / "logs"])
    with progress.showing("lines"):
        assert check(store).fields["violations"] == 0
        assert capsys.readouterr().err == ""
        monkeypatch.setattr(rank_sets, "MANY_AGENTS", 8)
        check(store)
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("check")]
    assert said[0] == "check: ratings of 8 agents; the leaderboard and compare --all recomputed (28 pairs at most), " \
                      "then checked"
    assert [line.split(":")[0] for line in said[1:]] == ["check [1/2] the leaderboard", "check [2/2] compare --all"]
    store.close()
