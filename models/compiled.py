"""Compiled models kept per structure: a second fit of the same model in a process does not compile again.

PyMC's NUTS compiles the model's log-density and gradient with PyTensor, whose C modules are cached on disk
(`PYTENSOR_FLAGS=base_compiledir=...`, set by the Makefile and the tests): a new process with the same cache
folder reuses them. nutpie compiles the model once more, with numba, into a `CompiledModel` that its API lets
a caller sample as often as it likes; `compiled_nutpie` keeps the last few per process, keyed by
`model_key` (the log-density graph, every constant and shared value in it, the free variables and the
coordinates), so a refit of the same structure on the same data (another seed, more draws, a figure redrawn
from a notebook) samples at once. Each fit's diagnostics say how long compiling and sampling took, apart
(`compile_seconds`, `sampling_seconds`; for PyMC the former also holds its initialisation), and whether the
compiled model was reused.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict

import numpy as np

from referee.models import progress
from referee.models.compiled_structure import log_compile

KEEP = 8  # compiled nutpie models kept per process (each holds its numba functions)
_COMPILED: "OrderedDict[str, object]" = OrderedDict()


def model_key(model) -> str:
    """A sha256 of what makes a PyMC model the same model: its log-density graph as printed, the values of
    every constant and shared variable the graph reads, the free variables' names and the coordinates."""
    import pytensor
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import ancestors

    logp = model.logp()
    digest = hashlib.sha256(pytensor.printing.debugprint(logp, file="str", print_type=True).encode())
    for var in ancestors([logp]):
        value = var.data if isinstance(var, Constant) else var.get_value() if isinstance(var, SharedVariable) else None
        if value is not None:
            array = np.asarray(value)
            digest.update(f"{array.dtype}{array.shape}".encode())
            digest.update(array.tobytes() if array.dtype != object else repr(array.tolist()).encode())
    digest.update(repr([v.name for v in model.free_RVs]).encode())
    digest.update(repr({k: tuple(v) if v is not None else None for k, v in model.coords.items()}).encode())
    return digest.hexdigest()


def compiled_nutpie(model) -> tuple[object, float, bool]:
    """(nutpie CompiledModel of `model`, seconds spent compiling it now (0 when reused), reused): compiled with
    nutpie's default numba backend, or taken from this process's cache of the last KEEP structures."""
    import nutpie

    key = model_key(model)
    if key in _COMPILED:
        _COMPILED.move_to_end(key)
        return _COMPILED[key], 0.0, True
    from referee.models.numba_ops import register

    register()  # a cacheable digamma, and fastmath off (the same draws compiled now or loaded from the cache)
    start = time.perf_counter()
    progress.say("compiling the model with numba (once per structure and process; 10-60 s on a cold cache)")
    compiled = nutpie.compile_pymc_model(model)
    seconds = time.perf_counter() - start
    log_compile("nutpie", key, seconds)
    _COMPILED[key] = compiled
    while len(_COMPILED) > KEEP:
        _COMPILED.popitem(last=False)
    return compiled, seconds, False


def compiled_density(density, model) -> tuple[object, float, bool]:
    """(nutpie model of `density`, seconds spent making it now, reused), as `compiled_nutpie` gives a compiled PyMC
    model's: the hand-written density of `model` (`referee.models.scores.outcome_density`), whose two kernels are
    made once per process and compiled once per machine onto numba's disk cache; no PyTensor compile."""
    start = time.perf_counter()
    reused = density.kernels_made()
    if not reused:
        progress.say("loading the model's hand-written density (numba compiles it once per machine: a few seconds on "
                     "a cold cache; no PyTensor compile)")
    return density.nutpie_model(model), time.perf_counter() - start, reused


