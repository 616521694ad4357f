"""Cluster bootstrap of ratings: resample matches (clusters) with replacement, refit, take percentiles.

Resampling clusters is resampling multisets of their pair-count contributions. Clusters with identical
contributions are exchangeable, so a replicate is fully described by how many times each distinct
contribution ("signature") is drawn: a Multinomial(n_clusters, signature frequencies) vector. For arena
data, where each cluster is one comparison, there are at most 3 n^2 signatures however many comparisons
there are, so a replicate costs O(n^2), not O(comparisons). Replicates' count matrices are then fitted
together by a batched Newton solve (`referee.models.ratings.bradley_terry.fit_bt_batch`).

`bootstrap_generic` resamples clusters and calls any fitting function (for Elo, per-game and
multidimensional models).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import sparse

from referee.models.fit import FitResult
from referee.models.threads import one_blas_thread
from referee.models.ratings.bradley_terry import DEFAULT_PRIOR_SD, ELO_CENTRE, ELO_SCALE, fit_bt_batch, mle_exists


MIN_MATCHES = 10  # an agent seen in fewer matches (clusters) gets its interval flagged


@dataclass
class BootstrapResult(FitResult):
    """Replicate ratings (r, n) on the Elo scale, with the agents' names (the `referee.models.fit.FitResult`
    contract: `table()` is the percentile summary; a bootstrap has no convergence of its own, so
    `diagnostics` says `converged` True with the replicate count). A replicate that drew none of an agent's
    matches has NaN for it: the agent is absent from that replicate's quantiles, not given the prior mean.
    `matches` (optional, shape (n,)) counts the clusters each agent appears in."""

    agents: list[str] = field(default_factory=list)
    ratings: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    matches: np.ndarray | None = None
    model: str = "bootstrap"

    def __post_init__(self):
        self.diagnostics = {"converged": True, "replicates": int(len(self.ratings)), **self.diagnostics}

    def table(self) -> pd.DataFrame:
        """The percentile summary (`summary()`)."""
        return self.summary()

    def summary(self, level: float = 0.95, groups: np.ndarray | None = None) -> pd.DataFrame:
        """agent, lower, upper (percentile interval), rank_lower, rank_upper (percentile interval of ranks),
        replicates (how many replicates the interval rests on: those the agent appears in), flag (why an
        interval deserves caution: fewer than MIN_MATCHES matches, or absent from some replicates; else '').

        groups : optional label per column; ranks are then taken within each group (e.g. per game), among
        the agents present in the replicate.
        """
        lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
        groups = np.zeros(len(self.agents)) if groups is None else np.asarray(groups)
        present = ~np.isnan(self.ratings)
        ranks = np.full(self.ratings.shape, np.nan)
        for g in pd.unique(groups):
            cols = np.flatnonzero(groups == g)
            values = pd.DataFrame(self.ratings[:, cols])
            ranks[:, cols] = values.rank(axis=1, method="min", ascending=False).to_numpy()
        replicates = present.sum(axis=0)
        seen = replicates > 0  # an agent absent from every replicate has no interval (NaN), not a warning
        bounds = np.full((4, len(self.agents)), np.nan)
        if seen.any():
            bounds[:, seen] = [np.nanpercentile(self.ratings[:, seen], lo, axis=0),
                               np.nanpercentile(self.ratings[:, seen], hi, axis=0),
                               np.nanpercentile(ranks[:, seen], lo, axis=0, method="lower"),
                               np.nanpercentile(ranks[:, seen], hi, axis=0, method="higher")]
        out = pd.DataFrame({"agent": self.agents, "lower": bounds[0], "upper": bounds[1], "rank_lower": bounds[2],
                            "rank_upper": bounds[3], "replicates": replicates})
        flags = []
        for k in range(len(self.agents)):
            why = []
            if self.matches is not None and self.matches[k] < MIN_MATCHES:
                why.append(f"only {int(self.matches[k])} match(es), fewer than {MIN_MATCHES}")
            if replicates[k] < len(self.ratings):
                why.append(f"absent from {len(self.ratings) - replicates[k]} of {len(self.ratings)} replicates")
            flags.append("; ".join(why))
        return out.assign(flag=flags)

    def long(self) -> pd.DataFrame:
        """One row per (replicate, agent) the agent appears in: replicate, agent, rating (for violin plots)."""
        r, n = self.ratings.shape
        frame = pd.DataFrame({"replicate": np.repeat(np.arange(r), n), "agent": np.tile(self.agents, r),
                              "rating": self.ratings.ravel()})
        return frame[frame["rating"].notna()].reset_index(drop=True)


def matches_per_agent(a: np.ndarray, b: np.ndarray, cluster: np.ndarray, n: int) -> np.ndarray:
    """How many distinct clusters (matches) each of the n agents appears in, shape (n,)."""
    codes, _ = pd.factorize(pd.Series(cluster))
    seen = pd.DataFrame({"agent": np.r_[a, b], "cluster": np.r_[codes, codes]}).drop_duplicates()
    return np.bincount(seen["agent"].to_numpy(np.int64), minlength=n)


def cluster_signatures(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, cluster: np.ndarray, n: int
                       ) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Distinct per-cluster pair-count contributions and how many clusters have each.

    Returns (S, counts): S is (n_signatures, n*n) sparse, counts (n_signatures,).
    """
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    outcome = np.asarray(outcome, float)
    codes, _ = pd.factorize(pd.Series(cluster))
    per_cluster = np.bincount(codes)
    if per_cluster.max(initial=0) <= 1:
        # one comparison per cluster: the signature is (a, b, outcome), oriented so that a < b (halving the
        # number of signatures, and so the cost of every multinomial draw)
        swap = a > b
        a, b = np.where(swap, b, a), np.where(swap, a, b)
        outcome = np.where(swap, 1.0 - outcome, outcome)
        key = (a * n + b) * 3 + np.round(outcome * 2).astype(np.int64)
        uniq, counts = np.unique(key, return_counts=True)
        cell, half = uniq // 3, (uniq % 3) / 2.0
        ua, ub = cell // n, cell % n
        rows = np.r_[np.arange(len(uniq)), np.arange(len(uniq))]
        cols = np.r_[ua * n + ub, ub * n + ua]
        vals = np.r_[half, 1.0 - half]
        return sparse.csr_matrix((vals, (rows, cols)), shape=(len(uniq), n * n)), counts
    rows = np.r_[codes, codes]
    cols = np.r_[a * n + b, b * n + a]
    vals = np.r_[outcome, 1.0 - outcome]
    S = sparse.csr_matrix((vals, (rows, cols)), shape=(len(per_cluster), n * n))
    return S, np.ones(S.shape[0], dtype=np.int64)


