"""What predicts winning: logistic regression on metric differences (COMPACT paper, section 4, equation 5).

For every two players i, j of a match with different scores (ties left out), y = 1 when i outscored j, and

    logit P(y = 1) = (m_i - m_j) . g            ('metrics'), or
    logit P(y = 1) = (m_i - m_j) . g_game       ('metrics per game'),

where m is the player's metric vector in that match (`referee.prepare.socio.player_metrics`), each metric
standardised by its sd over players; a metric a match lacks (influence without communication) contributes 0.
There is no intercept: the model is symmetric in i and j. Fitted by L2-regularised logistic regression
(scikit-learn, C = 1).

Cross-validation keeps agent identity from leaking: each fold leaves two agents out, trains on the pairs
that involve neither and tests on the pairs that involve either (paper: AUC 0.75 and 0.82). The variants
'+ identity' add the difference of the two agents' one-hot vectors and use 4 folds of whole matches
(paper: 0.77 and 0.84); 'elo' is Bradley-Terry on the training matches' pairs alone, scored on the same
match folds. AUCs are the mean over folds, with mean +- 1.96 standard errors across folds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score, roc_curve

from referee.models.fit import FitResult

# the models of who wins: (per game, with identities) of the metrics' design, or None for the rating alone (Elo)
MODELS = {"metrics": (False, False), "metrics per game": (True, False), "metrics + identity": (False, True),
          "metrics per game + identity": (True, True), "elo": None}
IDENTITY_FOLDS = 4


def pairs(players: pd.DataFrame, scores: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """One row per two players of a match with different scores.

    players : match_id, player, agent, game and the `metrics` columns; scores : match_id, player, score.
    Returns match_id, game, agent_i, agent_j, y (1 when i outscored j) and one `d_<metric>` column per metric
    (the standardised difference m_i - m_j, NaN as 0). i is the player whose name sorts first.
    """
    data = players.merge(scores[["match_id", "player", "score"]], on=["match_id", "player"])
    sd = data[metrics].std().replace(0, 1.0).fillna(1.0)
    z = data[metrics] / sd
    data = pd.concat([data[["match_id", "player", "agent", "game", "score"]], z], axis=1)
    left = data.rename(columns=lambda c: f"{c}_i" if c not in {"match_id", "game"} else c)
    right = data.rename(columns=lambda c: f"{c}_j" if c not in {"match_id", "game"} else c)
    joined = left.merge(right.drop(columns="game"), on="match_id")
    joined = joined[(joined["player_i"] < joined["player_j"]) & (joined["score_i"] != joined["score_j"])]
    out = joined[["match_id", "game", "agent_i", "agent_j"]].copy()
    out["y"] = (joined["score_i"] > joined["score_j"]).astype(int)
    for m in metrics:
        out[f"d_{m}"] = (joined[f"{m}_i"] - joined[f"{m}_j"]).fillna(0.0)
    return out.reset_index(drop=True)


def design(rows: pd.DataFrame, metrics: list[str], per_game: bool, identity: bool, games: list[str],
           agents: list[str]) -> tuple[np.ndarray, list[str]]:
    """Feature matrix (n, k) and names: metric differences (per game: times each game's indicator) and, with
    `identity`, the difference of the two agents' one-hot vectors."""
    D = rows[[f"d_{m}" for m in metrics]].to_numpy(float)
    names = list(metrics)
    if per_game:
        G = (rows["game"].to_numpy()[:, None] == np.array(games)[None, :]).astype(float)
        D = (D[:, :, None] * G[:, None, :]).reshape(len(rows), -1)
        names = [f"{m} | {g}" for m in metrics for g in games]
    if identity:
        index = {a: k for k, a in enumerate(agents)}
        H = np.zeros((len(rows), len(agents)))
        H[np.arange(len(rows)), rows["agent_i"].map(index).to_numpy()] += 1
        H[np.arange(len(rows)), rows["agent_j"].map(index).to_numpy()] -= 1
        D = np.c_[D, H]
        names += [f"agent: {a}" for a in agents]
    return D, names


def agent_folds(rows: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray, tuple[str, str]]]:
    """Leave-two-agents-out folds: for every two agents, (train mask, test mask, the two agents); train
    rows involve neither agent, test rows involve either, so no agent is on both sides."""
    agents = sorted(set(rows["agent_i"]) | set(rows["agent_j"]))
    out = []
    for a, b in combinations(agents, 2):
        involved = rows["agent_i"].isin([a, b]).to_numpy() | rows["agent_j"].isin([a, b]).to_numpy()
        out.append((~involved, involved, (a, b)))
    return out


