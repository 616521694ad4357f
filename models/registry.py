"""The model families' names, traits and defaults, in one light module (no numpy, no PyMC): what the command
line offers and validates before any heavy import, and what the fitting modules read their defaults from.

- `RATING_METHODS`: every rating method with its traits (`Method`): fed matches in time order (online),
  rateable from pooled win counts alone (streamable), with a free additive constant an anchor can fix
  (anchorable), fitted once per game when rated by game (separate_fits), on the Elo scale (elo_scale), an MCMC
  posterior rather than a point fit a bootstrap can resample (sampled), its own interval (interval), a
  one-sided agent's profile-likelihood bound (profile).
- `VOTING_METHODS`, `GAME_METHODS`, `MIN_BALLOTS`; `PLAN_RULES`; `CALIBRATION_FAMILIES`; the sampling defaults
  (the score models, whose fits are jobs, are registered beside them: `referee.run.scores.score_registry`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from importlib import import_module


def suggest(word: str, options) -> str:
    """' (did you mean 'X'?)' for the closest of `options` to a mistyped `word` (difflib, ratio >= 0.75), else ''."""
    close = difflib.get_close_matches(word, [str(o) for o in options], n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""


def implementation(where: str):
    """The function at `where` ('module:function'), imported now: a registry entry names its implementation so
    that the registry stays light (the command line lists it before any heavy import)."""
    module, _, name = where.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Method:
    """A rating method's traits (see the module docstring) and a one-line description."""

    name: str
    description: str
    online: bool = False
    streamable: bool = False
    anchorable: bool = False
    separate_fits: bool = False
    elo_scale: bool = True
    sampled: bool = False  # an MCMC posterior (no bootstrap)
    davidson_variant: str | None = None  # the method that models this method's ties by Davidson's parameter
    fit: str = ""  # its implementation ('module:function', `referee.models.ratings.rating_fits`): a scalar fit of coded
    # comparisons when separate_fits, else a joint fit giving a Point (a sampled method's is its posterior's)
    counts: str | None = None  # its fit from pooled win counts (streamable methods)
    robust: bool = False  # its scalar fit takes cluster-robust Wald intervals and the resampling bootstrap
    covariates: bool = False  # the contextual model (covariates with cluster-robust intervals) extends it
    fold: str | None = None  # its fit in one cross-validation fold (`rating_fits`, for `referee.run.ratings.ratings_cv`)
    dimensions: bool = False  # it has a number of dimensions (cross-validated at each)
    board: bool = False  # the board's own method (`referee.run.ratings.board`): its ratings, sets and pairs are the board's
    interval: str | None = None  # what its own interval is, as its tables name it (None: it has none; a bootstrap's)
    profile: bool = False  # its likelihood is Bradley-Terry's on the Elo scale: an agent that never won (or never
    # lost) has the profile-likelihood bound of that model as its interval's finite end


F = "referee.models.ratings.rating_fits:"
WALD = "Wald 95 %"  # a maximum-likelihood fit's interval
SKILL = "mu -/+ 1.96 sigma"  # a skill package's interval
RATING_METHODS: dict[str, Method] = {m.name: m for m in (
    Method("elo", "the 2024 Concordia contest's Elo (strict wins, Newman iteration)", streamable=True,
           anchorable=True, separate_fits=True, fit=F + "elo", counts=F + "elo_counts", profile=True),
    Method("bt", "Bradley-Terry by maximum likelihood, ties as half wins", streamable=True, anchorable=True,
           separate_fits=True, davidson_variant="bt-davidson", fit=F + "bt", counts=F + "bt_counts", robust=True,
           covariates=True, fold=F + "bt_fold", board=True, interval=WALD, profile=True),
    Method("bt-davidson", "Bradley-Terry with Davidson's tie parameter", anchorable=True, separate_fits=True,
           davidson_variant="bt-davidson", fit=F + "bt_davidson", interval=WALD, profile=True),
    Method("bt-per-game", "global ratings plus shrunk per-game deviations", fit=F + "bt_per_game",
           fold=F + "per_game_fold"),
    Method("bt-md", "multidimensional Bradley-Terry", fit=F + "bt_md", fold=F + "md_fold",
           dimensions=True),
    Method("online-elo", "sequential Elo in time order", online=True, anchorable=True, separate_fits=True,
           fit=F + "online_elo"),
    Method("bayes-bt", "the PyMC Bradley-Terry model", sampled=True, fit=F + "bayes_bt",
           interval="94 % HDI"),
    Method("plackett-luce", "Plackett-Luce on each match's full ranking", anchorable=True, separate_fits=True,
           fit=F + "plackett_luce", interval=WALD, profile=True),
    Method("trueskill", "the trueskill package, matches in time order", online=True, separate_fits=True,
           elo_scale=False, fit=F + "trueskill", interval=SKILL),
    Method("openskill", "the openskill package, matches in time order", online=True, separate_fits=True,
           elo_scale=False, fit=F + "openskill", interval=SKILL),
)}


