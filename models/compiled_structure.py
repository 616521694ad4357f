"""A model compiled once per structure, not per data: a second fit of the same kind, on any data, starts at once.

nutpie's own `compile_pymc_model` bakes every parameter's shape into the code it compiles with numba (10-20 s a
model), so a fit on other data, even of the same model, compiles again. Here the model's log-density, its
gradient and the expansion of an unconstrained point into the stored variables are compiled once for a
structure, as numba C callbacks that read everything data-dependent at run time from one float64 buffer (the
*blob*): each parameter's shape and every `pm.Data` array, each at an offset the blob's header gives. A later fit
of the same structure writes a new blob and hands nutpie's sampler the same callbacks.

What makes two models one structure (`structure_key`): the log-density graph as printed with its types (its data
are shared variables, printed by name) and the values of its constants, the free variables with their transforms,
and the stored variables' graphs. A model built from constants rather than `pm.Data` still works, but its key then
changes with its data.

Every compiled piece is kept on disk for the next process: PyTensor's numba functions in its cache folder, and the
two callbacks too (`_callbacks`, under a key of the structure, its constants, this module's source and the
compilers' versions), so that a new process (a test worker, the next command) compiles a known structure in about
2 s instead of 10. Two processes never compile one structure at once (`_compiling`): the second waits for the
first and loads what it stored.

Blob layout (8-byte words): [0] its length; then per parameter (free value variable, in model order) its ndim
sizes; then per data array its offset in the blob and its ndim sizes; then the data, each raveled. The header and
integer arrays are int64 words, float arrays float64 words: the callbacks read the one buffer both ways.

Used by `referee.models.compiled.sample_nutpie` when a model's fit asks for reuse (the outcome models do).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from referee.models import progress

KEEP = 8  # structures kept per process (each holds two numba callbacks, a few MB)
_STRUCTURES: "OrderedDict[str, Structure]" = OrderedDict()
_LOCK = threading.Lock()


def _shared(model) -> dict:
    """The model's shared variables by name: its `pm.Data` arrays and its coordinates' lengths."""
    from pytensor.compile.sharedvalue import SharedVariable

    out = {name: v for name, v in model.dim_lengths.items() if isinstance(v, SharedVariable)}
    out.update({name: v for name, v in model.named_vars.items() if isinstance(v, SharedVariable)})
    return out


def stored_variables(model) -> list:
    """The variables a fit stores: every free variable (on its own scale) and every deterministic."""
    return list(model.free_RVs) + list(model.deterministics)


def structure_key(model) -> str:
    """A sha256 of what makes two models one structure (see the module docstring); their data do not enter."""
    import pytensor

    digest = hashlib.sha256()
    stored = stored_variables(model)
    graphs = [model.logp(), *model.replace_rvs_by_values(stored)]
    for graph in graphs:
        digest.update(pytensor.printing.debugprint(graph, file="str", print_type=True).encode())
    digest.update(_constants_digest(graphs).encode())  # the printed graph may abbreviate a constant's values
    digest.update(repr([(v.name, type(model.rvs_to_transforms.get(v)).__name__) for v in model.free_RVs]).encode())
    digest.update(repr([(v.name, model.named_vars_to_dims.get(v.name)) for v in stored]).encode())
    return digest.hexdigest()


@dataclass
class Structure:
    """One structure's compiled callbacks: `logp` and `expand` (numba C callbacks with nutpie's signatures),
    `value_names` (the free value variables in the unconstrained point's order) with their ndims, `data_names`
    (the shared arrays the graph reads) with their ndims and dtypes, `stored` (names of the stored variables),
    the `template` model whose shared variables the initial point function reads, and `compile_seconds`."""

    template: object
    logp: object
    expand: object
    value_names: list
    value_ndims: list
    data_names: list
    data_ndims: list
    data_dtypes: list
    stored: list
    initial_point: object
    compile_seconds: float
    logp_jit: object = None  # the numba functions the callbacks call: (point, blob) -> (logp, gradient)
    expand_jit: object = None  # (point, blob) -> (the stored variables raveled and joined,)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one fit at a time sets the template's data
    initial_lock: threading.Lock = field(default_factory=threading.Lock)  # a compiled function is not thread-safe

    @property
    def header_length(self) -> int:
        """Blob entries before the data: its length, each parameter's sizes, each array's offset and sizes."""
        return 1 + sum(self.value_ndims) + sum(1 + n for n in self.data_ndims)


def _read_blob(blob, words, value_ndims, data_ndims, data_dtypes):
    """Symbolic: (each parameter's shape vector, each data array) read from the blob as its header lays out;
    `words` is the same buffer read as int64 (the header and the integer arrays are stored as int64 words)."""
    import pytensor.tensor as pt

    at = 1
    shapes = []
    for ndim in value_ndims:
        shapes.append(words[at:at + ndim])
        at += ndim
    arrays = []
    for ndim, dtype in zip(data_ndims, data_dtypes):
        offset, sizes = words[at], words[at + 1:at + 1 + ndim]
        at += 1 + ndim
        source = blob if dtype == "float64" else words
        flat = source[offset:offset + pt.prod(sizes)] if ndim else source[offset]
        array = flat.reshape(sizes, ndim=ndim) if ndim else flat
        arrays.append(array if dtype in ("float64", "int64") else pt.cast(array, dtype))
    return shapes, arrays


# nutpie's callbacks around a structure's compiled functions, as source: compiled once per structure into
# PyTensor's numba cache folder (below its base_compiledir), so that another process (a test worker, the next
# command) loads them instead of compiling them again (8-10 s a structure)
_CALLBACKS = """
def logp_c(dim, x_, out_, logp_, blob_):  # nutpie's contract: 0 ok, 3 gradient not finite, 4 logp not finite
    try:
        size = numba.carray(blob_, (1,), np.int64)[0]
        data, words = numba.carray(blob_, (size,), np.float64), numba.carray(blob_, (size,), np.int64)
        point, out, value = numba.carray(x_, (dim,)), numba.carray(out_, (dim,)), numba.carray(logp_, ())
        logp_value, gradient = logp_jit(point, data, words)
        value[()] = logp_value
        out[...] = gradient
        if not np.all(np.isfinite(out)):
            return 3
        if not np.isfinite(logp_value):
            return 4
    except Exception:  # numba's callbacks report by return code
        return 1
    return 0


def expand_c(dim, expanded_dim, x_, out_, blob_):
    try:
        size = numba.carray(blob_, (1,), np.int64)[0]
        data, words = numba.carray(blob_, (size,), np.float64), numba.carray(blob_, (size,), np.int64)
        out = numba.carray(out_, (expanded_dim,))
        (values,) = expand_jit(numba.carray(x_, (dim,)), data, words)
        out[...] = values
    except Exception:
        return -2
    return 0
"""


def _constants_digest(graphs: list) -> str:
    """A sha256 of every constant the graphs read (a model built from constants rather than `pm.Data` has its
    data there, which the printed graph of `structure_key` may abbreviate)."""
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import ancestors

    digest = hashlib.sha256()
    for var in ancestors(graphs):
        if isinstance(var, Constant):
            array = np.asarray(var.data)
            digest.update(f"{array.dtype}{array.shape}".encode())
            digest.update(array.tobytes() if array.dtype != object else repr(array.tolist()).encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """A sha256 of what compiles a structure besides its model: this module's source, `numba_ops`'s (the digamma and
    the fastmath setting) and the compilers' versions (read once per process)."""
    import inspect
    import sys

    import numba
    import pytensor

    from referee.models import numba_ops

    source = inspect.getsource(sys.modules[__name__]) + inspect.getsource(numba_ops)
    return hashlib.sha256(f"{numba.__version__}{pytensor.__version__}{source}".encode()).hexdigest()


def _callbacks(key: str, logp_jit, expand_jit) -> tuple[object, object]:
    """(logp, expand): numba C callbacks with nutpie's signatures calling the structure's compiled functions,
    cached on disk under the structure's key (`structure_key`: its graphs and constants) and `_code_digest` (a
    change to either compiles them anew)."""
    import warnings

    import numba
    import pytensor
    from pytensor.link.numba.cache import compile_numba_function_src

    digest = hashlib.sha256(f"{key}{_code_digest()}".encode()).hexdigest()
    names = {"numba": numba, "np": np, "logp_jit": logp_jit, "expand_jit": expand_jit,
             "__name__": __name__}  # the module a cached callback's environment is rebuilt from
    double = numba.types.CPointer(numba.types.double)
    signatures = {"logp_c": numba.types.int64(numba.types.uint64, double, double, double, numba.types.voidptr),
                  "expand_c": numba.types.int64(numba.types.uint64, numba.types.uint64, double, double,
                                                numba.types.voidptr)}
    made = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Cannot cache compiled function", category=numba.NumbaWarning)
        for name, signature in signatures.items():
            function = compile_numba_function_src(_CALLBACKS, name, dict(names), cache_key=f"{name}-{digest}")
            made.append(numba.cfunc(signature, cache=pytensor.config.numba__cache)(function))
    return made[0], made[1]


def _compile(model, key: str) -> Structure:
    """Build and compile the structure of `model` (its shared variables become reads from the blob); `key`, its
    `structure_key`."""
    import pytensor
    import pytensor.tensor as pt
    from pymc.initial_point import make_initial_point_fn
    from pymc.pytensorf import compile
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.traversal import ancestors

    from referee.models.numba_ops import register

    register()  # a cacheable digamma (beta graphs load from disk), fastmath off (same draws compiled or loaded)
    start = time.perf_counter()
    value_vars = [model.rvs_to_values[v] for v in model.free_RVs]
    stored = stored_variables(model)
    logp = pytensor.graph.rewrite_graph(model.logp(), include=["canonicalize", "stabilize"])
    grad = pt.concatenate([g.ravel() for g in pytensor.gradient.grad(logp, value_vars)])
    expanded = pt.concatenate([pt.as_tensor(g).ravel() for g in model.replace_rvs_by_values(stored)])
    shared = [v for v in ancestors([logp, grad, expanded]) if isinstance(v, SharedVariable)]
    x, blob, words = pt.dvector("x"), pt.dvector("blob"), pt.lvector("words")
    shapes, arrays = _read_blob(blob, words, [v.ndim for v in value_vars], [v.ndim for v in shared],
                                [v.dtype for v in shared])
    pieces, at = [], 0
    for var, shape in zip(value_vars, shapes):
        size = pt.prod(shape) if var.ndim else 1
        pieces.append(x[at:at + size].reshape(shape, ndim=var.ndim) if var.ndim else x[at])
        at = at + size
    replace = dict(zip(value_vars, pieces)) | dict(zip(shared, arrays))
    logp, grad, expanded = pytensor.clone_replace([logp, grad, expanded], replace)
    logp_jit = compile([x, blob, words], [logp, grad], mode="NUMBA", on_unused_input="ignore").vm.jit_fn
    expand_jit = compile([x, blob, words], [expanded], mode="NUMBA", on_unused_input="ignore").vm.jit_fn

    logp_cfunc, expand_cfunc = _callbacks(key, logp_jit, expand_jit)
    initial_point = make_initial_point_fn(model=model, return_transformed=True, jitter_rvs=set(model.free_RVs),
                                          default_strategy="support_point")
    return Structure(model, logp_cfunc, expand_cfunc, [v.name for v in value_vars], [v.ndim for v in value_vars],
                     [v.name for v in shared], [v.ndim for v in shared], [v.dtype for v in shared],
                     [v.name for v in stored], initial_point, time.perf_counter() - start, logp_jit, expand_jit)


def log_compile(kind: str, key: str, seconds: float) -> None:
    """Append one compile to the JSON-lines file $REFEREE_COMPILE_LOG, when set: its kind ('nutpie', 'structure',
    'pymc'), the structure's key, the seconds it took and the process (benchmarks/first_hour.py counts the
    compiles of a test run with it); nothing otherwise."""
    import json
    import os

    target = os.environ.get("REFEREE_COMPILE_LOG")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"kind": kind, "key": key[:16], "seconds": round(seconds, 3), "pid": os.getpid(),
                                  "test": os.environ.get("PYTEST_CURRENT_TEST", "")}) + "\n")