def game_weights(first: np.ndarray, second: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One bootstrap draw of whole games: each of the G games (codes 0..G-1 in `first`, `second`, shape (n,))
    is drawn Multinomial(G, 1/G) times; a comparison within one game counts as often as its game was drawn,
    one across two games (a parallel comparison) as the product of their draws. Returns weights, shape (n,)."""
    n_games = int(max(first.max(initial=-1), second.max(initial=-1))) + 1
    drawn = rng.multinomial(n_games, np.full(n_games, 1.0 / n_games))
    weights = drawn[first].astype(float)
    across = first != second
    weights[across] *= drawn[second[across]]
    return weights


def _weighted_counts(resampling: "BTResampling", rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` replicates' pair counts (size, n, n) drawing whole games (`game_weights`) of parallel comparisons."""
    a, b, outcome, first, second = resampling.weighted
    n = resampling.n
    w = np.stack([game_weights(first, second, rng) for _ in range(size)])  # (size, comparisons)
    return np.stack([np.bincount(a * n + b, wr * outcome, n * n) + np.bincount(b * n + a, wr * (1 - outcome), n * n)
                     for wr in w]).reshape(size, n, n)


def _fit_replicates(Ws: np.ndarray, theta0: np.ndarray, prior_sd: float | None) -> np.ndarray:
    """Batched BT fits of pair-count matrices Ws (R, n, n), centred over the agents present (absent: NaN).
    Without a prior, a replicate whose MLE does not exist (its "has beaten" graph is not strongly connected:
    an agent never won or never lost, or groups never compared both ways) is fitted with the default prior,
    as the full-data fit would be; its Newton system would otherwise be singular."""
    degenerate = (Ws.sum(axis=2) == 0).any(axis=1) | (Ws.sum(axis=1) == 0).any(axis=1)
    if prior_sd is None:
        degenerate |= np.array([not mle_exists(W) for W in Ws])
    theta = np.empty(Ws.shape[:2])
    if (~degenerate).any():
        theta[~degenerate] = fit_bt_batch(Ws[~degenerate], theta0, prior_sd)
    if degenerate.any():
        theta[degenerate] = fit_bt_batch(Ws[degenerate], theta0, prior_sd or DEFAULT_PRIOR_SD)
    absent = (Ws.sum(axis=2) + Ws.sum(axis=1)) == 0  # no comparison of the agent was drawn
    theta[absent] = np.nan
    return theta - np.nanmean(theta, axis=1, keepdims=True)


@dataclass(frozen=True)
class BTResampling:
    """What a scalar Bradley-Terry cluster bootstrap draws from, built once from the comparisons
    (`bt_resampling`) and small enough to send to every worker of a sweep: n agents, `matches` (n,) clusters
    per agent, and either the distinct cluster contributions `signatures` (n*n, k, sparse) with their counts
    (k,), or for parallel comparisons across two games the coded comparisons `weighted` (a, b, outcome, first,
    second game), each (m,)."""

    n: int
    matches: np.ndarray
    signatures: sparse.csr_matrix | None = None
    counts: np.ndarray | None = None
    weighted: tuple | None = None


def bt_resampling(a, b, outcome, cluster, n: int, second: np.ndarray | None = None) -> BTResampling:
    """The resampling of integer-coded comparisons a, b, outcome (m,) in clusters `cluster` (m,: integer
    codes, or any labels without `second`) among n agents; `second` (m,) the second game of parallel
    comparisons (codes shared with `cluster`), which are then resampled as whole games (`game_weights`)."""
    a, b, outcome = np.asarray(a, np.int64), np.asarray(b, np.int64), np.asarray(outcome, float)
    matches = matches_per_agent(a, b, cluster, n)
    if second is not None and (np.asarray(second) != np.asarray(cluster)).any():
        return BTResampling(n=n, matches=matches,
                            weighted=(a, b, outcome, np.asarray(cluster, np.int64), np.asarray(second, np.int64)))
    S, counts = cluster_signatures(a, b, outcome, cluster, n)
    return BTResampling(n=n, matches=matches, signatures=S.T.tocsr(), counts=counts)


@one_blas_thread
def bt_replicates(resampling: BTResampling, theta0: np.ndarray, replicates: int, seed: int,
                  prior_sd: float | None = None, chunk: int = 100) -> np.ndarray:
    """`replicates` bootstrap replicates of scalar BT log-strengths, Elo scale, shape (replicates, n): each a
    Multinomial draw of the clusters' signatures (or of whole games), fitted `chunk` at a time by a batched
    Newton from `theta0` (n,) on one BLAS thread. `seed` seeds the draws; the same seed gives the same
    replicates whatever the chunk."""
    rng = np.random.default_rng(seed)
    n = resampling.n
    out = []
    if resampling.weighted is None:
        total = int(resampling.counts.sum())
        pvals = resampling.counts / total
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        if resampling.weighted is not None:
            Ws = _weighted_counts(resampling, rng, size)
        else:
            draws = rng.multinomial(total, pvals, size=size) if len(pvals) > 1 else np.full((size, 1), total)
            Ws = (resampling.signatures @ draws.T.astype(float)).T.reshape(size, n, n)
        out.append(ELO_CENTRE + ELO_SCALE * _fit_replicates(Ws, theta0, prior_sd))
    return np.vstack(out)


def bootstrap_bt(a, b, outcome, cluster, agents: list[str], theta0: np.ndarray, replicates: int = 200,
                 seed: int = 0, prior_sd: float | None = None, chunk: int = 100,
                 second: np.ndarray | None = None) -> BootstrapResult:
    """Cluster-bootstrap scalar Bradley-Terry.

    Parameters
    ----------
    a, b, outcome, cluster : integer-coded comparisons (see `referee.models.ratings.bradley_terry.pair_counts`) and the
        cluster (match) of each.
    agents : the n names; theta0 : the full-data fit, the batched Newton's starting point.
    replicates : number of bootstrap replicates; seed : their generator's seed.
    prior_sd : as in the point fit. Replicates in which some agent never wins or never loses have no MLE;
        they are fitted with the weak default prior instead.
    second : the second game of each comparison (integer codes shared with `cluster`, which is then the
        first), for parallel comparisons across two games; whole games are resampled (`game_weights`).

    Returns
    -------
    BootstrapResult of Elo-scale ratings (replicates, n): `bt_resampling` then `bt_replicates`.
    """
    return bootstrap_resampled(bt_resampling(a, b, outcome, cluster, len(agents), second), agents, theta0,
                               prior_sd, replicates, seed, chunk)


def bootstrap_resampled(resampling: BTResampling, agents: list[str], theta0: np.ndarray, prior_sd: float | None,
                        replicates: int, seed: int, chunk: int = 100) -> BootstrapResult:
    """A BootstrapResult of `replicates` replicates (`bt_replicates`, seeded by `seed`) drawn from `resampling`
    around the point fit `theta0` (n,) of the n `agents`: `bootstrap_bt`'s second half, and the task a sweep's
    scalar Bradley-Terry bootstrap blocks run."""
    return BootstrapResult(agents=list(agents), ratings=bt_replicates(resampling, theta0, replicates, seed, prior_sd, chunk),
                           matches=resampling.matches)


def bootstrap_generic(comparisons: pd.DataFrame, fit: Callable[[pd.DataFrame], pd.Series], agents: list[str],
                      replicates: int = 200, seed: int = 0,
                      games: tuple[np.ndarray, np.ndarray] | None = None) -> BootstrapResult:
    """Resample the games of a comparisons table with replacement (`game_weights`: a parallel comparison
    counts as often as both its games were drawn) and refit with `fit`.

    `fit(comparisons) -> Series` of Elo-scale ratings indexed by agent; agents missing from a replicate
    get NaN. `games` : the (first, second) game of each row (`referee.prepare.comparisons.comparison_games`;
    default: its cluster, twice). Returns a BootstrapResult (replicates, n).
    """
    if games is None:
        cluster = comparisons["cluster"].astype(str).to_numpy()
        games = (cluster, cluster)
    first, second = games
    codes, _ = pd.factorize(np.r_[first, second])
    first, second = codes[: len(first)], codes[len(first):]
    seen = pd.concat([comparisons[["a", "cluster"]].rename(columns={"a": "agent"}),
                      comparisons[["b", "cluster"]].rename(columns={"b": "agent"})]).drop_duplicates()
    per_agent = seen.groupby("agent").size()
    rng = np.random.default_rng(seed)
    rows = np.empty((replicates, len(agents)))
    for r in range(replicates):
        weights = game_weights(first, second, rng).astype(np.int64)
        index = np.repeat(np.arange(len(comparisons)), weights)
        sample = comparisons.iloc[index]
        copy = np.arange(len(index)) - np.repeat(np.cumsum(weights) - weights, weights)  # each draw of a row: 0, 1, ...
        if copy.any():  # a match drawn twice is two matches (a ranking per draw), not one with doubled points
            sample = sample.assign(cluster=sample["cluster"].astype(str).to_numpy() + np.where(
                copy > 0, "#" + copy.astype(str), ""))
        ratings = fit(sample)
        rows[r] = ratings.reindex(agents).to_numpy(float)
    names_only = [k[-1] if isinstance(k, tuple) else k for k in agents]
    return BootstrapResult(agents=list(agents), ratings=rows, matches=per_agent.reindex(names_only).fillna(0).to_numpy())
