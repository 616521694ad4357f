"""Voting methods on OpenSpiel's worked examples (answers from the literature, issue 4's reference values)."""

import pandas as pd
import pytest

from referee.models.voting import METHODS, PreferenceProfile

P1 = PreferenceProfile.from_orders([(1, "A>B>C>D"), (1, "B>C>D>A"), (1, "C>A>D>B"), (1, "D>A>B>C"), (1, "A>C>B>D")],
                                   list("ABCD"))
P2 = PreferenceProfile.from_orders([(1, "A>B>C"), (1, "A>C>B"), (2, "C>A>B"), (1, "B>C>A")], list("ABC"))


def scores(method, profile):
    return METHODS[method](profile).set_index("agent")["score"].round(9).to_dict()


@pytest.mark.parametrize("method, expected", [
    ("copeland", {"A": 3, "B": 2, "C": 1, "D": 0}),
    ("ranked-pairs", {"A": 10, "B": 5, "C": 3, "D": 0}),
    ("maximal-lotteries", {"A": 1, "B": 0, "C": 0, "D": 0}),
    ("iml", {"A": 4, "B": 3, "C": 2, "D": 1}),
])
def test_first_profile(method, expected):
    assert scores(method, P1) == expected


@pytest.mark.parametrize("method, expected", [
    ("copeland", {"C": 2, "A": 1, "B": 0}),
    ("ranked-pairs", {"C": 5, "A": 3, "B": 0}),
    ("maximal-lotteries", {"A": 0, "B": 0, "C": 1}),
    ("iml", {"C": 3, "A": 2, "B": 1}),
])
def test_second_profile(method, expected):
    assert scores(method, P2) == expected


def test_margins_and_ranks():
    assert P1.margins[0].tolist() == [0, 3, 1, 1]
    for method in METHODS:
        out = METHODS[method](P1)
        assert out.sort_values("rank")["agent"].tolist() == list("ABCD"), method


def test_rock_paper_scissors_lottery_is_uniform():
    cycle = PreferenceProfile.from_orders([(1, "R>S>P"), (1, "S>P>R"), (1, "P>R>S")], list("PRS"))
    lottery = scores("maximal-lotteries", cycle)
    assert all(abs(v - 1 / 3) < 1e-6 for v in lottery.values())
    assert scores("copeland", cycle) == {"P": 1, "R": 1, "S": 1}
    # a tie is a tie: every method gives the three agents one shared rank, whatever the seed
    for method in METHODS:
        for seed in range(3):
            assert METHODS[method](cycle, seed=seed)["rank"].tolist() == [1, 1, 1], (method, seed)


def test_ewa_runs_each_repetition_then_combines_orders():
    # two runs; in each, A wins one task ballot and B the other with a tie-break by C: orders only are combined
    rows = []
    for run, tasks in {"0": [("t1", {"A": 3, "B": 2, "C": 1}), ("t2", {"A": 3, "C": 2, "B": 1}), ("t3", {"B": 3, "A": 2, "C": 1})],
                       "1": [("t1", {"B": 3, "A": 2, "C": 1}), ("t2", {"A": 3, "B": 2, "C": 1}), ("t3", {"A": 3, "B": 2, "C": 1})]}.items():
        for task, s in tasks:
            rows += [{"ballot": f"{task}:{run}", "agent": a, "score": v, "repetition": run} for a, v in s.items()]
    profile = PreferenceProfile.from_ballots(pd.DataFrame(rows))
    out = METHODS["ewa"](profile).set_index("agent")["score"].to_dict()
    # each run's IML puts A first, B second, C third; the final election of two identical orders agrees
    assert out == {"A": 3.0, "B": 2.0, "C": 1.0}


def _runs_profile(runs: dict[str, list[str]]) -> PreferenceProfile:
    """Ballots from strict orders per run: {run: ['A>C', 'C>A', ...]}, one ballot per task of the run."""
    rows = []
    for run, orders in runs.items():
        for task, order in enumerate(orders):
            names = order.split(">")
            rows += [{"ballot": f"t{task}:{run}", "agent": a, "score": len(names) - i, "repetition": run}
                     for i, a in enumerate(names)]
    return PreferenceProfile.from_ballots(pd.DataFrame(rows))


def test_ewa_readings_on_a_hand_worked_example():
    """Two agents, three runs of three tasks. Run 0: C beats A on all three tasks; runs 1 and 2: A beats C on
    two of three. Pooled (flat), C wins 5 ballots to A's 4; run by run, A wins two runs of three.
    flat: one IML election, C above A: IML scores C = 1 level below + 1 = 2, A = 0 + 1 = 1.
    runs: run orders C>A, A>C, A>C; the final election puts A first: A = 2, C = 1.
    run-points: a point per agent beaten in each run: A 0 + 1 + 1 = 2, C 1 + 0 + 0 = 1."""
    from referee.models.voting import vote

    profile = _runs_profile({"0": ["C>A", "C>A", "C>A"], "1": ["A>C", "A>C", "C>A"], "2": ["A>C", "A>C", "C>A"]})
    found = {reading: vote(profile, "ewa", min_ballots=1, reading=reading).set_index("agent")["score"].to_dict()
             for reading in ("flat", "runs", "run-points")}
    assert found == {"flat": {"C": 2.0, "A": 1.0}, "runs": {"A": 2.0, "C": 1.0}, "run-points": {"A": 2.0, "C": 1.0}}


def test_ewa_run_points_count_agents_beaten_per_run():
    """Three agents, three runs of three tasks (strict orders, so every run's IML order is unique).
    Run 0 ballots A>B>C, A>C>B, B>C>A: A beats B and C 2-1, B beats C 2-1: order A>B>C.
    Run 1 ballots C>B>A, B>A>C, C>A>B: order C>B>A. Run 2 ballots B>A>C, A>B>C, B>C>A: order B>A>C.
    Points (agents beaten): A 2 + 0 + 1 = 3, B 1 + 1 + 2 = 4, C 0 + 2 + 0 = 2.
    runs: final ballots A>B>C, C>B>A, B>A>C: B beats A and C 2-1, A beats C 2-1: B 3, A 2, C 1 (IML levels)."""
    from referee.models.voting import vote

    profile = _runs_profile({"0": ["A>B>C", "A>C>B", "B>C>A"], "1": ["C>B>A", "B>A>C", "C>A>B"],
                             "2": ["B>A>C", "A>B>C", "B>C>A"]})
    points = vote(profile, "ewa", min_ballots=1, reading="run-points").set_index("agent")
    assert points["score"].to_dict() == {"B": 4.0, "A": 3.0, "C": 2.0} and points.loc["B", "rank"] == 1
    runs = vote(profile, "ewa", min_ballots=1, reading="runs").set_index("agent")["score"].to_dict()
    assert runs == {"B": 3.0, "A": 2.0, "C": 1.0}
    with pytest.raises(ValueError, match="unknown EwA reading"):
        vote(profile, "ewa", min_ballots=1, reading="average")
