"""A self-check of every output referee prints about agents' strength (`referee check`, `referee.check(...)`):
the ratings, the leaderboard and every pairwise comparison of one store and scope, computed through the jobs
themselves and read side by side as a reader would, so that they cannot contradict each other.

Invariants (each violation is one row of the `violations` table: invariant, where, what):

- every rank the ratings print lies inside the board's marginal set, and the ratings' and the leaderboard's
  rank sets, tiers, statuses and ratings are identical agent by agent (one inference, read twice);
- every estimate lies inside its own interval (open ends counted as open);
- compare's P(better), p and interval agree: a pair whose interval holds 0 has P in [0.025, 0.975] and p >= 0.05;
- tiers agree with the joint rank sets, recomputed here from the printed sets (not by the code that cut them): a
  tier starts exactly where every agent above has a simultaneous set entirely above every agent below, and tier 1
  holds every agent that could be first; the set of the best holds every agent whose simultaneous set starts at 1;
- rank sets no pair test contradicts: two agents whose printed marginal sets share no rank are separated by
  compare's own test (p < 1 - level);
- no seat effect is printed unless the store records seats (`referee.prepare.covariates.seats`);
- statuses are by information: an established agent played at least MIN_MATCHES matches.

Each is shown to fail on a planted contradiction (tests/test_one_truth.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.ratings.bootstrap import MIN_MATCHES
from referee.run.ratings.rating_labels import ESTABLISHED
from referee.result import CheckJobResult, Result

COLUMNS = ["invariant", "where", "what"]


def _inside(value, lower, upper) -> bool:
    return bool(lower - 1e-9 <= value <= upper + 1e-9)


def check_outputs(ratings: pd.DataFrame, board: pd.DataFrame, tier_tests: pd.DataFrame, pairs: pd.DataFrame,
                  seat_printed: bool, seats_recorded: bool, level: float = 0.95) -> pd.DataFrame:
    """The violations (invariant, where, what) among outputs already computed: `ratings` (the ratings job's
    table, Bradley-Terry), `board` (the leaderboard's table), `tier_tests`, `pairs` (compare --all), whether a
    seat effect was printed and whether the store records seats. Empty when every invariant holds."""
    found: list[dict] = []

    def say(invariant: str, where: str, what: str) -> None:
        found.append({"invariant": invariant, "where": where, "what": what})

    rows = ratings.set_index("agent")
    lead = board.set_index("agent")
    for agent in lead.index.intersection(rows.index):
        for column in ("status", "rank_set", "joint_rank_set", "tier"):
            if column in rows.columns and column in lead.columns:
                x, y = rows.at[agent, column], lead.at[agent, column]
                if not (pd.isna(x) and pd.isna(y)) and str(x) != str(y):
                    say("one truth", f"{agent}.{column}", f"ratings print {x!r}, the leaderboard {y!r}")
        x, y = rows.at[agent, "rating"], lead.at[agent, "rating"]
        if not (pd.isna(x) and pd.isna(y)) and not np.isclose(x, y, rtol=0, atol=1e-6):
            say("one truth", f"{agent}.rating", f"ratings print {x}, the leaderboard {y}")
    for name, table in (("ratings", ratings), ("leaderboard", board)):
        rated = table[table["rating"].notna()]
        for row in rated.itertuples():
            if not _inside(row.rating, row.lower, row.upper):
                say("estimate inside its interval", f"{name}: {row.agent}", f"{row.rating} outside "
                    f"[{row.lower}, {row.upper}]")
        ranked = table[table["rank"].notna()] if "rank" in table.columns else table.iloc[0:0]
        for row in ranked.itertuples():
            if "rank_set" in table.columns and isinstance(row.rank_set, str) and row.rank_set:
                low, _, high = row.rank_set.partition("-")
                if not int(low) <= int(row.rank) <= int(high or low):
                    say("rank inside its set", f"{name}: {row.agent}", f"rank {row.rank} outside set {row.rank_set}")
    for row in pairs.itertuples():
        holds = row.lower <= 0 <= row.upper
        if holds and (row.p_better < 0.025 or row.p_better > 0.975 or row.p_value < 0.05):
            say("compare agrees with itself", f"{row.agent_a} vs {row.agent_b}",
                f"P = {row.p_better:.3f}, p = {row.p_value:.3g} beside an interval {row.lower:+.0f} to "
                f"{row.upper:+.0f} that holds 0")
        if not (np.isnan(row.lower) and np.isnan(row.upper)) and not _inside(row.difference, row.lower, row.upper):
            say("estimate inside its interval", f"{row.agent_a} vs {row.agent_b}", "difference outside its interval")
    _check_tiers(board, say)
    _check_sets_against_pairs(board, pairs, level, say)
    established = board[board["status"] == ESTABLISHED] if "status" in board.columns else board.iloc[0:0]
    for row in established[established["matches"] < MIN_MATCHES].itertuples():
        say("status by information", row.agent, f"established after {row.matches} match(es), fewer than "
            f"{MIN_MATCHES}")
    ranked = board[board["block"] == "ranked"]
    best = ranked[ranked["could_be_first"].astype(bool)]
    if len(best) and (best["tier"] != 1).any():
        say("tiers agree with the joint sets", ", ".join(best.loc[best["tier"] != 1, "agent"]),
            "could be first but not in tier 1")
    if "joint_rank_set" in ranked.columns:
        starts = ranked["joint_rank_set"].astype(str).str.split("-").str[0]
        opened = ranked.loc[starts == "1", "agent"]
        missing = sorted(set(opened) - set(best["agent"]))
        if missing:
            say("set of the best", ", ".join(missing), "a simultaneous set starts at 1 but not marked could be first")
    if seat_printed and not seats_recorded:
        say("seats only from the data", "seat_effect", "a seat effect printed for a store that records no seat")
    return pd.DataFrame(found, columns=COLUMNS)


def _bounds(text) -> tuple[int, int] | None:
    """(low, high) of a printed rank set ('3' or '2-5'); None where there is none."""
    if not isinstance(text, str) or not text:
        return None
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def _check_tiers(board: pd.DataFrame, say) -> None:
    """Tiers against the printed simultaneous sets: down each component's ranks, a tier starts exactly where the
    largest upper bound above is smaller than the smallest lower bound below."""
    ranked = board[board["block"] == "ranked"]
    component = ranked["component"] if "component" in ranked.columns else pd.Series(1, index=ranked.index)
    for _, part in ranked.groupby(component.fillna(1)):
        part = part.sort_values("rank")
        sets = [_bounds(t) for t in part["joint_rank_set"]]
        tiers = part["tier"].astype(int).tolist()
        names = part["agent"].tolist()
        for i in range(1, len(part)):
            starts = max(hi for _, hi in sets[:i]) < min(lo for lo, _ in sets[i:])
            if starts != (tiers[i] == tiers[i - 1] + 1) or tiers[i] - tiers[i - 1] not in (0, 1):
                say("tiers agree with the joint sets", f"{names[i - 1]} | {names[i]}",
                    f"tiers {tiers[i - 1]} and {tiers[i]} where the joint sets {'part' if starts else 'overlap'}")


def _check_sets_against_pairs(board: pd.DataFrame, pairs: pd.DataFrame, level: float, say) -> None:
    """Two printed marginal sets that share no rank need compare's own test to separate the pair."""
    sets = {row.agent: _bounds(row.rank_set) for row in board.itertuples() if _bounds(row.rank_set)}
    for row in pairs.itertuples():
        a, b = sets.get(row.agent_a), sets.get(row.agent_b)
        if a is None or b is None:
            continue
        apart = a[1] < b[0] or b[1] < a[0]
        if apart and not row.p_value < 1 - level:
            say("rank sets agree with the pair's test", f"{row.agent_a} vs {row.agent_b}",
                f"sets {row.agent_a}: {a[0]}-{a[1]} and {row.agent_b}: {b[0]}-{b[1]} share no rank, but compare's "
                f"p = {row.p_value:.3g}")


def check(store, runner: str | None = None, phase: list[str] | None = None, where: list[str] | None = None,
          parallel: bool = False, seed: int = 0) -> CheckJobResult:
    """Run ratings (bt), leaderboard and compare --all on one store and scope through the jobs themselves and
    check them side by side (module doc). Main table `violations` (empty when all hold); the result fails (the
    command exits 1) when any invariant is broken. Fields: `checked` (what was read), `violations` (count)."""
    from referee.models.registry import methods_with
    from referee.prepare.covariates import seats
    from referee.run.job_table import JOBS
    from referee.run.stored import stored_tables

    def job(name: str, *args, **options) -> Result:
        return JOBS[name].compute(*args, **options)

    scope = dict(runner=runner, phase=phase, where=where, parallel=parallel, seed=seed)  # as each job takes them
    [board_method] = methods_with(board=True)
    ratings = job("ratings", store, method=board_method, **scope)
    board = job("leaderboard", store, **scope)
    pairs = job("compare", store, all=True, **scope)
    matches, results = stored_tables(store, runner, phase, where)
    recorded = bool(seats(matches, results, store.measures()).notna().any())
    found = check_outputs(ratings.table(), board.table(), board.table("tier_tests"), pairs.table(),
                          "seat_effect" in board.tables, recorded, board.level)
    checked = (f"{len(ratings.table())} agents in the ratings and the leaderboard, {len(pairs.table())} pairs, "
               f"{len(board.table('tier_tests'))} neighbour tests")
    lines = ["every invariant holds: " + checked] if found.empty else [
        f"{len(found)} violation(s) over {checked}:", found.to_string(index=False)]
    return CheckJobResult("check", {"violations": found}, [], {}, fields={"checked": checked, "violations": len(found)},
                  lines=lines, failure=None if found.empty else f"{len(found)} invariant(s) broken")
