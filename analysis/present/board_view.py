"""The leaderboard as a page prints it: two tables cut from the leaderboard job's one table (`referee.run.ratings.leaderboard`),
each narrow enough for A4.

- `board_view`: rank, tier, agent, rating, its 95 % interval, the marginal and simultaneous rank sets, could be
  first, the runner's own headline number(s), matches and status (at most 12 columns);
- `methods_view`: agent, the contest's Elo, each voting method's position, and Nash averaging's and alpha-Rank's
  masses (each method apart, right below the board).

Cells are text as `referee.present.cells` writes them: an open interval end is "open" or a one-sided bound, a rank
set "3–9" with an en dash, a missing value a dash, a status its word alone (established, provisional, no
information; the reason is in the job's table). The numbers themselves are in the job's table and its CSV.
"""

from __future__ import annotations

import pandas as pd

from referee.result import LeaderboardJobResult
from referee.present.cells import MISSING, cell_text, readable

MAX_COLUMNS = 12  # what fits an A4 page in the report's type
FIXED_COLUMNS = 10  # the board's own columns (all but the runner's numbers)


def _interval(lower, upper) -> str:
    """A 95 % interval in Elo points: 'low–high', '≥ low' or '≤ high' where one end is open, 'open' for both."""
    low_open = pd.isna(lower) or lower == float("-inf")
    high_open = pd.isna(upper) or upper == float("inf")
    if low_open and high_open:
        return "open" if not (pd.isna(lower) and pd.isna(upper)) else MISSING
    if high_open:
        return f"≥ {lower:.0f}"
    if low_open:
        return f"≤ {upper:.0f}"
    return f"{lower:.0f}–{upper:.0f}"


def _set(text) -> str:
    return MISSING if pd.isna(text) or text == "" else str(text).replace("-", "–")


def board_view(table: pd.DataFrame, runner_columns: list[str] | tuple[str, ...] = ()) -> pd.DataFrame:
    """The leaderboard's printed table (module doc) from the leaderboard job's table (`block`, `rank`, `tier`,
    `agent`, `rating`, `lower`, `upper`, `rank_set`, `joint_rank_set`, `could_be_first`, `matches`, `status` and
    the runner's own columns named in `runner_columns`): text cells, rows in the job's order, at most
    MAX_COLUMNS columns (the runner's columns beyond that are left to the second table and the CSV)."""
    shown_runner = [c for c in runner_columns if c in table.columns][:MAX_COLUMNS - FIXED_COLUMNS]
    out = pd.DataFrame({
        "rank": table["rank"].map(cell_text),
        "tier": table["tier"].map(cell_text),
        "agent": table["agent"].astype(str),
        "rating": table["rating"].map(lambda v: MISSING if pd.isna(v) else f"{v:.0f}"),
        "95 % interval": [_interval(lo, hi) for lo, hi in zip(table["lower"], table["upper"])],
        "rank set": table["rank_set"].map(_set),
        "joint rank set": table["joint_rank_set"].map(_set),
        "could be first": table["could_be_first"].map(lambda v: MISSING if pd.isna(v) else "yes" if v else "no"),
    })
    for column in shown_runner:
        out[column] = table[column].map(cell_text)
    out["matches"] = table["matches"].map(cell_text)
    out["status"] = table["status"].map(lambda s: cell_text(s).split(":")[0])  # the reason is in the CSV
    return out.reset_index(drop=True)


def methods_view(methods: pd.DataFrame) -> pd.DataFrame:
    """Each method's own reading of the same agents, in the board's order: the leaderboard's `agent` column and
    its method columns (the contest's Elo, voting positions, Nash and alpha-Rank masses), as text."""
    return readable(methods).reset_index(drop=True)


def leaderboard_view(result: LeaderboardJobResult) -> pd.DataFrame:
    """The board a terminal prints for the leaderboard job's Result (`board_view` of its table)."""
    return board_view(result.table(), result.runner_columns)
