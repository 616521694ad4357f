"""Compiled models kept per structure: a refit of the same model samples without compiling, a model with
other data compiles anew, and every fit reports its compile and sampling time apart."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from referee.models.compiled import model_key
from referee.models.fit import sample


def _model(y: np.ndarray) -> pm.Model:
    with pm.Model(coords={"obs": range(len(y))}) as model:
        mu = pm.Normal("mu", 0, 10)
        sigma = pm.HalfNormal("sigma", 5)
        pm.Normal("y", mu, sigma, observed=y, dims="obs")
    return model


def test_model_key_tells_structure_and_data_apart():
    y = np.arange(5.0)
    assert model_key(_model(y)) == model_key(_model(y.copy()))
    assert model_key(_model(y)) != model_key(_model(y + 1))  # the same graph on other data is another model
    with pm.Model() as other:
        pm.Normal("mu", 0, 10)
    assert model_key(other) != model_key(_model(y))


@pytest.mark.bayes
def test_a_refit_of_the_same_structure_reuses_the_compiled_nutpie_model():
    pytest.importorskip("nutpie")
    from referee.models import compiled

    compiled._COMPILED.clear()  # as a fresh process: an earlier test (or a seed rerun) may have compiled it
    y = np.random.default_rng(0).normal(1.0, 2.0, 40)
    _, first = sample(_model(y), ["mu", "sigma"], draws=800, tune=400, chains=2, seed=3, sampler="nutpie")
    idata, second = sample(_model(y), ["mu", "sigma"], draws=800, tune=400, chains=2, seed=3, sampler="nutpie")
    assert not first["compiled_model_reused"] and second["compiled_model_reused"]
    assert second["compile_seconds"] == 0.0 and first["compile_seconds"] > 0 and second["sampling_seconds"] > 0
    assert {"posterior", "observed_data"} <= set(idata.groups())
    # the same seed and model give the same draws whether or not the compiled model was reused
    again, _ = sample(_model(y), ["mu", "sigma"], draws=800, tune=400, chains=2, seed=3, sampler="nutpie")
    assert np.array_equal(again.posterior["mu"].values, idata.posterior["mu"].values)
    # the posterior mean of mu is the sample mean to within its standard error (a flat-ish prior)
    assert abs(float(idata.posterior["mu"].mean()) - y.mean()) < 2 * y.std() / np.sqrt(len(y))
    _, pymc = sample(_model(y), ["mu", "sigma"], draws=800, tune=400, chains=2, seed=3, sampler="pymc")
    assert pymc["compile_seconds"] >= 0 and pymc["sampling_seconds"] > 0 and pymc["sampler"] == "pymc"