@contextlib.contextmanager
def _compiling(key: str):
    """Held while this process compiles structure `key`: PyTensor's own compile lock (`lock_ctx`) on a folder of
    the structure's beside PyTensor's compiled modules, so that two processes sharing the cache folder (test
    workers, a report's fold workers) never compile one structure at once: the second waits, then loads what
    the first stored (about 2 s). Yields the locked folder."""
    import pytensor
    from pytensor.compile.compilelock import lock_ctx

    folder = Path(pytensor.config.compiledir) / "referee-structures" / key[:32]
    folder.mkdir(parents=True, exist_ok=True)
    with lock_ctx(folder):
        yield folder


def structure_for(model) -> tuple[Structure, bool]:
    """(the compiled structure of `model`, reused): from this process's cache of the last KEEP structures, or
    compiled now."""
    key = structure_key(model)
    with _LOCK:
        if key in _STRUCTURES:
            _STRUCTURES.move_to_end(key)
            return _STRUCTURES[key], True
    progress.say("compiling the model's structure with numba (once per process for any data; 10-60 s on a cold "
                 "cache)")
    with _compiling(key):
        built = _compile(model, key)
    log_compile("structure", key, built.compile_seconds)
    with _LOCK:
        _STRUCTURES[key] = built
        while len(_STRUCTURES) > KEEP:
            _STRUCTURES.popitem(last=False)
    return built, False


