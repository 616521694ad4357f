"""Spearman's and Kendall's rank correlations of many bootstrap resamples at once (`resampled_rank_correlations`).

The audit's rank agreement (`referee.models.validity.checks.rank_agreement`) bootstraps both correlations over 2,000
resamples of the players. One scipy call per resample and statistic cost about 0.45 ms, 1.9 s an outcome (the demo's
audits made eight thousand calls); here each block of resamples is ranked, centred and compared as arrays, with the
same definitions as `scipy.stats.spearmanr` (Pearson's correlation of the average ranks) and `scipy.stats.kendalltau`
(tau-b: concordant minus discordant pairs over the geometric mean of the pairs untied in each variable).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

BLOCK = 4_000_000  # pair signs held at once (resamples x players x players, one byte each)
PAIRWISE_MAX = 120  # players: past this, Kendall's pairs cost more as arrays (O(n^2)) than scipy's O(n log n) per
# resample (2,000 resamples: 0.32 s against 0.40 s at 100 players, 2.1 s against 0.42 s at 300)


def resampled_rank_correlations(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Spearman's rho, Kendall's tau-b), each of shape (B,): the correlations of `x[idx[b]]` and `y[idx[b]]` for
    every row b of `idx` (B, n: players' positions drawn with replacement); NaN where either resample is constant.
    `x`, `y`: (N,) numbers, one per player."""
    x, y, idx = np.asarray(x, float), np.asarray(y, float), np.asarray(idx)
    count, n = idx.shape
    rho, tau = np.full(count, np.nan), np.full(count, np.nan)
    rows = max(1, BLOCK // max(n * n, 1))
    pairs = n * (n - 1) / 2
    for start in range(0, count, rows):
        xs, ys = x[idx[start:start + rows]], y[idx[start:start + rows]]
        varied = (np.ptp(xs, axis=1) > 0) & (np.ptp(ys, axis=1) > 0)
        rx, ry = stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1)
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
        if n <= PAIRWISE_MAX:
            sx = np.sign(xs[:, :, None] - xs[:, None, :]).astype(np.int8)
            sy = np.sign(ys[:, :, None] - ys[:, None, :]).astype(np.int8)
            both = np.einsum("bij,bij->b", sx, sy, dtype=np.int64) / 2  # concordant minus discordant pairs
            tied_x = ((sx == 0).sum(axis=(1, 2)) - n) / 2  # pairs tied in x (each counted twice; less the diagonal)
            tied_y = ((sy == 0).sum(axis=(1, 2)) - n) / 2
            with np.errstate(invalid="ignore", divide="ignore"):
                t = both / np.sqrt((pairs - tied_x) * (pairs - tied_y))
        else:
            t = np.array([stats.kendalltau(a, b).statistic if keep else np.nan for a, b, keep in zip(xs, ys, varied)])
        block = slice(start, start + len(xs))
        rho[block] = np.where(varied, np.clip(r, -1.0, 1.0), np.nan)
        tau[block] = np.where(varied, np.clip(t, -1.0, 1.0), np.nan)
    return rho, tau
