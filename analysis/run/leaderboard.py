"""One leaderboard (`referee leaderboard`, `referee.leaderboard(...)`, the report's first section): every method
side by side, one row per agent, with the ranks a paper can print.

The established agents (the one status rule, `referee.run.rating_labels`) are ranked, best first, by
Bradley-Terry (Elo scale) with its bootstrap interval, their marginal and simultaneous 95 % rank sets and whether
they could be first (`referee.models.ratings.rank_sets`, from Normal draws with the fit's cluster-robust
covariance of the established agents alone, so that an agent with a handful of games can neither lead nor widen
the others' sets, and the same agents get the same draws whoever else plays), tiers
separated by paired tests with Holm's correction at a family-wise 95 % (each pair of neighbours' difference
printed with its Holm-adjusted p-value, table `tier_tests`), the contest's Elo, each voting method's position, and the Nash averaging and
alpha-Rank masses of the game among the established agents. Provisional agents and agents without information
follow in a second block with their rating and interval and no rank.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dataclasses import dataclass

from referee.models.registry import MIN_BALLOTS
from referee.run.executor import sweep_executor
from referee.run.rating_labels import ESTABLISHED
from referee.run.result import Result
from referee.run.stored import selected_tables

BOOTSTRAP = 500  # Bradley-Terry's bootstrap replicates: the board's rating intervals
DRAWS = 4000  # normal draws of the established agents' ratings for the rank sets' critical values


@dataclass
class Board:
    """What the leaderboard computed, for whoever draws each method apart (the report's appendix):
    `bt` Bradley-Terry with its bootstrap, `elo` the contest's Elo (`referee.run.ratings.RatingResult`, both with
    the status of every agent), `votes` every voting method's table (`referee.run.votes.vote_tables`)."""

    bt: object
    elo: object
    votes: pd.DataFrame


def _span(low, high) -> str:
    return "" if pd.isna(low) else (f"{int(low)}" if low == high else f"{int(low)}-{int(high)}")


def covariance_draws(fit, comparisons: pd.DataFrame, ratings: pd.Series, seed: int):
    """A function from agent names to (DRAWS, k) draws of their Elo ratings around `ratings` (agent-indexed, Elo
    points), Normal with the cluster-robust covariance of the Bradley-Terry fit `fit` (`StrengthFit`) on `comparisons` (clustered by
    match). The draws of the same k agents come from the same seed, so that agents outside the set (a newcomer,
    a provisional agent) change the sets only through the fit itself, not through new random draws."""
    from referee.models.ratings.bradley_terry import ELO_SCALE, robust_covariance

    index = {a: i for i, a in enumerate(fit.agents)}
    held = comparisons[comparisons["a"].isin(index) & comparisons["b"].isin(index)]
    a, b = held["a"].map(index).to_numpy(), held["b"].map(index).to_numpy()
    cov = robust_covariance(fit.theta, a, b, held["outcome"].to_numpy(float), held["cluster"].to_numpy(),
                            fit.prior_sd) * ELO_SCALE ** 2

    def draws(agents: list[str]) -> np.ndarray:
        picked = [index[x] for x in agents]
        sub = cov[np.ix_(picked, picked)]
        values, vectors = np.linalg.eigh((sub + sub.T) / 2)
        root = vectors * np.sqrt(np.clip(values, 0, None))
        noise = np.random.default_rng(seed).standard_normal((DRAWS, len(agents))) @ root.T
        return ratings.reindex(agents).to_numpy(float) + noise

    return draws


def bootstrap_draws(boot):
    """A function from agent names to their bootstrap replicates (`BootstrapResult`), (replicates, k)."""
    columns = {name: i for i, name in enumerate(boot.agents)}
    return lambda agents: boot.ratings[:, [columns[a] for a in agents]]


def neighbour_tests(block: pd.DataFrame, p_holm: np.ndarray, tier: np.ndarray, component) -> pd.DataFrame:
    """One row per pair of neighbours down a ranked `block` (agent, rating; best first): component, agent, next
    (the agent ranked just below), difference (Elo points, the estimate tested), p_holm (its Holm-adjusted
    paired-test p-value over every pair of the component) and new_tier (the next agent starts a tier: `tier`,
    the block's tier numbers)."""
    n = len(block)
    rating, names, step = block["rating"].to_numpy(float), block["agent"].to_numpy(), np.arange(max(n - 1, 0))
    return pd.DataFrame({"component": component, "agent": names[:-1], "next": names[1:],
                         "difference": rating[:-1] - rating[1:], "p_holm": p_holm[step, step + 1],
                         "new_tier": tier[1:] != tier[:-1]})


