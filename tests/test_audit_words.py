"""The audit says one thing: an outcome's direction is declared, never guessed; values print as recorded;
lists are bounded; no `None`; each sentence of the rank-agreement verdict agrees with the statistic it follows,
on generated outcomes that agree with the score, run against it, or agree overall but reverse at the top."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.io.schema import empty
from referee.run.social.audit import UndeclaredDirection, run_audit


EVENTS = empty("events")


def _frame(kind: str, n: int = 60, seed: int = 0) -> pd.DataFrame:
    """One match of n players: `position` (higher is better) follows the score ('agree'), runs against it
    ('disagree'), or follows it except among the top 3 by score, where it runs the other way ('top')."""
    rng = np.random.default_rng(seed)
    score = np.sort(rng.normal(100, 20, n))[::-1]  # player p00 has the best score
    position = {"agree": score + rng.normal(0, 2, n), "disagree": -score + rng.normal(0, 2, n)}.get(kind)
    if kind == "top":
        position = score.copy()
        position[:3] = position[:3][::-1]  # the top three by score in reverse order
    return pd.DataFrame({"match_id": "m", "player": [f"p{i:02d}" for i in range(n)], "agent": "x", "role": None,
                         "team": None, "score": score, "rank": np.arange(1, n + 1, dtype=float),
                         "position": np.round(position, 3), "game": "g"})


def _verdict(frame: pd.DataFrame, direction: str = "higher") -> tuple[str, dict]:
    result = run_audit(frame, EVENTS, None, ["position"], [], None, bayes=False,
                       directions={"position": direction})
    return result["rank_agreement"]["verdict"], result["rank_agreement"]["by_outcome"]["position"]


def test_an_undeclared_direction_is_refused_with_how_to_declare_it():
    with pytest.raises(UndeclaredDirection, match="--outcome position:higher"):
        run_audit(_frame("agree"), EVENTS, None, ["position"], [], None, bayes=False)


def test_agreeing_outcome_reads_as_agreement():
    verdict, stats = _verdict(_frame("agree"))
    assert stats["spearman"] > 0.9 and stats["spearman_low"] > 0
    assert "Agreement holds overall and at the top." in verdict
    assert "absent" not in verdict and "other way" not in verdict and "None" not in verdict
    assert "(p00, " in verdict  # the best position belongs to the best score, printed as recorded


def test_disagreeing_outcome_reads_as_disagreement():
    verdict, stats = _verdict(_frame("disagree"))
    assert stats["spearman"] < 0
    assert "Overall agreement is not shown" in verdict and "holds" not in verdict


def test_reversal_at_the_top_is_named_with_its_own_statistic():
    verdict, stats = _verdict(_frame("top"))
    assert stats["spearman"] > 0.9 and stats["top_spearman"] < 0
    assert "runs the other way" in verdict and f"{stats['top_spearman']:.2f}" in verdict
    assert "Overall agreement is not shown" not in verdict


def test_lower_is_better_prints_values_as_recorded():
    frame = _frame("agree")
    frame["position"] = -frame["position"]  # now lower is better
    verdict, _ = _verdict(frame, "lower")
    best = frame.loc[frame["position"].idxmin()]
    assert f"({best['player']}, {best['position']:g})" in verdict and "Agreement holds" in verdict


def test_a_column_of_the_file_not_declared_at_ingest_says_how(tmp_path, capsys):
    rows = _frame("agree", n=12)
    rows.rename(columns={"match_id": "match"})[["match", "agent", "player", "score", "position"]].assign(
        agent=[f"a{i}" for i in range(12)]).to_csv(tmp_path / "t.csv", index=False)
    store = tmp_path / "s.duckdb"
    assert main(["ingest", str(tmp_path / "t.csv"), "--store", str(store), "--runner", "table"]) == 0
    assert main(["audit", "--store", str(store), "--outcome", "position:higher", "--out", str(tmp_path / "a")]) == 1
    assert "--measure position=outcome" in capsys.readouterr().err
