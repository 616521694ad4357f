"""Analyses on tournaments of the real shapes (issue 13): comparisons within matches, a pair-count budget
and a streaming path, sparse voting, bootstrap replicates that miss an agent."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from referee.prepare.comparisons import (
    ComparisonBudgetError,
    comparisons_from_tables,
    pair_count,
    win_counts,
)
from referee.run.ratings.ratings import encode, rate, rate_counts
from referee.models.validity import CHECK_TITLES
from tests.helpers import tournament


@pytest.fixture(scope="module")
def ffa():
    return tournament(n_agents=80, n_matches=600, rare=20, seed=1)


def test_a_constant_scenario_column_changes_nothing(ffa):
    """Problem 1: a scenario column on a table runner's matches must not pair players across matches."""
    matches, results, _ = ffa
    plain = comparisons_from_tables(matches, results)
    with_scenario = comparisons_from_tables(matches.assign(scenario="everything"), results)
    assert len(plain) == len(with_scenario) == pair_count(matches, results)  # one agent per seat: exact
    sizes = matches["n_players"].to_numpy()
    assert len(plain) == int((sizes * (sizes - 1) // 2).sum())  # within matches only: 3 or 28 per match
    a = rate(plain, "bt").table().set_index("agent")["rating"]
    b = rate(with_scenario, "bt").table().set_index("agent")["rating"]
    pd.testing.assert_series_equal(a, b)


def test_concordia_still_compares_across_its_separate_episodes():
    matches = pd.DataFrame({"match_id": ["c1", "c2"], "runner": "concordia", "game": "g", "scenario": "s",
                            "variant": None, "phase": None, "repetition": "0", "n_players": 2,
                            "communication": None, "started_at": None})
    results = pd.DataFrame({"match_id": ["c1", "c1", "c2", "c2"], "player": ["A", "B", "A", "B"],
                            "agent": ["x", "bg", "y", "bg"], "group": ["focal", "background"] * 2,
                            "team": None, "role": None, "score": [3.0, 1.0, 2.0, 1.0], "rank": [1.0, 2.0, 1.0, 2.0]})
    c = comparisons_from_tables(matches, results)
    assert list(zip(c.a, c.b, c.outcome, c.kind)) == [("x", "y", 1.0, "scenario")]


def test_the_pair_count_is_known_before_building_and_bounded(ffa):
    matches, results, _ = ffa
    n = pair_count(matches, results)
    with pytest.raises(ComparisonBudgetError, match=f"{n:,} pairwise comparisons"):
        comparisons_from_tables(matches, results, max_pairs=n - 1)
    # one giant match of 3,000 players: 4.5 million pairs, refused before any is built
    big = tournament(n_agents=3000, n_matches=1, rare=0, sizes=(3000,), seed=2)
    assert pair_count(big[0], big[1]) == 3000 * 2999 // 2
    with pytest.raises(ComparisonBudgetError, match="streams in bounded memory"):
        comparisons_from_tables(big[0], big[1], max_pairs=1_000_000)


def test_streamed_win_counts_equal_the_comparisons_table(ffa):
    matches, results, _ = ffa
    comparisons = comparisons_from_tables(matches, results)
    agents, wins, ties = win_counts(matches, results, block=500)  # small blocks: the row-block path too
    coded = encode(comparisons, agents)
    np.testing.assert_allclose(wins + 0.5 * ties, coded.counts(ties="half"))
    np.testing.assert_allclose(wins, coded.counts(ties="ignore"))
    streamed = rate_counts(wins, ties, agents, "bt").table().set_index("agent")["rating"]
    listed = rate(comparisons, "bt").table().set_index("agent")["rating"]
    np.testing.assert_allclose(streamed.sort_index(), listed.sort_index(), atol=1e-6)


def test_cli_streams_past_the_budget_and_refuses_what_cannot_stream(ffa, tmp_path, monkeypatch, capsys):
    from referee.cli import main
    from referee.io.store import Store

    matches, results, _ = ffa
    csv = tmp_path / "t.csv"
    results.merge(matches[["match_id", "game"]]).rename(columns={"match_id": "match"})[
        ["match", "player", "agent", "score", "rank", "game"]].to_csv(csv, index=False)
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        store.ingest([csv])
    assert main(["ratings", "--method", "bt", "--store", str(db), "--out", str(tmp_path / "a")]) == 0
    monkeypatch.setenv("REFEREE_MAX_PAIRS", "1000")
    assert main(["ratings", "--method", "bt", "--store", str(db), "--out", str(tmp_path / "b")]) == 0
    a = pd.read_csv(tmp_path / "a" / "ratings.csv").set_index("agent")["rating"].sort_index()
    b = pd.read_csv(tmp_path / "b" / "ratings.csv").set_index("agent")["rating"].sort_index()
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert "streamed win counts" in (tmp_path / "b" / "notes.txt").read_text()
    capsys.readouterr()
    assert main(["ratings", "--method", "bt", "--bootstrap", "5", "--store", str(db), "--out", str(tmp_path / "c")]) == 1
    assert "REFEREE_MAX_PAIRS" in capsys.readouterr().err


def _probe_tables():
    """The issue's synthetic probe: 40 agents; `veteran` plays 600 games, `loser` 5 games and loses each."""
    matches, results, strengths = tournament(n_agents=40, n_matches=600, rare=0, seed=4, sizes=(3, 8))
    first = results.groupby("match_id").head(1).index
    results.loc[first, "agent"] = "veteran"  # one seat of every match
    probe = []
    for m in range(5):
        mid = f"probe{m}"
        matches.loc[len(matches)] = {**matches.iloc[0].to_dict(), "match_id": mid, "n_players": 3}
        probe += [{"match_id": mid, "player": f"p{j}", "agent": a, "group": None, "team": None, "role": None,
                   "score": s, "rank": r} for j, (a, s, r) in enumerate([("loser", 0.0, 3.0), ("ag001", 5.0, 1.0),
                                                                          ("ag002", 3.0, 2.0)])]
    return matches, pd.concat([results, pd.DataFrame(probe)], ignore_index=True)


@pytest.mark.parametrize("method", ["copeland", "ranked-pairs", "maximal-lotteries", "iml", "ewa"])
def test_a_five_game_loser_never_outranks_a_600_game_agent(method):
    from referee.prepare.comparisons import ballots_from_tables
    from referee.models.voting import SparseSupportWarning, PreferenceProfile, vote

    matches, results = _probe_tables()
    profile = PreferenceProfile.from_ballots(ballots_from_tables(matches, results))
    with pytest.warns(SparseSupportWarning, match=r"loser \(5\)"):
        out = vote(profile, method).set_index("agent")
    assert not out.loc["loser", "ranked"] and np.isnan(out.loc["loser", "rank"]) and out.loc["loser", "ballots"] == 5
    assert out.loc["veteran", "ranked"] and out.loc["veteran", "ballots"] == 600
    # without the support rule the loser may be ranked, but never above the veteran
    everyone = vote(profile, method, min_ballots=1).set_index("agent")
    assert everyone.loc["loser", "rank"] >= everyone.loc["veteran", "rank"], everyone.loc[["loser", "veteran"]]


def test_ties_share_a_rank_and_the_lottery_reports_its_support():
    from referee.prepare.comparisons import ballots_from_tables
    from referee.models.voting import PreferenceProfile, vote

    matches, results, _ = tournament(n_agents=60, n_matches=900, rare=0, seed=5)
    profile = PreferenceProfile.from_ballots(ballots_from_tables(matches, results))
    lottery = vote(profile, "maximal-lotteries")
    outside = lottery[~lottery["support"]]
    assert len(outside) > 0 and outside["score"].eq(0).all()
    assert outside["rank"].nunique() == 1 and outside["rank"].iloc[0] == lottery["support"].sum() + 1
    for method in ("copeland", "iml", "ranked-pairs"):
        out = vote(profile, method)
        ranks = out["rank"].to_numpy()
        # competition ranking: a rank r shared by k agents is followed by r + k
        for r, k in pd.Series(ranks).value_counts().items():
            assert r == 1 or (ranks < r).sum() == r - 1, (method, r, k)


def test_bootstrap_leaves_absent_agents_out_and_flags_thin_support(ffa):
    matches, results, _ = ffa
    comparisons = comparisons_from_tables(matches, results)
    result = rate(comparisons, "bt", bootstrap=200, seed=3)
    table = result.table().set_index("agent")
    rare = [a for a in table.index if a >= "ag060"]  # the 20 agents of 3 matches each
    assert (table.loc[rare, "replicates"] < 200).any() and (table.drop(index=rare)["replicates"] == 200).all()
    assert table.loc[rare, "flag"].str.contains("only 3 match").all()
    assert (table.drop(index=rare)["flag"] == "").all()
    # the symptom: replicates without an agent used to put its bound at the prior mean, 1500
    assert not np.isclose(table[["lower", "upper"]].to_numpy(), 1500.0, atol=1e-6).any()
    absent = np.isnan(result.bootstrap.ratings)
    assert absent.sum() == (200 - table["replicates"]).sum()
    assert any("read with caution" in n for n in result.notes)


def test_warnings_name_the_agents_and_say_what_was_done():
    from referee.models.ratings.bradley_terry import fit_bt

    # two groups that never met: {a, b} and {c, d}; everyone has wins and losses
    W = np.array([[0, 2, 0, 0], [1, 0, 0, 0], [0, 0, 0, 3], [0, 0, 1, 0]], float)
    with pytest.warns(UserWarning) as caught:
        fit_bt(W, ["a", "b", "c", "d"])
    message = str(caught[0].message)
    assert "splits into 2 groups" in message and ("c, d" in message or "a, b" in message)
    assert "used MAP" in message
    # re-raised from a fit, a warning carries referee's name, not a line of referee's source
    matches, results, _ = tournament(n_agents=12, n_matches=10, rare=4, rare_games=1, seed=6)
    with pytest.warns(UserWarning) as caught:
        rate(comparisons_from_tables(matches, results), "elo")
    assert all(w.filename == "referee" for w in caught)


def _audit_frame(tmp_path, seed=7):
    """The audit's own frame (`audit_frame`, so `win` is derived by referee) of a 3- and 8-player tournament
    ingested as a table: score = points, `coop` a recorded outcome independent of them, `placement` a
    recorded outcome equal to the rank; a few matches nobody scored in."""
    from referee.io.store import Store
    from referee.run.social.audit import audit_frame

    _, results, _ = tournament(n_agents=60, n_matches=120, rare=10, seed=seed, draw_share=0.1)
    rng = np.random.default_rng(seed)
    table = results.assign(coop=rng.integers(0, 4, len(results)).astype(float), placement=results["rank"])
    path = tmp_path / "t.csv"
    table.rename(columns={"match_id": "match"})[["match", "player", "agent", "score", "rank", "coop",
                                                 "placement"]].to_csv(path, index=False)
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([path], measures={"coop": "outcome", "placement": "outcome"})
        return audit_frame(store)


def test_audit_refuses_circular_outcomes_and_unknown_names(tmp_path):
    from referee.run.social.audit import run_audit

    frame, events = _audit_frame(tmp_path)
    for outcome in ("win", "rank"):
        with pytest.raises(ValueError, match="circular"):
            run_audit(frame, events, None, [outcome], [], None, bayes=False)
    with pytest.raises(ValueError, match=r"telemetry measure\(s\) \['actionz'\] not in the data"):
        run_audit(frame, events, None, ["coop"], [], "actionz", bayes=False)
    with pytest.raises(ValueError, match=r"outcome measure\(s\) \['cooperation'\]"):
        run_audit(frame, events, None, ["cooperation"], [], None, bayes=False)


def test_audit_directions_zero_spread_groups_and_every_check_accounted_for(tmp_path):
    from referee.run.social.audit import UndeclaredDirection, run_audit

    frame, events = _audit_frame(tmp_path)
    # a recorded placement (lower is better) that agrees with the score: undeclared, the audit refuses to guess;
    # declared, read the right way round it agrees
    with pytest.raises(UndeclaredDirection, match="placement:lower"):
        run_audit(frame, events, None, ["placement"], [], None, bayes=False)
    result = run_audit(frame, events, None, ["placement"], [], None, bayes=False, directions={"placement": "lower"})
    assert result["directions"] == {"placement": "lower"} and result["outcomes"] == ["placement (lower is better)"]
    assert result["rank_agreement"]["by_outcome"]["placement"]["spearman"] > 0.5
    flipped = run_audit(frame, events, None, ["placement"], [], None, bayes=False, directions={"placement": "higher"})
    assert flipped["rank_agreement"]["by_outcome"]["placement"]["spearman"] < -0.5
    # the share of the score's variance identical outcomes keep (issue 101), recomputed here by hand; groups whose
    # scores are all equal (matches nobody scored in) keep none of it; the widest group is the one named
    result = run_audit(frame, events, None, ["coop"], ["match_id"], None, bayes=False, directions={"coop": "higher"})
    held = result["hold_outcome_constant"]
    data = frame.dropna(subset=["match_id", "coop", "score"])
    groups = data.groupby(["match_id", "coop"])["score"]
    sizes = groups.transform("size")
    within = ((data["score"] - groups.transform("mean"))[sizes >= 2] ** 2).sum() / (sizes >= 2).sum().__sub__(
        groups.size().ge(2).sum())
    assert held["parts"]["share"].iloc[0] == pytest.approx(within / data["score"].var(ddof=1))
    zero = held["table"][held["table"]["max"] == held["table"]["min"]]
    assert len(zero) > 0 and (zero["sd"] == 0).all()
    assert held["table"].iloc[0]["group"] in held["verdict"]
    # every check is listed: ran, or not run and why; the verdict says on how many checks it rests
    table = result.table()
    assert len(table) == len(CHECK_TITLES) == 11 and (table["ran"] | (table["why_not_run"] != "")).all()
    assert "checks against the outcome judged" in result["summary"]["verdict"]
    assert "no scoring formula given" in result["summary"]["verdict"]