def methods_with(**traits: bool) -> tuple[str, ...]:
    """The rating methods whose traits equal every one given, e.g. `methods_with(online=True)`."""
    return tuple(n for n, m in RATING_METHODS.items() if all(getattr(m, k) == v for k, v in traits.items()))


VOTING_METHODS = ("copeland", "ranked-pairs", "maximal-lotteries", "iml", "ewa")
# a board of more than BOARD_EVERY_COLUMN agents computes the voting methods' columns and the game-theoretic masses
# on request only (`leaderboard --every-column`): at 200 agents they cost more than the board itself (the ballots of
# every match, one LP per level for IML and EwA), and at 1,000 agents IML, EwA and ranked pairs take minutes
BOARD_EVERY_COLUMN = 100
DIRECTIONS = ("higher", "lower")  # which way an outcome is better (measures.direction, --outcome NAME:WAY, formulas)


@dataclass(frozen=True)
class GameMethod:
    """A game-theoretic ranking on the meta-game (`referee rank --method NAME`): its description, its solver of
    the agents' game and of the agent-vs-scenario game ('module:function', `referee.models.game_solvers`), and
    whether it reports its ranking's sweep over alpha."""

    name: str
    description: str
    solve: str
    task_solve: str
    sweeps: bool = False


GAME_METHODS: dict[str, GameMethod] = {g.name: g for g in (
    GameMethod("nash", "Nash averaging: skill against the maximum-entropy equilibrium of the log-odds meta-game",
               "referee.models.game_solvers:nash_solve", "referee.models.game_solvers:nash_task_solve"),
    GameMethod("alpha-rank", "alpha-Rank's stationary mass", "referee.models.game_solvers:alpha_rank_solve",
               "referee.models.game_solvers:alpha_rank_task_solve", sweeps=True),
)}
MIN_BALLOTS = 10  # an agent on fewer ballots (games) is listed apart, not ranked


