"""Ratings from a comparisons table (`referee.prepare.comparisons`): one entry point over every rating model.

`rate(comparisons, method, ...)` returns a `RatingResult` whose `table` has columns
`agent, rating, lower, upper, rank` (plus `game` first when rated by game). Ranks' uncertainty (rank sets,
the set of the best, tiers) is the board's (`referee.run.ratings.board`), not a method's. Methods:

- `elo`: the 2024 Concordia contest's Elo (strict wins; Newman iteration; rounded), MAP fallback;
- `bt`: Bradley-Terry MLE on the Elo scale (ties as half wins), Wald 95% intervals; `prior=True` (or no
  MLE) gives MAP with Normal(0, (400 Elo)^2) priors;
- `bt-davidson`: Bradley-Terry with Davidson's tie parameter (ties modelled, not counted as half wins);
  `ties` gives nu, the tie probability of two equal agents and the observed tie rate;
- `bt-per-game`: global ratings mu and per-game ratings mu + delta (deviations shrunk, tau in Elo);
  `kendall_tau` compares each game's ranking with the global one;
- `bt-md`: multidimensional BT with `dims` dimensions (canonical form, see `referee.models.ratings.bt_multidim`);
- `online-elo`: sequential Elo in time order with K factor `k`;
- `bayes-bt`: the PyMC scalar (or, by game, per-game) model; intervals are 94% HDIs and
  `idata` holds the InferenceData;
- `plackett-luce`: Plackett-Luce MLE on each match's full ranking (rebuilt from its comparisons; ties by
  Breslow's rule), not the pairs it implies (`referee.models.ratings.plackett_luce`);
- `trueskill`, `openskill`: the `trueskill` and `openskill` packages fed each match's ranking in time order,
  on their own scale (mu, sigma; `leaderboard` = mu - 3 sigma) (`referee.models.ratings.skill`).

`bootstrap=N` resamples clusters (matches) N times, in blocks of BLOCK replicates with seeds derived from
`seed` (so any `executor` gives the same replicates), and reports percentile intervals;
the replicates are in `RatingResult.bootstrap`.
"""

from __future__ import annotations

import warnings
from typing import Any
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.prepare.comparisons import comparison_games
from referee.run.ratings.intervals import ROBUST_WALD, finish
from referee.run.executor import Executor, Shared, Task, run_tasks, share, task_seeds
from referee.run.ratings.rating_labels import (ANCHORABLE, NO_INFORMATION, anchor_replicates, anchor_shift, apply_status,
                                        components, information_note, rank_within, reference_status, status_note,
                                        without_information)
from referee.models.registry import RATING_METHODS, implementation, methods_with
from referee.models.fit import CHAINS, DRAWS, TUNE, FitResult, collect_notes, summarised_warnings
from referee.models.ratings.bootstrap import BootstrapResult, bootstrap_generic, bootstrap_resampled, bt_resampling
from referee.models.ratings.bradley_terry import bt_covariance_floored, centred_se, cluster_reading, pair_counts, wald_table
from referee.models.registry import DEFAULT_TAU_ELO
from referee.models.ratings.rating_fits import Point, davidson_ties
from referee.prepare.membership import agents_in, is_in
from referee.models.codes import positions

METHODS = tuple(RATING_METHODS)  # names and traits in `referee.models.registry`
ONLINE = methods_with(online=True)  # fed matches in time order
TABLE = ["agent", "rating", "lower", "upper", "rank"]


@dataclass
class Coded:
    """Integer-coded comparisons: agent and game names, codes per comparison, outcome and cluster."""

    agents: list[str]
    games: list[str]
    a: np.ndarray
    b: np.ndarray
    game: np.ndarray
    outcome: np.ndarray
    cluster: np.ndarray

    def counts(self, ties: str = "half") -> np.ndarray:
        """Pooled pair counts W (n, n)."""
        return pair_counts(self.a, self.b, self.outcome, len(self.agents), ties)

    def game_counts(self) -> np.ndarray:
        """Per-game pair counts W[k] (K, n, n), ties as halves."""
        n, K = len(self.agents), len(self.games)
        flat = pair_counts(self.game * n + self.a, self.game * n + self.b, self.outcome, K * n)
        return np.stack([flat[k * n:(k + 1) * n, k * n:(k + 1) * n] for k in range(K)])


