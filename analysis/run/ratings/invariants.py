"""The invariants `referee check` holds every printed number about agents' strength to, read from the tables
themselves (as written to results folders or as computed): each one recomputed here from printed columns,
never through the code that printed them.

Input: `Printed`, the tables of one board as the jobs print them, any of them missing: `ratings` (ratings.csv,
Bradley-Terry), `board` (leaderboard.csv), `sets` (the leaderboard's rank_sets.csv), `tier_tests`, `pairs`
(compare --all's pairs.csv), `single` (compare A B's rows, any number), `cyclic` (rank's intransitivity.csv) and
`seat_printed`. Output: the violations table (invariant, where, what), empty when every invariant holds.

- one truth: every column two tables print for one agent (rating, interval, rank, rank sets, could be first,
  tier, status, matches, p_best, ...) is the same in both; every column compare prints for a pair that two of
  its tables hold (difference, se, interval, p, Holm p, joint p) is the same; compare's difference is the
  board's rating difference and its rank sets, tiers and flags are the board's;
- each number inside its own interval: a rating in its interval, a rank in its marginal and joint set, the
  marginal set inside the joint one, compare's difference in its interval, a cyclic share inside an interval
  that has width;
- ranks: within each component the ranked agents hold ranks 1..n in the order of their ratings;
- compare agrees with itself: P(better) = Phi(d / se), p = 2 Phi(-|d| / se), the interval d -/+ 1.96 se (where
  closed), an interval that holds 0 beside P in [0.025, 0.975] and p >= 0.05, and each flag as its test reads;
- Holm recomputed: each component's ranked pairs' two-sided p-values from compare's d and se, adjusted by
  statsmodels' `multipletests` (not referee's `holm`), against every printed Holm p (compare's and the tier
  tests');
- the set of the best: could be first exactly where p_best >= 1 - level; tier 1 runs to the last agent that
  could be first;
- tiers as their tests: the tier tests' bounds recomputed from the printed joint sets, a tier starting exactly at
  the end of the set of the best and, below it, where the joint sets part and the printed neighbour test is
  separable; no boundary beside a test that is not; compare --all's adjacent pairs are the board's ranked
  neighbours and read the tier tests' family and p;
- rank sets no pair test contradicts: two marginal sets apart only where the pair's own test separates them;
- status by information: established exactly with at least MIN_MATCHES matches (and ranked), provisional with
  fewer (its printed count the matches column's), no information without a rating;
- seats only from the data: no seat effect printed for a store whose data record no seat (decided by the caller
  from the store's seat field or a seated runner's entry).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from referee.models.ratings.bootstrap import MIN_MATCHES

COLUMNS = ["invariant", "where", "what"]
ESTABLISHED = "established"  # as the status column prints it (`rating_labels.ESTABLISHED`), read from the output
TOLERANCE = 1e-6  # relative, for numbers read back from CSV
AGENT_KEYS = ("ratings", "board", "sets")  # the tables with one row per agent
PAIR_KEYS = ("pairs", "single")  # the tables with one row per pair


@dataclass
class Printed:
    """The tables of one board as printed (module doc); None where a table was not given."""

    ratings: pd.DataFrame | None = None
    board: pd.DataFrame | None = None
    sets: pd.DataFrame | None = None
    tier_tests: pd.DataFrame | None = None
    pairs: pd.DataFrame | None = None
    single: pd.DataFrame | None = None
    cyclic: pd.DataFrame | None = None
    seat_printed: bool = False
    names: dict = field(default_factory=dict)  # table key -> where it was read (a file), for the messages

    def where(self, key: str) -> str:
        return self.names.get(key, key)


def _alpha(level: float) -> float:
    return round(1.0 - level, 12)


def _flag(value) -> bool | None:
    """A printed yes/no (True, 'True', 1) as a bool; None where empty."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, str):
        if not value.strip():  # an empty cell (CSV writes a missing text as nothing)
            return None
        return value.strip().lower() in ("true", "1", "1.0", "yes")
    return bool(value)


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


