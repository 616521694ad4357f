"""Each job's figures (`referee.run.job_table.Job.figures` names the function here): from the job's `Result`
(its tables, fields, `value` and `drawn`), name -> a function drawing that figure (a matplotlib Figure, never
shown). Computation stays in the job; this module only draws."""

from __future__ import annotations

from referee.result import (AuditJobResult, CalibrateJobResult, ContestJobResult, FitJobResult, LeaderboardJobResult,
                            PowerJobResult, PredictorsJobResult, RatingsJobResult, Result, SocioJobResult)
from referee.models.registry import implementation
from referee.present.figures import (
    plot_bootstrap_violins,
    plot_capability_profiles,
    plot_correlation_heatmap,
    plot_intervals,
    plot_means,
    plot_predictor_comparison,
    plot_ratings,
    plot_win_matrices,
)
from referee.present.plan_figures import plot_contest_stages, plot_power_curve, plot_rank_histograms


def ratings(result: RatingsJobResult) -> dict:
    """The ratings with their intervals, and the bootstrap's violins when there is a bootstrap (not by game)."""
    table = result.table()
    if "game" in table.columns or "slice" in table.columns:
        return {}
    figures = {"intervals": lambda: plot_ratings(table)}
    boot = getattr(result.value, "bootstrap", None)
    if boot is not None and result.by is None:
        figures = {"bootstrap": lambda: plot_bootstrap_violins(boot.long()), **figures}
    return figures


def leaderboard(result: LeaderboardJobResult) -> dict:
    """The Bradley-Terry ratings with their intervals, established agents first."""
    return {"intervals": lambda: plot_ratings(result.table(), ranked_first=True)}


def ratings_cv(result: Result) -> dict:
    """Each fitted win-probability matrix beside the observed one."""
    return {"win_probability": lambda: plot_win_matrices(result.drawn["win_matrices"])}


def contest(result: ContestJobResult) -> dict:
    """The agents' Elo through the contest's stages."""
    return {"stages": lambda: plot_contest_stages(result.value.table(), result.value.finalists)}


def plan(result: Result) -> dict:
    """The power curve (with --power)."""
    if not isinstance(result, PowerJobResult) or "power" not in result.tables:
        return {}
    return {"power": lambda: plot_power_curve(result.table("power"), result.delta)}


def fit(result: FitJobResult) -> dict:
    """The model's figure, named after the model, drawn by its registered function (`ScoreModel.figure`, which the
    fit job hands over as `drawn['figure']`); an outcome model's task effects beside it (`{model}_tasks`) when it
    has them."""
    model = result.model
    figures = {model: lambda: implementation(result.drawn["figure"])(result)}
    tasks = result.tables.get("tasks")
    if tasks is not None and len(tasks) and "p" in tasks.columns:
        figures[f"{model}_tasks"] = lambda: _forest(tasks, "task", result)
    return figures


def outcome_effects(result: FitJobResult):
    """Forest plot of the agents' effects on the probability scale (94 % HDI), at the average task and item."""
    return _forest(result.table(), "agent", result)


def _forest(table, label: str, result: FitJobResult):
    """Posterior means and 94 % HDIs of `table`'s p (an agent's or task's probability of a pass, or expected
    grade), highest first; an effect the data cannot identify is labelled '(prior only)'."""
    shown = table.assign(mean=table["p"], hdi_low=table["p_low"], hdi_high=table["p_high"])
    said = {"yes": ""}  # 'no, prior only': the prior alone; complete separation: the data bound one side only
    shown[label] = [n + said.get(i, " (prior only)" if i.startswith("no") else " (one side from the prior)")
                    for n, i in zip(shown[label], shown["identified"])]
    what = result.value.scale
    return plot_intervals(shown.sort_values("mean", ascending=False), label,
                          f"{label.capitalize()} effects, {what} (mean, 94% HDI)", what, reference=None)


def tag_effects(result: FitJobResult):
    """The tag coefficients with their 94 % HDIs."""
    return plot_intervals(result.table(), "tag", "Tag coefficients (posterior mean, 94% HDI)",
                          "log-odds effect on score")


