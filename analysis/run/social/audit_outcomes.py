"""What the construct-validity audit judges against and reads from the runners' declarations: which way each
outcome is better (`outcome_directions`: as given, as the runner's format or the formula declares, as the schema
defines the derived ones; never guessed), which outcomes cannot judge a score (`function_of_score`: a win or rank
computed from it; `is_the_score`: the score itself), and which events are the agents' own (`agents_events`: a
runner's own roles, such as clem's game master, left out). Pure functions of the audit's per-player frame.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from referee.models.validity.formula import Formula


DERIVED = ("win", "rank", "score")  # outcomes computed from the results table, not recorded as measures
SCHEMA_DIRECTIONS = {"win": "higher", "rank": "lower", "score": "higher"}  # defined by the canonical schema


def agents_events(events: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """The events as the spectator check reads them: without the runner's own roles' (`frame.attrs
    ["runner_roles"]`, what each runner's format declares as its own: clem's game master GM by name, Concordia's
    game masters by their events' type), each actor named as `frame`'s players are ('match/player' where the
    audit spans several matches)."""
    roles = frame.attrs.get("runner_roles", {})
    own = events[~events["actor"].isin(roles.get("actors", ())) & ~events["type"].isin(roles.get("types", ()))]
    if _named_by_match(frame):
        own = own.assign(actor=own["match_id"] + "/" + own["actor"].astype(str))
    return own


def _named_by_match(frame: pd.DataFrame) -> bool:
    """Whether `frame`'s players are named 'match/player' (`audit_frame` names them so when it spans several
    matches)."""
    if "match_id" not in frame.columns or frame.empty:
        return False
    return all(str(p).startswith(f"{m}/") for m, p in zip(frame["match_id"], frame["player"]))


def runner_roles(runners: list[str]) -> dict[str, set[str]]:
    """The runners' own roles, which are neither agents nor spectators, as their formats declare them: 'actors'
    (a runner entry's `actors`: clem's GM) and 'types' (its `event_types`: the events a Concordia game master
    writes, whatever it is called)."""
    from referee.io.loaders import entry

    declared = [entry(runner) for runner in runners]
    return {"actors": {a for r in declared for a in r.actors}, "types": {t for r in declared for t in r.event_types}}


def stored_directions(measures: pd.DataFrame) -> dict[str, str]:
    """Outcome directions stored with the measures (`measures.direction`, e.g. from a mapping file's
    [measures]): outcome name -> 'higher' or 'lower'; a name stored both ways is left out."""
    if "direction" not in measures:
        return {}
    ways = measures.dropna(subset=["direction"]).groupby("name")["direction"].unique()
    return {name: found[0] for name, found in ways.items() if len(found) == 1}


def runner_directions(runners: list[str]) -> dict[str, str]:
    """Outcome directions the runners' formats declare (a runner entry's `outcome_directions`, documented in
    its format file): outcome name -> 'higher' or 'lower'. A name two runners declare both ways is left out."""
    from referee.io.loaders import entry

    found: dict[str, str] = {}
    clash: set[str] = set()
    for runner in runners:
        for name, way in entry(runner).outcome_directions.items():
            if found.get(name, way) != way:
                clash.add(name)
            found[name] = way
    return {k: v for k, v in found.items() if k not in clash}


class UndeclaredDirection(ValueError):
    """An outcome whose better direction nobody declared: the audit never guesses it."""


def declared_directions(outcomes: list[str], formula: Formula | None = None,
                        given: dict[str, str] | None = None) -> dict[str, str | None]:
    """Which way each outcome is declared better ('higher' or 'lower', None where nobody declared it): as given
    (`--outcome NAME:higher|lower`, or the runner's format), else as the formula's [outcomes] table declares,
    else as the schema defines the derived outcomes (win: higher, rank: lower)."""
    given, declared = given or {}, formula.outcomes if formula else {}
    return {o: given.get(o) or declared.get(o) or SCHEMA_DIRECTIONS.get(o) for o in outcomes}


def outcome_directions(outcomes: list[str], formula: Formula | None = None, given: dict[str, str] | None = None,
                       assume: str | None = None) -> dict[str, str]:
    """`declared_directions` with every outcome filled: an outcome declared nowhere raises UndeclaredDirection
    saying how to declare it, unless `assume` ('higher' or 'lower') is given, which the caller must state
    beside the result (the report does)."""
    found = declared_directions(outcomes, formula, given)
    missing = [o for o, way in found.items() if way is None]
    if missing and assume is None:
        first = missing[0]
        raise UndeclaredDirection(
            f"which way is better for outcome(s) {missing} is not declared, and the audit does not guess it: say "
            f"--outcome {first}:higher (a higher {first} is better) or --outcome {first}:lower, or declare it in the "
            "scoring formula's [outcomes] table")
    return {o: way or assume for o, way in found.items()}


def function_of_score(frame: pd.DataFrame, outcome: str) -> bool:
    """True when, in every match, the outcome is a monotone function of the score (equal scores, equal
    outcomes; a higher score never a worse outcome, or never a better one): a derived outcome such as
    a win or a rank computed from the points. Needs at least 3 players with the outcome."""
    data = frame.dropna(subset=[outcome, "score"])
    if len(data) < 3 or data[outcome].nunique() < 2:
        return False
    ups = downs = True
    for _, g in data.groupby("match_id" if "match_id" in data.columns else np.zeros(len(data))):
        per_score = g.groupby("score")[outcome].nunique()
        if (per_score > 1).any():
            return False
        values = g.groupby("score")[outcome].first().sort_index().to_numpy(float)
        steps = np.diff(values)
        ups &= bool((steps >= 0).all())
        downs &= bool((steps <= 0).all())
    return ups or downs


def is_the_score(frame: pd.DataFrame, outcome: str) -> bool:
    """Whether an outcome column holds the audited score itself (equal to `score` on every row carrying both, at
    least one): clem's `Main Score` is both an episode measure and the score its players are audited on, and
    holding it constant or judging the score against it cannot fail."""
    if "score" not in frame.columns or outcome not in frame.columns:
        return False
    both = frame[["score", outcome]].dropna()
    return bool(len(both)) and bool(np.allclose(both["score"].astype(float), both[outcome].astype(float)))