def same_cell(x, y) -> bool:
    """Two printed cells alike: both empty, numbers within TOLERANCE (infinities equal), flags equal, or the same
    text."""
    empty_x, empty_y = _flag(x) is None, _flag(y) is None
    if empty_x or empty_y:
        return empty_x and empty_y
    a, b = _number(x), _number(y)
    if np.isfinite(a) and np.isfinite(b):
        return bool(abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b)))
    if not (np.isnan(a) or np.isnan(b)):
        return a == b
    if isinstance(x, (bool, np.bool_)) or isinstance(y, (bool, np.bool_)):
        return _flag(x) == _flag(y)
    return str(x).strip() == str(y).strip()


def _bounds(text) -> tuple[int, int] | None:
    """(low, high) of a printed rank set ('3' or '2-5'); None where there is none."""
    if text is None or (isinstance(text, float) and np.isnan(text)) or str(text).strip() in ("", "nan", "<NA>"):
        return None
    low, _, high = str(text).partition("-")
    return int(float(low)), int(float(high or low))


def _ranked(table: pd.DataFrame) -> pd.DataFrame:
    """The ranked agents of an agent table: a rank printed."""
    return table[pd.to_numeric(table["rank"], errors="coerce").notna()] if "rank" in table.columns else table.iloc[:0]


def check_outputs(printed: Printed, level: float = 0.95, seats_recorded: bool | None = None) -> pd.DataFrame:
    """The violations (invariant, where, what) among the tables of `printed` (module doc); empty when every
    invariant holds. `level` the board's confidence level; `seats_recorded` whether the store's data record seats
    (None: not known, the seat invariant is not checked)."""
    found: list[dict] = []

    def say(invariant: str, where: str, what: str) -> None:
        found.append({"invariant": invariant, "where": where, "what": what})

    agents = {k: getattr(printed, k) for k in AGENT_KEYS if getattr(printed, k) is not None}
    _one_truth_agents(agents, printed, say)
    for key, table in agents.items():
        _inside_intervals(table, printed.where(key), say)
        _statuses(table, printed.where(key), say)
        if "rating" in table.columns:
            _ranks(table.set_index("agent"), printed.where(key), say)
    reference = _reference(printed)
    if reference is not None:
        _best(reference, printed, level, say)
        if printed.tier_tests is not None:
            _tiers(reference, printed, level, say)
    pairs = [(k, getattr(printed, k)) for k in PAIR_KEYS if getattr(printed, k) is not None and len(getattr(printed, k))]
    for key, table in pairs:
        _compare_itself(table, printed.where(key), level, say)
        if reference is not None:
            _compare_against_board(table, reference, printed.where(key), level, say)
    if len(pairs) == 2:
        _one_truth_pairs(pairs[0][1], pairs[1][1], printed, say)
    if printed.pairs is not None and len(printed.pairs) and reference is not None:
        _holm(printed.pairs, reference, printed, say)
        if printed.tier_tests is not None:
            _adjacent(printed.pairs, reference, printed, level, say)
    if printed.cyclic is not None:
        _cyclic(printed.cyclic, printed.where("cyclic"), say)
    if printed.seat_printed and seats_recorded is False:
        say("seats only from the data", printed.where("board"), "a seat effect printed for a store whose data record "
            "no seat (no seat measure, no seated runner)")
    return pd.DataFrame(found, columns=COLUMNS)


def _reference(printed: Printed) -> pd.DataFrame | None:
    """One row per agent with every column the agent tables print (the board's first, then the ratings', then the
    rank sets'), indexed by agent: what the pair tables are checked against. Disagreements among them are the
    one-truth invariant's."""
    tables = [t for t in (printed.board, printed.ratings, printed.sets) if t is not None]
    if not tables:
        return None
    out = tables[0].set_index("agent")
    for table in tables[1:]:
        extra = table.set_index("agent")
        out = out.join(extra[[c for c in extra.columns if c not in out.columns]], how="outer")
    return out


