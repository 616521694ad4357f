"""The pass/fail outcome model's log-density and its gradient, written out once as one small numba kernel that nutpie
calls directly (issue 107): a first fit without PyTensor's compile.

`referee.models.scores.outcome_glm.build_model` defines the model in PyMC. nutpie compiles a PyMC model through
PyTensor into numba: some 330 numba functions for the crossed pass/fail model, about 20 s of CPU on an empty cache
before the first draw, and again for every new structure. This module is the same model's density on the same
unconstrained parameters, in the order PyMC flattens them (`model.value_vars`):

- mu ~ Normal(0, intercept_sd);
- each effect e: sigma_e ~ HalfNormal(group_sd), sampled as v = log(sigma_e) (Jacobian v);
  agent and task: centred, e_effect ~ ZeroSumNormal(sigma_e), or non-centred, z_e ~ ZeroSumNormal(1) and
  e_effect = sigma_e z_e; each ZeroSumNormal over n levels is sampled as its n - 1 free values u through PyMC's
  zero-sum map (`ZeroSumTransform`: an isometry, Jacobian 0), with density |u|^2 / (-2 sigma^2) - (n - 1)
  log(sigma sqrt(2 pi)); item (and the agent x task pair): z_e ~ Normal(0, 1), e_effect = sigma_e z_e;
- passes ~ Binomial(trials, logit p = mu + the effects of each (agent, task, item[, pair]) cell).

Every constant is kept, so the density equals PyMC's `model.logp()` (`tests/test_outcome_density.py` checks it and
its gradient against PyMC's own at random points, and the posterior against the compiled model's). The kernels read
every number of a fit (the design, the data, the priors) from one float64 array (`PassFailDensity.buffer`), so the
one compiled pair (`callbacks`, on numba's disk cache) serves every pass/fail structure and data set; nutpie calls
them as C functions, chains in parallel, as it calls the compiled PyMC model's. Graded scores keep the compiled path.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
HEADER = 8  # the buffer's head: size, cells, blocks, intercept sd, group sd, constant, dimensions, expanded values
KINDS = {"normal": 0, "zero-sum": 1, "centred": 2}  # an effect's coding, as the kernels read it


@numba.njit(cache=True)
def zero_sum(free):
    """PyMC's zero-sum map (`ZeroSumTransform.backward`): n - 1 free values to n values summing to 0."""
    n = free.shape[0] + 1
    total = free.sum()
    norm = total / (math.sqrt(n) + n)
    out = np.empty(n)
    out[:n - 1] = free - norm
    out[n - 1] = -total / math.sqrt(n)
    return out


@numba.njit(cache=True)
def block(buf, k):
    """Effect k's (kind, levels, where its log-scale sits, where its free values start, how many) in the buffer."""
    at = HEADER + 5 * k
    return int(buf[at]), int(buf[at + 1]), int(buf[at + 2]), int(buf[at + 3]), int(buf[at + 4])


@numba.njit(cache=True)
def logp_grad(x, grad, buf):
    """The log density at the unconstrained point x (ndim,) of the fit the buffer `buf` describes; its gradient is
    written into `grad` (ndim,)."""
    cells, blocks = int(buf[1]), int(buf[2])
    intercept_sd, group_sd, constant = buf[3], buf[4], buf[5]
    data = HEADER + 5 * blocks
    passes, trials = buf[data:data + cells], buf[data + cells:data + 2 * cells]
    grad[:] = 0.0
    mu = x[0]
    lp = -0.5 * (mu / intercept_sd) ** 2 - HALF_LOG_2PI - math.log(intercept_sd) + constant
    grad[0] = -mu / intercept_sd ** 2
    eta = np.full(cells, mu)
    total_levels = 0
    for k in range(blocks):
        total_levels += block(buf, k)[1]
    effects = np.empty(total_levels)
    sigmas = np.empty(blocks)
    start = 0
    for k in range(blocks):
        kind, levels, at_sigma, first, width = block(buf, k)
        v = x[at_sigma]
        sigma = math.exp(v)
        sigmas[k] = sigma
        lp += math.log(2.0) - HALF_LOG_2PI - math.log(group_sd) - 0.5 * (sigma / group_sd) ** 2 + v
        grad[at_sigma] = 1.0 - (sigma / group_sd) ** 2
        free = x[first:first + width]
        squares = (free * free).sum()
        value = free.copy() if kind == 0 else zero_sum(free)
        if kind == 0:
            lp += -0.5 * squares - levels * HALF_LOG_2PI
        elif kind == 1:
            lp += -0.5 * squares - (levels - 1) * HALF_LOG_2PI
        else:
            lp += -0.5 * squares / sigma ** 2 - (levels - 1) * (HALF_LOG_2PI + v)
            grad[at_sigma] += squares / sigma ** 2 - (levels - 1)
        effect = value if kind == 2 else sigma * value
        effects[start:start + levels] = effect
        index = buf[data + (2 + k) * cells:data + (3 + k) * cells]
        for c in range(cells):
            eta[c] += effect[int(index[c])]
        start += levels
    residual = np.empty(cells)  # d log-likelihood / d eta
    for c in range(cells):
        e = eta[c]
        lp += passes[c] * e - trials[c] * np.logaddexp(0.0, e)
        residual[c] = passes[c] - trials[c] / (1.0 + math.exp(-e)) if e > -700.0 else passes[c]
        grad[0] += residual[c]
    start = 0
    for k in range(blocks):
        kind, levels, at_sigma, first, width = block(buf, k)
        index = buf[data + (2 + k) * cells:data + (3 + k) * cells]
        g = np.zeros(levels)  # d log-likelihood / d effect
        for c in range(cells):
            g[int(index[c])] += residual[c]
        effect = effects[start:start + levels]
        sigma = sigmas[k]
        if kind != 2:
            grad[at_sigma] += (g * effect).sum()
        if kind == 0:
            grad[first:first + width] = sigma * g - x[first:first + width]
        else:  # the zero-sum map's transpose times g
            n = levels
            head = g[:n - 1]
            adjoint = head - head.sum() / (math.sqrt(n) + n) - g[n - 1] / math.sqrt(n)
            if kind == 1:
                grad[first:first + width] = sigma * adjoint - x[first:first + width]
            else:
                grad[first:first + width] = adjoint - x[first:first + width] / sigma ** 2
        start += levels
    return lp


