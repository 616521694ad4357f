"""Slices of a store's matches for per-slice leaderboards (`referee ratings --by tag|role|scenario|phase`).

`slices(matches, results, tags, by)` yields (slice name, matches, results) for each value of `by`:

- `scenario`, `phase`: the matches with that scenario or phase (matches without one are in no slice);
- `tag`: the matches whose scenario carries the tag (`scenario_tags`); a match is in every slice of its tags;
- `role`: in every match, the players who held that role: a role's leaderboard compares agents that played it
  against each other (players of other roles are not in the slice).

Each slice is rated on its own, so every leaderboard stands on its slice's evidence alone.
"""

from __future__ import annotations

from typing import Iterator

import pandas as pd

SLICES = ("tag", "role", "scenario", "phase")


def slices(matches: pd.DataFrame, results: pd.DataFrame, tags: pd.DataFrame, by: str
           ) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """(name, matches, results) per slice value of `by`, in name order; ValueError when nothing is sliced."""
    if by not in SLICES:
        raise ValueError(f"slices are by one of {SLICES}, got {by!r}")
    if by == "role":
        values = sorted(results["role"].dropna().unique())
        if not values:
            raise ValueError("--by role: no result records a role")
        for role in values:
            chosen = results[results["role"] == role]
            yield str(role), matches[matches["match_id"].isin(chosen["match_id"])], chosen
        return
    if by == "tag":
        tagged = matches.merge(tags, on="scenario")
        if tagged.empty:
            raise ValueError("--by tag: no match's scenario has a tag in the catalogue")
        groups = tagged.groupby("tag")["match_id"]
    else:
        if matches[by].isna().all():
            raise ValueError(f"--by {by}: no match records a {by}")
        groups = matches.dropna(subset=[by]).groupby(by)["match_id"]
    for name, ids in groups:
        keep = set(ids)
        yield str(name), matches[matches["match_id"].isin(keep)], results[results["match_id"].isin(keep)]
