"""The loops of the rank sets' max-t statistics (`referee.models.ratings.rank_sets`), compiled with numba.

Each function computes exactly what the numpy expression it replaces computes (the same float32 or float64
operations, so the same values), without holding a (draws x pairs) block in memory: the simultaneous family of
1,000 agents has 499,500 pairs, and numpy's version of one step wrote and read ~20 such blocks (4,000 draws: tens
of GB of memory traffic, a minute a step). The draws come transposed, (agents, draws), so that the innermost loop
runs over draws held side by side and compiles to vector instructions; a maximum is the same whichever order it
is taken in. Compiled once per machine (numba's cache beside this file, or under NUMBA_CACHE_DIR);
`tests/test_board_scale.py` checks them against the numpy forms.
"""

from __future__ import annotations

import numba
import numpy as np

NEG_INF32 = np.float32(-np.inf)
POS_INF32 = np.float32(np.inf)
JIT = dict(cache=True, nogil=True, error_model="numpy")


@numba.njit(**JIT)
def pair_maxima(values_t, rows, cols, shift, inverse, forward, backward, best, at):
    """Over the pairs p, for each draw i (a column of `values_t`, (agents, draws) float32): z = (values_t[rows[p],
    i] - values_t[cols[p], i] - shift[p]) * inverse[p] (float32), the candidate max(z if forward[p], -z if
    backward[p]) (a non-finite z: none); `best[i]` (float32, start at -inf) becomes the largest candidate and `at[i]`
    (start at 0) the first pair attaining it, as numpy's `argmax` over the candidates gives."""
    draws = values_t.shape[1]
    for p in range(len(rows)):
        f, g = forward[p], backward[p]
        if not (f or g):
            continue
        a, b, s, v = values_t[rows[p]], values_t[cols[p]], shift[p], inverse[p]
        if f and g:
            for i in range(draws):
                c = abs((a[i] - b[i] - s) * v)
                if c > best[i] and c < POS_INF32:
                    best[i] = c
                    at[i] = p
        elif f:
            for i in range(draws):
                c = (a[i] - b[i] - s) * v
                if c > best[i] and c < POS_INF32:
                    best[i] = c
                    at[i] = p
        else:
            for i in range(draws):
                c = -((a[i] - b[i] - s) * v)
                if c > best[i] and c < POS_INF32:
                    best[i] = c
                    at[i] = p


@numba.njit(**JIT)
def suffix_hits(values_t, rows, cols, shift, scale, rest_rows, rest_cols, rest_shift, rest_scale, observed):
    """The joint family's step-down counts (`rank_sets.joint_p_values`): per draw, z_s = (values_t[rows[s], i] -
    values_t[cols[s], i] - shift[s]) / scale[s] (float32; non-finite: none) over the candidate pairs sorted largest t
    first, and likewise over the pairs that can never be rejected (`rest_*`); the running maximum of z from each
    candidate s to the last, never below the rest's maximum, is compared with `observed[s]`. Returns (hits (m,):
    draws whose running maximum at s reaches observed[s]; the draws whose overall maximum is finite). A draw with no
    finite z stays at -inf, which reaches no observed t, so counting it changes no hit."""
    draws = values_t.shape[1]
    running = np.full(draws, NEG_INF32)
    for p in range(len(rest_rows)):
        a, b, s, v = values_t[rest_rows[p]], values_t[rest_cols[p]], rest_shift[p], rest_scale[p]
        for i in range(draws):
            z = (a[i] - b[i] - s) / v
            if z > running[i] and z < POS_INF32:
                running[i] = z
    m = len(rows)
    hits = np.zeros(m)
    for q in range(m - 1, -1, -1):
        a, b, s, v, o = values_t[rows[q]], values_t[cols[q]], shift[q], scale[q], observed[q]
        count = 0
        for i in range(draws):
            z = (a[i] - b[i] - s) / v
            if z > running[i] and z < POS_INF32:
                running[i] = z
            count += np.float64(running[i]) >= o
        hits[q] = count
    kept = 0
    for i in range(draws):
        kept += running[i] > NEG_INF32
    return hits, kept


@numba.njit(**JIT)
def centred_column(draws_t, estimate, se_row, j, out):
    """One agent's studentised centred differences into `out` (agents, draws) float32: ((draws_t[k, i] -
    draws_t[j, i]) - (estimate[k] - estimate[j])) / se_row[k] in float64, then float32; NaN where not finite
    (`rank_sets._marginal`)."""
    base = draws_t[j]
    for k in range(draws_t.shape[0]):
        row, shift, scale = draws_t[k], estimate[k] - estimate[j], se_row[k]
        for i in range(draws_t.shape[1]):
            value = np.float32(((row[i] - base[i]) - shift) / scale)
            out[k, i] = value if abs(value) < POS_INF32 else np.float32(np.nan)


@numba.njit(**JIT)
def row_maxima(centred_t, up, down):
    """Per draw i (a column of `centred_t`, (agents, draws) float32): max(max over k in `up` (indices) of
    centred_t[k, i], max over k in `down` (indices) of -centred_t[k, i]), NaN cells skipped, -inf where no cell
    counts (float32, as numpy's `fmax(nanmax(.., initial=-inf), nanmax(..))` of float32 cells gives)."""
    draws = centred_t.shape[1]
    best = np.full(draws, NEG_INF32)
    for k in up:
        row = centred_t[k]
        for i in range(draws):
            if row[i] > best[i]:  # False for NaN
                best[i] = row[i]
    for k in down:
        row = centred_t[k]
        for i in range(draws):
            if -row[i] > best[i]:
                best[i] = -row[i]
    return best
