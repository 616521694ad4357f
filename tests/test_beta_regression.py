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
from referee.models.scores import score_cells as sc
from tests.helpers import synthetic_catalogue

FULL = bool(os.environ.get("REFEREE_FULL"))


def _rows_in_cells(seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys, y, each row's cell in order of first appearance): 6 cells of 1-5 rows in shuffled order, scores with
    exact 0s and 1s among them."""
    rng = np.random.default_rng(seed)
    keys = rng.permutation(np.repeat(np.arange(6) * 7 + 2, [1, 2, 3, 4, 5, 3]))
    y = np.round(rng.uniform(-0.2, 1.2, len(keys)).clip(0, 1), 3)
    y[:3] = [0.0, 1.0, 0.0]
    seen: dict = {}
    return keys, y, np.array([seen.setdefault(k, len(seen)) for k in keys])


@pytest.mark.parametrize("likelihood", sc.LIKELIHOODS)
def test_each_cells_likelihood_is_the_sum_of_its_rows_closed_form_densities(likelihood):
    """A cell's log-likelihood (`score_cells`, `score_likelihood`: from its counts and sums of log y, log(1 - y)) is
    the sum over its rows of each row's own density by the closed form (scipy's Beta): the ordered beta's
    P(y = 0) = 1 - sigmoid(eta - k1), P(y = 1) = sigmoid(eta - k2), else (sigmoid(eta - k1) - sigmoid(eta - k2))
    Beta(y | sigmoid(eta) phi, (1 - sigmoid(eta)) phi); the squeeze's Beta of (y (n - 1) + 1/2) / n."""
    import pymc as pm

    keys, y, cell = _rows_in_cells()
    cells = sc.score_cells(keys, y, likelihood)
    assert cells.first.tolist() == [int(np.flatnonzero(cell == c)[0]) for c in range(6)]
    eta = np.array([0.4, -1.2, 2.5, 0.0, -3.0, 1.1])
    k1, k2, phi = -1.5, 2.0, 7.0
    with pm.Model() as model:
        sc.score_likelihood("y", cells, pm.math.constant(eta), br.Priors(), likelihood)
    point = {"phi_log__": np.log(phi)} | ({"cutpoints_ordered__": np.array([k1, np.log(k2 - k1)])}
                                          if likelihood == "ordered" else {})
    ours = model.compile_fn(model.replace_rvs_by_values([model["y"]])[0], inputs=model.value_vars,
                            mode="FAST_COMPILE")(point)
    s = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    m = s(eta[cell])
    if likelihood == "squeeze":
        rows = stats.beta(m * phi, (1 - m) * phi).logpdf((y * (len(y) - 1) + 0.5) / len(y))
    else:
        inside = np.clip(y, 1e-9, 1 - 1e-9)
        rows = np.where(y == 0, np.log(1 - s(eta[cell] - k1)), np.where(
            y == 1, np.log(s(eta[cell] - k2)),
            np.log(s(eta[cell] - k1) - s(eta[cell] - k2)) + stats.beta(m * phi, (1 - m) * phi).logpdf(inside)))
    np.testing.assert_allclose(ours, np.bincount(cell, weights=rows), rtol=1e-9)
    with pytest.raises(ValueError, match="made for the"):
        with pm.Model():
            sc.score_likelihood("y", cells, pm.math.constant(eta), br.Priors(),
                                "ordered" if likelihood == "squeeze" else "squeeze")


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
    """Smithson and Verkuilen's squeeze, (y (n - 1) + 1/2) / n over all n rows, inside (0, 1): the baseline contrast's
    cells hold every row as between 0 and 1, and the sums of the logs of its squeezed scores (checked without
    sampling; the sampled fit is in `make test-all`)."""
    data, agents, scenarios, _ = br.design(_small_scores(), pd.DataFrame(columns=["scenario", "tag"]))
    model = br.build_baseline_contrast(data, agents, scenarios, "rational_agent", likelihood="squeeze")
    y, n = data["score_norm"].to_numpy(float), len(data)
    squeezed = (y * (n - 1) + 0.5) / n
    assert (squeezed > 0).all() and (squeezed < 1).all() and ((y == 0) | (y == 1)).any()
    cell = data.groupby(["agent_idx", "scenario_idx"], sort=False).ngroup().to_numpy()  # by first appearance
    assert model["y_between"].get_value().tolist() == np.bincount(cell).tolist()
    assert model["y_zeros"].get_value().sum() == model["y_ones"].get_value().sum() == 0
    np.testing.assert_allclose(model["y_sum_log"].get_value(), np.bincount(cell, weights=np.log(squeezed)), rtol=1e-12)
    np.testing.assert_allclose(model["y_sum_log1m"].get_value(), np.bincount(cell, weights=np.log1p(-squeezed)),
                               rtol=1e-12)
    assert "cutpoints" not in model.named_vars


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
