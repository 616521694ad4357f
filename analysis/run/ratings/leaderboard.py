"""One leaderboard (`referee leaderboard`, `referee.leaderboard(...)`, the report's first section): every method
side by side, one row per agent, with the ranks a paper can print.

The established agents (the one status rule, `referee.run.ratings.rating_labels`) are ranked, best first, by
Bradley-Terry (Elo scale) with its bootstrap interval, their marginal and simultaneous 95 % rank sets and whether
they could be first (`referee.models.ratings.rank_sets`, from Normal draws with the fit's covariance (cluster-
robust by match where `bradley_terry.clustered` holds) of the established agents alone, so that an agent with a
handful of games can neither lead nor widen the others' sets, and the same agents get the same draws whoever else
plays; could be first by comparisons with the best), tiers (tier 1 down to the last agent that could be first, then
cut where the simultaneous sets part every agent above from every agent below and the neighbours' joint-family test
separates them: table `tier_tests`), the contest's Elo, each voting method's position, and the Nash averaging and
alpha-Rank masses of the game among the established agents. Provisional agents and agents without information
follow in a second block with their rating and interval and no rank.
"""

from __future__ import annotations

import pandas as pd

from dataclasses import dataclass

from referee.models.registry import BOARD_EVERY_COLUMN, MIN_BALLOTS, VOTING_METHODS
from referee.readings import cut_list
from referee.run.executor import sweep_executor
from referee.result import LeaderboardJobResult
from referee.run.stored import selected_tables

BOOTSTRAP = 0  # the board's draws: 0 for Normal draws with the fit's covariance, N for N bootstrap replicates


@dataclass
class Board:
    """What the leaderboard computed, for whoever draws each method apart (the report's appendix):
    `inference` the one inference (`referee.run.ratings.board.Board`: Bradley-Terry, its intervals, statuses, rank sets,
    tiers and pairwise tests), `bt` its Bradley-Terry `RatingResult`, `elo` the contest's Elo (with the same
    statuses), `votes` every voting method's table (`referee.run.ratings.votes.vote_tables`), `comparisons` the
    comparisons it was computed from (`referee.prepare.comparisons`) and `matches`, `results` the store's rows they
    came from (for the games behind the board: `own`)."""

    inference: object
    elo: object
    votes: pd.DataFrame
    comparisons: pd.DataFrame
    matches: pd.DataFrame
    results: pd.DataFrame

    @property
    def own(self) -> pd.DataFrame:
        """Each (unit, agent)'s own match (`referee.prepare.comparisons.unit_matches`: unit, agent, match_id)."""
        from referee.prepare.comparisons import unit_matches

        return unit_matches(self.matches, self.results)

    @property
    def bt(self):
        return self.inference.bt


def _votes(matches, results, methods: list[str], min_games: float, seed: int, notes: list[str],
           comparisons: pd.DataFrame | None) -> pd.DataFrame:
    """The voting methods' tables (`vote_tables`, with the board's `comparisons` where they are the plain ones),
    empty where no method is asked for, and empty (and said) where none can run."""
    from referee.run.ratings.votes import vote_tables

    if methods:
        try:
            return vote_tables(matches, results, methods, min_ballots=min_games, seed=seed, comparisons=comparisons)
        except ValueError as exc:
            notes.append(f"voting methods not run: {exc}")
    return pd.DataFrame(columns=["method", "agent", "rank", "ranked"])


def _masses(comparisons: pd.DataFrame, established: list[str], seed: int, notes: list[str]) -> pd.DataFrame:
    """Nash averaging's equilibrium mass and alpha-Rank's stationary mass in the game among the established
    agents (agent-indexed); not computed below three established agents."""
    from referee.prepare.membership import is_in
    from referee.run.ratings.game_theory import game_ranking

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
    """The advantage of a later seat (turn order) over an earlier one in log-odds, with its 95 % interval
    clustered by match, from the contextual Bradley-Terry with the covariate seat (the same fit as
    `referee ratings --covariate seat`, which also gives the ratings adjusted for it). Only where the data
    record seats (`referee.prepare.covariates.seats`) and two players of a match hold different ones; else
    empty, and nothing is said. Negative: earlier seats win more."""
    from referee.models.ratings.contextual import fit_contextual_bt
    from referee.prepare.covariates import covariate_pairs, seats

    measures = store.measures()
    if seats(matches, results, measures).isna().all():
        return pd.DataFrame()
    try:
        pairs, names, _ = covariate_pairs(matches, results, measures, ["seat"])
        if not len(pairs) or not (pairs["seat_a"] != pairs["seat_b"]).any():
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