@numba.njit(cache=True)
def expand(x, out, buf):
    """The constrained values at x written into `out` (n_expanded,), in `PassFailDensity.names`' order."""
    blocks = int(buf[2])
    out[0] = x[0]
    at = 1
    for k in range(blocks):
        kind, levels, at_sigma, first, width = block(buf, k)
        out[at] = math.exp(x[at_sigma])
        out[at + 1:at + 1 + levels] = x[first:first + width] if kind == 0 else zero_sum(x[first:first + width])
        at += 1 + levels
    written = 1
    for k in range(blocks):  # each non-centred effect: its scale times its free variable, both written above
        kind, levels = block(buf, k)[:2]
        if kind != 2:
            out[at:at + levels] = out[written] * out[written + 1:written + 1 + levels]
            at += levels
        written += 1 + levels


@functools.lru_cache(maxsize=1)
def callbacks():
    """(logp, expand): the kernels as the C functions nutpie calls (its compiled PyMC model's signatures: logp
    (dim, x, gradient out, logp out, user data) and expand (dim, expanded, x, out, user data), 0 for success),
    reading the density's buffer through the user-data pointer."""
    from numba import types

    logp_sig = types.int64(types.uint64, types.CPointer(types.double), types.CPointer(types.double),
                           types.CPointer(types.double), types.voidptr)
    expand_sig = types.int64(types.uint64, types.uint64, types.CPointer(types.double), types.CPointer(types.double),
                             types.voidptr)

    @numba.cfunc(logp_sig, cache=True)
    def logp_c(dim, x_, out_, logp_, user_data_):
        head = numba.carray(user_data_, (HEADER,), np.float64)
        if dim != int(head[6]):
            return -1
        buf = numba.carray(user_data_, (int(head[0]),), np.float64)
        x, out = numba.carray(x_, (dim,)), numba.carray(out_, (dim,))
        value = logp_grad(x, out, buf)
        numba.carray(logp_, (1,))[0] = value
        if not np.all(np.isfinite(out)):
            return 3
        if not np.isfinite(value):
            return 4
        return 0

    @numba.cfunc(expand_sig, cache=True)
    def expand_c(dim, expanded, x_, out_, user_data_):
        head = numba.carray(user_data_, (HEADER,), np.float64)
        if dim != int(head[6]) or expanded != int(head[7]):
            return -1
        buf = numba.carray(user_data_, (int(head[0]),), np.float64)
        expand(numba.carray(x_, (dim,)), numba.carray(out_, (expanded,)), buf)
        return 0

    return logp_c, expand_c