def _one_truth_agents(agents: dict, printed: Printed, say) -> None:
    keys = list(agents)
    for i, first in enumerate(keys):
        for second in keys[i + 1:]:
            x, y = agents[first].set_index("agent"), agents[second].set_index("agent")
            shared = [c for c in x.columns if c in y.columns]
            for agent in x.index.intersection(y.index):
                for column in shared:
                    if not same_cell(x.at[agent, column], y.at[agent, column]):
                        say("one truth", f"{agent}.{column}", f"{printed.where(first)} prints "
                            f"{x.at[agent, column]!r}, {printed.where(second)} {y.at[agent, column]!r}")


def _inside_intervals(table: pd.DataFrame, where: str, say) -> None:
    for row in table.itertuples():
        rating, lower, upper = (_number(getattr(row, c, np.nan)) for c in ("rating", "lower", "upper"))
        if np.isfinite(rating) and not (np.isnan(lower) or np.isnan(upper)):
            if not lower - 1e-9 <= rating <= upper + 1e-9:
                say("estimate inside its interval", f"{where}: {row.agent}", f"rating {rating} outside "
                    f"[{lower}, {upper}]")
        rank = _number(getattr(row, "rank", np.nan))
        marginal, joint = _bounds(getattr(row, "rank_set", None)), _bounds(getattr(row, "joint_rank_set", None))
        if np.isfinite(rank):
            for name, bounds in (("rank set", marginal), ("joint rank set", joint)):
                if bounds is not None and not bounds[0] <= rank <= bounds[1]:
                    say("rank inside its set", f"{where}: {row.agent}", f"rank {rank:g} outside its {name} "
                        f"{bounds[0]}-{bounds[1]}")
        if marginal is not None and joint is not None and not (joint[0] <= marginal[0] and marginal[1] <= joint[1]):
            say("rank inside its set", f"{where}: {row.agent}", f"marginal set {marginal[0]}-{marginal[1]} not inside "
                f"the joint set {joint[0]}-{joint[1]}")
        for low, high, name in (("rank_lower", "rank_upper", "rank_set"), ("joint_lower", "joint_upper",
                                                                           "joint_rank_set")):
            if hasattr(row, low) and hasattr(row, name) and _bounds(getattr(row, name)) is not None:
                if _bounds(getattr(row, name)) != (int(_number(getattr(row, low))), int(_number(getattr(row, high)))):
                    say("one truth", f"{where}: {row.agent}.{name}", f"{getattr(row, name)} beside bounds "
                        f"{getattr(row, low)}-{getattr(row, high)}")


def _statuses(table: pd.DataFrame, where: str, say) -> None:
    if "status" not in table.columns or "matches" not in table.columns:
        return
    for row in table.itertuples():
        status, matches = str(row.status), _number(row.matches)
        ranked = np.isfinite(_number(getattr(row, "rank", np.nan)))
        if status == ESTABLISHED:
            if not matches >= MIN_MATCHES:
                say("status by information", f"{where}: {row.agent}", f"established after {row.matches} match(es), "
                    f"fewer than {MIN_MATCHES}")
            if "rank" in table.columns and not ranked and np.isfinite(_number(row.rating)):
                say("status by information", f"{where}: {row.agent}", "established but not ranked")
        elif status.startswith("provisional"):
            if matches >= MIN_MATCHES:
                say("status by information", f"{where}: {row.agent}", f"provisional with {row.matches} matches, at "
                    f"least {MIN_MATCHES}")
            told = status.partition(":")[2].split()
            if told and told[0].isdigit() and np.isfinite(matches) and int(told[0]) != int(matches):
                say("status by information", f"{where}: {row.agent}", f"status says {told[0]} match(es), the "
                    f"matches column {row.matches}")
            if ranked:
                say("status by information", f"{where}: {row.agent}", "provisional but ranked")
        elif status.startswith("no information") and np.isfinite(_number(getattr(row, "rating", np.nan))):
            say("status by information", f"{where}: {row.agent}", "no information but a rating")


