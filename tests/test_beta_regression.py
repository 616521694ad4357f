"""Beta regressions: the likelihood against closed forms, identifiability checks, and parameter recovery.

Recovery runs bounded in CI (one small simulated contest per model); REFEREE_FULL=1 runs several seeds
and larger contests and pools the coverage.
"""

import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from referee.io.catalogue import load_catalogue, CONTEST_2024
from referee.simulators.concordia import cells_frame, simulate_concordia
from referee.models.scores import beta_regression as br
from tests.helpers import synthetic_catalogue

FULL = bool(os.environ.get("REFEREE_FULL"))


def test_ordered_beta_logp_matches_closed_form():
    import pymc as pm

    y = np.array([0.0, 1.0, 0.3, 0.75])
    eta, k1, k2, phi = 0.4, -1.5, 2.0, 7.0
    with pm.Model() as model:
        br.score_likelihood("y", y, pm.math.constant(eta), br.Priors(), "ordered")
    point = {"phi_log__": np.log(phi), "cutpoints_ordered__": np.array([k1, np.log(k2 - k1)])}
    logp = model.compile_logp(vars=[model["y"]], sum=False)(point)[0]
    s = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    m = s(eta)
    expected = [np.log(1 - s(eta - k1)), np.log(s(eta - k2))]
    expected += [np.log(s(eta - k1) - s(eta - k2)) + stats.beta(m * phi, (1 - m) * phi).logpdf(v) for v in y[2:]]
    np.testing.assert_allclose(logp, expected, rtol=1e-6)


def _contest_design() -> tuple[np.ndarray, list[str]]:
    """The 2024 contest's scenario-by-tag design X (12, 10) and the tag names, through referee's own design."""
    contest = load_catalogue(CONTEST_2024)
    names = sorted(contest.tags["tag"].unique())
    return br.tag_matrix(sorted(contest.scenarios["scenario"]), contest.tags, names), names


def test_contest_design_is_flagged():
    X, names = _contest_design()
    kept, aliased = br.aliased_tags(X, names)
    assert set(aliased) == {"leadership", "role playing"}  # one always with the other; both a partition's rest
    assert "negotiation" in aliased["role playing"] and "+1 1" in aliased["role playing"]
    notes = br.identifiability_notes(X, names, scenario_intercepts=True, bounds="observed")
    text = " ".join(notes)
    assert "rank 9 for 10 tags" in text and "['leadership', 'role playing']" in text
    assert "Scenario intercepts are in the model" in text and "observed range" in text


def test_agent_slopes_follow_what_the_contest_design_identifies():
    X, names = _contest_design()
    kept, _ = br.aliased_tags(X, names)
    names, X = [names[k] for k in kept], X[:, kept]
    # present in >= 3 and absent from >= 3 of the 12 scenarios: persuasion 8, negotiation 4, antisocial 4,
    # coordination 3; convention following (2) and the one-scenario tags stay at the population level
    slopes = br.slope_tags(X, names)
    assert slopes == ["coordination", "discouraging antisocial behavior", "negotiation", "persuasion"]
    assert br.slope_tags(X, names, "paper") == names
    assert br.slope_tags(X, names, min_scenarios=5) == []  # persuasion is absent from only 4
    note = br.structure_note(X, names, slopes, "identified", 3)
    assert "convention following (2 of 12)" in note and "social networks (1 of 12)" in note
    with pytest.raises(ValueError, match="structure must be one of"):
        br.slope_tags(X, names, "everything")


def _coverage(summary: pd.DataFrame, truth: dict[str, float]) -> tuple[int, int]:
    table = summary.set_index("parameter")
    hits = [(table.loc[p, "hdi_low"] <= v <= table.loc[p, "hdi_high"]) for p, v in truth.items()]
    return int(sum(hits)), len(hits)


def _scores(sim) -> pd.DataFrame:
    cells = cells_frame(sim.truth)
    return cells.rename(columns={"y": "score_norm"}).assign(bounds="theoretical")