def sample_nutpie(model, draws: int, tune: int, chains: int, seed: int, shown: bool, low_rank: bool,
                  target_accept: float = 0.8, reuse: bool = False, density=None):
    """(InferenceData, timings) of nutpie's NUTS on `model`: the compiled model from `compiled_nutpie` (or, with
    `reuse`, the callbacks of its structure from `referee.models.compiled_structure`, compiled once for any
    data; or, with `density`, the model's log-density written out by hand: `compiled_density`, whatever `reuse`
    says), the posterior with the model's constant and observed data attached as `pm.sample(nuts_sampler="nutpie")`
    attaches them, and timings {compile_seconds (from the call until sampling starts), sampling_seconds,
    compiled_model_reused}. `shown`: nutpie draws its own display."""
    import nutpie
    import pymc as pm
    from pymc.backends.arviz import coords_and_dims_for_inferencedata, dict_to_dataset, find_constants, \
        find_observations
    from pymc.util import _get_seeds_per_chain

    from referee.models.compiled_structure import compiled_for, structure_for

    chain_seed = _get_seeds_per_chain(seed, 1)[0]
    settings = dict(draws=draws, tune=tune, chains=chains, seed=chain_seed, progress_bar=shown,
                    low_rank_modified_mass_matrix=low_rank, target_accept=target_accept)
    begin = time.perf_counter()
    if reuse and density is None:
        structure, reused = structure_for(model)
        with structure.lock:  # its template's data are this fit's until the chains have their initial points
            compiled = compiled_for(model, structure, chain_seed)
            compile_seconds = time.perf_counter() - begin
            start = time.perf_counter()
            idata = _nutpie_sample(compiled, settings)
    else:
        compiled, compile_seconds, reused = (compiled_density(density, model) if density is not None
                                             else compiled_nutpie(model))
        start = time.perf_counter()
        idata = _nutpie_sample(compiled, settings)
    sampling_seconds = time.perf_counter() - start
    coords, dims = coords_and_dims_for_inferencedata(model)
    for group, values in (("constant_data", find_constants(model)), ("observed_data", find_observations(model))):
        if values and group not in idata.groups():
            idata.add_groups({group: dict_to_dataset(values, library=pm, coords=coords, dims=dims, default_dims=[])})
    return idata, {"compile_seconds": round(compile_seconds, 3), "sampling_seconds": round(sampling_seconds, 3),
                   "compiled_model_reused": reused}


def _nutpie_sample(compiled, settings: dict):
    """nutpie's draws with `settings`. In the 'lines' progress mode (not a terminal), the sampler runs in the
    background and a plain line says every `progress.LINE_SECONDS` how many steps the chains have made and how
    many diverged so far (nutpie's own display is a terminal's or a notebook's; the closing line, with the
    diagnostics' count of divergences, is `referee.models.fit.sample`'s)."""
    import nutpie

    if progress.mode() != "lines":
        return nutpie.sample(compiled, **settings)
    total = settings["chains"] * (settings["draws"] + settings["tune"])
    began = time.perf_counter()
    sampler = nutpie.sample(compiled, **dict(settings, progress_bar=False, blocking=False))
    last = began
    while not _finished(sampler):
        time.sleep(0.05)
        if time.perf_counter() - last >= progress.LINE_SECONDS:
            last = time.perf_counter()
            progress.say(f"sampling: {_drawn(sampler)} of {total:,} steps (tuning included), "
                         f"{progress.seconds(last - began)}")
    return sampler.wait()


def _finished(sampler) -> bool:
    """Whether a background nutpie sampler has finished (nutpie 0.16 answers 'not yet' with a TimeoutError)."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def _drawn(sampler) -> str:
    """How far a background nutpie sampler is: steps made by all chains and divergences after tuning so far. A
    chain not yet started or behind the others is padded to the longest (nutpie runs as many chains at once as
    there are cores), so a step counts where its step size is filled in."""
    import warnings

    import numpy as np

    try:
        with warnings.catch_warnings():  # during tuning the trace has no draws yet, which ArviZ warns of
            warnings.simplefilter("ignore")
            trace = sampler.inspect()
    except Exception:  # noqa: BLE001 - a look at the trace so far is only a courtesy
        return "?"
    stats = [trace[group] for group in ("warmup_sample_stats", "sample_stats") if group in trace.groups()]
    steps = sum(int(np.isfinite(s["step_size"].to_numpy()).sum()) for s in stats if "step_size" in s)
    diverging = trace.sample_stats["diverging"] if "sample_stats" in trace.groups() and \
        "diverging" in trace.sample_stats else None
    return f"{steps:,}" + (f" ({int(diverging.sum())} divergent)" if diverging is not None else "")


def sample_pymc(model, draws: int, tune: int, chains: int, seed: int, progress: bool, target_accept: float):
    """(InferenceData, timings) of PyMC's NUTS on `model`: `sampling_seconds` is the time PyMC itself records
    for drawing (the posterior's `sampling_time`), `compile_seconds` the rest of the call: compiling (from
    PyTensor's cache folder when the same structure was compiled before, in this process or another),
    initialising the sampler and converting the draws; nothing is compiled twice."""
    import pymc as pm

    start = time.perf_counter()
    with model:
        idata = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed, progressbar=progress,
                          compute_convergence_checks=False, target_accept=target_accept)
    total = time.perf_counter() - start
    sampling = float(idata.posterior.attrs.get("sampling_time", total))
    log_compile("pymc", "", max(total - sampling, 0.0))
    return idata, {"compile_seconds": round(max(total - sampling, 0.0), 3), "sampling_seconds": round(sampling, 3),
                   "compiled_model_reused": False}