def _components(reference: pd.DataFrame) -> pd.Series:
    return reference["component"] if "component" in reference.columns else pd.Series(1, index=reference.index)


def _ranks(reference: pd.DataFrame, where: str, say) -> None:
    for by_rank in _ordered(reference):
        ranks = by_rank["r"].to_numpy(float).tolist()
        if ranks != list(range(1, len(by_rank) + 1)):
            say("ranks in order", where, f"ranks {ranks} are not 1..{len(by_rank)}")
            continue
        rating = pd.to_numeric(by_rank["rating"]).to_numpy(float)
        for i in np.flatnonzero(rating[1:] > rating[:-1] + 1e-9):
            say("ranks in order", f"{where}: {by_rank['agent'].iloc[i]} | {by_rank['agent'].iloc[i + 1]}",
                f"rank {i + 1} rated {rating[i]:.6g} above rank {i + 2} rated {rating[i + 1]:.6g}")


def _ordered(reference: pd.DataFrame) -> list[pd.DataFrame]:
    """Each component's ranked agents, best first (by printed rank)."""
    ranked = _ranked(reference.reset_index())
    parts = _components(ranked.set_index("agent")).fillna(1).to_numpy()
    return [part.assign(r=pd.to_numeric(part["rank"])).sort_values("r") for _, part in ranked.groupby(parts)]


def _best(reference: pd.DataFrame, printed: Printed, level: float, say) -> None:
    for part in _ordered(reference):
        first = part["could_be_first"].map(_flag) if "could_be_first" in part.columns else None
        if first is None:
            continue
        if "p_best" in part.columns:
            for row, flag in zip(part.itertuples(), first):
                p = _number(row.p_best)
                if np.isfinite(p) and flag != (p >= _alpha(level)):
                    say("set of the best", f"{printed.where('sets')}: {row.agent}", f"could be first {flag} beside "
                        f"p_best {p:.4g} (could be first exactly where p_best >= {_alpha(level):g})")
        if not first.iloc[0]:
            say("set of the best", part["agent"].iloc[0], "the first-ranked agent is not in the set of the best")
        if "tier" in part.columns and first.any():
            tiers = pd.to_numeric(part["tier"]).to_numpy()
            last = int(np.flatnonzero(first.to_numpy(bool)).max())
            wrong = [a for a, t, i in zip(part["agent"], tiers, range(len(part))) if (t == 1) != (i <= last)]
            if wrong:
                say("set of the best", ", ".join(wrong), f"tier 1 must run down to {part['agent'].iloc[last]}, the "
                    "last agent that could be first, and no further")