def ranked_block(table: pd.DataFrame, draws, level: float) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """The established agents of a Bradley-Terry `table` (agent, rating, status[, component]) ranked with their
    rank sets within each component, from `draws` (agents -> (r, k) draws of their ratings: `covariance_draws`
    or `bootstrap_draws`); (the block, critical values per component, the neighbours' tests `neighbour_tests`)."""
    from referee.models.ratings.rank_sets import rank_sets

    ranked = table[(table["status"] == ESTABLISHED) & table["rating"].notna()].copy()
    parts = ranked["component"] if "component" in ranked.columns else pd.Series(1, index=ranked.index)
    critical, blocks, tests = {}, [], []
    for part, block in list(ranked.groupby(parts, sort=True)) or [(1, ranked)]:  # none established: no rows
        block = block.sort_values(["rating", "agent"], ascending=[False, True]).reset_index(drop=True)
        found = rank_sets(block["rating"].to_numpy(float), draws(block["agent"].tolist()), level)
        critical[int(part)] = found.critical
        tests.append(neighbour_tests(block, found.p_holm, found.tier, int(part)))
        blocks.append(block.assign(
            rank=np.arange(1, len(block) + 1), tier=found.tier,
            rank_set=[_span(lo, hi) for lo, hi in zip(found.lower, found.upper)],
            joint_rank_set=[_span(lo, hi) for lo, hi in zip(found.joint_lower, found.joint_upper)],
            rank_lower=found.lower, rank_upper=found.upper, joint_lower=found.joint_lower,
            joint_upper=found.joint_upper, could_be_first=found.best))
    return pd.concat(blocks, ignore_index=True), critical, pd.concat(tests, ignore_index=True)


def _votes(matches, results, min_games: float, seed: int, notes: list[str]) -> pd.DataFrame:
    """Every voting method's table (`vote_tables`), empty (and said) where none can run."""
    from referee.run.votes import vote_tables

    try:
        return vote_tables(matches, results, "all", min_ballots=min_games, seed=seed)
    except ValueError as exc:
        notes.append(f"voting methods not run: {exc}")
        return pd.DataFrame(columns=["method", "agent", "rank", "ranked"])


def _masses(comparisons: pd.DataFrame, established: list[str], seed: int, notes: list[str]) -> pd.DataFrame:
    """Nash averaging's equilibrium mass and alpha-Rank's stationary mass in the game among the established
    agents (agent-indexed); not computed below three established agents."""
    from referee.prepare.membership import is_in
    from referee.run.game_theory import game_ranking

    if len(established) < 3:
        notes.append(f"Nash averaging and alpha-Rank not run: {len(established)} established agent(s); a game "
                     "among them needs three")
        return pd.DataFrame()
    among = comparisons[is_in(comparisons["a"], established) & is_in(comparisons["b"], established)]
    out = {}
    for method, column in (("nash", "nash_mass"), ("alpha-rank", "alpha_rank_mass")):
        try:
            out[column] = game_ranking(among, method, seed=seed).table.set_index("agent")["mass"]
        except ValueError as exc:
            notes.append(f"{method} not run: {exc}")
    return pd.DataFrame(out)


