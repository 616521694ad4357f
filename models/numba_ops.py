"""Numba implementations that PyTensor's numba backend lacks in a cacheable form, registered with its dispatch.

PyTensor 2.38 compiles `psi` (the digamma function, the gradient of `gammaln` and so of every Beta and Gamma
log-density) by calling scipy's Cython function through a pointer, and a function that calls a pointer cannot be
cached on disk: every graph holding it (the beta regressions', the Measurement Layout's) was compiled again in
each process, 14-18 s a model on a warm cache (where a graph without it loads in about 2 s). `register()` gives
PyTensor a digamma in plain numba with a cache key, as PyTensor itself does for `gammaln` (`math.lgamma`).

The digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series
psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k) to k = 6 (Abramowitz and Stegun 6.3.18; the first term left out
is below 1e-12 of the value at x = 6), and for x < 0 the reflection psi(1 - x) - pi / tan(pi x) (A&S 6.3.7).
Checked against scipy.special.digamma in tests/test_compiled_structure.py.

`register()` also turns PyTensor's numba fastmath off (its default is on: reassociation, contraction, approximate
functions). With it on, a structure compiled in this process and the same structure read back from numba's cache
drew differently for one seed (the baseline contrast on the demo store, seed 0: agent_07 1.8277 on the run that
compiled it, 1.8299 on every later run), because LLVM reorders arithmetic across the functions it has just compiled
and inlined, which it cannot do with functions loaded as machine code. Off, both give the same draws to the last
bit, and the layout sampled as fast (13.5 s either way on the demo store, warm and quiet).
"""

from __future__ import annotations

import math

# the series' coefficients B_2k / (2k), k = 1..6 (A&S 6.3.18)
SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760)
VERSION = "digamma-1"  # in the cache key: a change to the code below must change it
_registered = False


def digamma(x: float) -> float:
    """The digamma function of a real `x` (module docstring); at the poles as scipy's digamma: -inf at 0, NaN at
    -1, -2, ... (the limits from either side differ)."""
    if x == 0.0:
        return -math.inf
    if x < 0.0 and x == math.floor(x):
        return math.nan
    shift = 0.0
    if x < 0.0:  # reflection
        shift = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 6.0:
        shift -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    c1, c2, c3, c4, c5, c6 = SERIES
    series = c1 + f * (c2 + f * (c3 + f * (c4 + f * (c5 + f * c6))))
    return shift + math.log(x) - 0.5 / x - f * series


def register() -> None:
    """Register the cacheable digamma with PyTensor's numba dispatch for `Psi` and turn numba's fastmath off (once
    per process, before the first numba compile: the module docstring says why)."""
    global _registered
    if _registered:
        return
    import pytensor
    from pytensor.link.numba.dispatch import basic as numba_basic
    from pytensor.link.numba.dispatch.scalar import scalar_op_cache_key
    from pytensor.scalar.math import Psi

    compiled = numba_basic.numba_njit(digamma)

    @numba_basic.register_funcify_and_cache_key(Psi)
    def _psi(op, node, **kwargs):
        return compiled, scalar_op_cache_key(op, implementation=VERSION)

    pytensor.config.numba__fastmath = False  # the same draws whether a structure was compiled now or loaded
    _registered = True