def encode(comparisons: pd.DataFrame, agents: list[str] | None = None) -> Coded:
    """Integer-code a comparisons table (agents sorted by name unless given)."""
    if agents is None:
        agents = agents_in(comparisons)
    games = comparisons["game"].fillna("(all)").astype(str)
    game_names = sorted(games.unique())
    return Coded(
        agents=list(agents), games=game_names,
        a=positions(comparisons["a"], agents), b=positions(comparisons["b"], agents),
        game=positions(games, game_names), outcome=comparisons["outcome"].to_numpy(float),
        cluster=comparisons["cluster"].astype(str).to_numpy(),
    )


@dataclass
class RatingResult(FitResult):
    """Ratings of one method (the `referee.models.fit.FitResult` contract): `table()` is the rating table,
    `bootstrap` the replicates (if any), `fits` the underlying model fits, `fit` the one joint fit (scalar
    Bradley-Terry, bt-per-game, bt-md), `ties` Davidson's tie parameter (bt-davidson: nu, nu_se,
    tie_probability_equal, observed_tie_rate), `kendall_tau` each game's ranking against the global one
    (bt-per-game), `idata` the posterior (bayes-bt); notes and diagnostics gather the fits' own."""

    ratings: pd.DataFrame = field(default_factory=pd.DataFrame)
    bootstrap: BootstrapResult | None = None
    fits: list = field(default_factory=list)
    fit: Any = None
    ties: dict | None = None
    kendall_tau: pd.DataFrame | None = None

    def table(self) -> pd.DataFrame:
        """agent, rating, lower, upper, rank[, replicates, flag] (`game` first by game)."""
        return self.ratings


def _point(comparisons: pd.DataFrame, method: str, by: str | None, prior: bool, dims: int, k: float,
           tau_elo: float | None, seed: int, agents: list[str] | None = None) -> Point:
    """One method's point fit (`Point`) on a comparisons table, by its registered implementation
    (`referee.models.registry.RATING_METHODS`, `referee.models.ratings.rating_fits`)."""
    spec = RATING_METHODS[method]
    coded = encode(comparisons, agents)
    if not spec.separate_fits:
        return implementation(spec.fit)(coded, by, prior, dims, tau_elo, seed)
    fit_one = implementation(spec.fit)
    if by is None:
        fit = fit_one(coded, prior, k)
        return Point(fit.table(), [fit], fit=fit, coded=coded if spec.robust else None, ties=davidson_ties(fit))
    fits, parts = [], []
    for name, g in comparisons.assign(game=comparisons["game"].fillna("(all)")).groupby("game"):
        fit = fit_one(encode(g, coded.agents if spec.online else None), prior, k)
        fits.append(fit)
        parts.append(fit.table().assign(game=name))
    return Point(pd.concat(parts, ignore_index=True)[["game"] + TABLE], fits)


def _merged_diagnostics(fits: list[FitResult]) -> dict:
    if len(fits) == 1:
        return dict(fits[0].diagnostics)
    return {"converged": all(f.converged for f in fits), "fits": len(fits),
            "not_converged": sum(not f.converged for f in fits)}