def seat_effect(store, matches: pd.DataFrame, results: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """The advantage of a later seat (turn order) over an earlier one in log-odds and Elo points, with its 95 %
    interval clustered by match, from the contextual Bradley-Terry with the covariate seat (0 first; the same
    fit as `referee ratings --covariate seat`, which also gives the ratings adjusted for it); empty where every
    player holds the same seat or the matches have no order. Negative: earlier seats win more."""
    from referee.models.ratings.contextual import fit_contextual_bt
    from referee.prepare.covariates import covariate_pairs

    try:
        pairs, names, _ = covariate_pairs(matches, results, store.table("measures"), ["seat"])
        if not (pairs["seat_a"] != pairs["seat_b"]).any():
            return pd.DataFrame()
        effects = fit_contextual_bt(pairs, names).effects
    except ValueError as exc:
        notes.append(f"seat effect not estimated: {exc}")
        return pd.DataFrame()
    row = effects[effects["covariate"] == "seat"].iloc[0]
    notes.append(f"seat effect: one seat later in the turn order changes the log-odds of winning by "
                 f"{row['estimate']:+.3f} (95 % {row['lower']:+.3f} to {row['upper']:+.3f}, clustered by match); "
                 "`referee ratings --covariate seat` gives the ratings adjusted for it")
    return effects[effects["covariate"] == "seat"]


def leaderboard(store, bootstrap: int = BOOTSTRAP, level: float = 0.95, min_games: float = MIN_BALLOTS,
                runner: str | None = None, phase: list[str] | None = None, parallel: bool = False,
                where: list[str] | None = None, seed: int = 0, **options) -> Result:
    """The leaderboard of a store's runner (module doc). Main table `leaderboard`, one row per agent: block
    (ranked / provisional / no information), rank, tier, agent, rating, lower, upper (Bradley-Terry, Elo
    points, 95 %), rank_set (marginal, `level`), joint_rank_set (simultaneous), could_be_first, elo, one column
    per voting method (its position), nash_mass, alpha_rank_mass, runner_metric (the runner's own headline,
    where it has one), matches, status; `rank_sets` the numeric bounds; `tier_tests` each pair of neighbours'
    difference with its Holm-adjusted p-value (`neighbour_tests`); `seat_effect` the advantage of a later
    seat (`seat_effect`) where the matches have a turn order. Fields: `could_be_first` (agents),
    `level`, `critical` (the critical values per component), `said` (what the board found, as sentences: the
    runner's own numbers, the seat effect, the count), `runner_numbers` (the first of them); `value` a `Board`."""
    from referee.prepare.comparisons import comparisons_and_agents, require_comparisons
    from referee.run.ratings import rate
    from referee.run.runner_numbers import stored_runner_numbers

    matches, results, notes = selected_tables(store, runner, phase, where)
    comparisons, agents = comparisons_and_agents(matches, results, parallel=parallel)
    require_comparisons(comparisons, matches, results)
    with sweep_executor(options) as executor:
        bt = rate(comparisons, "bt", bootstrap=bootstrap, seed=seed, agents=agents, executor=executor)
    notes += bt.notes
    bt.ratings, runner_numbers = stored_runner_numbers(store, bt.table(), matches, results)
    said = list(runner_numbers)  # statements of what the board found, not warnings
    table = bt.table()
    one_graph = "component" not in table.columns or table["component"].nunique() <= 1
    # the rank sets: Normal draws with the fit's cluster-robust covariance (the same draws for the same agents,
    # whoever else plays), or the bootstrap's replicates where the graph falls apart into separately fitted parts
    draws = (covariance_draws(bt.fit, comparisons, table.set_index("agent")["rating"], seed)
             if one_graph and bt.fit is not None
             else bootstrap_draws(bt.bootstrap))
    ranked, critical, tier_tests = ranked_block(table, draws, level)
    seats = seat_effect(store, matches, results, said)
    elo = rate(comparisons, "elo", seed=seed)
    votes = _votes(matches, results, min_games, seed, notes)
    positions = votes[votes["ranked"].astype(bool)].pivot_table(index="agent", columns="method", values="rank",
                                                                aggfunc="first")
    masses = _masses(comparisons, list(ranked["agent"]), seed, notes)
    rest = table[~table["agent"].isin(ranked["agent"])].assign(rank=np.nan)
    rest = rest.sort_values(["rating", "matches", "agent"], ascending=[False, False, True], na_position="last")
    board = pd.concat([ranked.assign(block="ranked"),
                       rest.assign(block=np.where(rest["rating"].isna(), "no information", "provisional"))],
                      ignore_index=True)
    board["elo"] = board["agent"].map(elo.table().set_index("agent")["rating"])
    for method in positions.columns:
        board[method] = board["agent"].map(positions[method])
    for column in masses.columns:
        board[column] = board["agent"].map(masses[column])
    first = ["block", "rank", "tier", "agent", "rating", "lower", "upper", "rank_set", "joint_rank_set",
             "could_be_first", "elo"]
    last = ["runner_metric", "matches", "status"]
    middle = list(positions.columns) + list(masses.columns)
    board = board.reindex(columns=first + middle + [c for c in last if c in board.columns])
    board[["rank", "tier"]] = board[["rank", "tier"]].astype("Int64")
    best = list(ranked.loc[ranked["could_be_first"].astype(bool), "agent"])
    said.append(f"{len(ranked)} established agent(s) ranked; {len(rest)} listed below without a rank (provisional "
                 f"or without information). Could be first at {level:.0%}: {', '.join(best) or 'none'}")
    sets = ranked[["agent", "rank", "rank_lower", "rank_upper", "joint_lower", "joint_upper", "could_be_first",
                   "tier"]]
    tables = {"leaderboard": board, "rank_sets": sets, "tier_tests": tier_tests,
              **({"seat_effect": seats} if len(seats) else {})}
    return Result("leaderboard", tables, notes + said, bt.diagnostics,
                  fields={"could_be_first": best, "level": level, "critical": critical, "said": said,
                          "runner_numbers": runner_numbers},
                  value=Board(bt, elo, votes))
