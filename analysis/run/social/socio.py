"""The COMPACT paper's second half on a store: socio-cognitive metrics, their consistency, what predicts
winning, and the agreement of LLM judges (`referee.prepare.socio`, `referee.models.social`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from referee.prepare.socio import player_metrics, socio_metrics
from referee.models.fit import FitResult, collect_notes
from referee.models.social.agreement import judge_agreement, paired_ratings
from referee.models.social.consistency import consistency, metric_vectors, similarity
from referee.models.social.determinants import determinants, pairs


@dataclass
class SocioResult(FitResult):
    """metrics (long, `socio_metrics`), players (one row per match and player, with category, framing,
    communication), consistency (summary correlations), similarity (figure 4's matrix), determinants per
    condition ('all games', 'with communication', 'without communication'), agreement (judge pairs, or None)
    and notes. The `referee.models.fit.FitResult` contract: `table()` is the consistency summary;
    `converged` holds when every condition's determinants converged."""

    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    players: pd.DataFrame = field(default_factory=pd.DataFrame)
    consistency: pd.DataFrame = field(default_factory=pd.DataFrame)
    similarity: pd.DataFrame = field(default_factory=pd.DataFrame)
    determinants: dict = field(default_factory=dict)
    agreement: dict | None = None
    model: str = "socio"

    def __post_init__(self):
        self.diagnostics = {"converged": all(d.converged for d in self.determinants.values()),
                            "conditions": len(self.determinants), **self.diagnostics}

    def table(self) -> pd.DataFrame:
        """The consistency summary (comparison, correlation with its interval)."""
        return self.consistency

    def auc_table(self) -> pd.DataFrame:
        """condition, model, fold_kind, folds, auc, low, high."""
        return pd.concat([d.auc.assign(condition=c) for c, d in self.determinants.items()], ignore_index=True)[
            ["condition", "model", "fold_kind", "folds", "auc", "low", "high"]]


def socio_analysis(matches: pd.DataFrame, results: pd.DataFrame, events: pd.DataFrame, measures: pd.DataFrame,
                   n_boot: int = 200, seed: int = 0, judges: tuple[str, str] | None = None) -> SocioResult:
    """Everything of the module docstring from canonical tables (typically one runner's, e.g. compact).

    n_boot : bootstrap replicates over matches (consistency intervals; half as many for weights).
    judges : two raters whose paired judge ratings to compare (default: the first two raters in the
    measures, when there are two or more). Raises ValueError when no match has a prediction, action or judge
    rating to compute a metric from.
    """
    notes: list[str] = []
    with collect_notes(notes):
        metrics = socio_metrics(matches, results, events, measures)
        if metrics.empty:
            raise ValueError("no socio-cognitive metric can be computed: the selected matches have no predictions, "
                             "actions or judge ratings (these come from communicate-predict-act traces)")
        players = player_metrics(metrics)
        size = results.groupby("match_id")["player"].nunique().rename("size")
        info = matches.set_index("match_id")[["variant", "communication"]].join(size)
        players = players.join(info, on="match_id")
        players["category"] = players["game"].astype(str) + " x" + players["size"].astype(str)
        players = players.rename(columns={"variant": "framing"}).drop(columns="size")
        metric_names = [c for c in players.columns if c not in {"match_id", "player", "agent", "game", "category",
                                                                "framing", "communication"}]
        vectors = players.drop(columns="communication")
        summary = consistency(vectors, n_boot=n_boot, seed=seed)
        sim = similarity(metric_vectors(vectors, ["agent", "category"]))
        rows = pairs(players, results, metric_names)
        rows = rows.merge(matches[["match_id", "communication"]], on="match_id", how="left")
        conditions = {"all games": rows}
        if rows["communication"].nunique() > 1:
            conditions["with communication"] = rows[rows["communication"] == True]  # noqa: E712
            conditions["without communication"] = rows[rows["communication"] == False]  # noqa: E712
        found = {}
        for name, subset in conditions.items():
            try:
                found[name] = determinants(subset.reset_index(drop=True), metric_names, n_boot=n_boot // 2, seed=seed)
            except ValueError as exc:
                notes.append(f"determinants, {name}: {exc}")
        agreement = None
        raters = sorted(measures.loc[measures["kind"] == "judge", "rater"].dropna().unique())
        if judges or len(raters) >= 2:
            first, second = judges or (raters[0], raters[1])
            paired = paired_ratings(measures, first, second)
            if len(paired):
                agreement = dict(judge_agreement(paired[first], paired[second]), judges=[first, second])
    return SocioResult(metrics=metrics, players=players, consistency=summary, similarity=sim, determinants=found,
                       agreement=agreement, notes=notes)