# sampling defaults: 4 chains (R-hat is unreliable with 2), 500 tuning steps (nutpie adapts its mass matrix
# in a few hundred) and 1,250 draws per chain; at contest scale every shipped model meets the standard with
# them or with its own stated defaults (tag effects, the layout, the audit's regression; see
# benchmarks/beta_regression.py and tests/test_convergence.py)
CHAINS, DRAWS, TUNE = 4, 1250, 500
# the Measurement Layout costs more per draw than the beta regressions. On the bundled 8-agent sample, 500 tuning
# steps and 1,000 draws left figure 7's folds (three quarters of the cells) at R-hat 1.016-1.029, and 1,000 and
# 1,500 the fit on all cells at R-hat 1.013; 1,000 tuning steps and 2,000 draws converged them. At contest scale
# (issue 53's sweep) those settings with independent per-agent deviations and a diagonal mass matrix gave R-hat
# 1.0065-1.0127 over seeds 0-5 (above 1.01 on two: the persuasion demand's mean, tail ESS 210), and longer chains
# (1,500/3,000) were no cure (seeds 0 and 1: 1.0127, 1.0132). The cure is the geometry: zero-sum deviations per
# demand (`measurement_layout` module docstring) took ESS to 560-800 but left 2 of 6 seeds above 1.01 (the demands'
# levels trade off where scenarios combine them); adding nutpie's low-rank mass matrix (LAYOUT_LOW_RANK) gave
# R-hat 1.002-1.003 and min ESS near 2,500 on seeds 0 and 5, and over seeds 0-19 (benchmarks/beta_regression.py
# --sweep 20) 0 divergences and R-hat <= 1.01 on 19 of 20 (median 1.003; seed 17: 1.017, the persuasion level again),
# at a median 151 s a fit against 60 s. 1,000 draws after 800 tuning steps was not enough (seed 3: R-hat 1.008).
LAYOUT_TUNE, LAYOUT_DRAWS = 1000, 2000
# the tag-effects fit's tuning and draws (why: models/scores/beta_regression.py, above its target acceptance) and
# the outcome models' (why: models/scores/outcome_glm.py); `referee fit MODEL --help` prints each model's own
TAG_TUNE, TAG_DRAWS = 500, 2500
OUTCOME_DRAWS, OUTCOME_TUNE = 2000, 1000
AUDIT_DRAWS = 5000  # the audit's Bayesian regression of the outcome on the score (referee.models.validity.checks)


OUTCOME_EFFECTS = ("agent", "agent+task", "crossed")  # the outcome models' ladder (`referee fit --effects`)
# the match columns that `referee fit --task` and `--item` may name (default: the game is the task, the scenario
# the item, as Inspect's task and sample are stored)
OUTCOME_ROLES = ("game", "scenario", "variant", "phase", "repetition")
PLAN_MODELS = ("tag-effects", "measurement-layout")  # the models `plan --scenarios` can serve


@dataclass(frozen=True)
class PlanRule:
    """A rule `referee plan --rule NAME` chooses the next pairs by: its description, its selector
    ('module:function', `referee.models.ratings.design`), the scale its gain is reported on ('elo2': a variance
    in Elo points squared; 'unit': as the rule gives it, a log-determinant or a sampling weight), and whether,
    once the target is met, the rest of the budget goes to every rating's precision."""

    name: str
    description: str
    select: str
    gain_scale: str = "elo2"
    spends_rest: bool = False


_DESIGN = "referee.models.ratings.design:"
PLAN_RULES: dict[str, PlanRule] = {r.name: r for r in (
    PlanRule("c-optimal", "the largest variance reduction of the target's contrasts", _DESIGN + "c_optimal_pairs",
             spends_rest=True),
    PlanRule("a-optimal", "the largest reduction of every rating's variance", _DESIGN + "a_optimal_pairs"),
    PlanRule("d-optimal", "the largest log-determinant increase of the information", _DESIGN + "d_optimal_pairs",
             gain_scale="unit"),
    PlanRule("arena", "Chatbot Arena's sampling weights", _DESIGN + "arena_pairs", gain_scale="unit"),
    PlanRule("active", "agents whose Borda intervals overlap a neighbour's", _DESIGN + "active_pairs"),
    PlanRule("uniform", "pairs drawn uniformly", _DESIGN + "uniform_pairs"),
)}
CALIBRATION_FAMILIES = ("bayes-bt", "tag-effects", "baseline-contrast", "measurement-layout", "audit-regression",
                        "pass-fail")
# and a target acceptance of 0.9 (nutpie's default 0.8): on a 6-agent design (tests/test_measurement_layout.py)
# 0.8 left one divergent transition in 2 of 10 seeds
LAYOUT_TARGET_ACCEPT = 0.9
LAYOUT_LOW_RANK = True  # nutpie's low-rank modified mass matrix (PyMC's NUTS has none)
DEFAULT_TAU_ELO = 100.0  # bt-per-game: prior sd of the per-game deviations, Elo points
