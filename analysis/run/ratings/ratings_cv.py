"""Cross-validated prediction of held-out comparisons (COMPACT section 2.4) and win-probability matrices.

`cross_validate(comparisons, folds=5, dims=range(1, 8))` splits clusters (matches) into k folds, fits the
scalar, per-game and D-dimensional Bradley-Terry models on the other folds, and scores P(a beats b) on
the held-out decisive comparisons (ties left out) by ROC-AUC. Each held-out pair is oriented at random
(seeded), so the labels are about half ones. Agents or games unseen in training get the mean strength.

`win_matrix(comparisons, split=None)` gives P(row beats column) from scalar Bradley-Terry, for the whole
table or separately per value of a match attribute such as `communication` (COMPACT figure 1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from referee.prepare.comparisons import comparison_games
from referee.models.codes import positions
from referee.run.executor import Executor, Shared, Task, run_tasks, share
from referee.run.ratings.ratings import encode
from referee.models.fit import summarised_warnings
from referee.models.ratings.bradley_terry import fit_bt
from referee.models.registry import DEFAULT_TAU_ELO, RATING_METHODS, implementation
from referee.prepare.membership import agents_in


def game_folds(comparisons: pd.DataFrame, folds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The fold of each comparison's first and second game (`comparison_games`), games dealt into `folds`
    groups (seeded). A comparison is held out in fold f when both its games are in f, and trains fold f when
    neither is: a parallel comparison across two folds' games is in neither side of those two folds."""
    first, second = comparison_games(comparisons)
    names = pd.unique(np.r_[first, second])
    order = np.random.default_rng(seed).permutation(len(names))
    fold = pd.Series(np.arange(len(names)) % folds, index=names[order])
    return fold.reindex(first).to_numpy(), fold.reindex(second).to_numpy()


def _strengths(model: str, train: pd.DataFrame, agents: list[str], games: list[str], dims: int, seed: int,
               tau_elo: float | None = DEFAULT_TAU_ELO) -> tuple[np.ndarray, bool]:
    """(strengths per (game, agent), shape (K, n), fitted on `train` (unseen agents/games: 0) by the model's
    registered fold fit (`RATING_METHODS[model].fold`), whether that fit added a prior because its maximum-
    likelihood estimate does not exist on the fold); `tau_elo` the per-game deviations' prior sd (None: plain
    maximum likelihood, the COMPACT paper's)."""
    coded = encode(train, agents)
    strengths = np.zeros((len(games), len(agents)))
    game_index = pd.Index(games).get_indexer(coded.games)
    prior = implementation(RATING_METHODS[model].fold)(strengths, coded, agents, game_index, dims, seed, tau_elo)
    return strengths, bool(prior)


def cross_validate(comparisons: pd.DataFrame, folds: int = 5, dims: range | list[int] = range(1, 8),
                   models: tuple[str, ...] = ("bt", "bt-per-game", "bt-md"), seed: int = 0,
                   executor: Executor | None = None, tau_elo: float | None = DEFAULT_TAU_ELO) -> pd.DataFrame:
    """k-fold ROC-AUC of held-out comparisons, folds of whole games (`game_folds`), one sweep task per fold
    (`executor`: where they run, `referee.run.executor`; the same result on any). `tau_elo`: the per-game
    model's deviation prior sd in Elo points (None: plain maximum likelihood, the COMPACT paper's).

    Returns
    -------
    One row per (model, dims, fold): model, dims (0 for the scalar models), fold, auc, n_test, prior (the
    fold's fit added a prior because its maximum-likelihood estimate does not exist there), unestimated (held-out
    comparisons whose prediction would use a strength the fit has no estimate of; such a fold's auc is NaN).
    """
    data = comparisons.reset_index(drop=True).assign(game=lambda d: d["game"].fillna("(all)").astype(str))
    fold_a, fold_b = game_folds(data, folds, seed)
    flip = np.random.default_rng(seed + 1).random(len(data)) < 0.5
    data = data[["a", "b", "outcome", "game"]].assign(cluster=data["cluster"].astype(str), fold_a=fold_a,
                                                      fold_b=fold_b, flip=flip)
    specs = [(m, d) for m in models for d in (dims if RATING_METHODS[m].dimensions else [0])]
    shared = share(executor, "cv-comparisons", data)
    tasks = [Task(f"cv-fold-{f}", cv_fold, (shared, f, specs, seed, tau_elo)) for f in range(folds)]
    with summarised_warnings(f"the {folds} cross-validation folds' fits"):  # once, with its count, not per fold
        parts = run_tasks(tasks, executor, "cross-validation folds")
    rows = [row for part in parts for row in part]
    return pd.DataFrame(rows, columns=["model", "dims", "fold", "auc", "n_test", "prior", "unestimated"])