def write_blob(structure: Structure, value_shapes: list[tuple], data: list[np.ndarray]) -> np.ndarray:
    """The blob (see the module docstring) of one fit: the parameters' shapes and the data arrays, as a float64
    array whose header words and integer arrays are int64 words in the same bytes (`blob.view(np.int64)`)."""
    header = [0]
    for shape in value_shapes:
        header += [int(n) for n in shape]
    offset = structure.header_length
    for array in data:
        header += [offset, *map(int, array.shape)]
        offset += array.size
    blob = np.zeros(offset, np.float64)
    words = blob.view(np.int64)
    words[:len(header)] = header
    words[0] = offset
    at = structure.header_length
    for name, array in zip(structure.data_names, data):
        if array.dtype.kind == "f":
            blob[at:at + array.size] = array.ravel()
        elif array.dtype.kind in "iub":
            words[at:at + array.size] = array.ravel()
        else:
            raise ValueError(f"data {name!r} is of dtype {array.dtype}, which the compiled model cannot read")
        at += array.size
    return blob


def blob_of(model, structure: Structure, seed: int = 0) -> tuple[np.ndarray, list[tuple]]:
    """(the blob of `model`'s data, each parameter's shape) for `structure`; the template's shared variables are
    set to `model`'s data (the caller holds `structure.lock`)."""
    values = _shared(model)
    for name, var in _shared(structure.template).items():
        var.set_value(values[name].get_value())
    point = structure.initial_point(seed)
    value_shapes = [np.shape(point[name]) for name in structure.value_names]
    data = [np.asarray(values[name].get_value()) for name in structure.data_names]
    return write_blob(structure, value_shapes, data), value_shapes