def _stages(agents: int, comparisons: int):
    """The leaderboard's stages as a function name -> context: on a board of MANY_AGENTS agents or more (tens of
    seconds at 1,000) each says its line as it ends (`progress.Stages`) after a first line saying the board's size;
    on a smaller one (a few seconds) nothing."""
    from referee.models.progress import sized_stages
    from referee.models.ratings.rank_sets import MANY_AGENTS

    return sized_stages(agents >= MANY_AGENTS, "leaderboard", 2, f"{agents:,} agents, {comparisons:,} comparisons")


def _above_the_first(table: pd.DataFrame, ranked: pd.DataFrame) -> list[str]:
    """A sentence naming the provisional agents rated above the first ranked agent (of its component): they may be
    stronger than every ranked agent, which "could be first" (among the ranked) does not say."""
    out = []
    for component, part in ranked.groupby("component"):
        top = part["rating"].max()
        above = table[(table["block"] == "provisional") & (table["component"] == component) & (table["rating"] > top)]
        if len(above):
            out.append(f"Provisional, rated above the first ranked agent: {cut_list(list(above['agent']))} (too few "
                       "matches to be ranked; they may be stronger than every ranked agent, or not).")
    return out


def _one_tier(ranked: pd.DataFrame, level: float) -> list[str]:
    """A sentence when the ranked agents form one tier in each component, with why: no boundary where every agent
    above has a joint rank set entirely above every agent below."""
    if len(ranked) < 2 or ranked["tier"].max() > 1:  # tiers are numbered within each component
        return []
    return [f"One tier: at {level:.0%} every ranked agent could be first (no agent is credibly below the best), so "
            "the tier column says nothing here and the board does not part the agents into groups; the pairwise "
            "comparisons may still separate single pairs."]


def _with_evidence(inference, comparisons):
    """The board's tier tests with, at each tier boundary, the matches across it (an agent of the tier above against
    one of the tier below) that carry most of its evidence (`referee.run.ratings.games.boundary_evidence`)."""
    from referee.run.ratings.games import boundary_evidence

    tests = inference.tier_tests.copy()
    ranked = inference.ranked
    ratings = ranked.set_index("agent")["rating"].astype(float)
    tier = ranked.set_index("agent")["tier"]
    part = ranked.set_index("agent")["component"]
    evidence = []
    for row in tests.itertuples():
        if not bool(row.new_tier):
            evidence.append("")
            continue
        same = part[part == part[row.agent]].index
        above = [a for a in same if tier[a] == tier[row.agent]]
        below = [a for a in same if tier[a] == tier[row.next]]
        evidence.append(", ".join(boundary_evidence(comparisons, ratings, above, below)))
    return tests.assign(evidence=evidence)


