"""Consistency of socio-cognitive metrics (COMPACT paper, section 3.2, figures 4 and 5).

Each metric is averaged per agent within each game category (game x number of players), then standardised
across all (agent, category) rows (z-scores, so that judge ratings on 0-3 and shares on 0-1 weigh alike),
giving one metric vector per (agent, category). Vectors are compared by Pearson correlation:
- `intra-agent, across categories`: the same agent in two different categories (paper: 0.28, 0.27 by game);
- `inter-agent, same category`: two different agents in the same category (paper: 0.007, -0.05).
With framings, vectors are per (agent, category, framing), and the pairs are the same agent and category in
the two framings (paper: 0.39) against two different agents in the same category and framing (-0.005).
Intervals resample whole matches (a bootstrap over games) and recompute everything.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COMPARISONS = ("intra-agent, across categories", "inter-agent, same category",
               "intra-agent, across framings", "inter-agent, same framing")


def metric_vectors(players: pd.DataFrame, keys: list[str], standardise: bool = True) -> pd.DataFrame:
    """Mean metric per `keys` group (e.g. agent, category), z-scored per metric unless `standardise` is False
    (the COMPACT paper's raw means); metric columns only.

    players : `referee.prepare.socio.player_metrics` plus the key columns. Metrics with no spread are
    dropped (their z-score is undefined); missing means stay NaN and are skipped pairwise.
    """
    return _standardised(players.groupby(keys)[_metrics(players)].mean(), standardise)


def _metrics(players: pd.DataFrame) -> list[str]:
    """The metric columns of a players table (every column but the keys)."""
    return [c for c in players.columns if c not in {"match_id", "player", "agent", "game", "category", "framing"}]


def _standardised(means: pd.DataFrame, standardise: bool = True) -> pd.DataFrame:
    """Group means (rows) of metrics (columns): the metrics with spread, z-scored per metric unless `standardise` is
    False."""
    sd = means.std()
    means = means.loc[:, sd > 0]
    return (means - means.mean()) / means.std() if standardise else means


def similarity(vectors: pd.DataFrame) -> pd.DataFrame:
    """Pearson correlation between every two rows of `vectors` (the figure 4 heatmap), rows x rows, each pair over
    the metrics both rows have (pairwise complete); NaN where a pair shares fewer than 3 metrics or either row is
    constant over them (numpy's Pearson r of each pair alone is the same number). All pairs at once from the pairwise
    sums (a handful of matrix products), centred on each row's mean first so that the sums do not cancel."""
    values = vectors.to_numpy(float)
    n = len(values)
    finite = np.isfinite(values)
    w = finite.astype(float)
    filled = np.where(finite, values, 0.0)
    centred = np.where(finite, filled - filled.sum(axis=1, keepdims=True) / np.maximum(w.sum(axis=1, keepdims=True),
                                                                                         1.0), 0.0)
    count = w @ w.T  # metrics both rows have
    sx = centred @ w.T  # row i's sum over the metrics it shares with row j
    sxx = (centred ** 2) @ w.T
    sxy = centred @ centred.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sx.T / count
        vx, vy = sxx - sx ** 2 / count, sxx.T - sx.T ** 2 / count
        scale = np.maximum(np.abs(sxx), np.abs(sxx.T)) + 1e-300
        flat = (vx <= 1e-12 * scale) | (vy <= 1e-12 * scale)  # a constant row over the shared metrics
        r = np.clip(cov / np.sqrt(vx * vy), -1.0, 1.0)
    r[(count < 3) | flat] = np.nan
    np.fill_diagonal(r, 1.0)
    return pd.DataFrame(r, index=vectors.index, columns=vectors.index)


def _framed(players: pd.DataFrame) -> bool:
    return "framing" in players.columns and players["framing"].nunique() > 1


def _keys(players: pd.DataFrame) -> list[list[str]]:
    """The groupings whose vectors are compared: (agent, category), and (agent, category, framing) with framings."""
    return [["agent", "category"]] + ([["agent", "category", "framing"]] if _framed(players) else [])


def _pair_means_of(means: list[pd.DataFrame]) -> dict[str, tuple[float, int]]:
    """(mean r, pairs) per comparison from the group means per (agent, category) and, where there are framings, per
    (agent, category, framing)."""
    out = {}
    by_category = _standardised(means[0])
    sim = similarity(by_category).to_numpy()
    out[COMPARISONS[0]] = _pairs(by_category, sim, {"agent": True, "category": False})
    out[COMPARISONS[1]] = _pairs(by_category, sim, {"agent": False, "category": True})
    if len(means) > 1:
        by_framing = _standardised(means[1])
        sim = similarity(by_framing).to_numpy()
        out[COMPARISONS[2]] = _pairs(by_framing, sim, {"agent": True, "category": True, "framing": False})
        out[COMPARISONS[3]] = _pairs(by_framing, sim, {"agent": False, "category": True, "framing": True})
    return {k: (float(np.mean(v)) if len(v) else np.nan, len(v)) for k, v in out.items()}


class _MatchSums:
    """Per match, each group's metric sums and counts of values present, so that the group means of any resample of
    the matches are two matrix products (a resample's means are its matches' sums over its matches' counts, each
    match as often as it was drawn), not a concatenation and a grouping of the resampled rows."""

    def __init__(self, players: pd.DataFrame, matches: np.ndarray, keys: list[str]):
        metrics = _metrics(players)
        rows = players.dropna(subset=keys)
        grouped = rows.groupby(["match_id"] + keys)[metrics]
        sums, counts = grouped.sum(min_count=1).fillna(0.0), grouped.count()
        self.groups = sums.index.droplevel("match_id").unique().sort_values()
        self.metrics = metrics
        at_match = pd.Index(matches).get_indexer(sums.index.get_level_values("match_id"))
        at_group = self.groups.get_indexer(sums.index.droplevel("match_id"))
        shape = (len(matches), len(self.groups) * len(metrics))
        self.sums, self.counts = np.zeros(shape), np.zeros(shape)
        columns = at_group[:, None] * len(metrics) + np.arange(len(metrics))[None, :]
        self.sums[at_match[:, None], columns] = sums.to_numpy(float)
        self.counts[at_match[:, None], columns] = counts.to_numpy(float)

    def means(self, drawn: np.ndarray) -> pd.DataFrame:
        """The group means (groups present in the resample x metrics; NaN where a group has no value of a metric)
        of a resample in which match k was drawn `drawn[k]` times."""
        total = drawn @ self.counts
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(total > 0, (drawn @ self.sums) / total, np.nan).reshape(len(self.groups), -1)
        present = (total.reshape(len(self.groups), -1) > 0).any(axis=1)
        return pd.DataFrame(values[present], index=self.groups[present], columns=self.metrics)


def consistency(players: pd.DataFrame, n_boot: int = 200, seed: int = 0) -> pd.DataFrame:
    """The summary correlations of the module docstring with bootstrap intervals.

    players : one row per (match_id, player) with agent, category, framing (optional) and metric columns.
    n_boot : bootstrap replicates over matches (0: none). Returns comparison, mean_r, low, high (95%
    percentile interval), n_pairs; a comparison with no pair (e.g. one framing only) is left out.
    """
    matches = players["match_id"].unique()
    sums = [_MatchSums(players, matches, k) for k in _keys(players)]
    point = _pair_means_of([s.means(np.ones(len(matches))) for s in sums])  # every match once: the rows' own means
    rng = np.random.default_rng(seed)
    boots: dict[str, list[float]] = {k: [] for k in point}
    for _ in range(n_boot):
        pick = rng.choice(len(matches), size=len(matches), replace=True)
        drawn = np.bincount(pick, minlength=len(matches)).astype(float)
        for k, (value, _) in _pair_means_of([s.means(drawn) for s in sums]).items():
            if k in boots:
                boots[k].append(value)
    rows = []
    for k, (value, n) in point.items():
        b = np.asarray(boots[k], float)
        b = b[np.isfinite(b)]
        low, high = (np.percentile(b, [2.5, 97.5]) if len(b) else (np.nan, np.nan))
        rows.append({"comparison": k, "mean_r": value, "low": float(low), "high": float(high), "n_pairs": n})
    return pd.DataFrame(rows)


def _pairs(vectors: pd.DataFrame, sim: np.ndarray, same: dict[str, bool], agent: str | None = None) -> np.ndarray:
    """The finite Pearson r (from `sim`, `similarity(vectors)` as an array) of every pair of rows of `vectors`
    whose index levels agree (True) or differ (False) as `same` says, e.g. {"agent": True, "category": False};
    with `agent`, only pairs whose first row is that agent's."""
    iu = np.triu_indices(len(sim), 1)
    keep = np.ones(len(iu[0]), bool)
    for level, equal in same.items():
        values = vectors.index.get_level_values(level).to_numpy()
        keep &= (values[iu[0]] == values[iu[1]]) == equal
    if agent is not None:
        keep &= vectors.index.get_level_values("agent").to_numpy()[iu[0]] == agent
    r = sim[iu][keep]
    return r[np.isfinite(r)]


def framing_slots(players: pd.DataFrame) -> pd.DataFrame:
    """`players` with each game's framings (its own labels: cowboys, pirates) replaced by their slot in that game
    ('framing 1', 'framing 2', in order of first appearance), so that averaging over all games pools the games'
    first framings together, their second together: Figure 5 (right)'s "across framings when averaging metrics
    in all games"."""
    order = players.drop_duplicates(["game", "framing"])[["game", "framing"]]
    order = order.assign(slot=order.groupby("game").cumcount() + 1)
    slots = players.merge(order, on=["game", "framing"], how="left")["slot"]
    return players.assign(framing="framing " + slots.astype(str).to_numpy())


def paper_consistency(players: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The COMPACT paper's consistency figures (section 3.2) by its own protocol: raw metric means (no
    z-scores), mean Pearson r with its standard error over the pairs (Figure 5's error bars).

    players : as `consistency` (match_id, player, agent, game, category, framing optional, metric columns).
    Returns (summary: comparison, mean_r, sem, n_pairs, min_r, max_r, figure; per_agent: agent,
    self_consistency (mean r of the agent with itself across categories), n_pairs). Comparisons: Figure 4's
    diagonal blocks (same agent, other category) and off-diagonal (two agents, every pair); same agent across
    games against two agents in the same game; with framings, the same agent and category across framings
    against two agents in one framing, and Figure 5 (right): each agent's vector over all games in each
    framing slot (`framing_slots`: the games' first framings pooled, their second pooled), the agent against
    itself across slots and two agents in one slot."""
    by_category = metric_vectors(players, ["agent", "game", "category"], standardise=False)
    specs = [("intra-agent, across categories (Figure 4 diagonal blocks)", by_category,
              {"agent": True, "category": False}, "Figure 4"),
             ("inter-agent, all pairs (Figure 4 off-diagonal)", by_category, {"agent": False}, "Figure 4"),
             ("intra-agent, across games", by_category, {"agent": True, "game": False}, "Figure 5 (left)"),
             ("inter-agent, same game", by_category, {"agent": False, "game": True}, "Figure 5 (left)")]
    if "framing" in players.columns and players["framing"].nunique() > 1:
        by_framing = metric_vectors(players, ["agent", "category", "framing"], standardise=False)
        overall = metric_vectors(framing_slots(players), ["agent", "framing"], standardise=False)
        specs += [("intra-agent, across framings", by_framing, {"agent": True, "category": True, "framing": False},
                   "Figure 5 (middle)"),
                  ("inter-agent, same framing", by_framing, {"agent": False, "category": True, "framing": True},
                   "Figure 5 (middle)"),
                  ("intra-agent, across framings, all games", overall, {"agent": True, "framing": False},
                   "Figure 5 (right)"),
                  ("inter-agent, same framing, all games", overall, {"agent": False, "framing": True},
                   "Figure 5 (right)")]
    rows, sims = [], {}
    for name, vectors, same, figure in specs:
        if id(vectors) not in sims:  # one similarity matrix per set of vectors, for all its comparisons
            sims[id(vectors)] = similarity(vectors).to_numpy()
        r = _pairs(vectors, sims[id(vectors)], same)
        rows.append({"comparison": name, "mean_r": float(r.mean()) if len(r) else np.nan,
                     "sem": float(r.std(ddof=1) / np.sqrt(len(r))) if len(r) > 1 else np.nan, "n_pairs": len(r),
                     "min_r": float(r.min()) if len(r) else np.nan, "max_r": float(r.max()) if len(r) else np.nan,
                     "figure": figure})
    per_agent = []
    for agent in by_category.index.get_level_values("agent").unique():
        r = _pairs(by_category, sims[id(by_category)], {"agent": True, "category": False}, agent=agent)
        per_agent.append({"agent": agent, "self_consistency": float(r.mean()) if len(r) else np.nan,
                          "n_pairs": len(r)})
    return pd.DataFrame(rows), pd.DataFrame(per_agent).sort_values("self_consistency", ascending=False)
