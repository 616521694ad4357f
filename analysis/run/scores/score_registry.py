"""The score models' registry (`referee fit MODEL`), light (no numpy, no PyMC): what the command line offers and
validates before any heavy import. Each model names its fit, a job-level function here in run/ (data in, the fit,
its tables and lines out), and its figure in `referee.present.job_figures`; its sampling defaults are the
models' own constants (`referee.models.registry`)."""

from __future__ import annotations

from dataclasses import dataclass

from referee.models.registry import (DRAWS, LAYOUT_DRAWS, LAYOUT_TUNE, OUTCOME_DRAWS, OUTCOME_TUNE, TAG_DRAWS,
                                     TAG_TUNE, TUNE, implementation)


@dataclass(frozen=True)
class ScoreModel:
    """A Bayesian model of scores (`referee fit MODEL`): its description, the likelihoods it offers, whether it
    is the Measurement Layout (capabilities and demands: `referee plan --scenarios` serves its capabilities),
    the data it reads (`data`: 'scores', the normalised scores of scenario-based matches, or 'outcomes', the
    per-sample pass/fail or graded outcomes of any runner), whether it needs the scenarios' catalogue tags
    (`needs_tags`) or a baseline agent (`needs_baseline`), checked before any compile or draw, and `fit`, its
    implementation ('module:function'; a 'scores' model is called as (scores, scenarios, tags, seed,
    likelihood, baseline, scenario_intercepts, agent_intercepts, structure, **sampling), an 'outcomes' model as
    (outcomes, stated, seed, effects, interaction, compare, **sampling); both return (fit, tables, lines));
    `figure`, the function drawing its figure from the job's Result (`referee.present.job_figures`); `draws` and
    `tune`, its sampling defaults per chain (what runs when --draws and --tune are not given; the fit functions
    default to the same constants, and a test holds them together)."""

    name: str
    description: str
    fit: str
    figure: str
    likelihoods: tuple[str, ...] = ("ordered", "squeeze")
    layout: bool = False
    data: str = "scores"
    needs_tags: bool = False
    needs_baseline: bool = False
    draws: int = 0  # its default draws and tuning steps per chain (the fit function's own defaults)
    tune: int = 0

    def run(self, *args, **kwargs):
        return implementation(self.fit)(*args, **kwargs)


SCORE_MODELS: dict[str, ScoreModel] = {m.name: m for m in (
    ScoreModel("tag-effects", "hierarchical beta regression of scores on scenario tags (contest figure 6)",
               "referee.run.scores.score_models:tag_effects", "referee.present.job_figures:tag_effects", needs_tags=True,
               draws=TAG_DRAWS, tune=TAG_TUNE),
    ScoreModel("baseline-contrast", "each agent's log-odds difference from a baseline agent (contest figure 3)",
               "referee.run.scores.score_models:baseline_contrast", "referee.present.job_figures:baseline_contrast",
               needs_baseline=True, draws=DRAWS, tune=TUNE),
    ScoreModel("measurement-layout", "capabilities against scenario demands (contest figure 7)",
               "referee.run.scores.score_models:measurement_layout", "referee.present.job_figures:capability_profiles",
               likelihoods=("ordered",), layout=True, needs_tags=True, draws=LAYOUT_DRAWS,
               tune=LAYOUT_TUNE),
    ScoreModel("pass-fail", "per-sample pass/fail outcomes: logit with crossed agent, task and item effects",
               "referee.run.scores.outcome_models:pass_fail", "referee.present.job_figures:outcome_effects",
               likelihoods=(), data="outcomes", draws=OUTCOME_DRAWS, tune=OUTCOME_TUNE),
    ScoreModel("graded", "per-sample graded outcomes (C/P/I, a judge's grades): ordered logistic, crossed effects",
               "referee.run.scores.outcome_models:graded", "referee.present.job_figures:outcome_effects",
               likelihoods=(), data="outcomes", draws=OUTCOME_DRAWS, tune=OUTCOME_TUNE),
)}