def _tiers(reference: pd.DataFrame, printed: Printed, level: float, say) -> None:
    tests = printed.tier_tests.copy()
    where = printed.where("tier_tests")
    keyed = tests.set_index(["agent", "next"])
    for part in _ordered(reference):
        names = part["agent"].tolist()
        sets = [_bounds(t) for t in part["joint_rank_set"]]
        tiers = pd.to_numeric(part["tier"]).astype(int).tolist()
        first = part["could_be_first"].map(_flag).to_numpy(bool)
        last = int(np.flatnonzero(first).max()) if first.any() else 0
        p_best = pd.to_numeric(part["p_best"]).to_numpy(float) if "p_best" in part.columns else None
        for i in range(1, len(part)):
            pair = (names[i - 1], names[i])
            if pair not in keyed.index:
                say("tiers as their tests", f"{where}: {pair[0]} | {pair[1]}", "no neighbour test for two ranked "
                    "neighbours")
                continue
            row = keyed.loc[pair]
            highest, lowest = max(hi for _, hi in sets[:i]), min(lo for lo, _ in sets[i:])
            if (int(_number(row["highest_above"])), int(_number(row["lowest_below"]))) != (highest, lowest):
                say("tiers as their tests", f"{where}: {pair[0]} | {pair[1]}", f"bounds {row['highest_above']} / "
                    f"{row['lowest_below']}, the printed joint sets give {highest} / {lowest}")
            p, separable, new = _number(row["p"]), _flag(row["separable"]), _flag(row["new_tier"])
            in_best = i <= last + 1  # the boundary reads the set of the best's family, else the joint one
            reads = "best" if in_best else "joint"
            if str(row["family"]) != reads:
                say("tiers as their tests", f"{where}: {pair[0]} | {pair[1]}", f"family {row['family']}, where the "
                    f"set of the best ends at {names[last]} the boundary reads the {reads} family")
            elif in_best and p_best is not None and not same_cell(p, np.max(p_best[i:])):
                say("tiers as their tests", f"{where}: {pair[0]} | {pair[1]}", f"p {p:.4g}, the largest p_best "
                    f"from {names[i]} on is {np.max(p_best[i:]):.4g}")
            if separable != (p < _alpha(level)):
                say("tiers as their tests", f"{where}: {pair[0]} | {pair[1]}", f"separable {separable} beside p {p:.4g}")
            expected = (i == last + 1) if in_best else (highest < lowest and p < _alpha(level))
            starts = tiers[i] == tiers[i - 1] + 1
            if new != starts or tiers[i] - tiers[i - 1] not in (0, 1):
                say("tiers as their tests", f"{where}: {pair[0]} | {pair[1]}", f"new_tier {new} beside tiers "
                    f"{tiers[i - 1]} and {tiers[i]}")
            if starts != expected:
                say("tiers as their tests", f"{where}: {pair[0]} | {pair[1]}", f"tiers {tiers[i - 1]} and {tiers[i]} "
                    f"where the {reads} family's test is {'' if p < _alpha(level) else 'not '}separable (p {p:.4g})"
                    + ("" if in_best else f" and the joint sets {'part' if highest < lowest else 'overlap'}"))


def _pair_rows(table: pd.DataFrame):
    for row in table.itertuples():
        yield row, f"{row.agent_a} vs {row.agent_b}"


def _compare_itself(table: pd.DataFrame, where: str, level: float, say) -> None:
    z = float(ndtri(0.5 + 0.95 / 2))
    for row, pair in _pair_rows(table):
        d, se, lower, upper = (_number(getattr(row, c, np.nan)) for c in ("difference", "se", "lower", "upper"))
        p_better, p_value = _number(row.p_better), _number(row.p_value)
        if np.isfinite(lower) and np.isfinite(upper) and lower <= 0 <= upper and (
                p_better < 0.025 or p_better > 0.975 or p_value < 0.05):
            say("compare agrees with itself", f"{where}: {pair}", f"P = {p_better:.3f}, p = {p_value:.3g} beside an "
                f"interval {lower:+.0f} to {upper:+.0f} that holds 0")
        if not (np.isnan(lower) and np.isnan(upper)) and not lower - 1e-9 <= d <= upper + 1e-9:
            say("estimate inside its interval", f"{where}: {pair}", f"difference {d:.6g} outside [{lower}, {upper}]")
        if np.isfinite(se) and se > 0 and str(getattr(row, "method", "bt")) == "bt":
            for name, value, expected in (("lower", lower, d - z * se), ("upper", upper, d + z * se),
                                          ("p_value", p_value, 2 * ndtr(-abs(d) / se)),
                                          ("p_better", p_better, ndtr(d / se))):
                if np.isfinite(value) and not same_cell(value, expected):
                    say("compare agrees with itself", f"{where}: {pair}.{name}", f"{value:.6g}, where difference "
                        f"{d:.6g} and se {se:.6g} give {expected:.6g}")
        for flag, p, cut in (("own_test_separates", p_value, 0.05), ("board_separates", _number(getattr(row, "p_joint",
                                                                                                       np.nan)),
                                                                         _alpha(level))):
            if hasattr(row, flag) and _flag(getattr(row, flag)) is not None and _flag(getattr(row, flag)) != (p < cut):
                say("compare agrees with itself", f"{where}: {pair}.{flag}", f"{getattr(row, flag)} beside p {p:.4g}")


