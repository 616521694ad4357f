"""The construct-validity audit: the EVAL 01 report's findings, safe formulas, and simulated seasons."""

import json

import numpy as np
import pandas as pd
import pytest

from referee.run.social.audit import audit_frame, default_outcomes, formula_from, run_audit
import referee
from referee.cli import main
from referee.io.loaders.aoa import COUNTERS
from referee.reporting import SAMPLE
from referee.simulators.aoa import eval01_score, simulate_aoa, write_aoa
from referee.io.store import Store
from referee.models.validity.formula import FormulaError, load_formula
from tests.conftest import shared_file

FORMULA = "data/formulas/aoa_eval01.toml"


@pytest.fixture(scope="module")
def eval01(tmp_path_factory):
    path = tmp_path_factory.mktemp("eval01") / "s.duckdb"
    with Store(path) as store:
        store.ingest([SAMPLE / "aoa_eval01" / "season.json"])
        frame, events = audit_frame(store, match="aoa:eval01")
        outcomes = default_outcomes(frame, store.table("measures"))
    formula = formula_from(FORMULA, frame)
    return frame, events, formula, outcomes, path


def test_eval01_findings_are_reproduced(eval01):
    frame, events, formula, outcomes, _ = eval01
    assert outcomes[0] == "nation_power"
    result = run_audit(frame, events, formula, outcomes, ["team"], "universal", bayes=False)
    rep = result["reproduction"]["table"].set_index("player")
    assert (result["reproduction"]["reproduce"], result["reproduction"]["computable"]) == (11, 12)
    assert rep.loc["Mochi", "status"] == "one component missing: bonus"
    assert (rep.loc["Mochi", "recorded"], rep.loc["Mochi", "expected"]) == (192, 647)
    assert rep.loc["Peanut", "raw_total"] == -529 and "hidden by the floor" in rep.loc["Peanut", "status"]
    assert rep.loc["Biscuit", "source"] == "counters" and (rep["source"] == "recorded components").sum() == 11
    held = result["hold_outcome_constant"]["table"].iloc[0]
    assert "Valdris" in held["group"] and held["n"] == 4
    assert (held["max"], held["min"]) == (8940, 51) and round(held["max_min_ratio"]) == 175
    top = result["failure_at_top"]["table"]
    assert top.loc[top["in_top_k"], "player"].tolist() == ["Pickles"]
    assert int(top.set_index("player").loc["Pickles", "rank"]) == 2
    agree = result["rank_agreement"]["by_outcome"]["nation_power"]
    assert (agree["best_outcome_player"], agree["best_outcome_value"], agree["best_outcome_score_rank"]) == ("Tofu", 269, 4)
    assert result["rank_agreement"]["top_roles"].count("Last Standing") == 3
    assert result["summary"]["measures_outcome"] is False
    two = result["two_scores"]["table"].set_index("player")
    assert two.loc["Pickles", "discordant"] == "high telemetry, low outcome"


def test_audit_command_writes_its_three_outputs(eval01, tmp_path):
    *_, store = eval01
    assert main(["audit", "--store", str(store), "--match", "aoa:eval01", "--formula", FORMULA, "--group-by", "team",
                 "--no-bayes", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "audit.json").read_text())
    assert data["reproduction"]["reproduce"] == 11 and data["summary"]["measures_outcome"] is False
    text = (tmp_path / "audit.md").read_text()
    assert "11 of 12 recorded scores reproduce" in text and "175x" in text and "Pickles ranks 2" in text
    assert (tmp_path / "decomposition.png").exists() and (tmp_path / "score_vs_outcome.png").exists()


def test_formulas_are_checked_and_evaluated_safely(tmp_path):
    inputs = set(COUNTERS)
    rng = np.random.default_rng(0)
    formula = load_formula(FORMULA, inputs | {"nation_alive"})
    for mission in ("World Peace", "Total Control", "Last Standing"):
        counters = {k: float(rng.integers(0, 50)) for k in COUNTERS}
        assert formula.evaluate(counters, mission)["total"] == eval01_score(counters, mission)["final"]
    cases = {
        'a = "__import__(\\"os\\")"': "not an allowed function",
        'a = "votes_cast + hugs"': "unknown name 'hugs'",
        'a = "votes_cast.real"': "not arithmetic",
        'a = "[1, 2]"': "not arithmetic",
        'a = "\\"text\\""': "only numbers",
        'a = "votes_cast +"': "cannot parse",
        'a = "min(1)"': "min() takes at least 2",  # issue 39: min of one number was a TypeError (exit 3)
        'min = "votes_cast"': "is a formula function's name",  # issue 39: a component shadowed min()
        'if = "votes_cast"': "is a formula function's name",
        '__class__ = "votes_cast"': "reserved",
        'lambda = "votes_cast"': "cannot be written in an expression",
    }
    for body, needle in cases.items():
        path = tmp_path / "f.toml"
        name = body.split(" =")[0]
        path.write_text(f'name = "x"\n[components]\n{body}\n[total]\nexpression = "{name if name.isidentifier() and name not in ("min", "if", "lambda") else "votes_cast"}"\n')
        with pytest.raises(FormulaError) as err:
            load_formula(path, inputs)
        assert needle in str(err.value) and "line 3" in str(err.value), str(err.value)