def compiled_for(model, structure: Structure, seed: int):
    """A nutpie `CompiledPyMCModel` of `model` on its own data, over the callbacks of `structure` (which must be
    `model`'s). Holds `structure.lock`'s caller responsible: the template's shared variables are set to
    `model`'s data for the initial points."""
    import pandas as pd
    from nutpie.compile_pymc import CompiledPyMCModel

    blob, value_shapes = blob_of(model, structure, seed)
    stored_shapes = _stored_shapes(model, structure)
    n_dim = int(sum(int(np.prod(s)) for s in value_shapes))
    sizes = [int(np.prod(s)) for s in stored_shapes]
    slices = [slice(a, a + n) for a, n in zip(np.cumsum([0] + sizes[:-1]), sizes)]
    coords = {name: pd.Index(vals if vals is not None else range(int(model.dim_lengths[name].get_value())))
              for name, vals in model.coords.items()}
    coords["unconstrained_parameter"] = pd.Index(
        [f"{name}_{i}" for name, shape in zip(structure.value_names, value_shapes) for i in range(int(np.prod(shape)))])

    def initial(seed_: int) -> np.ndarray:  # nutpie's chains call it from their threads: one at a time
        with structure.initial_lock:
            drawn = structure.initial_point(seed_)
        return np.concatenate([np.ravel(drawn[name]) for name in structure.value_names]).astype(np.float64)

    shape_info = (list(structure.stored), slices, stored_shapes)
    return CompiledPyMCModel(dims=dict(model.named_vars_to_dims), compiled_logp_func=structure.logp,
                             compiled_expand_func=structure.expand, initial_point_func=initial, shared_data={},
                             user_data=blob, n_expanded=int(sum(sizes)), shape_info=shape_info, logp_func=None,
                             expand_func=None, _n_dim=n_dim, _shapes=dict(zip(structure.stored, stored_shapes)),
                             _coords=coords)


def _stored_shapes(model, structure: Structure) -> list[tuple]:
    """Each stored variable's shape on `model`'s data, from the coordinates' lengths (its dims) or, for a
    variable without dims, from its graph's static shape evaluated once."""
    shapes = []
    for name in structure.stored:
        dims = model.named_vars_to_dims.get(name)
        if model[name].ndim == 0:
            shapes.append(())
        elif dims and all(d is not None for d in dims):
            shapes.append(tuple(int(model.dim_lengths[d].get_value()) for d in dims))
        else:
            shapes.append(tuple(int(n) for n in model[name].shape.eval()))
    return shapes