def leaderboard(store, bootstrap: int = BOOTSTRAP, level: float = 0.95, min_games: float = MIN_BALLOTS,
                runner: str | None = None, phase: list[str] | None = None, parallel: bool = False,
                where: list[str] | None = None, seed: int = 0, every_column: bool = False,
                **options) -> LeaderboardJobResult:
    """The leaderboard of a store's runner (module doc). Main table `leaderboard`, one row per agent: block
    (ranked / provisional / no information), rank, tier, agent, rating, lower, upper (Bradley-Terry, Elo
    points, 95 %), rank_set (marginal, `level`), joint_rank_set (simultaneous), could_be_first, elo, one column
    per voting method (its position), nash_mass, alpha_rank_mass, the runner's own headline number(s) as numeric
    columns named as the runner names them (clemscore, accuracy and stderr, ...; where it has one), matches,
    status (on a board of more than BOARD_EVERY_COLUMN agents the voting columns and the masses only with
    `every_column`, and a note says so); `rank_sets` the numeric bounds with each agent's p-value of being the best
    (p_best); `tier_tests` each
    pair of neighbours' difference, the family its tier boundary reads with that family's p-value, its Holm p
    beside it, the joint bounds (`board.neighbour_tests`) and at a boundary the matches across it that carry most
    of its evidence (`evidence`); `seat_effect` the advantage of a later seat where the matches
    record seats (`seat_effect`). Every rank, set, tier and status is the board's (`referee.run.ratings.board`).
    Fields: `could_be_first` (agents), `level`, `critical` (the critical values per component), `said` (what
    the board found, as sentences), `runner_numbers` (the first of them), `runner_columns` (the runner's own
    columns), `methods` (each method's own columns: elo, voting positions, masses), `summary` (the one sentence on
    how many are ranked and who could be first, which the report puts above the board); `value` a `Board`."""
    from referee.prepare.comparisons import comparisons_and_agents
    from referee.run.ratings.board import infer_board
    from referee.run.ratings.ratings import informed_of, rate
    from referee.run.ratings.runner_numbers import require_rated, stored_runner_numbers

    matches, results, notes = selected_tables(store, runner, phase, where)
    comparisons, agents = comparisons_and_agents(matches, results, parallel=parallel)
    require_rated(comparisons, matches, results)
    stage = _stages(len(agents), len(comparisons))
    informed = informed_of(comparisons)  # the statuses the board and its Elo column both read
    with stage("the board: Bradley-Terry, its intervals, rank sets and tiers"), sweep_executor(options) as executor:
        inference = infer_board(comparisons, agents, bootstrap=bootstrap, level=level, seed=seed, executor=executor,
                                informed=informed)
    notes += inference.bt.notes
    table, runner_numbers = stored_runner_numbers(store, inference.table, matches, results, headline_only=True)
    runner_columns = [c for c in table.columns if c not in inference.table.columns]
    said = list(runner_numbers)  # statements of what the board found, not warnings
    ranked = table[table["block"] == "ranked"]
    with stage("Elo, the seat effect and the other methods' columns"):
        seats = seat_effect(store, matches, results, said)
        elo = rate(comparisons, "elo", seed=seed, informed=informed)
        large = len(table) > BOARD_EVERY_COLUMN and not every_column
        if large:
            notes.append(f"a board of {len(table):,} agents (over {BOARD_EVERY_COLUMN}): the voting methods' "
                         f"columns ({', '.join(VOTING_METHODS)}) and nash_mass and alpha_rank_mass are not computed "
                         "(they cost more than the board itself, and minutes at 1,000 agents); `--every-column` "
                         "computes them here, `referee rank --method NAME` one alone")
        votes = _votes(matches, results, [] if large else list(VOTING_METHODS), min_games, seed, notes,
                       None if parallel else comparisons)
        positions = votes[votes["ranked"].astype(bool)].pivot_table(index="agent", columns="method", values="rank",
                                                                    aggfunc="first")
        masses = _masses(comparisons, list(ranked["agent"]), seed, notes) if not large else pd.DataFrame()
    board = table.copy()
    board["elo"] = board["agent"].map(elo.table().set_index("agent")["rating"])
    for method in positions.columns:
        board[method] = board["agent"].map(positions[method])
    for column in masses.columns:
        board[column] = board["agent"].map(masses[column])
    first = ["block", "rank", "tier", "agent", "rating", "lower", "upper", "rank_set", "joint_rank_set",
             "could_be_first"]
    methods = ["elo", *positions.columns, *masses.columns]
    board = board.reindex(columns=first + methods + runner_columns + ["matches", "status"])
    best = inference.could_be_first
    rest = len(board) - len(ranked)
    others = f"; {rest} listed below without a rank (provisional or without information)" if rest else ""
    summary = (f"{len(ranked)} of {len(board)} agents ranked{others}. Could be first among the ranked agents at "
               f"{level:.0%}: {cut_list(best) or 'none'}.")
    said.append(summary)
    said += _above_the_first(table, ranked) + _one_tier(ranked, level)
    sets = ranked[["agent", "component", "rank", "rank_lower", "rank_upper", "joint_lower", "joint_upper",
                   "could_be_first", "p_best", "tier"]].reset_index(drop=True)
    tables = {"leaderboard": board, "rank_sets": sets, "tier_tests": _with_evidence(inference, comparisons),
              **({"seat_effect": seats} if len(seats) else {})}
    return LeaderboardJobResult("leaderboard", tables, notes + said, inference.bt.diagnostics,
                  fields={"could_be_first": best, "level": level, "critical": inference.critical, "said": said,
                          "runner_numbers": runner_numbers, "runner_columns": runner_columns, "methods": methods,
                          "summary": summary},
                  value=Board(inference, elo, votes, comparisons, matches, results))