def cv_fold(shared: Shared, fold: int, specs: list[tuple[str, int]], seed: int,
            tau_elo: float | None = DEFAULT_TAU_ELO) -> list[dict]:
    """One cross-validation fold (a sweep task): each (model, dims) of `specs` fitted on the other folds and
    scored on this one's decisive comparisons. `shared` holds a, b, outcome, game, cluster, fold_a, fold_b,
    flip.
    Returns rows model, dims, fold, auc, n_test, prior (the fit added a prior), unestimated (test comparisons
    whose prediction would use a strength the fit has no estimate of: the fold is then not scored, auc NaN);
    none when the fold has no test or no training data."""
    data = shared.load()
    agents = agents_in(data)
    games = sorted(data["game"].unique())
    fold_a, fold_b = data["fold_a"].to_numpy(), data["fold_b"].to_numpy()
    train = data[(fold_a != fold) & (fold_b != fold)]
    test = data[(fold_a == fold) & (fold_b == fold) & (data["outcome"] != 0.5)]
    if test.empty or train.empty:
        return []
    a, b, g = positions(test["a"], agents), positions(test["b"], agents), positions(test["game"], games)
    label = (test["outcome"].to_numpy() == 1.0)
    tf = test["flip"].to_numpy(bool)
    a, b, label = np.where(tf, b, a), np.where(tf, a, b), np.where(tf, ~label, label)
    rows = []
    for model, d in specs:
        s, prior = _strengths(model, train, agents, games, d, seed, tau_elo)
        p = 1.0 / (1.0 + np.exp(-(s[g, a] - s[g, b])))
        unestimated = int((~np.isfinite(p)).sum())
        auc = roc_auc_score(label, p) if 0 < label.sum() < len(label) and not unestimated else np.nan
        rows.append({"model": model, "dims": d, "fold": fold, "auc": auc, "n_test": len(label), "prior": prior,
                     "unestimated": unestimated})
    return rows


def summarise_cv(cv: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of the fold AUCs per (model, dims) over the folds scored (`folds`);
    `folds_with_prior`: scored folds whose fit added a prior (no maximum-likelihood estimate there, a regularised
    fit); `folds_without_estimate`: folds not scored because a test comparison's prediction would use a strength
    the fit has no estimate of (auc NaN when no fold is scored)."""
    flags = cv.assign(prior=cv["prior"].astype(bool) & cv["auc"].notna(), unestimated=cv["unestimated"] > 0)
    grouped = flags.groupby(["model", "dims"])
    out = pd.DataFrame({"auc": grouped["auc"].mean(),
                        "se": grouped["auc"].std(ddof=1) / np.sqrt(grouped["auc"].count()),
                        "folds": grouped["auc"].count(),
                        "folds_with_prior": grouped["prior"].sum().astype(int),
                        "folds_without_estimate": grouped["unestimated"].sum().astype(int)}).reset_index()
    return out.sort_values(["model", "dims"]).reset_index(drop=True)


def win_matrix(comparisons: pd.DataFrame, split: str | None = None) -> dict[str, pd.DataFrame]:
    """P(row beats column) from scalar BT; one matrix per value of `split` (or one, keyed 'all').

    Agents are ordered by their rating in the pooled fit. Returns {label: DataFrame (n, n)}, each matrix's
    `attrs["prior_sd"]` the prior sd (natural-log units) its fit fell back to where the maximum-likelihood
    estimate does not exist (MAP), else None.
    """
    agents = agents_in(comparisons)
    with summarised_warnings("the win-probability matrices' fits"):
        pooled = fit_bt(encode(comparisons, agents).counts(), agents)
        order = list(np.array(agents)[np.argsort(-pooled.theta)])
        parts = {"all": comparisons} if split is None else {
            f"{split}={value}": group for value, group in comparisons.groupby(comparisons[split].astype(str))}
        out = {}
        for label, group in parts.items():
            fit = fit_bt(encode(group, agents).counts(), agents)
            out[label] = pd.DataFrame(fit.win_probability(), index=agents, columns=agents).loc[order, order]
            out[label].attrs["prior_sd"] = fit.prior_sd
    return out


def empirical_win_matrix(comparisons: pd.DataFrame, order: list[str], split: str | None = None
                         ) -> dict[str, pd.DataFrame]:
    """The observed share of comparisons each row agent won against each column agent (ties as halves; NaN
    where two agents were never compared), in `order`; one matrix per value of `split` (or one, 'all'),
    labelled like `win_matrix`'s with ' (empirical)' added."""
    parts = {"all": comparisons} if split is None else {
        f"{split}={value}": group for value, group in comparisons.groupby(comparisons[split].astype(str))}
    out = {}
    for label, group in parts.items():
        both = pd.concat([group[["a", "b", "outcome"]],
                          group.rename(columns={"a": "b", "b": "a"}).assign(outcome=1 - group["outcome"])[["a", "b", "outcome"]]])
        share = both.pivot_table(index="a", columns="b", values="outcome", aggfunc="mean")
        out[f"{label} (empirical)"] = share.reindex(index=order, columns=order)
    return out


def fitted_and_empirical(comparisons: pd.DataFrame, split: str | None = None) -> dict[str, pd.DataFrame]:
    """`win_matrix` and `empirical_win_matrix` side by side: for each split value the fitted matrix, then the
    observed one, agents in the fitted order."""
    fitted = win_matrix(comparisons, split)
    order = list(next(iter(fitted.values())).index)
    empirical = empirical_win_matrix(comparisons, order, split)
    return {k: v for label, e in zip(fitted, empirical) for k, v in ((label, fitted[label]), (e, empirical[e]))}