class PassFailDensity:
    """The pass/fail model's density on its unconstrained parameters (see the module doc).

    `cells`: the design's cells, {'passes', 'trials', and one level code per effect} arrays of one length;
    `blocks`: (effect name, kind in KINDS, levels) in the model's order; `intercept_sd`, `group_sd`: the priors.
    `buffer` holds all of it for the kernels; `ndim` the parameters, `names` and `shapes` the expanded values."""

    def __init__(self, cells: dict[str, np.ndarray], blocks: list[tuple[str, str, int]], intercept_sd: float,
                 group_sd: float):
        from scipy.special import gammaln

        passes, trials = np.asarray(cells["passes"], float), np.asarray(cells["trials"], float)
        constant = float(np.sum(gammaln(trials + 1) - gammaln(passes + 1) - gammaln(trials - passes + 1)))
        self.blocks = blocks
        self.group_sd = float(group_sd)
        # per effect: (its free variable's name, its unconstrained name, where its log-scale sits, its free width)
        self.layout, at = [], 1
        for name, kind, levels in blocks:
            free = f"{name}_effect" if kind == "centred" else f"z_{name}"
            width = levels if kind == "normal" else levels - 1
            self.layout.append((free, free + ("" if kind == "normal" else "_zerosum__"), at, width))
            at += 1 + width
        self.ndim = at
        self.names, self.shapes = ["mu"], [()]
        for (name, _, levels), (free, _, _, _) in zip(blocks, self.layout):
            self.names += [f"sigma_{name}", free]
            self.shapes += [(), (levels,)]
        for name, kind, levels in blocks:
            if kind != "centred":
                self.names.append(f"{name}_effect")
                self.shapes.append((levels,))
        self.n_expanded = int(sum(int(np.prod(s)) for s in self.shapes))
        codes = [[KINDS[kind], levels, at_sigma, at_sigma + 1, width]
                 for (_, kind, levels), (_, _, at_sigma, width) in zip(blocks, self.layout)]
        body = np.concatenate([np.asarray(codes, float).ravel(), passes, trials,
                               *[np.asarray(cells[name], float) for name, _, _ in blocks]])
        head = [HEADER + len(body), len(passes), len(blocks), intercept_sd, group_sd, constant, self.ndim,
                self.n_expanded]
        self.buffer = np.ascontiguousarray(np.concatenate([np.asarray(head, float), body]))

    @staticmethod
    def kernels_made() -> bool:
        """Whether this process has made the kernels' C functions already (`callbacks`)."""
        return callbacks.cache_info().currsize > 0

    def value_names(self) -> list[str]:
        """The unconstrained parameters' names in the flat vector's order (PyMC's `model.value_vars`)."""
        return ["mu"] + [n for (name, _, _), (_, value, _, _) in zip(self.blocks, self.layout)
                         for n in (f"sigma_{name}_log__", value)]

    def unconstrained_names(self) -> list[str]:
        """One name per number of the flat vector, as nutpie names a PyMC model's (`name` for a scalar, `name_i`
        for the i-th of a vector)."""
        names = ["mu"]
        for (name, _, _), (_, value, _, width) in zip(self.blocks, self.layout):
            names += [f"sigma_{name}_log__"] + [f"{value}_{i}" for i in range(width)]
        return names

    def logp_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(log density, its gradient (ndim,)) at the unconstrained point x (ndim,), every constant included."""
        grad = np.zeros(self.ndim)
        return float(logp_grad(np.asarray(x, float), grad, self.buffer)), grad

    def expanded(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """The constrained values at x as the posterior holds them: mu, each sigma_e and free variable, then each
        non-centred e_effect (the model's deterministics), in the model's order."""
        out = np.empty(self.n_expanded)
        expand(np.asarray(x, float), out, self.buffer)
        values, at = {}, 0
        for name, shape in zip(self.names, self.shapes):
            size = int(np.prod(shape))
            values[name] = out[at:at + size].reshape(shape)
            at += size
        return values

    def initial_point(self, seed: int) -> np.ndarray:
        """A start as nutpie starts a PyMC model: each parameter at its distribution's centre on the unconstrained
        scale (0; log(group_sd) for a scale), jittered uniformly within +-1."""
        start = np.zeros(self.ndim)
        for _, _, at_sigma, _ in self.layout:
            start[at_sigma] = np.log(self.group_sd)
        return start + np.random.default_rng(seed).uniform(-1, 1, self.ndim)

    def nutpie_model(self, model):
        """The density as a nutpie compiled model in place of the PyMC `model` it writes out (nutpie's own
        `CompiledPyMCModel`, with the kernels' C functions and the buffer as its user data): the posterior's
        variables, dimensions and coordinates named as the compiled model's would be. ValueError where `model`'s
        parameters are not this density's (the names and order of `model.value_vars`)."""
        import pandas as pd
        from nutpie.compile_pymc import CompiledPyMCModel

        held = [v.name for v in model.value_vars]
        if held != self.value_names():
            raise ValueError(f"the density's parameters {self.value_names()} are not the model's {held}")
        logp_c, expand_c = callbacks()
        coords = {name: pd.Index(values) for name, values in model.coords.items()}
        coords["unconstrained_parameter"] = pd.Index(self.unconstrained_names())
        sizes = [int(np.prod(s)) for s in self.shapes]
        ends = np.cumsum(sizes)
        slices = [slice(int(e - n), int(e)) for e, n in zip(ends, sizes)]
        return CompiledPyMCModel(
            dims={k: tuple(v) for k, v in model.named_vars_to_dims.items() if k in self.names},
            compiled_logp_func=logp_c, compiled_expand_func=expand_c, initial_point_func=self.initial_point,
            shared_data={}, user_data=self.buffer, n_expanded=self.n_expanded,
            shape_info=(list(self.names), slices, [tuple(s) for s in self.shapes]), logp_func=None, expand_func=None,
            _n_dim=self.ndim, _shapes=dict(zip(self.names, self.shapes)), _coords=coords)
