"""The one inference behind every number referee prints about an agent's strength: `infer_board(comparisons)`.

One Bradley-Terry fit (`referee.run.ratings.ratings.rate`, method `bt`, the Elo scale) and one sampling distribution of
its ratings per connected part of the comparison graph: Normal with the fit's covariance (cluster-robust by
match where a match holds several pairs and there are more matches than agents, `bradley_terry.bt_covariance`),
or, when a bootstrap is asked for, its replicates. From those, once:

- each agent's rating, interval (`referee.run.ratings.intervals.finish`: open where the agent never lost or never won),
  matches and status (`referee.run.ratings.rating_labels`: by information, never by strength);
- every pair's difference d (Elo points) and its standard error se (`Board.pair`): P(better) = Phi(d / se), the
  two-sided p = 2 Phi(-|d| / se) and the 95 % interval d -/+ 1.96 se, open on a side where either agent's
  interval is open; one computation, so an interval that holds 0 never sits beside P > 0.975 or p < 0.05;
- the established agents' rank (within their component), marginal and simultaneous rank sets, the set of the
  best and tiers (`referee.models.ratings.rank_sets`, step down, with the same se: no set contradicts a pair's
  own test, and tiers are cut where the simultaneous sets part), and each pair of neighbours' Holm-adjusted
  test with the joint bounds its boundary reads (`tier_tests`).

`ratings` (method bt), `leaderboard`, `compare`, the report and `referee paper` read this object; none of
them computes a rank interval, a status or a pairwise probability of its own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri  # the standard Normal's cdf and quantile (scipy.stats costs a second to load)

from referee.models.ratings.rank_sets import alpha
from referee.run.ratings.intervals import ROBUST_WALD
from referee.prepare.membership import agents_in
from referee.models.codes import positions
from referee.run.ratings.rating_labels import ESTABLISHED

LEVEL = 0.95
DRAWS = 4000  # Normal draws of each component's ratings for the rank sets' critical values
PAIR_LEVEL = 0.95  # a pair's difference interval (compare): its level whatever the board's rank-set level
Z = float(ndtri(0.5 + PAIR_LEVEL / 2))
SET_COLUMNS = ["rank", "tier", "rank_set", "joint_rank_set", "could_be_first"]  # what every rating table reads


@dataclass
class Board:
    """One inference (module doc). `bt` the Bradley-Terry `RatingResult`; `table` one row per agent: agent,
    rating, lower, upper (Elo points; -inf / +inf where open), interval, matches, status, component, block
    (ranked / provisional / no information), rank, tier, rank_set, joint_rank_set (text), rank_lower,
    rank_upper, joint_lower, joint_upper, could_be_first; `tier_tests` each pair of ranked neighbours'
    difference with its Holm-adjusted p-value and the simultaneous bounds its tier boundary reads; `critical` the critical values per component; `se` the pairs'
    standard errors (agent x agent DataFrame, Elo points; NaN across components); `p_holm` the Holm-adjusted
    p-values among each component's ranked agents (agent x agent); `p_joint` the same pairs' step-down max-t
    p-values in the joint family the tiers below tier 1 read (`rank_sets.joint_p_values`); `source` what the draws
    are; `level`. The table's `p_best` is each ranked agent's p-value of "it is the best" (comparisons with the
    best): could_be_first exactly where p_best >= 1 - level."""

    bt: object
    table: pd.DataFrame
    tier_tests: pd.DataFrame
    critical: dict
    se: pd.DataFrame
    p_holm: pd.DataFrame
    p_joint: pd.DataFrame
    source: str
    level: float = LEVEL
    sources: list = field(default_factory=list, repr=False)

    def draws_long(self) -> pd.DataFrame:
        """The board's draws of every fitted agent's rating, one row per (replicate, agent): replicate, agent,
        rating (Elo points), as `BootstrapResult.long()` (for violin plots)."""
        parts = []
        for names, draws, _ in self.sources:
            values = draws(names)
            r = len(values)
            parts.append(pd.DataFrame({"replicate": np.repeat(np.arange(r), len(names)),
                                       "agent": np.tile(names, r), "rating": values.ravel()}))
        frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["replicate", "agent",
                                                                                         "rating"])
        return frame[frame["rating"].notna()].reset_index(drop=True)

    @property
    def ranked(self) -> pd.DataFrame:
        """The ranked block, best first within each component."""
        return self.table[self.table["block"] == "ranked"]

    @property
    def could_be_first(self) -> list[str]:
        return list(self.table.loc[self.table["could_be_first"].fillna(False).astype(bool), "agent"])

    def pair(self, a: str, b: str) -> dict:
        """a against b: difference (a - b, Elo points), se, p_better = Phi(d / se), p_value (two-sided), lower and
        upper (d -/+ 1.96 se, open where either agent's interval is open on that side), interval (what it is),
        p_holm (the board's Holm-adjusted p-value where both are ranked in one component, else NaN), p_joint (the
        pair's step-down p-value in the joint family the tiers read, likewise), and how the pair reads beside the
        board (`_readings`): rank_set_a, rank_set_b (each agent's own marginal set), own_test_separates (p_value <
        1 - PAIR_LEVEL), board_separates (p_joint < 1 - level: the whole board's family separates them),
        marginal_sets_apart (the two marginal sets share no rank; only where own_test_separates,
        `referee.models.ratings.rank_sets`) and same_tier (both ranked in one tier).
        ValueError when a and b share no component."""
        rows = self._rows
        for x in (a, b):
            if x not in rows or not np.isfinite(rows[x]["rating"]):
                raise ValueError(f"agent {x!r} has no Bradley-Terry rating on this board")
        se = float(self.se.at[a, b]) if a in self.se.index and b in self.se.index else np.nan
        if np.isfinite(se) and se <= 0:  # the draws never move the difference: no interval, no probability
            d = float(rows[a]["rating"] - rows[b]["rating"])
            return self._readings(rows, a, b, {
                "difference": d, "se": se, "p_better": np.nan, "p_value": np.nan, "lower": np.nan, "upper": np.nan,
                "interval": "none: the board's draws never move this difference", "p_holm": np.nan,
                "p_joint": np.nan})
        if not np.isfinite(se):
            raise ValueError(f"{a} and {b} are in different components of the comparison graph: no chain of matches "
                             "links them, so their ratings cannot be compared")
        d = float(rows[a]["rating"] - rows[b]["rating"])
        up_open = np.isposinf(rows[a]["upper"]) or np.isneginf(rows[b]["lower"])
        down_open = np.isneginf(rows[a]["lower"]) or np.isposinf(rows[b]["upper"])
        lower = -np.inf if down_open else d - Z * se
        upper = np.inf if up_open else d + Z * se
        p_better, p_value = float(ndtr(d / se)), float(2 * ndtr(-abs(d) / se))
        what = f"{PAIR_LEVEL * 100:g} % from the board's {self.source}"
        if down_open or up_open:
            what += "; open " + " and ".join(s for s, o in (("below", down_open), ("above", up_open)) if o) + \
                    " (an agent never lost or never won)"
        if down_open and up_open:  # nothing bounds the difference: no probability either way
            p_better, p_value = np.nan, np.nan
            what += ": no probability"
        held = a in self.p_holm.index and b in self.p_holm.index
        holm = float(self.p_holm.at[a, b]) if held else np.nan
        joint = float(self.p_joint.at[a, b]) if held else np.nan
        return self._readings(rows, a, b, {"difference": d, "se": se, "p_better": p_better, "p_value": p_value,
                                           "lower": lower, "upper": upper, "interval": what, "p_holm": holm,
                                           "p_joint": joint})

    @functools.cached_property
    def _rows(self) -> dict[str, dict]:
        """The table's row of each agent as a dict (what `pair` reads of it; the rank bounds as floats, NaN where
        none): read once, not once per pair (a board of 200 agents has 19,900 pairs)."""
        columns = ["agent", "rating", "lower", "upper", "rank_lower", "rank_upper", "tier", "rank_set"]
        frame = self.table[columns].assign(rank_lower=self.table["rank_lower"].astype(float),
                                           rank_upper=self.table["rank_upper"].astype(float))
        return {row["agent"]: row for row in frame.to_dict("records")}

    def _readings(self, rows: dict[str, dict], a: str, b: str, found: dict) -> dict:
        """`found` (a pair's test) with how it reads beside the board's tiers and rank sets (`pair`)."""
        bounds = [rows[x][k] for x in (a, b) for k in ("rank_lower", "rank_upper")]
        apart = bool(not any(pd.isna(v) for v in bounds) and (bounds[1] < bounds[2] or bounds[3] < bounds[0]))
        tiers = [rows[a]["tier"], rows[b]["tier"]]
        one_tier = bool(not any(pd.isna(t) for t in tiers) and tiers[0] == tiers[1])
        return dict(found, rank_set_a=rows[a]["rank_set"], rank_set_b=rows[b]["rank_set"],
                    own_test_separates=bool(found["p_value"] < alpha(PAIR_LEVEL)),  # NaN: not separated
                    board_separates=bool(found["p_joint"] < alpha(self.level)), marginal_sets_apart=apart,
                    same_tier=one_tier)


def _span(low, high) -> str:
    return "" if pd.isna(low) else (f"{int(low)}" if low == high else f"{int(low)}-{int(high)}")


def component_covariance(fit, comparisons: pd.DataFrame) -> np.ndarray:
    """The covariance (k, k) in Elo points squared of the ratings of `fit.agents` (a `BTFit`) from the
    comparisons among them (`bradley_terry.bt_covariance`)."""
    from referee.models.ratings.bradley_terry import ELO_SCALE, bt_covariance, centred

    held = comparisons[positions(comparisons["a"], fit.agents) >= 0]
    a, b = positions(held["a"], fit.agents), positions(held["b"], fit.agents)
    cov = bt_covariance(fit.theta, a, b, held["outcome"].to_numpy(float), held["cluster"].astype(str).to_numpy(),
                        fit.prior_sd)
    return centred(cov) * ELO_SCALE ** 2


def _pair_se(cov: np.ndarray) -> np.ndarray:
    v = np.diag(cov)
    return np.sqrt(np.clip(v[:, None] + v[None, :] - 2 * cov, 0, None))


def _sources(bt, comparisons: pd.DataFrame, table: pd.DataFrame, seed: int, bootstrap: bool):
    """[(agents, draws function, se (k, k))] per fitted component: Normal draws with the component's covariance,
    or the bootstrap's replicates (their differences' sd as se)."""
    from referee.models.ratings.rank_sets import _se

    rating = table.set_index("agent")["rating"]
    out = []
    if bootstrap:
        boot = bt.bootstrap
        column = {name: i for i, name in enumerate(boot.agents)}
        parts = table["component"] if "component" in table.columns else pd.Series(1, index=table.index)
        for _, part in table[table["rating"].notna()].groupby(parts[table["rating"].notna()]):
            names = [a for a in part["agent"] if a in column]
            reps = boot.ratings[:, [column[a] for a in names]]
            out.append((names, lambda chosen, names=names, reps=reps: reps[:, [names.index(x) for x in chosen]],
                        _se(reps)))
        return out
    for fit in bt.fits:
        names = list(fit.agents)
        cov = component_covariance(fit, comparisons)
        centre = rating.reindex(names).to_numpy(float)

        def draws(chosen, names=names, cov=cov, centre=centre):
            picked = [names.index(x) for x in chosen]
            sub = cov[np.ix_(picked, picked)]
            values, vectors = np.linalg.eigh((sub + sub.T) / 2)
            root = vectors * np.sqrt(np.clip(values, 0, None))
            noise = np.random.default_rng(seed).standard_normal((DRAWS, len(chosen))) @ root.T
            return centre[picked] + noise

        out.append((names, draws, _pair_se(cov)))
    return out


def neighbour_tests(block: pd.DataFrame, found, component, level: float = LEVEL) -> pd.DataFrame:
    """One row per pair of neighbours down a ranked `block` (agent, rating; best first) with its rank sets `found`
    (`RankSets`, in the block's order): component, agent, next (the agent ranked just below), difference (Elo
    points), family (the family the boundary between them reads: 'best', "next and every agent below are not the
    best", down to the end of the set of the best; 'joint' below it), p (that family's p-value: the largest
    p_best from `next` on, or the pair's joint-family step-down p), separable (p < 1 - level), p_holm (the pair's
    Holm-adjusted p over every pair of the component's ranked agents, for reference), highest_above (the largest
    simultaneous upper rank bound of the agents down to `agent`), lowest_below (the smallest simultaneous lower
    bound from `next` on) and new_tier (`next` starts a tier: `rank_sets.neighbour_tests`; never where not
    separable)."""
    from referee.models.ratings.rank_sets import neighbour_tests as tests

    n = len(block)
    rating, names, step = block["rating"].to_numpy(float), block["agent"].to_numpy(), np.arange(max(n - 1, 0))
    read = tests(rating, found.joint_lower, found.joint_upper, found.p_best, found.p_joint, level)
    return pd.DataFrame({"component": component, "agent": names[:-1], "next": names[1:],
                         "difference": rating[:-1] - rating[1:], "family": read["family"], "p": read["p"],
                         "separable": read["separable"], "p_holm": found.p_holm[step, step + 1],
                         "highest_above": read["highest_above"], "lowest_below": read["lowest_below"],
                         "new_tier": read["new_tier"]})


def infer_board(comparisons: pd.DataFrame, agents: list[str] | None = None, bootstrap: int = 0,
                level: float = LEVEL, seed: int = 0, executor=None, informed=None) -> Board:
    """The board of a comparisons table (`referee.prepare.comparisons`; `agents` every agent to list). bootstrap :
    0 for Normal draws with the fit's covariance (the default), N for N cluster-bootstrap replicates as the
    draws; informed : the table's `ratings.informed_of`, where the caller has it. Returns a `Board`; ValueError
    where nothing can be rated (as `rate`)."""
    from referee.models.threads import blas_limit

    # the board's linear algebra is of the agents' order: small boards on one BLAS thread (`referee.models.threads`)
    with blas_limit(len(agents) if agents is not None else len(agents_in(comparisons))):
        return _infer_board(comparisons, agents, bootstrap, level, seed, executor, informed)


def _infer_board(comparisons: pd.DataFrame, agents: list[str] | None, bootstrap: int, level: float, seed: int,
                 executor, informed) -> Board:
    from referee.models.ratings.rank_sets import rank_sets
    from referee.run.ratings.ratings import rate

    bt = rate(comparisons, "bt", bootstrap=bootstrap, seed=seed, agents=agents, executor=executor, informed=informed)
    table = bt.table().copy()
    if "component" not in table.columns:
        table["component"] = pd.array(np.where(table["rating"].notna(), 1, pd.NA), dtype="Int64")
    sources = _sources(bt, comparisons, table, seed, bool(bootstrap))
    everyone = [a for names, _, _ in sources for a in names]
    se = pd.DataFrame(np.nan, index=everyone, columns=everyone)
    p_holm = pd.DataFrame(np.nan, index=everyone, columns=everyone)
    rows = table.set_index("agent")
    extra = {c: pd.Series(dtype=object) for c in ("rank", "tier", "rank_set", "joint_rank_set", "rank_lower",
                                                   "rank_upper", "joint_lower", "joint_upper", "could_be_first",
                                                   "p_best")}
    p_joint = pd.DataFrame(np.nan, index=everyone, columns=everyone)
    critical, tests = {}, []
    for names, draws, pair_se in sources:
        se.loc[names, names] = pair_se
        ranked = [a for a in names if rows.at[a, "status"] == ESTABLISHED and np.isfinite(rows.at[a, "rating"])]
        if not ranked:
            continue
        ranked.sort(key=lambda a: (-rows.at[a, "rating"], a))
        picked = [names.index(a) for a in ranked]
        estimate = rows.loc[ranked, "rating"].to_numpy(float)
        found = rank_sets(estimate, draws(ranked), level, se=pair_se[np.ix_(picked, picked)],
                          open_above=np.isposinf(rows.loc[ranked, "upper"].to_numpy(float)),
                          open_below=np.isneginf(rows.loc[ranked, "lower"].to_numpy(float)))
        component = int(rows.at[ranked[0], "component"])
        critical[component] = found.critical
        p_holm.loc[ranked, ranked] = found.p_holm
        p_joint.loc[ranked, ranked] = found.p_joint
        tests.append(neighbour_tests(pd.DataFrame({"agent": ranked, "rating": estimate}), found, component, level))
        for column, values in (("rank", np.arange(1, len(ranked) + 1)), ("tier", found.tier),
                               ("rank_lower", found.lower), ("rank_upper", found.upper),
                               ("joint_lower", found.joint_lower), ("joint_upper", found.joint_upper),
                               ("could_be_first", found.best), ("p_best", found.p_best),
                               ("rank_set", [_span(lo, hi) for lo, hi in zip(found.lower, found.upper)]),
                               ("joint_rank_set", [_span(lo, hi) for lo, hi in zip(found.joint_lower,
                                                                                   found.joint_upper)])):
            extra[column] = pd.concat([extra[column], pd.Series(list(values), index=ranked, dtype=object)])
    table = table.drop(columns=[c for c in extra if c in table.columns] + ["group"], errors="ignore")
    for column, values in extra.items():
        table[column] = table["agent"].map(values)
    for column in ("rank", "tier", "rank_lower", "rank_upper", "joint_lower", "joint_upper"):
        table[column] = pd.array(table[column], dtype="Float64").astype("Int64")
    table["could_be_first"] = table["could_be_first"].astype("boolean")
    table["p_best"] = pd.to_numeric(table["p_best"], errors="coerce")
    first = ["agent", "rating", "lower", "upper", "rank", "tier", "rank_set", "joint_rank_set", "could_be_first",
             "matches", "status", "interval"]
    table = table[[c for c in first if c in table.columns] + [c for c in table.columns if c not in first]]
    table["block"] = np.where(table["rank"].notna(), "ranked",
                              np.where(table["rating"].isna(), "no information", "provisional"))
    table = table.sort_values(["block", "component", "rank", "rating", "matches", "agent"],
                              ascending=[True, True, True, False, False, True], na_position="last",
                              key=lambda v: v.map({"ranked": 0, "provisional": 1, "no information": 2})
                              if v.name == "block" else v).reset_index(drop=True)
    tier_tests = (pd.concat(tests, ignore_index=True) if tests else
                  pd.DataFrame(columns=["component", "agent", "next", "difference", "family", "p", "separable",
                                        "p_holm", "highest_above", "lowest_below", "new_tier"]))
    robust = "interval" in table.columns and (table["interval"] == ROBUST_WALD).any()  # as the fit's intervals say
    source = (f"{bootstrap} cluster-bootstrap replicates" if bootstrap else
              "Normal draws with the fit's covariance" + (" (cluster-robust by match)" if robust else ""))
    return Board(bt=bt, table=table, tier_tests=tier_tests, critical=critical, se=se, p_holm=p_holm,
                 p_joint=p_joint, source=source, level=level, sources=sources)
