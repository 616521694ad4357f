"""The table of jobs: every analysis referee runs, defined once, with its typed options. The command line
(`referee.cli`) builds each command's parser from it and writes its result; the notebook API (`referee.<job>`)
is generated from it; the report and `referee paper` compose the same job functions. Light (no pandas): the
implementations are imported when a job runs.

A job is one function in `referee.run` (`function`, 'module:function') called as `function(data, **options)`
(or `function(**options)` for a job that reads no store) and returning a `referee.result.Result`. `data`
says what it reads: 'store' a store opened read-only, 'writable' a store it writes to (an LLM judge's cache),
'optional' a store it may record in, 'read-optional' a store it reads when one is given, 'none' no store. `folder`: the command line writes the result to a
results folder (`--out`, default `out`); otherwise the job writes its own files (its `out` option).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from referee.models.registry import (
    BOARD_EVERY_COLUMN,
    CALIBRATION_FAMILIES,
    DEFAULT_TAU_ELO,
    DIRECTIONS,
    GAME_METHODS,
    MIN_BALLOTS,
    PLAN_MODELS,
    PLAN_RULES,
    RATING_METHODS,
    OUTCOME_EFFECTS,
    OUTCOME_ROLES,
    VOTING_METHODS,
    implementation,
    methods_with,
    suggest,
)
from referee.run.scores.score_registry import SCORE_MODELS
from referee.names import DEFAULT_STORE, MEASURE_KINDS
from referee.run.options import (
    DATA,
    PHASE,
    RUNNER,
    SAMPLING_OPTIONS,
    SEED,
    SWEEP_OPTIONS,
    MAX_AGENTS,
    MAX_BUDGET,
    MAX_CALIBRATIONS,
    MAX_INTENSITY,
    MAX_K,
    MAX_SIMULATIONS,
    Option,
    agent_count,
    agent_list,
    budget,
    calibrations,
    elo_k,
    intensity,
    simulations,
    count,
    dims_range,
    folds,
    name_text,
    path,
    toml_path,
    positive_float,
    price,
    positive_int,
    prior_sd,
    probability,
    replicates,
    some_replicates,
    sampling_options,
)
from referee.run.simulators import SIMULATORS
from referee.run.work import Work, calibrate_work, plan_work


@dataclass(frozen=True)
class Job:
    """One job: its command name, its implementation, one help line, its options (in the order a notebook
    passes them positionally), what data it reads, and whether the command line writes its result to a results
    folder (`out`: that folder's default, None when --out is required). `variants`: for a job whose first
    option picks a variant with options of its own (`simulate RUNNER`), each variant's options with their own
    defaults (the command line offers each as a sub-command; the job's own options list them all, default None:
    the variant's default; `variants` lists every option of a variant). `figures`: the function drawing its
    result's figures ('module:function', `referee.present.job_figures`), kept apart from the computation."""

    name: str
    function: str
    help: str
    options: tuple[Option, ...]
    data: str = "store"
    folder: bool = True
    out: Path | None = None
    variants: dict[str, tuple[Option, ...]] = field(default_factory=dict)
    figures: str | None = None
    view: str | None = None  # 'module:function' giving the text table the command prints (default: the main table)
    variant_help: dict[str, str] = field(default_factory=dict)  # one line per variant, for `referee JOB --help`
    about: str | None = None  # the command's longer description and exit codes (its --help)
    # 'module:function' that starts the job and returns at once, its work running in other processes while the
    # caller goes on (an object whose finish() gives the job's result and cancel() lets it go); see `start`
    starter: str | None = None
    # its work estimate from its options (`referee.run.work`), refused above its limit before anything runs
    # unless `allow_long`; None: its options alone bound it
    work: Callable[[dict], Work | None] | None = None

    @property
    def api(self) -> str:
        """Its notebook name: `referee.<api>` (the command name with underscores)."""
        return self.name.replace("-", "_")

    def bind(self, given: dict) -> dict:
        """Every option's value: the given ones checked (`Option.check`), the others at their defaults.
        ValueError naming the job and the option for an unknown option or a bad value."""
        known = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ValueError(f"{self.name} has no option {unknown[0]!r}{suggest(unknown[0], known)}; options: "
                             f"{', '.join(known)}")
        missing = [o.name for o in self.options if o.required and given.get(o.name) is None]
        if missing:
            raise ValueError(f"{self.name}: {missing[0]} is required")
        bound = {name: o.check(given[name], self.name) if name in given else o.default for name, o in known.items()}
        found = self.work(bound) if self.work is not None and not bound.get("allow_long") else None
        refused = found.refusal(self.name) if found is not None else None
        if refused:
            raise ValueError(refused)
        return bound

    def compute(self, data=None, **options):
        """The job's computation on `data` with `options` (checked, defaults filled): its Result, no figures drawn
        (what the report and the papers compose, drawing their own)."""
        bound = self.bind(options)
        return recorded(bound, self._call(self.function, data, bound))

    def _call(self, function: str, data, bound: dict):
        found = implementation(function)
        return found(**bound) if self.data == "none" else found(data, **bound)

    def start(self, data=None, **options):
        """The job begun on `data` with `options` (checked, defaults filled, before anything runs): a job with a
        `starter` starts its work in other processes (its sweep's) and returns at once; another computes now.
        `finish()` on what it returns gives what `compute` gives, `cancel()` lets it go
        (`referee.run.executor.Then`)."""
        from referee.run.executor import Done, Then

        if self.starter is None:
            return Done(self.compute(data, **options))
        bound = self.bind(options)
        return Then(self._call(self.starter, data, bound), functools.partial(recorded, bound))

    def run(self, data=None, figures: bool = True, **options):
        """The job on `data` with `options` (checked, defaults filled): its Result with its figures (none drawn,
        and no plotting library imported, with `figures=False`)."""
        result = self.compute(data, **options)
        if self.figures is not None and figures:
            result.figures = implementation(self.figures)(result)
        return result


def recorded(options: dict, result):
    """`result`, a `Result` recording the `options` it ran with (anything else as it is)."""
    from referee.result import Result  # here, not at the top: the job table loads without pandas

    if isinstance(result, Result):
        result.options = dict(options)
    return result


def _method_help() -> str:
    return "rating model: " + "; ".join(f"{n} ({m.description})" for n, m in RATING_METHODS.items())


RESAMPLE = Option("resample", "match", "the cluster the bootstrap draws (default match: a match for every runner, "
                  "Concordia's (scenario, repetition), an arena judgment); scenario, seed (repetition) or prompt (an "
                  "arena's prompt or category, kept as the match's game)",
                  choices=("match", "scenario", "prompt", "seed"))
PER_GAME_SD = Option("per_game_prior_sd", DEFAULT_TAU_ELO, f"bt-per-game: prior sd of the per-game deviations in Elo "
                     f"points (default {DEFAULT_TAU_ELO:g}); 'none' for the COMPACT paper's plain maximum likelihood",
                     type=prior_sd, metavar="ELO|none")
FINALISTS = Option("finalists", None, "use these finalists instead of the top by selection Elo", type=agent_list,
                   metavar="A,B,...")
ALLOW_LONG = Option("allow_long", False, "run a request whose work estimate is above the job's limit (refused "
                    "otherwise before it starts, with the estimate, the limit and the options that lower it)", flag=True)
SIM_OUT = Option("out", None, "folder: logs/ and truth.json are written there", type=path, required=True)
FIGURES = "referee.present.job_figures:"  # where each job's figures are drawn, apart from its computation
NO_MODELS = Option("no_models", False, "skip the Bayesian fits (a quick report)", flag=True)

FIT_MODEL = Option("model", None, "; ".join(f"{n}: {m.description}" for n, m in SCORE_MODELS.items()),
                   choices=tuple(SCORE_MODELS), positional="1", required=True)
_BETA = tuple(n for n, m in SCORE_MODELS.items() if m.likelihoods)
_OUTCOMES = tuple(n for n, m in SCORE_MODELS.items() if m.data == "outcomes")
# fit's own options, each with the models it applies to (`referee fit MODEL --help` lists that model's alone)
_FIT_OPTIONS: tuple[tuple[Option, tuple[str, ...]], ...] = (
    (Option("baseline", "rational_agent", "baseline agent for baseline-contrast"), ("baseline-contrast",)),
    (Option("likelihood", None, "ordered beta (default) or the Smithson-Verkuilen squeeze (beta regressions only)",
            choices=("ordered", "squeeze")), _BETA),
    (Option("scenario_intercepts", False, "tag-effects: add scenario intercepts", flag=True), ("tag-effects",)),
    (Option("no_agent_intercepts", False, "tag-effects: leave out agent intercepts", flag=True), ("tag-effects",)),
    (Option("structure", "identified", "tag-effects: 'identified' (default) gives agent slopes only to tags present "
            "in and absent from at least 3 scenarios; 'paper' gives every tag agent slopes, as the contest paper",
            choices=("identified", "paper")), ("tag-effects",)),
    (Option("effects", "crossed", "pass-fail, graded: the effects modelled, agent, agent+task or crossed (agent + "
            "task + item, the default)", choices=OUTCOME_EFFECTS), _OUTCOMES),
    (Option("interaction", False, "pass-fail, graded: add agent x task effects", flag=True), _OUTCOMES),
    (Option("compare", False, "pass-fail, graded: fit the ladder agent -> agent+task -> crossed and compare them by "
            "PSIS-LOO and WAIC per sample", flag=True), _OUTCOMES),
    (Option("measure", None, "pass-fail, graded: model this stored measure (e.g. clem's Success) instead of the "
            "score", type=name_text), _OUTCOMES),
    (Option("task", None, "pass-fail, graded: the match column that is the task (default game)",
            choices=OUTCOME_ROLES), _OUTCOMES),
    (Option("item", None, "pass-fail, graded: the match column that is the item (default scenario; where it is "
            "empty, the task)", choices=OUTCOME_ROLES), _OUTCOMES),
)
FIT_OPTIONS = tuple(option for option, _ in _FIT_OPTIONS)


def _fit_options(model) -> tuple[Option, ...]:
    """`referee fit MODEL`'s options: those of fit's own that apply to `model`, the data's, and the sampling options
    with the model's own defaults in their help (`ScoreModel.draws`, `.tune`: what runs when they are not given)."""
    own = tuple(option for option, models in _FIT_OPTIONS if model.name in models)
    return own + (RUNNER, PHASE, SEED) + sampling_options(f"{model.draws} for {model.name}",
                                                          f"{model.tune} for {model.name}")


JOBS: dict[str, Job] = {j.name: j for j in (
    Job("ingest", "referee.run.writing_jobs:ingest", "read runner logs into the store (every record accepted or set "
        "aside with its reason)", (
            Option("paths", None, "files or directories (read recursively)", positional="+", type=path, many=True,
                   required=True),
            Option("store", DEFAULT_STORE, f"DuckDB store file (default {DEFAULT_STORE})", type=path),
            Option("runner", None, "force a loader instead of detecting per file: a built-in runner's name "
                   "(`referee formats` lists them), or a runner mapping file describing another runner's JSON logs "
                   "(lines, or one document per file)", metavar="NAME|FILE.toml"),
            Option("catalogue", None, "scenario catalogue TOML (Concordia default: the 2024 contest's)", type=toml_path),
            Option("mapping", None, "table runner: TOML file with [columns] and [measures] tables", type=toml_path),
            Option("map", None, "table runner: take a canonical column from another column name (repeatable; "
                   "`referee formats table` lists the canonical columns)", many=True, metavar="CANONICAL=COLUMN"),
            Option("measure", None, f"table runner: read an extra column as a measure of KIND "
                   f"({', '.join(MEASURE_KINDS)}); repeatable; outcomes reach `referee audit`", many=True,
                   metavar="COLUMN=KIND"),
            Option("phase", None, "the contest phase of every match read (e.g. development, evaluation, "
                   "cross-play); default: the catalogue's phase of the scenario, if any"),
            Option("score", None, "sotopia: the SOTOPIA-EVAL dimension that is the score (default goal; e.g. "
                   "overall_score); the other dimensions stay measures"),
            Option("strict", False, "fail, writing nothing, if any record is quarantined", flag=True),
            Option("replace", False, "remove each file's earlier contribution (rows, quarantine, source; by path or "
                   "content) and ingest it again, in one transaction", flag=True),
            Option("per_file", False, "one line per file (runner, how it was detected, counts) besides the summary",
                   flag=True, cli="--verbose")),
        data="none", folder=False,
        about="Read match logs into the store in one transaction. Each file's runner is detected (the most likely "
              "first, the next when its first records do not fit) unless --runner is given. Records that cannot be "
              "used are quarantined with their reason; read = accepted + quarantined. `referee formats` lists the "
              "runners and what each reads. Exit codes: 0 records were accepted and every file was read; 1 nothing "
              "was accepted, a file could not be read as any runner's (unreadable, empty, or another format: "
              "quarantined whole), no data files were found, or --strict refused (the store is left as it was, and a "
              "store the command created is removed); 2 usage error; 3 internal error. Files already ingested are "
              "skipped and do not make the exit code non-zero."),
    Job("simulate", "referee.run.writing_jobs:simulate", "write simulated logs from known parameters (plus "
        "truth.json)", (
            Option("runner", None, "the runner whose logs to simulate", choices=tuple(SIMULATORS), positional="1",
                   required=True),
            SIM_OUT,
            Option("agents", None, f"number of agents (default: the simulator's own; at most {MAX_AGENTS:,})",
                   type=agent_count),
            SEED) + tuple({o.name: replace(o, default=False if o.flag else None)
                           for s in SIMULATORS.values() for o in s.options}.values()),
        data="none", folder=False,
        variants={name: (SIM_OUT, Option("agents", s.agents, f"number of agents (default {s.agents}; at most "
                                         f"{MAX_AGENTS:,})", type=agent_count), SEED) + s.options for name, s in SIMULATORS.items()},
        variant_help={name: s.help for name, s in SIMULATORS.items()}),
    Job("ratings", "referee.run.ratings.rating_jobs:ratings", "rate agents: Elo, Bradley-Terry (scalar, Davidson ties, "
        "per-game, multidimensional, Bayesian), Plackett-Luce, TrueSkill, OpenSkill", (
            Option("method", "bt", _method_help() + " (default bt)", choices=tuple(RATING_METHODS), metavar="METHOD"),
            Option("bootstrap", 0, "resample matches N times (COMPACT used 200) for percentile intervals (bt: the "
                   "board's draws, as `leaderboard --bootstrap N`)",
                   type=replicates, metavar="N"),
            Option("by", None, "game: ratings per game (bt-per-game and bt-md model the games jointly); tag, role, "
                   "scenario, phase: one leaderboard per slice, each rated on its own, with the slice sizes",
                   choices=("game", "tag", "role", "scenario", "phase")),
            Option("prior", False, "Bradley-Terry MAP with Normal(0, (400 Elo)^2) priors", flag=True),
            Option("ties", "half", "Bradley-Terry: a tie as half a win each way (default) or Davidson's tie parameter "
                   "(reports the tie rate it estimates)", choices=("half", "davidson")),
            Option("anchor", None, "fix the scale: AGENT gets exactly RATING in the point fit and in every bootstrap "
                   "replicate (elo, bt, bt-davidson, online-elo, plackett-luce)", metavar="AGENT=RATING"),
            Option("covariate", None, "control Bradley-Terry for a covariate (repeatable): a player's seat, role or "
                   "measure NAME, or a pair's style feature of measure NAME (Chatbot Arena's style control: the two "
                   "answers' normalised difference, e.g. style:length); its effect with a match-clustered interval, "
                   "ratings controlled for it and each agent's rank change", many=True,
                   metavar="seat|role|measure:NAME|style:NAME"),
            RESAMPLE,
            Option("dims", 2, "dimensions for bt-md (1-7; default 2)", type=positive_int),
            Option("k", 32.0, f"K factor for online-elo (default 32; Elo points, at most {MAX_K:,.0f})", type=elo_k),
            PER_GAME_SD,
            Option("rate_scripted", False, "rate scripted partners too (clem's programmatic, Kaggle's built-in bots, "
                   "Concordia's background population: results of group background), which are otherwise a role, "
                   "not an agent", flag=True))
        + DATA + SAMPLING_OPTIONS + SWEEP_OPTIONS, figures=FIGURES + "ratings"),
    Job("compare", "referee.run.ratings.rating_jobs:compare", "paired comparison of two agents (or every pair with --all): "
        "P(A stronger than B), the difference with its interval, their head-to-head record", (
            Option("a", None, "the first agent (A)", positional="?", metavar="A"),
            Option("b", None, "the second agent (B)", positional="?", metavar="B"),
            Option("all", False, "every pair, with Holm's adjustment (bt: over every pair of the board's ranked agents; "
                   "another method: over the adjacent pairs of its own bootstrap)", flag=True),
            Option("method", "bt", "the rating model (default bt)",
                   choices=methods_with(elo_scale=True, sampled=False)),
            Option("bootstrap", None, "bootstrap replicates (bt: default none, the board's Normal draws with the "
                   "fit's covariance, as the leaderboard; another method: default 1000)", type=some_replicates,
                   metavar="N"),
            RESAMPLE) + DATA, out=Path("reports/compare")),
    Job("ratings-cv", "referee.run.ratings.rating_jobs:ratings_cv", "cross-validated ROC-AUC of rating models; "
        "win-probability heatmap", (
            Option("folds", 5, "cross-validation folds (at least 2; default 5)", type=folds),
            Option("dims", range(1, 8), "dimension range for bt-md, e.g. 1-7 or 2", type=dims_range),
            Option("split", None, "a match attribute to split the heatmap by (e.g. communication)"),
            PER_GAME_SD) + DATA + SWEEP_OPTIONS, figures=FIGURES + "ratings_cv"),
    Job("check", "referee.run.ratings.self_check:check", "check every number ratings, leaderboard, compare and rank "
        "print about agents' strength against each other: the folders they wrote (--results), or the jobs run on a "
        "store (--store), or both (every shared column agent by agent and pair by pair, each number inside its own "
        "interval, ranks in order, Holm recomputed, tiers as their tests, statuses by their rule, no seat without a "
        "seat field); exits 1 on any violation", (
            Option("results", None, "results folders that ratings, leaderboard, compare (--all or one pair) and rank "
                   "wrote, checked as written (with --store also against a recomputation)", many=True,
                   metavar="DIR", nargs="+"),) + DATA, data="read-optional", out=Path("reports/check")),
    Job("show", "referee.run.ratings.show:show", "the games behind the numbers: a match's trace in order (round, "
        "actor, type, target, text, value, status, reason) and its result, or with --agent an agent's most "
        "surprising matches under the board's ratings", (
            Option("match", None, "the match whose trace to print", positional="?", metavar="MATCH"),
            Option("agent", None, "list this agent's most surprising matches instead", metavar="AGENT"),
            RUNNER, PHASE,
            Option("limit", 10, "matches listed with --agent (default 10)", type=positive_int, metavar="N")),
        folder=False),
    Job("runner-numbers", "referee.run.ratings.runner_numbers:own_numbers", "each runner's own headline numbers, computed "
        "its way (clem's clemscore, % played and quality per model pair; Inspect's accuracy and stderr per log; "
        "Sotopia's dimensions; ...), printed even where referee cannot rate", (RUNNER, PHASE, DATA[3]),
        out=Path("reports/runner-numbers")),
    Job("leaderboard", "referee.run.ratings.leaderboard:leaderboard", "one leaderboard: every method side by side, the "
        "established agents ranked with marginal and simultaneous 95 % rank sets and who could be first, the "
        "provisional ones listed below", (
            Option("bootstrap", 0, "N resamples of the matches as the board's draws for the intervals, rank sets, "
                   "tiers and pairwise tests (default 0: Normal draws with the Bradley-Terry fit's covariance, "
                   "cluster-robust by match)", type=replicates, metavar="N"),
            Option("level", 0.95, "confidence level of the rank sets (default 0.95)", type=probability),
            Option("min_games", MIN_BALLOTS, f"voting: agents on fewer than N ballots are not ranked by the voting "
                   f"methods (default {MIN_BALLOTS})", type=positive_float, metavar="N"),
            Option("every_column", False, f"on a board of more than {BOARD_EVERY_COLUMN} agents, compute the voting "
                   "methods' columns and nash_mass and alpha_rank_mass too (minutes at 1,000 agents; otherwise left "
                   "out, with a note)", flag=True))
        + DATA + SWEEP_OPTIONS, figures=FIGURES + "leaderboard", view="referee.present.board_view:leaderboard_view"),
    Job("rank", "referee.run.ratings.rating_jobs:rank", "voting-as-evaluation (one ballot per (scenario, repetition) or "
        "match), or game-theoretic rankings on the meta-game (Nash averaging, alpha-Rank)", (
            Option("method", None, "a voting method (repeatable: several side by side), all of them, or nash "
                   "(Nash averaging: skill against the maximum-entropy equilibrium of the log-odds meta-game) or "
                   "alpha-rank (alpha-Rank's stationary mass)", choices=VOTING_METHODS + ("all",) + tuple(GAME_METHODS),
                   required=True, many=True),
            Option("alpha", 100.0, f"alpha-rank: ranking intensity (default 100, OpenSpiel's; population 50; at most "
                   f"{MAX_INTENSITY:g})", type=intensity),
            Option("against", "agents", "nash, alpha-rank: the meta-game of agents against agents (default; "
                   "comparisons within matches) or against scenarios (Balduzzi et al.'s agent-vs-task game of "
                   "normalised scores; alpha-rank then runs two populations)", choices=("agents", "scenarios")),
            Option("bootstrap", 0, "nash, alpha-rank: N resamples of the matches for 95 %% intervals of the scores "
                   "and the cyclic share (default 0)", type=replicates, metavar="N"),
            Option("ewa_reading", "runs", "how evaluation without aggregation combines runs (the paper "
                   "under-specifies it; see models/voting/ewa.py): runs (default: an IML election per run, then one "
                   "over the runs' orders), flat (one IML election over every task-run ballot), run-points (points "
                   "per agent beaten in each run's order, summed)", choices=("runs", "flat", "run-points")),
            Option("min_games", MIN_BALLOTS, f"agents on fewer than N ballots (games; for nash and alpha-rank, "
                   f"matches) are listed apart, not ranked (default {MIN_BALLOTS}; 1 ranks every agent)",
                   type=positive_float, metavar="N")) + DATA),
    Job("contest", "referee.run.ratings.rating_jobs:contest", "the contest's phases: top-k selection by Elo, final cross-play "
        "(Elo and voting) and combined-phase Elo (paper tables 3, 8-12)", (
            Option("selection_phase", "evaluation", "phase that selects the finalists (default evaluation)"),
            Option("final_phase", "cross-play", "the finalists' phase (default cross-play)"),
            Option("top", 6, "finalists kept by the selection (default 6)", type=positive_int),
            FINALISTS,
            Option("combine", None, "phases of the combined Elo (repeatable; default the selection and final "
                   "phases)", many=True, metavar="PHASE"),
            RUNNER, SEED), figures=FIGURES + "contest"),
    Job("plan", "referee.run.scores.score_jobs:plan", "which matches to run next, and how many (a plan as CSV, or a power "
        "curve)", (
            Option("budget", 20, f"matches to propose (default 20; at most {MAX_BUDGET:,})", type=budget),
            Option("target", "adjacent:0.95", "adjacent:CONF (separate adjacent ranks), width:ELO (every interval at "
                   "most ELO wide) or top:K (find the top K); default adjacent:0.95"),
            Option("rule", "c-optimal", "selection rule (models/ratings/design.py documents each with its source; "
                   "default c-optimal)", choices=tuple(PLAN_RULES)),
            Option("players", 2, "agents per proposed match (default 2)", type=positive_int),
            Option("power", False, "a power curve instead of a plan (with --delta)", flag=True),
            Option("delta", 50.0, "--power: Elo points apart (default 50)", type=positive_float),
            Option("pair", None, "--power: the two agents (default: the two most compared)", metavar="A,B"),
            Option("sims", 200, f"--power: simulations per point (default 200; at most {MAX_SIMULATIONS:,})",
                   type=simulations),
            Option("scenarios", None, "instead: the N scenarios (tag profiles) that would most shrink the tag "
                   "coefficients now least known", type=positive_int, metavar="N"),
            Option("profiles", False, "--scenarios: also propose hypothetical profiles (combinations of up to three "
                   "tags, or demands with at most one substrate)", flag=True),
            Option("model", "tag-effects", "--scenarios: the model whose least known parameters to serve: the tag "
                   "coefficients (default) or the Measurement Layout's capabilities", choices=PLAN_MODELS),
            Option("posterior", None, "--model measurement-layout: the idata.nc `referee fit measurement-layout` "
                   "wrote (or its folder); default: fit the layout now", type=path, metavar="PATH"),
            Option("repeats", 1, "--model measurement-layout: episodes per agent each picked scenario will be run "
                   "(default 1)", type=positive_int),
            Option("demand", None, "--model measurement-layout: serve this demand's capabilities in every pick "
                   "(default: the demand least known at each pick)"), ALLOW_LONG) + DATA + SAMPLING_OPTIONS,
        figures=FIGURES + "plan", work=plan_work),
    Job("fit", "referee.run.scores.score_jobs:fit", "Bayesian models of scores: beta regressions and Measurement Layouts of "
        "normalised scores, hierarchical models of per-sample pass/fail and graded outcomes",
        (FIT_MODEL,) + FIT_OPTIONS + (RUNNER, PHASE, SEED) + SAMPLING_OPTIONS, figures=FIGURES + "fit",
        variants={name: _fit_options(model) for name, model in SCORE_MODELS.items()},
        variant_help={name: model.description for name, model in SCORE_MODELS.items()}),
    Job("compare-predictors", "referee.run.scores.score_jobs:predictors", "Measurement Layout vs linear regression, XGBoost "
        "and a constant", (
            Option("folds", 4, "folds over each agent's scenarios (default 4: every cell held out once, a quarter at "
                   "a time); R^2 and RMSE are averaged over folds", type=folds),
            RUNNER, PHASE, SEED) + SAMPLING_OPTIONS + SWEEP_OPTIONS, figures=FIGURES + "predictors",
        starter="referee.run.scores.score_jobs:start_predictors"),
    Job("describe", "referee.run.scores.score_jobs:describe", "descriptive figures: means by agent and scenario, correlation "
        "heatmap", (RUNNER, PHASE), figures=FIGURES + "describe"),
    Job("calibrate", "referee.run.scores.score_jobs:calibrate", "simulation-based calibration of a Bayesian model (Talts et "
        "al. 2018): rank histograms and HDI coverage per parameter group", (
            Option("model", None, "the model family", choices=CALIBRATION_FAMILIES, positional="1", required=True),
            Option("sims", 100, f"simulate-and-fit cycles (default 100; at most {MAX_CALIBRATIONS:,})", type=calibrations),
            Option("size", 0, "design size: 0 the smallest, each step adds agents", type=count),
            Option("out", None, "the results folder the store's record of this run points at", type=path),
            SEED, ALLOW_LONG) + SAMPLING_OPTIONS + SWEEP_OPTIONS, data="optional", figures=FIGURES + "calibrate",
        work=calibrate_work),
    Job("socio", "referee.run.social.social_jobs:socio", "socio-cognitive metrics, their consistency and what predicts "
        "winning (COMPACT)", (
            Option("runner", None, "the runner whose matches to use (default: compact when the store has it)"),
            Option("bootstrap", 200, "bootstrap replicates over matches for the intervals (default 200)", type=replicates),
            Option("judges", None, "the two judges to compare (default: the first two)", many=True,
                   metavar="RATER", nargs=2),
            SEED), figures=FIGURES + "socio"),
    Job("judge", "referee.run.social.social_jobs:judge", "rate stored events with an LLM judge: a rubric against an "
        "OpenAI-compatible endpoint, cached in the store", (
            Option("rubric", None, "a shipped rubric (e.g. compact-influence) or a rubric .toml file", required=True),
            Option("model", None, "the model name the endpoint serves; ratings' rater", required=True),
            Option("endpoint", None, "the endpoint's base URL, e.g. http://localhost:8000/v1 (not needed with "
                   "--dry-run)"),
            Option("match", None, "judge only this match (repeatable)", many=True),
            Option("key_env", "OPENAI_API_KEY", "environment variable holding the API key (never stored)"),
            Option("concurrency", 4, "calls at once (default 4)", type=positive_int),
            Option("retries", 4, "retries of a 429, 5xx or timeout, with backoff (default 4)", type=count),
            Option("answer_retries", 2, "re-asks of an answer that does not fit the rubric before it is set aside "
                   "(default 2)", type=count),
            Option("timeout", 60.0, "seconds per call (default 60)", type=positive_float),
            Option("price_in", None, "USD per million input tokens (for the ledger's cost)", type=price),
            Option("price_out", 0.0, "USD per million output tokens", type=price),
            Option("context", None, "a template value the rubric needs: a file for every player, or a folder of "
                   "PLAYER.txt", many=True, metavar="NAME=PATH"),
            Option("limit", None, "judge only the first N items", type=positive_int),
            Option("dry_run", False, "print the items, calls and estimated tokens; call nothing", flag=True)),
        data="writable", out=Path("reports/judge")),
    Job("judge-agreement", "referee.run.social.social_jobs:judge_agreement", "agreement of two raters on the same items "
        "(MAD, exact, within one, Krippendorff's alpha) with bootstrap intervals", (
            Option("raters", None, "two raters (a judge model, or 'human')", many=True, required=True,
                   metavar="RATER", nargs=2),
            Option("human", None, "CSV of human ratings (match_id, player, other, round, name, value): rater 'human'",
                   type=path),
            Option("metric", None, "compare this measure only (default: every measure both rated)"),
            Option("bootstrap", 1000, "bootstrap replicates over items (default 1000)", type=replicates),
            SEED)),
    Job("audit", "referee.run.social.social_jobs:audit", "construct-validity audit of a score against ground-truth outcomes", (
        Option("formula", None, "scoring formula TOML (e.g. data/formulas/aoa_eval01.toml)", type=toml_path),
        Option("outcome", None, "outcome measure and which way is better (repeatable; the direction, when not "
               "given here: the runner's or the ingest's declaration, else the formula's [outcomes], else the "
               "schema's for the derived win (higher) and rank (lower); an outcome declared nowhere is refused "
               "unless --assume; default outcomes: the data's outcome measures, else the derived 'win', refused "
               "when it only restates the score)", many=True, metavar="NAME[:higher|:lower]"),
        Option("group_by", None, "column that, with the outcomes, defines an identical outcome (e.g. team)",
               many=True, metavar="NAME"),
        Option("telemetry", None, "process-telemetry column to report beside the outcome (default: universal, else "
               "the measure declared as telemetry at ingest)"),
        Option("score", None, "what is audited: the recorded score (default), 'formula' (the formula's own score, "
               "recomputed from the counters) or a column of the data"),
        Option("top_k", 3, "how many top-ranked players to inspect (default 3)", type=positive_int),
        Option("runner", None, "audit this runner's matches"),
        Option("match", None, "audit one match (e.g. aoa:eval01)"),
        Option("no_bayes", False, "skip the Bayesian regression in the assignment-luck check", flag=True),
        Option("assume", None, "read an outcome whose direction nothing declares as this one, stating it beside the "
               "outcome and in the notes (default: refuse, saying how to declare it)", choices=DIRECTIONS),
        SEED) + SAMPLING_OPTIONS, figures=FIGURES + "audit"),
)}