def rate(comparisons: pd.DataFrame, method: str, bootstrap: int = 0, by: str | None = None, prior: bool = False,
         dims: int = 2, k: float = 32.0, tau_elo: float | None = DEFAULT_TAU_ELO, seed: int = 0, draws: int = DRAWS,
         tune: int = TUNE, chains: int = CHAINS, sampler: str = "auto", agents: list[str] | None = None,
         executor: Executor | None = None, anchor: tuple[str, float] | None = None,
         informed: Informed | None = None) -> RatingResult:
    """Rate agents from a comparisons table.

    Parameters
    ----------
    comparisons : columns a, b, outcome (1/0/0.5), cluster, game, ... (`referee.prepare.comparisons`).
    method : one of METHODS. bootstrap : replicates (0 = none; COMPACT used 200).
    by : None or 'game' (ratings per game). prior : MAP instead of MLE for the BT methods.
    dims : dimensions for bt-md. k : K factor for online-elo. tau_elo : deviation sd for bt-per-game (Elo
        points; None for plain maximum likelihood).
    seed : seeds every random choice. draws, tune, chains, sampler : for bayes-bt.
    agents : every agent the table should list (e.g. `comparable_agents`): those without a comparison get a
        row without a rating, flagged, and a warning (not by game).
    executor : where the bootstrap's blocks run (`referee.run.executor`; default here): the same replicates
        on any executor.
    anchor : (agent, rating) fixing the scale of a difference-scale method (`rating_labels.ANCHORABLE`) in the
        point fit and in every bootstrap replicate (`referee.run.ratings.rating_labels`); not by game.
    informed : `informed_of(comparisons, by)` of these same comparisons, where the caller rates them by more than
        one method (the leaderboard's Bradley-Terry and Elo): computed once, read by each.

    Returns
    -------
    RatingResult with `table` (agent, rating, lower, upper, rank[, replicates, flag];
    `game` first when by='game'), on the Elo scale (mean 1500, or the anchor's), and, not by game,
    `interval` (what the interval is; -inf/+inf where the data leave it open: `referee.run.ratings.intervals`),
    `matches` and `status` (established / provisional: why), plus `component` when the comparison graph falls
    apart (each component is rated on its own, centred at 1500; ranks, intervals and groups within it), and
    `anchor` when anchored. The resample unit of the bootstrap is the comparisons'
    `resample` column where present (`referee.prepare.comparisons.with_resample`), else their cluster.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; methods: {list(METHODS)}")
    if by not in (None, "game"):
        raise ValueError("by must be None or 'game'")
    informed = informed_of(comparisons, by) if informed is None else informed
    comparisons, uninformed, status = informed.comparisons, informed.uninformed, informed.status
    fed = None
    if method in ONLINE:
        comparisons, fed = in_feeding_order(comparisons)
    if anchor is not None and (method not in ANCHORABLE or by is not None):
        raise ValueError(f"--anchor fixes the free constant of {', '.join(ANCHORABLE)} (not by game); "
                         f"{method} {'by game ' if by else ''}has none to fix")
    # the comparison graph's components, once: bootstrap ranks and the table's ranks are taken within them
    agents = None if agents is None else [a for a in agents if a not in uninformed]
    parts = None if by else components(comparisons, sorted(set(agents_in(comparisons))
                                                            | set(agents or [])))
    labelled = dict(parts=parts, agents=agents, status=status, uninformed=uninformed, said=informed.said)
    if RATING_METHODS[method].sampled:
        return _labelled(_sampled(method, comparisons, by, draws, tune, chains, seed, sampler), **labelled)
    options = dict(bootstrap=bootstrap, by=by, prior=prior, dims=dims, k=k, tau_elo=tau_elo, seed=seed,
                   executor=executor, status=status)
    compared = None if parts is None else parts.reindex(status.index)
    if compared is not None and compared.nunique() > 1:
        result = _labelled(_by_component(comparisons, compared, method, anchor, options), **labelled)
    else:
        result = _labelled(_connected(comparisons, method, anchor=anchor, **options), **labelled)
    if fed is not None:
        result.notes.append(fed)
    return result


@dataclass(frozen=True)
class Informed:
    """What labels every rating of one comparisons table whatever the method, computed once (`informed_of`):
    `comparisons` without the agents that carry no information (`rating_labels.without_information`),
    `uninformed` ({agent: status}) those agents, `status` the one status rule's table (matches, one_sided, status
    per agent: `rating_labels.reference_status`; None by game) and `said` the sentence on how many comparisons
    carried information (`rating_labels.information_note`)."""

    comparisons: pd.DataFrame
    uninformed: dict[str, str]
    status: pd.DataFrame | None
    said: str


def informed_of(comparisons: pd.DataFrame, by: str | None = None) -> Informed:
    """`Informed` of a comparisons table (columns a, b, outcome, cluster, ...) rated overall (`by` None) or by game
    ('game': no status). ValueError where the table is empty or no comparison carries information."""
    if len(comparisons) == 0:
        raise ValueError("no comparisons to rate")
    kept, uninformed = without_information(comparisons)
    said = information_note(comparisons, uninformed)
    if len(kept) == 0:
        raise ValueError(f"no comparison carries information: {said}; a rating needs wins and losses between agents "
                         "(for a benchmark whose models play the same instances apart, see `referee formats RUNNER`: "
                         "its comparison unit)")
    # matches, one-sided records and the one status rule, once for every table and interval of every method
    return Informed(kept, uninformed, None if by else reference_status(kept), said)


def in_feeding_order(comparisons: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """(comparisons in the order an online method is fed them, the sentence saying which order): by the match's
    start time where any comparison carries one (stable: matches without a time keep their place after the
    timed ones), else as the store holds them (by source file, then record within the file). An online rating
    depends on this order; the sentence says so, so that a published leaderboard fed another order is not
    taken for a disagreement of method."""
    matches = pd.Series(comparisons["cluster"]).nunique()
    if "time" in comparisons.columns and comparisons["time"].notna().any():
        timed = comparisons.loc[comparisons["time"].notna(), "cluster"].nunique()
        return (comparisons.sort_values("time", kind="stable"),
                f"online method: fed {matches:,} matches in time order (their start time; {timed:,} of {matches:,} "
                "carry one, the others follow in the store's order); another order gives other ratings")
    return comparisons, (f"online method: fed {matches:,} matches in the store's order (by source file, then record "
                         "within it; no match carries a start time); another order gives other ratings")


def _connected(comparisons: pd.DataFrame, method: str, bootstrap: int, by: str | None, prior: bool, dims: int,
               k: float, tau_elo: float | None, seed: int, executor: Executor | None,
               anchor: tuple[str, float] | None, status: pd.DataFrame | None) -> RatingResult:
    """`rate` on a connected comparison graph (or by game), before the status labels; `status` is
    `rating_labels.reference_status` of the whole table (None by game)."""
    notes: list[str] = []
    with collect_notes(notes):
        point = _point(comparisons, method, by, prior, dims, k, tau_elo, seed)
    table, fits = point.table, point.fits
    reading = cluster_reading(point.coded.cluster, len(point.coded.agents)) if point.coded is not None else None
    robust = reading == "robust"
    if reading == "too few":
        matches = pd.Series(point.coded.cluster).nunique()
        notes.append(f"matches hold several pairs each, but {matches} match(es) for {len(point.coded.agents)} agents "
                     "are too few for cluster-robust intervals (their covariance would give some differences no "
                     "width): the intervals are model-based Wald ones, which treat a match's pairs as independent "
                     "and so are too narrow; more matches, or --bootstrap, give honest ones")
    if robust:  # matches of several pairs are not independent: the match is the unit (not in bootstrap blocks)
        fit, coded = point.fit, point.coded
        cov, floored = bt_covariance_floored(fit.theta, coded.a, coded.b, coded.outcome, coded.cluster, fit.prior_sd)
        table = wald_table(coded.agents, fit.theta, centred_se(cov))
        if floored.any():
            names = [str(coded.agents[i]) for i in np.flatnonzero(floored)]
            notes.append(f"{len(names)} agent(s) whose cluster-robust variance fell below the model-based one (their "
                         "matches vary less than independent comparisons would, as when every match ended alike) get "
                         "the model-based width instead, never narrower: " + ", ".join(names[:10])
                         + (" ..." if len(names) > 10 else ""))
    if anchor is not None:
        table = anchor_shift(table, anchor)
    result = RatingResult(model=method, ratings=table, fits=fits, notes=notes, diagnostics=_merged_diagnostics(fits),
                          fit=point.fit, ties=point.ties, kendall_tau=point.kendall_tau)
    has_model = by is None and np.isfinite(table[["lower", "upper"]].to_numpy(float)).any()
    model = table[["agent", "lower", "upper"]].copy() if has_model else None
    model_interval = (ROBUST_WALD if robust else RATING_METHODS[method].interval) if has_model else None
    if bootstrap:
        with collect_notes(result.notes):
            result.bootstrap = _bootstrap(comparisons, method, by, prior, dims, k, tau_elo, seed, bootstrap, executor,
                                          point=point)
        if anchor is not None:
            result.bootstrap.ratings, dropped = anchor_replicates(result.bootstrap.ratings, result.bootstrap.agents,
                                                                  anchor)
            result.notes.append(f"anchored at {anchor[0]} = {anchor[1]:g} in the point fit and in every bootstrap "
                                "replicate" + (f"; {dropped} replicate(s) drew none of its matches and are left out"
                                               if dropped else ""))
        groups = [key[0] for key in result.bootstrap.agents] if by else None  # connected here: one group
        summary = result.bootstrap.summary(groups=groups)
        keys = ["game", "agent"] if by else ["agent"]
        if by:
            summary[["game", "agent"]] = pd.DataFrame(summary.pop("agent").tolist(), index=summary.index)
        merged = table.drop(columns=["lower", "upper"]).merge(summary, on=keys, how="left")
        result.ratings = merged[keys + ["rating", "lower", "upper", "rank", "replicates", "flag"]
                                + (["anchor"] if anchor is not None else [])]
        flagged = merged[merged["flag"] != ""]
        if len(flagged):
            result.notes.append(f"{len(flagged)} agent(s) have bootstrap intervals to read with caution (see the "
                                "`flag` column): " + "; ".join(f"{a}: {f}" for a, f in
                                                              zip(flagged["agent"].head(5), flagged["flag"].head(5)))
                                + (" ..." if len(flagged) > 5 else ""))
    if anchor is not None and not bootstrap:
        result.notes.append(f"anchored at {anchor[0]} = {anchor[1]:g}")
    if by is None:
        result.ratings, said = finish(result.ratings, comparisons, method, model, model_interval, status, bootstrap,
                                      fixed=anchor[0] if anchor is not None else None)
        result.notes += said
    return result


def _by_component(comparisons: pd.DataFrame, compared: pd.Series, method: str, anchor: tuple[str, float] | None,
                  options: dict) -> RatingResult:
    """Rate each component of a disconnected comparison graph on its own (each centred at 1500, the anchor
    held in its own component only), and join the tables: ratings of different components share no
    evidence and are not comparable; ranks, intervals and groups are within each (`component` column)."""
    if anchor is not None and anchor[0] not in compared.index:
        raise ValueError(f"--anchor: {anchor[0]!r} has no rating to anchor")
    results, tables, boots = [], [], []
    for c in sorted(compared.unique()):
        members = set(compared.index[compared == c])
        sub = comparisons[is_in(comparisons["a"], members)]
        held = anchor if anchor is not None and anchor[0] in members else None
        found = _connected(sub, method, anchor=held, **options)
        results.append(found)
        tables.append(found.ratings.assign(component=c))
        if found.bootstrap is not None:
            boots.append(found.bootstrap)
    first = results[0]
    notes = []
    for r in results:
        notes += [n for n in r.notes if n not in notes]
    result = RatingResult(model=method, ratings=pd.concat(tables, ignore_index=True), fit=first.fit,
                          ties=first.ties, kendall_tau=first.kendall_tau,
                          fits=[f for r in results for f in r.fits], notes=notes,
                          diagnostics=_merged_diagnostics([f for r in results for f in r.fits]))
    if boots:
        result.bootstrap = BootstrapResult(agents=[a for b in boots for a in b.agents],
                                           ratings=np.hstack([b.ratings for b in boots]),
                                           matches=np.concatenate([b.matches for b in boots]))
    return result


def _labelled(result: RatingResult, parts: pd.Series | None, agents: list[str] | None,
              status: pd.DataFrame | None, uninformed: dict[str, str], said: str) -> RatingResult:
    """The result with unrated agents listed, ranks within the comparison graph's components `parts` (component
    per agent, `rating_labels.components`), each agent's status (`referee.run.ratings.rating_labels`), the agents
    without information (`uninformed`, {agent: status}) listed last without a rating and `said` (how many
    comparisons carried information) among the notes; by game (`parts` None) the table is left as it is."""
    result.notes.append(said)
    if parts is None:
        return result
    with collect_notes(result.notes):
        if agents is not None:
            result.ratings = with_unrated(result.ratings, agents)
    if uninformed:
        rows = pd.DataFrame({"agent": sorted(uninformed), "rating": np.nan, "lower": np.nan, "upper": np.nan,
                             "rank": pd.NA, "flag": NO_INFORMATION})
        rated = result.ratings if "flag" in result.ratings.columns else result.ratings.assign(flag="")
        result.ratings = pd.concat([rated, rows], ignore_index=True)
    table = result.ratings
    if parts.max() > 1:
        table = rank_within(table, parts)
        sizes = parts.value_counts().sort_index()
        result.notes.append(f"the comparison graph has {len(sizes)} components (agents per component: "
                            f"{', '.join(f'{c}: {n}' for c, n in sizes.head(8).items())}"
                            f"{' ...' if len(sizes) > 8 else ''}); no comparison links them, so ratings are not "
                            "comparable across components and ranks are within each (`component` column)")
    result.ratings = apply_status(table, status, uninformed)
    result.notes.append(status_note(result.ratings))
    return result


STREAMABLE = methods_with(streamable=True)  # methods that need only pooled win and tie counts


def with_unrated(table: pd.DataFrame, agents: list[str] | None) -> pd.DataFrame:
    """The rating table plus one row per agent of `agents` it lacks (rating, interval and rank empty; `flag`
    says why), with a warning naming them: an agent that never met another agent with a comparable result
    has no rating, and is listed rather than left out. `agents` None: the table as it is."""
    missing = sorted(set(agents or []) - set(table["agent"]))
    if not missing:
        return table
    warnings.warn(f"{len(missing)} agent(s) never met another agent with a comparable result and are listed "
                  f"without a rating: {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}",
                  UserWarning, stacklevel=3)
    rows = pd.DataFrame({"agent": missing, "rating": np.nan, "lower": np.nan, "upper": np.nan, "rank": pd.NA,
                         "flag": "no comparison with another agent: not rated"})
    rated = table if "flag" in table.columns else table.assign(flag="")
    return pd.concat([rated, rows], ignore_index=True)


def rate_counts(wins: np.ndarray, ties: np.ndarray, names: list[str], method: str, prior: bool = False,
                agents: list[str] | None = None) -> RatingResult:
    """Rate agents from pooled counts instead of a comparisons table (the bounded-memory path for inputs
    too large to list every comparison; `referee.prepare.comparisons.win_counts`).

    wins[i, j] : comparisons i won against j; ties[i, j] = ties[j, i] : ties between them; shape (n, n),
    in the order of `names`. method : 'bt' (ties as half wins) or 'elo' (the contest's strict wins).
    agents : as in `rate`. Returns a RatingResult with the same table as `rate` gives without a bootstrap,
    and a note saying how it was computed.
    """
    if method not in STREAMABLE:
        raise ValueError(f"only {list(STREAMABLE)} can be rated from counts, not {method!r}")
    notes: list[str] = []
    with collect_notes(notes):
        fit = implementation(RATING_METHODS[method].counts)(wins, ties, names, prior)
        table = with_unrated(fit.table(), agents)
    notes.append(f"rated from streamed win counts ({int(wins.sum() + ties.sum() / 2):,} comparisons, more than the "
                 "in-memory budget): same estimates as from the comparisons table; no bootstrap on this path")
    return RatingResult(model=method, ratings=table, fits=[fit], notes=notes, diagnostics=dict(fit.diagnostics))


BLOCK = 50  # bootstrap replicates per task: a sweep's blocks, whatever runs them (`referee.run.executor`)
SHARED_COLUMNS = ["a", "b", "outcome", "cluster", "game", "kind"]  # what a bootstrap block reads


def _bootstrap(comparisons, method, by, prior, dims, k, tau_elo, seed, replicates, executor=None, *,
               point: Point) -> BootstrapResult:
    """Replicates in blocks of BLOCK, block i drawn with `task_seeds(seed, blocks)[i]`: the same replicates
    whether the blocks run here, in local processes or on a Dask cluster. Scalar Bradley-Terry (`point` holds
    the point fit's `fit` and `coded`) sends each block only what it draws from (`bt_resampling`, built once:
    a few thousand cluster signatures however many comparisons); every other method's blocks read the
    comparisons and refit."""
    sizes = [min(BLOCK, replicates - start) for start in range(0, replicates, BLOCK)]
    seeds = task_seeds(seed, len(sizes))
    if point.coded is not None:
        coded, fit = point.coded, point.fit
        first, second = comparison_games(comparisons)  # whole games are resampled, parallel pairs with both
        codes, _ = pd.factorize(np.r_[first, second])
        resampling = bt_resampling(coded.a, coded.b, coded.outcome, codes[: len(first)], len(coded.agents),
                                   second=codes[len(first):])
        tasks = [Task(f"bootstrap-block-{i}", bootstrap_resampled, (resampling, coded.agents, fit.theta,
                                                                    fit.prior_sd, size, block_seed))
                 for i, (size, block_seed) in enumerate(zip(sizes, seeds))]
    else:
        columns = SHARED_COLUMNS + (["resample"] if "resample" in comparisons.columns else [])
        shared = share(executor, "comparisons", comparisons[columns].assign(cluster=comparisons["cluster"].astype(str)))
        tasks = [Task(f"bootstrap-block-{i}", bootstrap_block, (shared, method, by, prior, dims, k, tau_elo, seed,
                                                                 size, block_seed))
                 for i, (size, block_seed) in enumerate(zip(sizes, seeds))]
    with summarised_warnings(f"the {replicates} bootstrap replicates' fits"):
        blocks = run_tasks(tasks, executor, "bootstrap")
    return BootstrapResult(agents=blocks[0].agents, ratings=np.vstack([b.ratings for b in blocks]),
                           matches=blocks[0].matches)


def bootstrap_block(shared: Shared, method: str, by: str | None, prior: bool, dims: int, k: float,
                    tau_elo: float | None, seed: int, replicates: int, block_seed: int) -> BootstrapResult:
    """One block of bootstrap replicates (a sweep task): the comparisons read from `shared`, the point fit
    remade (seed `seed`), then `replicates` replicates drawn with `block_seed` (every method but scalar
    Bradley-Terry, whose blocks are `bootstrap_resampled`). Returns a BootstrapResult."""
    comparisons = shared.load()
    table = _point(comparisons, method, by, prior, dims, k, tau_elo, seed).table
    first, second = comparison_games(comparisons)  # whole games are resampled, parallel pairs with both
    keys = list(zip(table["game"], table["agent"])) if by else list(table["agent"])

    def refit(sample: pd.DataFrame) -> pd.Series:
        t = _point(sample, method, by, prior, dims, k, tau_elo, seed).table
        index = pd.MultiIndex.from_frame(t[["game", "agent"]]) if by else pd.Index(t["agent"])
        return pd.Series(t["rating"].to_numpy(), index=index)

    return bootstrap_generic(comparisons, refit, keys, replicates=replicates, seed=block_seed, games=(first, second))


def _sampled(method: str, comparisons, by, draws, tune, chains, seed, sampler) -> RatingResult:
    """A sampled method (`Method.sampled`: bayes-bt, the PyMC Bradley-Terry model, per game with `by`), its
    posterior kept."""
    fit = implementation(RATING_METHODS[method].fit)(encode(comparisons), by, draws, tune, chains, seed, sampler)
    return RatingResult(model=method, ratings=fit.table(), fits=[fit], fit=fit,
                        idata=fit.idata, diagnostics=dict(fit.diagnostics), notes=list(fit.notes))
