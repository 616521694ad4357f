"""Statistics referee computes from what the contest paper and the EVAL 01 report publish (issue 18): the
mission's share of EVAL 01's score variance against nation power's (referee's statistic on the report's table;
the report does not state it), the Bayesian regression of the assignment-luck check against OLS, and the
contest's headline alignment of Elo with the mean-score ranking. Numbers the papers themselves state are
checked against the papers' text in tests/test_paper_command.py."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from referee.io.store import Store
from referee.reporting import SAMPLE
from referee.run.social.audit import audit_frame
from referee.run.scores.describe import mean_se, ranking_alignment, scores_by
from referee.models.validity.checks import assignment_luck


@pytest.fixture(scope="module")
def eval01(tmp_path_factory):
    """The EVAL 01 report's published table as the audit reads it: one row per nation."""
    with Store(tmp_path_factory.mktemp("eval01") / "store.duckdb") as store:
        store.ingest([SAMPLE / "aoa_eval01" / "season.json"])
        frame, _ = audit_frame(store, match="aoa:eval01")
    return frame


def test_referees_mission_share_of_eval01_score_variance_is_31_percent_and_nation_powers_none(eval01):
    """referee's assignment-luck statistic on the report's table (the report states no such share): the
    randomly drawn mission explains 31 % of the final score's variance across the 11 nations with a recorded
    power; the outcome the score claims to measure, nation power, explains 0 %."""
    luck = assignment_luck(eval01, "role", "nation_power", bayes=False)
    # by hand: R^2 of score on mission is the between-mission share of the sum of squares; on power, the
    # squared Pearson correlation
    data = eval01.dropna(subset=["nation_power"])
    total = ((data["score"] - data["score"].mean()) ** 2).sum()
    means = data.groupby("role")["score"].transform("mean")
    between = ((means - data["score"].mean()) ** 2).sum() / total
    pearson = data["score"].corr(data["nation_power"]) ** 2
    assert luck["n"] == 11
    assert luck["r2_assignment"] == pytest.approx(between, rel=1e-9) and round(100 * between) == 31
    assert luck["r2_outcome"] == pytest.approx(pearson, rel=1e-9) and round(100 * pearson) == 0


@pytest.mark.bayes
def test_the_bayesian_assignment_luck_regression_agrees_with_ols(eval01):
    """The Bayesian path at the defaults users get: P(outcome slope > 0) beside the one-sided OLS reading of the
    same joint regression (standardised score on standardised power and mission); neither finds the score
    following power, the two agree within the weak priors' pull, and the fit says it converged."""
    import statsmodels.formula.api as smf

    luck = assignment_luck(eval01, "role", "nation_power", bayes=True)
    data = eval01.dropna(subset=["nation_power"])
    z = lambda v: (v - v.mean()) / v.std()  # noqa: E731
    ols = smf.ols("y ~ x + C(role)", data.assign(y=z(data["score"]), x=z(data["nation_power"]))).fit()
    p_ols = stats.t.cdf(ols.params["x"] / ols.bse["x"], ols.df_resid)
    p_bayes = luck["p_outcome_slope_positive"]
    assert 0.2 < p_bayes < 0.9 and 0.2 < p_ols < 0.9
    assert abs(p_bayes - p_ols) < 0.15
    assert luck.converged, luck["bayes_diagnostics"]


def test_ranking_alignment_by_hand():
    """Four agents, one pair swapped: tau = (5 - 1) / 6, rho = 1 - 6 x 2 / (4 x 15)."""
    a = pd.Series({"w": 4.0, "x": 3.0, "y": 2.0, "z": 1.0})
    b = pd.Series({"w": 0.9, "x": 0.8, "y": 0.1, "z": 0.2, "extra": 1.0})  # 'extra' is not in both
    found = ranking_alignment(a, b)
    assert found["agents"] == 4 and found["top_agree"] is True
    assert found["kendall_tau"] == pytest.approx(4 / 6) and found["spearman_rho"] == pytest.approx(0.8)


def test_elo_aligns_with_the_mean_score_ranking_on_the_simulated_contest(tmp_path):
    """The contest's headline: Elo "closely aligns" with the ranking by mean normalised score (section 9.4);
    on the bundled simulated contest it does, and the pooled mean carries its standard error."""
    from referee.prepare.comparisons import comparisons_from_tables
    from referee.prepare.scores import normalised_scores
    from referee.run.ratings.ratings import rate

    from referee.present.report import scores_section

    with Store(tmp_path / "store.duckdb") as store:
        store.ingest([SAMPLE / "concordia" / "logs"], catalogue=SAMPLE / "concordia" / "catalogue.toml")
        scores = normalised_scores(store, scenarios_only=True)
        elo = rate(comparisons_from_tables(store.table("matches"), store.table("results")), "elo")
    means = mean_se(scores, "agent").set_index("agent")["mean"]
    found = ranking_alignment(elo.table().set_index("agent")["rating"], means)
    assert found["agents"] == 8 and found["kendall_tau"] > 0.7 and found["top_agree"]
    # the paper's headline form, "0.426 +/- 0.005 (SE)": the report states the pooled mean and its standard error
    values = scores["score_norm"].to_numpy()
    mean, se = values.mean(), values.std(ddof=1) / len(values) ** 0.5
    assert f"overall mean {mean:.3f} (SE {se:.3f})" in scores_section(scores, *scores_by(scores)).text[0]


