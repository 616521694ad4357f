"""Comparisons: joined on (scenario, repetition), never file order; within matches; parallel games."""

import numpy as np
import pandas as pd

from referee.prepare.comparisons import (
    ballots_from_tables,
    match_comparisons,
    parallel_comparisons,
    scenario_comparisons,
)


def test_scenario_comparisons_join_on_repetition_not_order():
    scores = pd.DataFrame({
        "agent": ["x", "x", "y", "y"], "scenario": ["s", "s", "s", "s"], "repetition": ["0", "1", "1", "0"],
        "score": [5.0, 1.0, 3.0, 5.0], "game": "g", "communication": None,
    })
    c = scenario_comparisons(scores).sort_values("cluster")
    # repetition 0: x 5 vs y 5, a tie; repetition 1: x 1 vs y 3, y wins. File order would pair 5-3 and 1-5.
    assert c["cluster"].tolist() == ["s:0", "s:1"]
    assert c["outcome"].tolist() == [0.5, 0.0] and (c["a"] == "x").all()


def test_negative_infinity_loses():
    scores = pd.DataFrame({"agent": ["x", "y"], "scenario": "s", "repetition": "0", "score": [-np.inf, 0.0],
                           "game": "g", "communication": None})
    assert scenario_comparisons(scores)["outcome"].tolist() == [0.0]


def _tables(rows):
    results = pd.DataFrame(rows, columns=["match_id", "player", "agent", "score", "rank"]).assign(group=None)
    matches = results[["match_id"]].drop_duplicates().assign(game="g", communication=None, started_at=None,
                                                               n_players=results.groupby("match_id").size().to_numpy(),
                                                               scenario=None, repetition=None, runner="r",
                                                               variant=None, phase=None)
    return matches, results


def test_match_comparisons_every_pair_of_different_agents():
    matches, results = _tables([("m", "p1", "a", 3, None), ("m", "p2", "b", 1, None), ("m", "p3", "c", 3, None),
                                ("m", "p4", "a", 0, None)])
    c = match_comparisons(matches, results)
    assert len(c) == 5  # 4 players: 6 pairs less the a-a pair
    got = {(r.a, r.b, r.outcome) for r in c.itertuples()}
    assert ("a", "b", 1.0) in got and ("a", "c", 0.5) in got and ("b", "a", 1.0) in got


def test_ranks_are_used_when_scores_are_missing():
    matches, results = _tables([("m", "p1", "a", None, 2), ("m", "p2", "b", None, 1)])
    assert match_comparisons(matches, results)["outcome"].tolist() == [0.0]


def test_ordering_points_take_scores_only_in_matches_where_every_player_has_one():
    """Against the rule applied match by match: a match where any player lacks a score is ordered by minus rank for
    every player, a complete match by score; a row with neither is NaN."""
    from referee.prepare.selection import ordering_points

    rng = np.random.default_rng(3)
    rows = []
    for m in range(60):
        for p in range(int(rng.integers(2, 5))):
            rows.append((f"m{m % 23}-{m}", rng.choice([rng.normal(), np.nan], p=[0.8, 0.2]),
                         rng.choice([float(p + 1), np.nan], p=[0.9, 0.1])))
    results = pd.DataFrame(rows, columns=["match_id", "score", "rank"])
    expected = []
    for match_id, score, rank in rows:
        complete = results.loc[results["match_id"] == match_id, "score"].notna().all()
        expected.append(score if complete else -rank)
    got = ordering_points(results)
    assert np.array_equal(got, np.array(expected, float), equal_nan=True)
    assert np.isnan(got).any() and (~np.isnan(got)).sum() > 100
    full = results.dropna(subset=["score"])
    assert np.array_equal(ordering_points(full), full["score"].to_numpy())  # no score missing: the scores


def test_parallel_games_compare_across_matches_with_identical_opponents():
    matches, results = _tables([
        ("m1", "p1", "x", 5, None), ("m1", "p2", "o", 1, None), ("m1", "p3", "q", 2, None),
        ("m2", "p1", "y", 3, None), ("m2", "p2", "o", 9, None), ("m2", "p3", "q", 1, None),
        ("m3", "p1", "z", 8, None), ("m3", "p2", "o", 1, None), ("m3", "p3", "r", 1, None),  # other opponents
    ])
    c = parallel_comparisons(matches, results)
    assert {(r.a, r.b, r.outcome) for r in c.itertuples()} == {("x", "y", 1.0)}
    assert c["cluster"].tolist() == ["m1|m2"]


def test_ballots():
    matches, results = _tables([("m", "p1", "a", 3, None), ("m", "p2", "a", 1, None), ("m", "p3", "b", 1.5, None)])
    ballots = ballots_from_tables(matches, results).set_index("agent")["score"].to_dict()
    assert ballots == {"a": 2.0, "b": 1.5}


def test_positions_are_pandas_get_indexer_for_arrow_text_object_text_and_missing_values():
    """`positions` (Arrow's index_in where the column is Arrow text) gives exactly `Index.get_indexer`: -1 for a
    missing value or a name not among them, on Arrow-backed and object columns, and for names that are not text."""
    import numpy as np
    import pandas as pd

    from referee.models.codes import positions

    names = ["a", "b", "c\u00e9", "d"]
    cells = ["b", None, "c\u00e9", "zz", "a", "d", "a", ""]
    for dtype in ("string[pyarrow]", "str", object):
        values = pd.Series(cells, dtype=dtype)
        expected = pd.Index(names).get_indexer(values)
        assert np.array_equal(positions(values, names), expected), dtype
        assert positions(values, names).dtype == np.int64
    numbers = pd.Series([3, 1, 7])
    assert positions(numbers, [1, 2, 3]).tolist() == [2, 0, -1]
