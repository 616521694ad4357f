"""Player pairs with covariates, for the contextual Bradley-Terry model (`referee.models.ratings.contextual`).

`covariate_pairs(matches, results, measures, covariates)` gives one row per pair of players of different agents
within a match (match_id, a, b, outcome 1 / 0 / 0.5 for a by score, else by rank) with, for every covariate,
its value for each side (`NAME_a`, `NAME_b`). Covariates:

- `seat`: the player's position in the match (turn order, 0 first), only where the data say it: a per-player
  measure named `seat` (a table's seat column ingested as a measure), or, for a runner whose format numbers its
  players by seat (its runner entry declares `seats`: Kaggle's and GTBench's `seat {i}`, TextArena's
  `player {id}`), the number the player name ends with. Never from agent names, never from the order of the
  results: a store without seats gets a ValueError saying so (`seats`);
- `role`: one 0/1 column per role (`role=Mafia` ...), the most common role left out as the reference;
- `measure:NAME`: the player's measure NAME (e.g. an arena answer's length), its mean when recorded several
  times; a pair where either side lacks it is left out, and counted;
- `style:NAME`: a property of the pair, not of either player: Chatbot Arena's style feature of the two
  players' measure NAME, (x_a - x_b) / (x_a + x_b) (0 where both are 0), standardised over the pairs
  (`style_feature`). It sits in `style:NAME_a`, with `style:NAME_b` 0, so that the model's difference a - b is
  the feature.

Aborted matches and test runs are left out and forfeits lose, as in every rating
(`referee.prepare.selection`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.prepare.selection import ordering_points, with_outcomes, without_excluded
from referee.prepare.membership import is_in
from referee.prepare.comparisons import outcome_of
from referee.names import SEAT_MEASURE




def seated_runners() -> set[str]:
    """Runners whose format numbers each player by its seat (their runner entries' `seats`)."""
    from referee.io.loaders import RUNNERS

    return {name for name, runner in RUNNERS.items() if runner.seats}


def seats(matches: pd.DataFrame, results: pd.DataFrame, measures: pd.DataFrame | None) -> pd.Series:
    """The seat (float, 0 first) of each row of `results`, NaN where the data do not record one (module doc:
    a `seat` measure, else the player number of a runner whose entry declares `seats`)."""
    out = pd.Series(np.nan, index=results.index)
    if measures is not None and len(measures):
        found = measures[(measures["name"] == SEAT_MEASURE) & measures["player"].notna()]
        if len(found):
            value = found.groupby(["match_id", "player"])["value"].first()
            key = pd.MultiIndex.from_arrays([results["match_id"], results["player"]])
            out = pd.Series(value.reindex(key).to_numpy(float), index=results.index)
    runners = seated_runners()
    if not matches["runner"].isin(runners).any():  # no seated runner's match (an arena's million rows): no number
        return out
    seated = results["match_id"].map(matches.set_index("match_id")["runner"]).isin(runners).to_numpy()
    number = pd.Series(np.nan, index=results.index)
    players = results.loc[seated, "player"].astype(str)  # the player number, read where a seated runner wrote it
    number[seated] = players.str.extract(r"(\d+)\s*$")[0].astype(float).to_numpy()
    return out.where(out.notna(), number)


def covariate_pairs(matches: pd.DataFrame, results: pd.DataFrame, measures: pd.DataFrame | None,
                    covariates: list[str]) -> tuple[pd.DataFrame, list[str], list[str]]:
    """(pairs, covariate column names, notes) for `covariates` (see the module docstring); ValueError for an
    unknown covariate or a role covariate where no result has a role."""
    matches, results = with_outcomes(without_excluded(matches), results)
    players = results[is_in(results["match_id"], matches["match_id"])].reset_index(drop=True)
    players = players.assign(points=ordering_points(players))
    names, notes = [], []
    for cov in covariates:
        if cov == "seat":
            players["seat"] = seats(matches, players, measures)
            if players["seat"].isna().all():
                raise ValueError("--covariate seat: no match records its players' seats (a per-player measure "
                                 f"'{SEAT_MEASURE}', or a runner whose format numbers players by seat: "
                                 f"{', '.join(sorted(seated_runners()))}); a seat is never read from names")
            names.append("seat")
        elif cov == "role":
            roles = players["role"].dropna()
            if roles.empty:
                raise ValueError("--covariate role: no result records a role")
            reference = roles.value_counts().index[0]
            for role in sorted(set(roles) - {reference}):
                players[f"role={role}"] = (players["role"] == role).astype(float)
                names.append(f"role={role}")
            notes.append(f"role effects are against the most common role, {reference!r}")
        elif cov.startswith(("measure:", "style:")):
            name = cov.split(":", 1)[1]
            found = measures[(measures["name"] == name) & measures["player"].notna()] if measures is not None else None
            if found is None or found.empty:
                raise ValueError(f"--covariate {cov}: no per-player measure named {name!r} in the store")
            values = found.groupby(["match_id", "player"])["value"].mean().rename(cov)
            players = players.merge(values, left_on=["match_id", "player"], right_index=True, how="left")
            names.append(cov)
        else:
            raise ValueError(f"unknown covariate {cov!r}: seat, role, measure:NAME or style:NAME")
    keep = ["match_id", "player", "agent", "points"] + names
    left = players[keep].rename(columns={"agent": "a", "points": "pa", "player": "player_a"} | {n: f"{n}_a" for n in names})
    right = players[keep].rename(columns={"agent": "b", "points": "pb", "player": "player_b"} | {n: f"{n}_b" for n in names})
    pairs = left.merge(right, on="match_id")
    pairs = pairs[(pairs["player_a"] < pairs["player_b"]) & (pairs["a"] != pairs["b"]) & pairs["pa"].notna()
                  & pairs["pb"].notna()]
    pairs = pairs.assign(outcome=outcome_of(pairs["pa"].to_numpy(float), pairs["pb"].to_numpy(float)))
    value_cols = [f"{n}_{side}" for n in names for side in "ab"]
    lacking = pairs[value_cols].isna().any(axis=1) if value_cols else pd.Series(False, index=pairs.index)
    if lacking.any():
        notes.append(f"{int(lacking.sum())} of {len(pairs)} pairs lack a covariate value and are left out")
    pairs = pairs[~lacking].reset_index(drop=True)
    for name in names:
        if name.startswith("style:"):
            feature, note = style_feature(pairs[f"{name}_a"].to_numpy(float), pairs[f"{name}_b"].to_numpy(float))
            pairs[f"{name}_a"], pairs[f"{name}_b"] = feature, 0.0
            notes.append(f"{name}: {note}")
    return pairs, names, notes


def style_feature(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, str]:
    """Chatbot Arena's style feature of two sides' measures a, b (m,): (a - b) / (a + b), 0 where a + b is 0,
    standardised to mean 0 and sd 1 over the m pairs (its effect is then per sd of the feature). Returns the
    feature (m,) and a sentence giving the mean and sd it was standardised by; ValueError when the feature
    does not vary (nothing to control for)."""
    total = a + b
    share = np.divide(a - b, total, out=np.zeros_like(total, dtype=float), where=total != 0)
    sd = float(share.std())
    if not np.isfinite(sd) or sd == 0:
        raise ValueError("the style feature (a - b) / (a + b) is the same in every pair: nothing to control for")
    mean = float(share.mean())
    return (share - mean) / sd, (f"(a - b) / (a + b) standardised by its mean {mean:.4g} and sd {sd:.4g} over "
                                 f"{len(share)} pairs; its effect is per sd")
