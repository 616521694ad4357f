"""Voting methods on OpenSpiel's worked examples (answers from the literature, issue 4's reference values)."""

import pandas as pd
import pytest

from models.voting import METHODS, PreferenceProfile

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