def test_eval01_scores_reproduce_from_the_counters_the_report_publishes(eval01):
    """Where the report's text gives counters (sections 4.2-4.4, 6.3), the audit computes from them, not only
    from the recorded components, and says which scores it checked which way."""
    from referee.reporting import FORMULAS
    from referee.run.social.audit import formula_from
    from referee.models.validity.checks import counter_terms, reproduce

    formula = formula_from(FORMULAS / "aoa_eval01.toml", eval01)
    terms = counter_terms(eval01, formula).set_index(["player", "component"])
    value = lambda player, part: terms.loc[(player, part), "from_counters"]  # noqa: E731
    assert value("Pickles", "bonus") == 91 * 40 + 114 * 5 == 4210 == terms.loc[("Pickles", "bonus"), "recorded"]
    assert value("Smokey", "intel") == 162 * 10 + 24 * 5 == 1740
    assert value("Smokey", "bonus") == 185 * 30 == 5550 and terms.loc[("Smokey", "bonus"), "recorded"] == 5965
    assert value("Scout", "bonus") == 13 * 100 == 1300 == terms.loc[("Scout", "bonus"), "recorded"]
    assert value("Sunny", "bonus") == 188 * 40 + 225 * 5 == 8645 and terms.loc[("Sunny", "bonus"), "recorded"] == 8735
    assert value("Peanut", "efficiency") == 913 * -2 == -1826
    # Biscuit's counters are published whole: its score is checked from them, 27 x 3 - 3 x 10 = 51
    sources = reproduce(eval01, formula).set_index("player")
    assert sources.loc["Biscuit", "source"] == "counters" and sources.loc["Biscuit", "expected"] == 27 * 3 - 3 * 10
    # partial counters are kept as published: no player with some counters is checked as if it had them all
    partial = set(terms.index.get_level_values("player"))
    assert partial == {"Pickles", "Smokey", "Scout", "Sunny", "Peanut"}
    assert (sources.loc[sorted(partial), "source"] == "recorded components").all()


def test_event_log_categories_are_counted_apart_as_the_report_counts_them():
    """A hand-made log: Ann 4 actions (1 rejected: cooldown) and 2 proposals (1 rejected: duplicate), 1 parse
    failure, 2 turn skips; Bo (the same model as Ann) 1 accepted action and 1 missing thought; Cy (another
    model) 10 actions, 5 rejected. The report's categories come out apart, rejections per attempt per model
    control for activity (Ann and Bo's model: 2 of 7; Cy's: 5 of 10), and Bo, with 1 attempt against a
    median of 6, is quiet."""
    from referee.models.validity.checks import event_diagnostics
    from referee.run.social.audit import _event_verdict

    rows = ([("Ann", "act", "attack", "accepted", None)] * 3 + [("Ann", "act", "attack", "rejected", "cooldown")]
            + [("Ann", "propose", "alliance", "accepted", None), ("Ann", "propose", "alliance", "rejected", "duplicate")]
            + [("Ann", "harness", "parse_failure", None, None)] + [("Ann", "harness", "turn_skip", None, None)] * 2
            + [("Bo", "act", "trade", "accepted", None), ("Bo", "harness", "missing_thought", None, None)]
            + [("Cy", "act", "spy", "accepted", None)] * 5 + [("Cy", "act", "spy", "rejected", "invalid_target")] * 5)
    events = pd.DataFrame(rows, columns=["actor", "stage", "type", "status", "reason"]).assign(seq=lambda t: t.index)
    diag = event_diagnostics(events).set_index("actor")
    assert diag.loc["Ann", ["action_attempts", "action_rejections", "proposal_attempts", "proposal_rejections",
                            "parse_failures", "turn_skips", "missing_thoughts"]].tolist() == [4, 1, 2, 1, 1, 2, 0]
    assert diag.loc["Bo", "missing_thoughts"] == 1 and diag.loc["Ann", "rejection_rate"] == pytest.approx(2 / 6)
    assert diag.loc["Ann", "rejected: cooldown"] == 1 and diag.loc["Cy", "rejected: invalid_target"] == 5
    assert diag["quiet"].to_dict() == {"Cy": False, "Ann": False, "Bo": True}
    frame = pd.DataFrame({"player": ["Ann", "Bo", "Cy"], "agent": ["model-a", "model-a", "model-c"]})
    found = _event_verdict(diag.reset_index(), frame)
    rates = found["by_model"].set_index("agent")["rejection_rate"]
    assert rates.to_dict() == pytest.approx({"model-a": 2 / 7, "model-c": 0.5})
    assert found["verdict"].startswith("6 of 15 actions and 1 of 2 proposals were rejected; the harness logged 1 "
                                       "parse failures, 2 turn skips and 1 missing thoughts.")
