"""A model compiled once per structure (`referee.models.compiled_structure`): the callbacks read any data of the
structure from the blob and give the log-density and gradient PyMC's own compile gives on that data; a second
outcome fit of the same kind on other data, in one process, starts sampling within 2 s, and its posterior agrees
with nutpie's own compile of the same model."""

from __future__ import annotations

import numpy as np
import pytest

from referee.models.compiled_structure import Structure, blob_of, structure_for, structure_key, write_blob
from referee.models.scores import outcome_glm as og
from referee.simulators.pass_fail import pass_fail_samples


def _model(agents: int, tasks: int, items: int, seed: int, grades: int = 2):
    frame, _ = pass_fail_samples(agents=agents, tasks=tasks, items=items, epochs=1, aliased=min(1, tasks - 1), grades=grades,
                                 seed=seed)
    graded = grades > 2
    return og.build_model(og.design(frame), og.EFFECTS["crossed"], False, graded, og.Priors())


def test_models_of_one_structure_share_a_key_whatever_their_sizes():
    small, large = _model(5, 4, 6, 0), _model(7, 5, 9, 1)  # both codings non-centred: fewer than 8 levels
    assert structure_key(small) == structure_key(large)
    assert structure_key(small) != structure_key(_model(5, 4, 6, 0, grades=4))  # graded: another structure
    # one task: the ladder's task step is the agent-and-item structure whatever the data's counts (a zero task
    # effect indexed by the cells made their count a constant of the graph, a structure per data set)
    one, other = _model(5, 1, 6, 0), _model(6, 1, 8, 2)
    agent_item = og.build_model(og.design(pass_fail_samples(agents=5, tasks=1, items=6, epochs=1, aliased=0,
                                                            seed=0)[0]), ("agent", "item"), False, False, og.Priors())
    assert structure_key(one) == structure_key(other) == structure_key(agent_item)


def test_bayesian_bt_is_one_structure_for_any_number_of_agents():
    """The agents' count is a coordinate's length, not a constant of the graph: the suite's 4-, 5- and 26-agent
    fits (calibration, tests/test_bayes_bt.py, the convergence standard) compile once."""
    from referee.models.ratings.bayes_bt import build_model

    def key(n: int, games: int | None = None) -> str:
        W = np.full((n, n), 30.0)
        np.fill_diagonal(W, 0.0)
        Wk = None if games is None else np.stack([W / games] * games)
        return structure_key(build_model(W, [f"a{i}" for i in range(n)], Wk,
                                         None if games is None else [f"g{k}" for k in range(games)]))

    assert key(4) == key(5) == key(26) != key(4, 2)
    assert key(4, 2) == key(26, 3)


def test_the_blob_holds_integers_and_floats_exactly_in_one_buffer():
    structure = Structure(None, None, None, ["z"], [1], ["n", "w"], [1, 2], ["int64", "float64"], [], None, 0.0)
    blob = write_blob(structure, [(3,)], [np.array([2 ** 62, -7]), np.array([[0.5, 1e300]])])
    words = blob.view(np.int64)
    assert words[0] == len(blob) == structure.header_length + 4
    assert words[1] == 3  # the parameter's size
    assert words[2:4].tolist() == [structure.header_length, 2] and words[4:7].tolist() == [structure.header_length + 2, 1, 2]
    assert words[structure.header_length:structure.header_length + 2].tolist() == [2 ** 62, -7]  # beyond 2**53: exact
    assert blob[-2:].tolist() == [0.5, 1e300]
    with pytest.raises(ValueError, match="'n'.*dtype"):
        write_blob(structure, [(3,)], [np.array(["a"]), np.array([[0.5]])])


