"""Which scenarios to run next to learn the tag effects best: a normal approximation of the tag-effects model.

In the tag-effects regression (`referee.models.scores.beta_regression`) a tag's population coefficient beta_t is
learnt between scenarios: each scenario has its own effect u_s, so another repetition of a scenario already
played tells little about beta, and a new scenario with tag profile x tells as much as its profile allows.
On the logit scale of the scenario's mean score, a scenario's mean is x' beta + u_s + noise; with
tau = var(u_s + noise) the information about (intercept, beta) is sum_s x_s x_s' / tau, plus the model's
Normal(0, prior_sd^2) prior. `tau` comes from the data: the residual variance of the scenario means regressed on
their profiles (a moment estimate; at least `min_tau`).

`next_scenarios` picks candidate profiles one at a time, each for the tag whose coefficient is then least
known (largest posterior sd), by the variance it removes from that coefficient (Sherman-Morrison), and updates
the covariance as if it were played. Candidates are the catalogue's scenarios not yet played and, optionally,
hypothetical profiles (every combination of up to three tags).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from referee.models.scores.beta_regression import Priors, tag_matrix

PRIOR_SD = Priors().coef_sd  # the tag-effects model's prior sd of beta (and of the intercept's spread here)


def scenario_means(scores: pd.DataFrame) -> pd.Series:
    """Mean normalised score per scenario on the logit scale (scores clipped to [0.01, 0.99])."""
    y = scores["score_norm"].clip(0.01, 0.99)
    return np.log(y / (1 - y)).groupby(scores["scenario"]).mean()


def profile_matrix(names: list[str], tags: pd.DataFrame, tag_names: list[str]) -> np.ndarray:
    """0/1 matrix (len(names), 1 + tags): an intercept column, then each tag (`beta_regression.tag_matrix`)."""
    return np.hstack([np.ones((len(names), 1)), tag_matrix(list(names), tags, tag_names)])


def hypothetical_profiles(names: list[str], size: int = 3, exclusive: list[bool] | None = None) -> pd.DataFrame:
    """Every combination of up to `size` of `names` (tags or demands), with at most one of those flagged in
    `exclusive` (e.g. substrates: a scenario has one). Returns a 0/1 table, index 'profile: a + b', columns
    `names`, in order of size then of `names`."""
    flags = exclusive or [False] * len(names)
    rows = {}
    for k in range(1, size + 1):
        for combo in itertools.combinations(range(len(names)), k):
            if sum(flags[i] for i in combo) <= 1:
                row = np.zeros(len(names))
                row[list(combo)] = 1.0
                rows["profile: " + " + ".join(names[i] for i in combo)] = row
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(names))


def next_scenarios(scores: pd.DataFrame, tags: pd.DataFrame, candidates: list[str], budget: int,
                   profiles: bool = False, min_tau: float = 0.05) -> pd.DataFrame:
    """Up to `budget` scenarios (or profiles) to run next, in order.

    scores : one row per (match, agent) with scenario and score_norm; tags : scenario, tag (the catalogue);
    candidates : scenario names that may be proposed (e.g. the catalogue's not yet played); profiles : also
    propose hypothetical tag profiles. Returns pick, scenario (a name, or 'profile: tag + tag'), tags, target
    (the tag whose coefficient the pick serves), sd_before, sd_after (its posterior sd on the logit scale).
    """
    tag_names = sorted(tags["tag"].unique())
    if not tag_names:
        raise ValueError("the catalogue has no tags: there are no tag effects to plan for")
    means = scenario_means(scores)
    X = profile_matrix(list(means.index), tags, tag_names)
    if len(means) > X.shape[1]:
        fitted = X @ np.linalg.lstsq(X, means.to_numpy(), rcond=None)[0]
        tau = max(float(np.sum((means.to_numpy() - fitted) ** 2) / (len(means) - X.shape[1])), min_tau)
    else:
        tau = 1.0  # too few scenarios for a residual: the prior's scale
    cov = np.linalg.inv(X.T @ X / tau + np.eye(X.shape[1]) / PRIOR_SD**2)
    pool = {name: row for name, row in zip(candidates, profile_matrix(list(candidates), tags, tag_names))}
    if profiles:
        for name, row in hypothetical_profiles(tag_names).iterrows():
            pool.setdefault(name, np.concatenate([[1.0], row.to_numpy()]))
    rows = []
    for pick in range(1, budget + 1):
        if not pool:
            break
        t = 1 + int(np.argmax(np.diag(cov)[1:]))  # the least known tag coefficient
        names = list(pool)
        Xc = np.array([pool[n] for n in names])
        cx = Xc @ cov[:, t]
        gain = cx**2 / (tau + np.einsum("ij,jk,ik->i", Xc, cov, Xc))
        best = int(np.argmax(gain))
        x = Xc[best]
        before = float(np.sqrt(cov[t, t]))
        cx_full = cov @ x
        cov = cov - np.outer(cx_full, cx_full) / (tau + x @ cx_full)
        rows.append({"pick": pick, "scenario": names[best],
                     "tags": "; ".join(tag_names[k] for k in range(len(tag_names)) if x[1 + k]),
                     "target": tag_names[t - 1], "sd_before": before, "sd_after": float(np.sqrt(cov[t, t]))})
        del pool[names[best]]
    return pd.DataFrame(rows)