def match_folds(rows: pd.DataFrame, k: int = IDENTITY_FOLDS, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """k folds of whole matches: (train mask, test mask, fold number)."""
    matches = rows["match_id"].unique()
    rng = np.random.default_rng(seed)
    fold_of = dict(zip(rng.permutation(matches), np.arange(len(matches)) % k))
    fold = rows["match_id"].map(fold_of).to_numpy()
    return [(fold != f, fold == f, f) for f in range(k)]


def _logistic(X: np.ndarray, y: np.ndarray) -> LogisticRegression:
    return LogisticRegression(C=1.0, fit_intercept=False, max_iter=2000).fit(X, y)


def _elo_predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    from referee.models.ratings.bradley_terry import fit_bt

    agents = sorted(set(train["agent_i"]) | set(train["agent_j"]) | set(test["agent_i"]) | set(test["agent_j"]))
    index = {a: k for k, a in enumerate(agents)}
    W = np.zeros((len(agents), len(agents)))
    win = np.where(train["y"] == 1, train["agent_i"], train["agent_j"]).tolist()
    lose = np.where(train["y"] == 1, train["agent_j"], train["agent_i"]).tolist()
    np.add.at(W, ([index[a] for a in win], [index[a] for a in lose]), 1.0)
    theta = np.asarray(fit_bt(W, agents, prior_sd=1.0).theta, float)
    return 1.0 / (1.0 + np.exp(-(theta[test["agent_i"].map(index)] - theta[test["agent_j"].map(index)])))


@dataclass
class Determinants(FitResult):
    """Cross-validated AUCs per model, feature weights with bootstrap intervals, out-of-fold predictions (the
    `referee.models.fit.FitResult` contract: `table()` is the AUC table; `diagnostics` counts the fits and
    says `converged` False when any logistic fit warned that it did not converge)."""

    auc: pd.DataFrame = field(default_factory=pd.DataFrame)  # model, folds, auc, low, high, fold_kind, auc_all_data
    weights: pd.DataFrame = field(default_factory=pd.DataFrame)  # model, feature, weight, low, high
    predictions: pd.DataFrame = field(default_factory=pd.DataFrame)  # model, y, p (out of fold, averaged)
    fitted: pd.DataFrame = field(default_factory=pd.DataFrame)  # model, y, p (each model trained on all pairs)
    model: str = "determinants"

    def __post_init__(self):
        unconverged = [n for n in self.notes if n.startswith("ConvergenceWarning")]
        self.diagnostics = {"converged": not unconverged, "models": int(self.auc["model"].nunique())
                            if "model" in self.auc else 0, **self.diagnostics}

    def table(self) -> pd.DataFrame:
        """The cross-validated AUC per model (model, folds, auc, low, high, fold_kind) and each model's AUC when
        trained and scored on every pair (auc_all_data)."""
        return self.auc

    def roc(self, model: str, held_out: bool = True) -> pd.DataFrame:
        """fpr, tpr of one model's out-of-fold predictions, or (`held_out` False) of the model trained on every
        pair and scored on the same pairs (the COMPACT paper's Figure 6 draws these)."""
        found = self.predictions if held_out else self.fitted
        data = found[found["model"] == model]
        fpr, tpr, _ = roc_curve(data["y"], data["p"])
        return pd.DataFrame({"fpr": fpr, "tpr": tpr})


def determinants(rows: pd.DataFrame, metrics: list[str], n_boot: int = 100, seed: int = 0) -> Determinants:
    """Fit and cross-validate every model of the module docstring on `pairs(...)` rows.

    n_boot : bootstrap replicates over matches for the weights of 'metrics' and 'metrics per game'.
    Raises ValueError when fewer than three agents or only one outcome class remain.
    """
    agents = sorted(set(rows["agent_i"]) | set(rows["agent_j"]))
    if len(agents) < 3 or rows["y"].nunique() < 2:
        raise ValueError(f"determinants need pairs of at least 3 agents with both outcomes; got {len(agents)} "
                         f"agents and {rows['y'].nunique()} outcome(s) in {len(rows)} pairs")
    games = sorted(rows["game"].dropna().unique())
    y = rows["y"].to_numpy()
    auc_rows, pred_rows, fit_rows, notes = [], [], [], []
    for model, spec in MODELS.items():
        whole = spec is None or spec[1]  # the rating, or a model with identities: whole matches held out
        folds = match_folds(rows, seed=seed) if whole else agent_folds(rows)
        kind = "whole matches" if whole else "two agents left out"
        aucs, p_sum, p_n = [], np.zeros(len(rows)), np.zeros(len(rows))
        X = None if spec is None else design(rows, metrics, *spec, games, agents)[0]
        for train, test, _ in folds:
            if train.sum() < 10 or len(np.unique(y[train])) < 2 or len(np.unique(y[test])) < 2:
                continue
            if X is None:
                p = _elo_predict(rows[train], rows[test])
            else:
                p = _logistic(X[train], y[train]).predict_proba(X[test])[:, 1]
            aucs.append(roc_auc_score(y[test], p))
            p_sum[test] += p
            p_n[test] += 1
        whole_p = _elo_predict(rows, rows) if X is None else _logistic(X, y).predict_proba(X)[:, 1]
        fit_rows.append(pd.DataFrame({"model": model, "y": y, "p": whole_p}))
        aucs = np.asarray(aucs)
        if len(aucs) == 0:
            notes.append(f"{model}: no fold had both outcomes on both sides; no AUC")
            continue
        se = aucs.std(ddof=1) / np.sqrt(len(aucs)) if len(aucs) > 1 else np.nan
        auc_rows.append({"model": model, "fold_kind": kind, "folds": len(aucs), "auc": float(aucs.mean()),
                         # an AUC lies in [0, 1]: the normal interval is cut at its bounds
                         "low": float(max(aucs.mean() - 1.96 * se, 0.0)), "high": float(min(aucs.mean() + 1.96 * se, 1.0)),
                         "auc_all_data": float(roc_auc_score(y, whole_p))})
        seen = p_n > 0
        pred_rows.append(pd.DataFrame({"model": model, "y": y[seen], "p": p_sum[seen] / p_n[seen]}))
    weights = _weights(rows, metrics, games, agents, n_boot, seed)
    return Determinants(auc=pd.DataFrame(auc_rows), weights=weights,
                        predictions=pd.concat(pred_rows, ignore_index=True) if pred_rows else pd.DataFrame(),
                        fitted=pd.concat(fit_rows, ignore_index=True) if fit_rows else pd.DataFrame(), notes=notes)


def _weights(rows, metrics, games, agents, n_boot, seed) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    matches = rows["match_id"].unique()
    by_match = {m: np.flatnonzero(rows["match_id"].to_numpy() == m) for m in matches}
    out = []
    for model, per_game in (("metrics", False), ("metrics per game", True)):
        X, names = design(rows, metrics, per_game, False, games, agents)
        y = rows["y"].to_numpy()
        point = _logistic(X, y).coef_[0]
        boots = []
        for _ in range(n_boot):
            idx = np.concatenate([by_match[m] for m in rng.choice(matches, size=len(matches))])
            if len(np.unique(y[idx])) == 2:
                boots.append(_logistic(X[idx], y[idx]).coef_[0])
        boots = np.asarray(boots) if boots else np.full((1, len(names)), np.nan)
        low, high = np.percentile(boots, [2.5, 97.5], axis=0)
        out.append(pd.DataFrame({"model": model, "feature": names, "weight": point, "low": low, "high": high}))
    return pd.concat(out, ignore_index=True)