@pytest.mark.bayes
def test_baseline_contrast_recovers_agent_effects():
    seeds = range(3) if FULL else range(1)
    hits = total = 0
    for seed in seeds:
        sim = simulate_concordia(load_catalogue(CONTEST_2024), n_agents=8 if FULL else 6, repetitions=4, seed=seed,
                                 tag_sd=0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = br.fit_baseline_contrast(_scores(sim), "rational_agent", draws=600, tune=600, seed=seed)
        truth = {f"gamma[{a}]": v for a, v in sim.truth["agent_intercepts"].items() if a != "rational_agent"}
        h, n = _coverage(fit.summary, truth)
        hits, total = hits + h, total + n
        assert fit.diagnostics["divergences"] == 0
        table = br.contrast_table(fit).set_index("agent")
        # the verdicts agree with the truth where the truth is far from zero
        for agent, value in truth.items():
            name = agent[6:-1]
            if value > 0.6:
                assert table.loc[name, "verdict"] == "credibly above"
            if value < -0.6:
                assert table.loc[name, "verdict"] == "credibly below"
    assert hits / total >= 0.75, (hits, total)  # nominal 95%


def _true_marginal_effects(truth: dict, tags) -> dict[str, float]:
    """Each tag's average marginal effect on the expected score (percentage points) from the simulation's
    own parameters, by hand: over the simulated (agent, scenario, repetition) cells, the expected score with
    the tag's effect (beta + the agent's slope) added minus without it (`br.expected_score`)."""
    cutpoints = np.array(truth["cutpoints"])
    tagged = tags.groupby("tag")["scenario"].apply(set)
    cells = [(c["agent"], c["scenario"]) for c in truth["cells"]]
    out = {}
    for tag, beta in truth["beta"].items():
        change = []
        for agent, scenario in cells:
            effect = beta + truth["agent_tag_slopes"][agent][tag]
            eta = truth["eta"][agent][scenario]
            off = eta - effect if scenario in tagged[tag] else eta
            change.append(br.expected_score(off + effect, cutpoints) - br.expected_score(off, cutpoints))
        out[tag] = 100.0 * float(np.mean(change))
    return out


def test_expected_score_is_the_ordered_beta_mean():
    """E[y] of the ordered beta against a direct integral: P(1) + P(middle) x the Beta part's mean."""
    from scipy.special import expit

    eta, k1, k2 = 0.7, -1.0, 1.5
    p_zero, p_one = 1 - expit(eta - k1), expit(eta - k2)
    by_hand = p_one * 1.0 + (1 - p_zero - p_one) * expit(eta) + p_zero * 0.0
    assert br.expected_score(np.array(eta), np.array([k1, k2])) == pytest.approx(by_hand, rel=1e-12)
    assert br.expected_score(np.array(0.0)) == pytest.approx(0.5)


@pytest.mark.heavy  # 85 s cold (a 2,500-draw fit of 16 scenarios x 6 agents): `make test-all`; the tag-effects fit
@pytest.mark.bayes  # itself runs in `make test` (tests/test_cli_ratings.py, tests/test_fit_contract.py)
def test_tag_effects_recover_coefficients_and_slopes():
    seeds = range(3) if FULL else range(1)
    hits = total = ame_hits = ame_total = 0
    for seed in seeds:
        catalogue = synthetic_catalogue(16, 3, seed)
        sim = simulate_concordia(catalogue, n_agents=6, repetitions=4, seed=seed, scenario_sd=0.0, resident_effect=0.0,
                                 tag_sd=0.4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = br.fit_tag_effects(_scores(sim), catalogue.tags, seed=seed)  # the defaults users get
        t = sim.truth
        truth = {f"beta[{k}]": v for k, v in t["beta"].items()}
        truth.update({f"slope[{a}, {k}]": v for a, s in t["agent_tag_slopes"].items() for k, v in s.items()})
        truth.update({f"agent_intercept[{a}]": v for a, v in t["agent_intercepts"].items()})
        h, n = _coverage(fit.summary, truth)
        hits, total = hits + h, total + n
        assert fit.converged, fit.diagnostics  # the fit's own verdict at its defaults, on every seed (issue 53)
        assert not any("rank" in note for note in fit.notes)  # the synthetic design is full rank
        posterior_corr = fit.idata.posterior["tag_corr"]
        assert posterior_corr.dims[-2:] == ("slope_tag", "slope_tag_")
        # response scale: each tag's average marginal effect in percentage points against the truth's
        effects = br.tag_table(fit).set_index("tag")
        true_ame = _true_marginal_effects(t, catalogue.tags)
        for tag, value in true_ame.items():
            ame_hits += effects.loc[tag, "ame_low"] <= value <= effects.loc[tag, "ame_high"]
            ame_total += 1
        assert np.corrcoef(effects.loc[list(true_ame), "ame_pp"], list(true_ame.values()))[0, 1] > 0.9
    assert hits / total >= 0.8, (hits, total)  # nominal 94%
    assert ame_hits / ame_total >= 0.6, (ame_hits, ame_total)  # nominal 94%, few tags


def _small_scores() -> pd.DataFrame:
    """Normalised scores of 4 agents on the contest's scenarios, 2 repetitions, no tag effects (seed 5)."""
    return _scores(simulate_concordia(load_catalogue(CONTEST_2024), n_agents=4, repetitions=2, seed=5, tag_sd=0.0))


def test_the_squeeze_likelihood_is_a_beta_on_the_squeezed_scores():
    """Smithson and Verkuilen's squeeze, (y (n - 1) + 1/2) / n, inside (0, 1) and in the scores' order, observed by a
    Beta with mean invlogit(eta) and precision phi (checked without sampling; the sampled fit is in
    `make test-all`)."""
    import pymc as pm

    data, agents, scenarios, _ = br.design(_small_scores(), pd.DataFrame(columns=["scenario", "tag"]))
    model = br.build_baseline_contrast(data, agents, scenarios, "rational_agent", likelihood="squeeze")
    y, n = data["score_norm"].to_numpy(float), len(data)
    squeezed = model["y_squeezed"].get_value()
    np.testing.assert_allclose(squeezed, (y * (n - 1) + 0.5) / n, rtol=0, atol=1e-15)
    assert (squeezed > 0).all() and (squeezed < 1).all() and ((y == 0) | (y == 1)).any()
    assert isinstance(model["y"].owner.op, type(pm.Beta.dist(1.0, 1.0).owner.op))


@pytest.mark.heavy  # its own compiled structure (12 s cold): `make test-all`; the files are checked on the default
@pytest.mark.bayes
def test_a_squeeze_fit_samples():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = br.fit_baseline_contrast(_small_scores(), "rational_agent", draws=200, tune=200, likelihood="squeeze")
    assert "gamma" in fit.idata.posterior and np.isfinite(fit.table()["mean"]).all()


@pytest.mark.bayes
def test_fit_result_files(tmp_path):
    """The files of a fit (the baseline contrast's default likelihood: the structure the recovery test compiles)."""
    from referee.present.outputs import ResultsFolder

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = br.fit_baseline_contrast(_small_scores(), "rational_agent", draws=200, tune=200)
    with ResultsFolder(tmp_path) as folder:
        paths = folder.fit(fit)
    summary = pd.read_csv(paths["summary"])
    assert list(summary.columns) == ["parameter", "mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail"]
    assert set(json.loads(paths["diagnostics"].read_text())) >= {"max_r_hat", "min_ess_bulk", "divergences"}
    import arviz as az
    assert "gamma" in az.from_netcdf(paths["idata"]).posterior


def test_diagnostics_warn_loudly_when_chains_disagree():
    import arviz as az

    from referee.models.fit import ConvergenceWarning, diagnose

    rng = np.random.default_rng(0)
    good = az.from_dict(posterior={"x": rng.normal(size=(2, 500))}, sample_stats={"diverging": np.zeros((2, 500), bool)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert diagnose(good, ["x"])["converged"]
    bad = az.from_dict(posterior={"x": rng.normal(size=(2, 500)) + np.array([[0.0], [3.0]])},
                       sample_stats={"diverging": np.zeros((2, 500), bool)})
    with pytest.warns(ConvergenceWarning, match="NOT CONVERGED"):
        out = diagnose(bad, ["x"])
    assert out["max_r_hat"] > 1.5 and not out["converged"]
    stats_ = {"diverging": np.zeros((2, 500), bool)}
    stats_["diverging"][0, 3] = True
    with pytest.warns(ConvergenceWarning, match="1 divergent"):
        diagnose(az.from_dict(posterior={"x": rng.normal(size=(2, 500))}, sample_stats=stats_), ["x"])