def baseline_contrast(result: FitJobResult):
    """Each agent's log-odds difference from the baseline with its 95 % HDI."""
    return plot_intervals(result.table(), "agent", f"Log-odds difference from {result.baseline} (mean, 95% "
                          "HDI)", "log-odds difference")


def capability_profiles(result: FitJobResult):
    """The Measurement Layout's capability profiles, with each agent's base chance and sample size."""
    return plot_capability_profiles(result.table(), {n: result.value.parameters(n)
                                                     for n in ("base_chance", "sample_size")})


def predictors(result: PredictorsJobResult) -> dict:
    """The per-agent comparison of predictors, and the capability profiles of the agents the layout predicts."""
    comp, included = result.value, result.included
    figures = {"comparison": lambda: plot_predictor_comparison(comp.per_agent)}
    if included:
        caps = comp.layout.capabilities()
        extras = {n: comp.layout.parameters(n).loc[lambda t: t["agent"].isin(included)]
                  for n in ("base_chance", "sample_size")}
        figures["profiles"] = lambda: plot_capability_profiles(caps[caps["agent"].isin(included)], extras)
    return figures


def describe(result: Result) -> dict:
    """Means by agent and by scenario (±1 SE), and the correlation heatmap."""
    return {"mean_by_agent": lambda: plot_means(result.table("mean_by_agent"), "agent"),
            "mean_by_scenario": lambda: plot_means(result.table("mean_by_scenario"), "scenario"),
            "correlations": lambda: plot_correlation_heatmap(result.table("correlations").set_index("feature"),
                                                             "Score, tags, substrates and resident status")}


def calibrate(result: CalibrateJobResult) -> dict:
    """The rank histograms per parameter group, with the 99 % band of a uniform histogram."""
    return {"rank_histograms": lambda: plot_rank_histograms(
        result.table("ranks"), result.table("summary"), f"{result.model}: rank histograms over "
        f"{result.sims} simulations (grey: 99% band of a uniform histogram)")}


def socio(result: SocioJobResult) -> dict:
    """COMPACT figures 4-7 (similarity, consistency, ROC curves, weights), drawn together on first use."""

    drawn: dict = {}

    def figure(name):
        if not drawn:
            drawn.update({n: f for n, _, f in socio_figures(result.value)})
        return drawn[name]

    names = ["similarity", "consistency"] + (["roc", "weights"] if "all games" in result.value.determinants else [])
    return {n: (lambda n=n: figure(n)) for n in names}


def audit(result: AuditJobResult) -> dict:
    """The score against the first outcome, and the score's decomposition (with a formula)."""
    from referee.present.audit_report import audit_figures

    return audit_figures(result.value, result.table("players"), result.drawn["outcome"])


def socio_figures(result) -> list[tuple[str, str, object]]:
    """(file name, caption, Figure) of COMPACT figures 4-7 for an `referee.run.social.socio.SocioResult`."""
    from referee.present.figures import plot_consistency, plot_intervals, plot_roc_curves, plot_similarity_blocks

    out = [("similarity", "Figure 4: similarity of (agent, category) metric vectors, grouped by agent.",
            plot_similarity_blocks(result.similarity)),
           ("consistency", "Figure 5: intra- against inter-agent correlations.", plot_consistency(result.consistency))]
    if "all games" in result.determinants:
        found = result.determinants["all games"]
        curves = {m: found.roc(m) for m in found.auc["model"]}
        out.append(("roc", "Figure 6: out-of-fold ROC curves.",
                    plot_roc_curves(curves, dict(zip(found.auc["model"], found.auc["auc"])))))
        weights = found.weights[found.weights["model"] == "metrics"].rename(
            columns={"weight": "mean", "low": "hdi_low", "high": "hdi_high"})
        out.append(("weights", "Figure 7: fixed feature weights (95% bootstrap interval over matches).",
                    plot_intervals(weights, "feature", "What predicts winning", "weight per sd of metric difference")))
    return out
