"""The pass/fail outcome model's hand-written density (`referee.models.scores.outcome_density`) against PyMC's own
model of the same fit (`outcome_glm.build_model`): the log density and its gradient at random points, the
parameters' names and order, the constrained values the posterior holds, and a fit drawn through it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from referee.models.scores import outcome_glm as og
from referee.simulators.pass_fail import pass_fail_samples

CASES = [  # (agents, tasks, effects, interaction, coding: None for the rule's)
    (6, 4, "crossed", False, None),
    (9, 4, "crossed", True, {"agent": True, "task": False}),
    (8, 3, "agent+task", False, {"agent": True, "task": True}),
    (5, 1, "crossed", False, None),  # one task: no task effect in the model
    (7, 5, "agent", False, {"agent": False}),
]


def _fit_inputs(agents, tasks, effects, interaction, coding, seed=1):
    frame, _ = pass_fail_samples(agents=agents, tasks=tasks, items=8, aliased=0, seed=seed)
    d = og.design(frame)
    names = og.EFFECTS[effects]
    coding = og.codings(d, names) if coding is None else coding
    model = og.build_model(d, names, interaction, False, og.Priors(), coding)
    return model, og.pass_fail_density(d, names, interaction, og.Priors(), coding)


def _point(model, x):
    """The flat vector x as PyMC's point {value variable: array}, in `model.value_vars`' order."""
    start, point, at = model.initial_point(), {}, 0
    for v in model.value_vars:
        shape = start[v.name].shape
        n = int(np.prod(shape))
        point[v.name] = x[at:at + n].reshape(shape)
        at += n
    assert at == len(x)
    return point


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[2]}-{c[0]}x{c[1]}{'-pairs' if c[3] else ''}")
def test_the_density_and_its_gradient_are_pymcs_at_random_points(case):
    model, density = _fit_inputs(*case)
    assert density.value_names() == [v.name for v in model.value_vars]
    logp = model.compile_logp(mode="FAST_COMPILE")  # PyMC's own graph, evaluated in Python: no compile
    dlogp = model.compile_dlogp(mode="FAST_COMPILE")
    rng = np.random.default_rng(7)
    for _ in range(6):
        x = rng.normal(scale=0.8, size=density.ndim)
        value, grad = density.logp_and_grad(x)
        point = _point(model, x)
        assert value == pytest.approx(float(logp(point)), rel=1e-10, abs=1e-7)
        assert np.allclose(grad, dlogp(point), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", CASES[:3], ids=lambda c: f"{c[2]}-{c[0]}x{c[1]}")
def test_the_expanded_values_are_the_models_free_variables_and_deterministics(case):
    import pytensor

    model, density = _fit_inputs(*case)
    wanted = [rv.name for rv in model.free_RVs] + [d.name for d in model.deterministics]
    assert density.names == wanted
    outputs = [model.unobserved_value_vars[[v.name for v in model.unobserved_value_vars].index(n)] for n in wanted]
    constrained = pytensor.function(model.value_vars, outputs, mode="FAST_COMPILE", on_unused_input="ignore")
    x = np.random.default_rng(3).normal(size=density.ndim)
    expanded = density.expanded(x)
    for name, value in zip(wanted, constrained(**_point(model, x))):
        assert np.allclose(expanded[name], value, rtol=1e-12, atol=1e-12), name


def test_a_model_of_other_parameters_is_refused_before_sampling():
    model, _ = _fit_inputs(*CASES[0])
    _, other = _fit_inputs(*CASES[1])
    with pytest.raises(ValueError, match="not the model's"):
        other.nutpie_model(model)


def test_a_pass_fail_fit_is_drawn_through_the_density_and_recovers_the_data(monkeypatch):
    """The fit's posterior comes from the density (nutpie calls its kernels; no PyTensor compile: either compiled
    path fails the test here) and agrees with the data: agents ordered as their pass rates, effects summing to 0."""
    from referee.models import compiled, compiled_structure

    def refuse(*args, **kwargs):
        raise AssertionError("a pass/fail fit compiled PyMC's graph instead of sampling its density")

    monkeypatch.setattr(compiled, "compiled_nutpie", refuse)
    monkeypatch.setattr(compiled_structure, "compiled_for", refuse)
    frame, _ = pass_fail_samples(agents=6, tasks=4, items=10, aliased=0, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = og.fit_outcomes(frame, seed=0)
    assert fit.diagnostics["converged"] and fit.diagnostics["sampler"] == "nutpie"
    posterior = fit.idata.posterior
    assert set(posterior.data_vars) == {"mu", "sigma_agent", "z_agent", "sigma_task", "z_task", "sigma_item", "z_item",
                                        "agent_effect", "task_effect", "item_effect"}
    assert posterior["agent_effect"].dims == ("chain", "draw", "agent")
    effects = posterior["agent_effect"].mean(("chain", "draw")).to_series()
    rates = frame.groupby("agent")["y"].mean()
    assert np.corrcoef(effects.reindex(rates.index), rates)[0, 1] > 0.9
    assert abs(float(effects.sum())) < 1e-9  # zero-sum coding holds in every draw's mean