def _compare_against_board(table: pd.DataFrame, reference: pd.DataFrame, where: str, level: float, say) -> None:
    # each agent's board row, read once for its pairs (19,900 at 200 agents); an agent listed twice keeps its last
    rows = dict(zip(reference.index, reference.to_dict("records")))
    for row, pair in _pair_rows(table):
        if row.agent_a not in rows or row.agent_b not in rows:
            say("one truth", f"{where}: {pair}", "an agent the board does not list")
            continue
        a, b = rows[row.agent_a], rows[row.agent_b]
        if str(getattr(row, "method", "bt")) == "bt":
            d = _number(a["rating"]) - _number(b["rating"])
            if not same_cell(_number(row.difference), d):
                say("one truth", f"{where}: {pair}.difference", f"{row.difference}, the board's ratings differ by {d}")
        for side, agent in (("a", a), ("b", b)):
            column = f"rank_set_{side}"
            if hasattr(row, column) and "rank_set" in agent and not same_cell(getattr(row, column),
                                                                                 agent["rank_set"]):
                say("one truth", f"{where}: {pair}.{column}", f"{getattr(row, column)!r}, the board's "
                    f"{agent['rank_set']!r}")
        if hasattr(row, "same_tier") and "tier" in reference.columns:
            ta, tb = _number(a["tier"]), _number(b["tier"])
            same = bool(np.isfinite(ta) and ta == tb)
            if _flag(row.same_tier) != same:
                say("one truth", f"{where}: {pair}.same_tier", f"{row.same_tier}, the board's tiers {a['tier']} and "
                    f"{b['tier']}")
        x, y = _bounds(a.get("rank_set")), _bounds(b.get("rank_set"))
        if x is not None and y is not None:
            apart = x[1] < y[0] or y[1] < x[0]
            if hasattr(row, "marginal_sets_apart") and _flag(row.marginal_sets_apart) != apart:
                say("one truth", f"{where}: {pair}.marginal_sets_apart", f"{row.marginal_sets_apart}, the board's sets "
                    f"{a['rank_set']} and {b['rank_set']}")
            if apart and not _number(row.p_value) < 0.05:
                say("rank sets agree with the pair's test", f"{where}: {pair}", f"sets {a['rank_set']} and "
                    f"{b['rank_set']} share no rank, but compare's p = {_number(row.p_value):.3g}")


def _one_truth_pairs(first: pd.DataFrame, second: pd.DataFrame, printed: Printed, say) -> None:
    """compare --all's row and compare A B's row of one pair (in the same order) print the same numbers."""
    x, y = first.set_index(["agent_a", "agent_b"]), second.set_index(["agent_a", "agent_b"])
    for key in x.index.intersection(y.index):
        for column in ("difference", "se", "lower", "upper", "p_value", "p_better", "p_holm", "p_joint", "rank_set_a",
                       "rank_set_b"):
            if column in x.columns and column in y.columns and not same_cell(x.at[key, column], y.at[key, column]):
                say("one truth", f"{key[0]} vs {key[1]}.{column}", f"{printed.where('pairs')} prints "
                    f"{x.at[key, column]!r}, {printed.where('single')} {y.at[key, column]!r}")