def test_eval02_outcome_formulas():
    names = {"eliminated_share", "own_survival", "peace_progress", "power_balance", "power_lead", "non_neutral_share"}
    f = load_formula("data/formulas/aoa_eval02_outcome.toml", names)
    base = dict(eliminated_share=0.25, own_survival=1.0, peace_progress=0.25, power_balance=0.8, power_lead=0.3,
                non_neutral_share=1.0)
    assert f.evaluate(base, "Last Standing")["total"] == pytest.approx(25.0)
    assert f.evaluate(dict(base, own_survival=0.0), "Last Standing")["total"] == 0.0  # the Pickles hole closed
    assert f.evaluate(base, "World Peace")["total"] == pytest.approx(20.0)
    assert f.evaluate(dict(base, eliminated_share=0.5), "World Peace")["total"] == 0.0  # the hard fail
    assert f.evaluate(base, "Total Control")["total"] == pytest.approx(80.0)
    assert f.evaluate(dict(base, power_lead=9.0, non_neutral_share=9.0), "Total Control")["total"] == 100.0


def _simulated(tmp_path, validity, mission, seed):
    sim = simulate_aoa(n_agents=16, n_nations=8, seed=seed, validity=validity, mission=mission)
    paths = write_aoa(sim, tmp_path / f"s{seed}")
    with Store(tmp_path / f"s{seed}.duckdb") as store:
        store.ingest([paths["logs"]])
        frame, events = audit_frame(store, match="aoa:sim")
    formula = formula_from(FORMULA, frame)
    return run_audit(frame, events, formula, ["nation_power", "nation_alive"], ["team"], "universal", bayes=False)


def test_a_score_built_to_track_the_outcome_passes(tmp_path):
    result = _simulated(tmp_path, validity=1.0, mission="Total Control", seed=3)
    assert result["reproduction"]["reproduce"] == result["players"] == 16
    assert result["summary"]["measures_outcome"] is True, result["summary"]
    assert result["rank_agreement"]["by_outcome"]["nation_power"]["spearman_low"] > 0.3
    assert "events" in result and result["events"]["table"]["attempted"].sum() > 0


def test_a_score_built_not_to_track_the_outcome_fails(tmp_path):
    result = _simulated(tmp_path, validity=0.0, mission=None, seed=3)
    assert result["summary"]["measures_outcome"] is False
    assert "hold_outcome_constant" in result["summary"]["checks_failed"]


def test_gamebench_win_is_refused_as_circular(tmp_path):
    """GameBench records only scores, so `win` is the score's own rank restated: auditing against it is circular."""
    path = shared_file("gamebench", "matches.json")
    with Store(tmp_path / "g.duckdb") as store:
        store.ingest([path])
        frame, events = audit_frame(store)
    assert (frame["win"] == 0.5).sum() == 0  # a drawn two-player game has no winner, not two half-winners
    with pytest.raises(ValueError, match=r"\['win'\] are a function of the score itself.*--measure NAME=outcome"):
        run_audit(frame, events, None, ["win"], [], None, bayes=False)




@pytest.mark.parametrize("content, needle", [(None, "no such formula file"), (b"name = \"\xff\"\n", "not UTF-8")])
def test_a_formula_file_that_cannot_be_read_is_named(tmp_path, content, needle):
    """Issue 39: a non-UTF-8 or missing formula file ended without naming it."""
    path = tmp_path / "formula.toml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(FormulaError, match=needle) as err:
        load_formula(path, set(COUNTERS))
    assert str(path) in str(err.value)


def test_a_telemetry_measure_declared_at_ingest_is_reported_without_naming_it_again(tmp_path):
    """A column ingested with --measure NAME=telemetry is the audit's telemetry (the two-score check runs) with no
    --telemetry; before, it was ignored unless named again."""

    rng = np.random.default_rng(0)
    rows = [{"match": f"m{m}", "agent": f"a{p}", "player": f"p{p}", "score": float(s), "rank": r + 1,
             "territory": float(10 - r + rng.normal()), "activity": float(rng.integers(0, 50))}
            for m in range(30) for r, (p, s) in enumerate(zip(rng.permutation(4), [9, 6, 3, 1]))]
    data, store = tmp_path / "t.csv", tmp_path / "t.duckdb"
    pd.DataFrame(rows).to_csv(data, index=False)
    assert main(["ingest", str(data), "--store", str(store), "--measure", "territory=outcome",
                 "--measure", "activity=telemetry"]) == 0
    found = referee.audit(store, outcome=["territory:higher"], no_bayes=True)
    assert found.value["two_scores"]["table"] is not None and "activity" in found.value["two_scores"]["verdict"]


@pytest.mark.parametrize("n", [3, 7, 40, 130])
def test_resampled_rank_correlations_are_scipys_for_every_resample(n):
    """The audit's bootstrap computes Spearman's rho and Kendall's tau-b of all its resamples as arrays (pairs as
    arrays up to PAIRWISE_MAX players, scipy's own Kendall past it): each is scipy's for that resample to 1e-12, with
    ties in both variables, and NaN exactly where a resample's score or outcome is constant."""
    import numpy as np
    from scipy import stats

    from referee.models.validity.rank_resamples import resampled_rank_correlations

    rng = np.random.default_rng(n)
    x = np.round(rng.normal(size=n) * 2)  # ties
    y = np.round(x + rng.normal(size=n))
    idx = rng.integers(0, n, (200, n))
    rho, tau = resampled_rank_correlations(x, y, idx)
    constant = 0
    for b in range(len(idx)):
        xs, ys = x[idx[b]], y[idx[b]]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            constant += 1
            assert np.isnan(rho[b]) and np.isnan(tau[b])
            continue
        assert abs(rho[b] - stats.spearmanr(xs, ys).statistic) < 1e-12
        assert abs(tau[b] - stats.kendalltau(xs, ys).statistic) < 1e-12
    assert (constant > 0) == (n == 3)  # three players drawn with replacement are often one player
