"""A self-check of every output referee prints about agents' strength (`referee check`, `referee.check(...)`):
the ratings, the leaderboard and every pairwise comparison of one store and scope, computed through the jobs
themselves and read side by side as a reader would, so that they cannot contradict each other.

Invariants (each violation is one row of the `violations` table: invariant, where, what):

- every rank the ratings print lies inside the board's marginal set, and the ratings' and the leaderboard's
  rank sets, tiers, statuses and ratings are identical agent by agent (one inference, read twice);
- every estimate lies inside its own interval (open ends counted as open);
- compare's P(better), p and interval agree: a pair whose interval holds 0 has P in [0.025, 0.975] and p >= 0.05;
- tiers agree with their tests: every tier boundary has its neighbours' Holm p <= 1 - level, and tier 1 holds
  every agent that could be first; the set of the best holds every agent whose simultaneous set starts at 1;
- no seat effect is printed unless the store records seats (`referee.prepare.covariates.seats`);
- statuses are by information: an established agent has at least MIN_MATCHES matches whatever its strength,
  and the agent with the most wins per match among the established is ranked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.run.result import CheckJobResult, Result

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
    for row in tier_tests[tier_tests["new_tier"].astype(bool)].itertuples():
        if not row.p_holm <= 1 - level:
            say("tiers agree with their tests", f"{row.agent} | {row.next}", f"a new tier at p_holm {row.p_holm:.3g}")
    ranked = board[board["block"] == "ranked"]
    best = ranked[ranked["could_be_first"].astype(bool)]
    if len(best) and (best["tier"] != 1).any():
        say("tiers agree with their tests", ", ".join(best.loc[best["tier"] != 1, "agent"]),
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