@pytest.mark.bayes
def test_a_second_outcome_fit_on_other_data_starts_within_two_seconds_on_pymcs_own_log_density():
    pytest.importorskip("nutpie")
    from referee.models.compiled_structure import _STRUCTURES

    _STRUCTURES.clear()  # as a fresh process
    settings = dict(draws=500, tune=500, chains=2, seed=4)
    # graded scores: the structure PyTensor compiles (a pass/fail fit samples its hand-written density instead), the
    # one tests/test_outcome_models.py's graded fits compile too
    frames = [pass_fail_samples(agents=a, tasks=t, items=i, epochs=1, aliased=1, grades=3, seed=s)[0]
              for a, t, i, s in ((5, 4, 12, 0), (7, 5, 20, 1))]
    first = og.fit_outcomes(frames[0], **settings)
    second = og.fit_outcomes(frames[1], **settings)
    assert not first.diagnostics["compiled_model_reused"] and second.diagnostics["compiled_model_reused"]
    # the first compiles the structure (or loads it from the disk cache, when another process of this run did)
    assert first.diagnostics["compile_seconds"] > second.diagnostics["compile_seconds"] < 2.0
    assert second.diagnostics["divergences"] == 0 and second.diagnostics["max_r_hat"] < 1.05
    d = og.design(frames[1])
    assert list(second.idata.posterior["agent_effect"].coords["agent"].values) == d.agents
    assert second.idata.posterior["item_effect"].sizes["item"] == len(d.items)
    # the compiled callbacks, fed the second data set through the first one's compile, give the log-density and
    # gradient PyMC compiles for that data itself, at a random point
    other = og.build_model(d, og.EFFECTS["crossed"], False, True, og.Priors())
    structure, reused = structure_for(_model(5, 4, 12, 0, grades=3))
    assert reused
    with structure.lock:
        blob, shapes = blob_of(other, structure)
    rng = np.random.default_rng(2)
    point = {name: rng.normal(0, 0.5, shape) for name, shape in zip(structure.value_names, shapes)}
    flat = np.concatenate([np.ravel(point[name]) for name in structure.value_names])
    logp, grad = structure.logp_jit(flat, blob, blob.view(np.int64))
    # PyMC's own graph of the same data, evaluated by PyTensor's Python implementations of its ops (FAST_COMPILE:
    # nothing compiled; numba compiled these graphs for about 18 s cold): a second evaluation of the model itself
    assert logp == pytest.approx(other.compile_logp(mode="FAST_COMPILE")(point), rel=1e-10)
    np.testing.assert_allclose(grad, other.compile_dlogp(mode="FAST_COMPILE")(point), rtol=1e-8, atol=1e-10)
    (stored,) = structure.expand_jit(flat, blob, blob.view(np.int64))  # sigma_agent times the zero-sum agents, in the stored order
    at = 0
    for name in structure.stored:
        size = int(np.prod(other[name].shape.eval()))
        if name == "agent_effect":
            expected = other.compile_fn(other.replace_rvs_by_values([other[name]])[0], inputs=other.value_vars,
                                        on_unused_input="ignore", mode="FAST_COMPILE")(point)
            np.testing.assert_allclose(stored[at:at + size], expected, rtol=1e-10)
        at += size
    assert at == len(stored)


def test_the_digamma_registered_for_numba_is_scipys_and_makes_a_beta_graph_cacheable():
    """PyTensor compiles psi (the gradient of gammaln, in every Beta log-density) through a pointer to scipy's
    Cython function, which numba cannot cache, so each process compiled the beta regressions again; referee's
    digamma (`referee.models.numba_ops`) agrees with scipy's to 1e-10 and carries a cache key."""
    import numba
    import pytensor.scalar as ps
    from pytensor.link.numba.dispatch.basic import numba_funcify_and_cache_key
    from scipy.special import digamma as scipy_digamma

    from referee.models.numba_ops import digamma, register

    x = np.concatenate([np.geomspace(1e-6, 1e6, 400), -np.geomspace(1e-3, 40, 200) + 1e-4])
    x = x[np.abs(x - np.round(x)) > 1e-6]
    compiled = numba.njit(digamma)
    ours = np.array([compiled(v) for v in x])
    np.testing.assert_allclose(ours, scipy_digamma(x), rtol=1e-10, atol=1e-11)  # 1e-10 beside a pole
    assert compiled(0.0) == -np.inf and np.isnan(compiled(-3.0))  # scipy's values at the poles
    node = ps.psi(ps.float64("x")).owner
    register()
    assert numba_funcify_and_cache_key(node.op, node=node)[1] is not None


def test_two_processes_never_compile_one_structure_at_once():
    """While this process holds a structure's compile lock, another process sharing the cache folder cannot take
    it through PyTensor's lock (it would wait, then load the stored structure instead of compiling it again)."""
    import subprocess
    import sys

    from referee.models.compiled_structure import _compiling

    def other_process_takes(folder) -> int:
        probe = ("import sys; from filelock import Timeout; from pytensor.compile.compilelock import lock_ctx\n"
                 f"try:\n    with lock_ctx({str(folder)!r}, timeout=0.5):\n        pass\n"
                 "except Timeout:\n    sys.exit(7)\n")
        return subprocess.run([sys.executable, "-c", probe], timeout=60).returncode

    with _compiling("0" * 64) as folder:
        held = other_process_takes(folder)
    assert (held, other_process_takes(folder)) == (7, 0)


@pytest.mark.heavy  # two processes on a new compile cache (a cold compile, about 40 s): `make test-all`
def test_the_same_seed_draws_the_same_whether_the_structure_was_compiled_now_or_read_from_the_cache(sample_store,
                                                                                                   tmp_path):
    """The baseline contrast on the bundled samples, seed 0, in a process that compiles its structure (an empty
    cache) and in the next one, which reads it back: the same table to the last digit. With numba's fastmath on
    (PyTensor's default) the first run's agent_07 read 1.8277 and every later run's 1.8299."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={tmp_path / 'pytensor'}",
               NUMBA_CACHE_DIR=str(tmp_path / "numba"), MPLBACKEND="Agg")
    tables = []
    for run in (1, 2):
        out = tmp_path / f"run{run}"
        subprocess.run([sys.executable, "-m", "referee.cli", "fit", "baseline-contrast", "--store", str(sample_store),
                        "--out", str(out), "--no-figures", "-q", "--seed", "0"], env=env, check=True)
        tables.append((out / "table.csv").read_text())
    assert tables[0] == tables[1]
