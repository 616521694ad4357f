"""The audit's verdict does not depend on the score's units (issue 101): every check reads a statistic that no shift
or positive rescaling of the score moves, scores of different games are judged apart, a graded score is read as
graded, contradictory outcome flags are set apart, and the figure draws the outcomes judged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import referee
from referee.cli import main
from referee.io.store import Store
from referee.models.validity.checks import variance_kept
from referee.reporting import SAMPLE
from referee.run.social.audit import audit_frame, default_outcomes, formula_from, run_audit

AFFINE = {"as recorded": lambda s: s, "shifted by +1,000": lambda s: s + 1000.0, "scaled by 0.01": lambda s: s * 0.01}


def _four_player(seed: int, measured: bool, matches: int = 60) -> pd.DataFrame:
    """Held-out 4-player matches: one winner each; the score is 10 x won + Normal(0, 1) (`measured`) or noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(matches):
        winner = rng.integers(4)
        for p in range(4):
            won = float(p == winner)
            rows.append({"match": f"m{m}", "player": f"p{p}", "agent": f"a{rng.integers(6)}",
                         "score": (10 * won if measured else 0.0) + rng.normal(), "won": won})
    return pd.DataFrame(rows)


def _passed(result) -> dict:
    return {k: v for k, v in result.table().set_index("check")["passed"].items() if v is not None}


def _audit_table(tmp_path, table: pd.DataFrame, name: str, outcomes: list[str], measures: list[str]):
    path, store = tmp_path / f"{name}.csv", tmp_path / f"{name}.duckdb"
    table.to_csv(path, index=False)
    assert main(["ingest", str(path), "--store", str(store), "-q",
                 *[x for m in measures for x in ("--measure", f"{m}=outcome")]]) == 0
    return referee.audit(str(store), outcome=outcomes, no_bayes=True)


@pytest.mark.parametrize("measured", [True, False], ids=["score measures the outcome", "score is noise"])
def test_check_three_is_the_same_as_recorded_shifted_and_scaled(tmp_path, measured):
    base = _four_player(101, measured)
    verdicts = []
    for name, change in AFFINE.items():
        found = _audit_table(tmp_path, base.assign(score=change(base["score"])), name.split()[0], ["won:higher"],
                             ["won"])
        held = found.value["hold_outcome_constant"]
        assert held["passed"] is measured, (name, held["verdict"])
        verdicts.append(_passed(found))
    assert verdicts[0] == verdicts[1] == verdicts[2]  # every check's verdict, not only check 3's
    share = held["parts"]["share"].iloc[0]
    assert (share < 0.1) if measured else (share > 0.9)  # 1 of ~19.75 units of variance kept; all of it


def test_the_variance_kept_against_a_closed_form():
    """Two groups of identical outcomes, scores 0, 2 and 10, 12 (group variances 2 and 2): the mean square within
    is (2 + 2) / 2 = 2, the score's variance over the four players (0, 2, 10, 12; mean 6) is 104 / 3, so the share
    kept is 6 / 104."""
    frame = pd.DataFrame({"player": list("abcd"), "score": [0.0, 2.0, 10.0, 12.0], "won": [0, 0, 1, 1]})
    found = variance_kept(frame, ["won"]).iloc[0]
    assert found["share"] == pytest.approx(6 / 104) and found["passed"]
    shifted = variance_kept(frame.assign(score=frame["score"] * 7 + 3), ["won"]).iloc[0]
    assert shifted["share"] == pytest.approx(found["share"])


def test_eval01_verdicts_do_not_move_with_the_scores_units(tmp_path):
    """The audit's own EVAL 01 fixture: every check's verdict identical on the score as recorded, shifted and
    rescaled (the formula's reproduction reads the recorded score, so it is audited as recorded only)."""
    with Store(tmp_path / "e.duckdb") as store:
        store.ingest([SAMPLE / "aoa_eval01" / "season.json"])
        frame, events = audit_frame(store, match="aoa:eval01")
        outcomes = default_outcomes(frame, store.table("measures"))
    formula = formula_from("data/formulas/aoa_eval01.toml", frame)
    first = run_audit(frame, events, formula, outcomes, ["team"], "universal", bayes=False)
    assert first["hold_outcome_constant"]["passed"] is False and first["summary"]["measures_outcome"] is False
    found = []
    for change in AFFINE.values():
        moved = frame.assign(score=change(frame["score"]))
        moved.attrs = dict(frame.attrs)
        result = run_audit(moved, events, None, outcomes, ["team"], "universal", bayes=False)
        found.append({k: v for k, v in _passed(result).items() if k != "reproduction"})
    assert found[0] == found[1] == found[2] and found[0]["hold_outcome_constant"] is False