def _holm(pairs: pd.DataFrame, reference: pd.DataFrame, printed: Printed, say) -> None:
    """Every printed Holm p against Holm's adjustment recomputed by statsmodels over each component's ranked pairs."""
    from statsmodels.stats.multitest import multipletests

    held = pairs[pd.to_numeric(pairs.get("p_holm"), errors="coerce").notna()] if "p_holm" in pairs.columns else pairs.iloc[:0]
    if held.empty or "se" not in held.columns:
        return
    expected: dict = {}
    for part in _ordered(reference):
        names = set(part["agent"])
        inside = held[held["agent_a"].isin(names) & held["agent_b"].isin(names)]
        d, se = pd.to_numeric(inside["difference"]).to_numpy(float), pd.to_numeric(inside["se"]).to_numpy(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            raw = np.where(se > 0, 2 * ndtr(-np.abs(d) / se), 1.0)
        if len(raw):
            adjusted = multipletests(np.nan_to_num(raw, nan=1.0), method="holm")[1]
            expected.update(zip(zip(inside["agent_a"], inside["agent_b"]), adjusted))
    for row, pair in _pair_rows(held):
        key = (row.agent_a, row.agent_b)
        if key in expected and not abs(_number(row.p_holm) - expected[key]) <= 1e-6:
            say("Holm recomputed", f"{printed.where('pairs')}: {pair}", f"Holm p {_number(row.p_holm):.6g}, "
                f"recomputed {expected[key]:.6g}")
    if printed.tier_tests is not None:
        for row in printed.tier_tests.itertuples():
            key = (row.agent, row.next)
            if key in expected and not abs(_number(row.p_holm) - expected[key]) <= 1e-6:
                say("Holm recomputed", f"{printed.where('tier_tests')}: {row.agent} | {row.next}", f"Holm p "
                    f"{_number(row.p_holm):.6g}, recomputed {expected[key]:.6g}")


def _adjacent(pairs: pd.DataFrame, reference: pd.DataFrame, printed: Printed, level: float, say) -> None:
    """compare --all's adjacent pairs are the board's ranked neighbours, each read as the tier tests read it."""
    neighbours = {(p["agent"].iloc[i], p["agent"].iloc[i + 1]) for p in _ordered(reference) for i in range(len(p) - 1)}
    marked = {(r.agent_a, r.agent_b) for r in pairs.itertuples() if _flag(getattr(r, "adjacent", False))}
    where = printed.where("pairs")
    for a, b in sorted(marked - neighbours):
        say("neighbours are the board's", f"{where}: {a} vs {b}", "marked adjacent but not ranked neighbours on the board")
    for a, b in sorted(neighbours - marked):
        say("neighbours are the board's", f"{where}: {a} vs {b}", "ranked neighbours on the board, not marked adjacent")
    tests = printed.tier_tests.set_index(["agent", "next"])
    rows = pairs.set_index(["agent_a", "agent_b"])
    for key in sorted(neighbours & marked):
        if key not in tests.index:
            continue
        test, row = tests.loc[key], rows.loc[key]
        for mine, theirs in (("p_family", "p"), ("family", "family"), ("separable", "separable"),
                             ("p_holm", "p_holm")):
            if mine in rows.columns and not same_cell(row[mine], test[theirs]):
                say("one truth", f"{where}: {key[0]} vs {key[1]}.{mine}", f"{row[mine]!r}, the tier tests' "
                    f"{theirs} {test[theirs]!r}")
        if str(test["family"]) != "best" and "p_joint" in rows.columns and not same_cell(row["p_joint"], test["p"]):
            say("one truth", f"{where}: {key[0]} vs {key[1]}.p_joint", f"{row['p_joint']!r}, the tier tests' joint "
                f"p {test['p']!r}")


def _cyclic(table: pd.DataFrame, where: str, say) -> None:
    for row in table.itertuples():
        share, lower, upper = _number(row.cyclic_share), _number(row.lower), _number(row.upper)
        if np.isnan(lower) and np.isnan(upper):
            continue
        if not lower - 1e-12 <= share <= upper + 1e-12:
            say("estimate inside its interval", f"{where}: group {row.component}", f"cyclic share {share:.4g} outside "
                f"{lower:.4g}-{upper:.4g}")
        if not upper - lower > 1e-12:
            say("estimate inside its interval", f"{where}: group {row.component}", f"the cyclic share's interval "
                f"{lower:.4g}-{upper:.4g} has no width")