def _clem_like(seed: int = 5) -> pd.DataFrame:
    """Three clem-like games with Main Scores on their own scales: `quality` graded within success (Success = 1:
    0-97, most episodes; Lose = 1: 0; successful episodes keep most of the variance), `eqbench` from -113 to 99 with Lose = 1 on every episode, `taboo` whose score is noise to
    the outcome; and three `quality` episodes flagged Lose = 1 and Success = 1 together."""
    rng = np.random.default_rng(seed)
    rows = []
    for e in range(80):
        success = float(rng.random() < 0.85)
        rows.append({"match": f"q{e}", "player": "p0", "agent": f"m{e % 5}", "game": "quality", "Success": success,
                     "Lose": 1.0 - success, "score": rng.uniform(0, 97) if success else 0.0})
        rows.append({"match": f"e{e}", "player": "p0", "agent": f"m{e % 5}", "game": "eqbench", "Success": 0.0,
                     "Lose": 1.0, "score": rng.uniform(-113, 99)})
        t = float(rng.random() < 0.5)
        rows.append({"match": f"t{e}", "player": "p0", "agent": f"m{e % 5}", "game": "taboo", "Success": t,
                     "Lose": 1.0 - t, "score": rng.uniform(0, 100)})
    for e in range(3):
        rows.append({"match": f"x{e}", "player": "p0", "agent": "m0", "game": "quality", "Success": 1.0, "Lose": 1.0,
                     "score": 50.0})
    return pd.DataFrame(rows)


def test_games_on_their_own_scales_are_judged_apart_and_a_graded_score_reads_as_graded(tmp_path):
    table = _clem_like()
    results = {}
    for name, change in AFFINE.items():
        found = _audit_table(tmp_path, table.assign(score=change(table["score"])), name.split()[0],
                             ["Success:higher", "Lose:lower"], ["Success", "Lose"])
        held = found.value["hold_outcome_constant"]
        parts = held["parts"].set_index("part")
        assert held["by"] == "game" and "Judged per game" in held["verdict"]
        assert parts.at["quality", "share"] > 0.5  # most of its variance is the grade within success ...
        assert parts.at["quality", "passed"] and parts.at["quality", "graded"]  # ... read as graded, not failed
        assert not parts.at["taboo", "passed"] and "taboo: FAIL" in held["verdict"]
        assert pd.isna(parts.at["eqbench", "passed"]) and "eqbench (every player shares one outcome" in held["verdict"]
        results[name] = _passed(found)
        contradictions = [n for n in found.notes if "contradictory" in n]
        assert contradictions and "3 player(s) carry Success = 1 and Lose = 1" in contradictions[0]
        assert "quality (3)" in contradictions[0]
        assert len(found.table("players")) == len(table)  # the table audited; the three are set apart in the checks
    assert results["as recorded"] == results["shifted by +1,000"] == results["scaled by 0.01"]


def test_the_figure_draws_the_outcomes_judged_and_not_a_refused_one(tmp_path):
    """`Aborted` is 0 for every player with a score: refused, so not drawn; one panel per judged outcome."""
    table = _four_player(7, True).assign(aborted=0.0, placed=lambda f: 1.0 - f["won"])
    found = _audit_table(tmp_path, table, "fig", ["aborted:lower", "won:higher", "placed:lower"],
                         ["aborted", "won", "placed"])
    assert found.value.judged == ["won", "placed"]
    figure = found.plot("score_vs_outcome")
    titles = [ax.get_title() for ax in figure.axes]
    assert len(titles) == 2 and all("aborted" not in t for t in titles) and "won" in titles[0]
