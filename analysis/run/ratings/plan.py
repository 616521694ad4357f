"""`referee plan`: which matches to run next, and how many, to separate the agents for the least cost.

`plan(comparisons, budget, target, rule, players, seed)` fits Bradley-Terry to the comparisons so far and
proposes `budget` matches (pairs, or seatings of `players` agents) with the expected gain of each, as a table a
runner can execute. First come the matches the data most lacks, each with its reason: a bridge from every
smaller component of the comparison graph to the largest (ratings across components are not comparable), and
a match for every agent with fewer than MIN_MATCHES matches against the established agent nearest its
rating. The rest follow the selection rule (`referee.models.ratings.design`) for the target:

- `adjacent:CONF`: separate adjacent ranks at confidence CONF (e.g. adjacent:0.95): every pair whose order
  is not yet significant, weighted by its share of the expected number of misordered pairs (`contrasts`);
- `width:ELO`: every rating's 95 % interval at most ELO points wide: the agents still wider;
- `top:K`: find the top K: the pairs across the K-th place whose order is not yet significant.

`power_curve(...)` is the simulation-based power calculation of `referee plan --power --delta D`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

from referee.models import progress
from referee.run.ratings.rating_labels import components, matches_per_agent
from referee.run.work import POWER_POINTS
from referee.models.fit import FitResult
from referee.models.registry import PLAN_RULES
from referee.run.options import number_or_nan
from referee.models.ratings.bootstrap import MIN_MATCHES
from referee.models.ratings.bradley_terry import DEFAULT_PRIOR_SD, ELO_SCALE, Z95, fit_bt, mle_exists, pair_counts
from referee.models.ratings.bradley_terry import information
from referee.models.ratings.design import contrast_gains, covariance, select, update
from referee.prepare.membership import agents_in
from referee.models.codes import positions

TARGETS = ("adjacent", "width", "top")


@dataclass
class PlanResult(FitResult):
    """A plan: `matches` (match, agents..., rule, gain_elo2, reason), `ratings` (the current fit), `target`."""

    matches: pd.DataFrame = field(default_factory=pd.DataFrame)
    ratings: pd.DataFrame = field(default_factory=pd.DataFrame)
    target: str = ""
    model: str = "plan"

    def table(self) -> pd.DataFrame:
        """The proposed matches."""
        return self.matches


def parse_target(text: str) -> tuple[str, float]:
    """'adjacent:0.95' | 'width:100' | 'top:3' -> (kind, value); ValueError naming the forms."""
    kind, _, value = text.partition(":")
    number = number_or_nan(value)
    ok = (kind == "adjacent" and 0.5 < number < 1) or (kind == "width" and number > 0) or \
         (kind == "top" and number >= 1 and number == int(number))
    if not ok:
        raise ValueError(f"--target takes adjacent:CONF (0.5-1), width:ELO or top:K, got {text!r}")
    return kind, number


def contrasts(theta: np.ndarray, C: np.ndarray, target: tuple[str, float]) -> np.ndarray:
    """The contrasts (m, n) the target still needs, from the current estimate and covariance (may be empty).

    adjacent:CONF: every pair of agents whose order is not yet significant at CONF, weighted (the contrast
    scaled by the square root of its weight) by how much its variance V moves the expected number of misordered
    pairs, sum Phi(-|delta| / sqrt(V)): w = phi(|delta| / sqrt(V)) (|delta| + 0.05) / (2 V^1.5). The weight
    falls off fast with the distance between the agents, so the effort goes to adjacent ranks; the 0.05 keeps
    pairs estimated as equal in play. width:ELO: the agents whose 95 % interval is wider. top:K: the pairs
    across the K-th place whose order is not yet significant at 95 %.
    """
    kind, value = target
    n = len(theta)
    order = np.argsort(-theta)
    rows = []
    if kind == "width":
        wide = 2 * Z95 * ELO_SCALE * np.sqrt(np.clip(np.diag(C), 0, None)) > value
        rows = [np.eye(n)[i] for i in np.flatnonzero(wide)]
    else:
        z = norm.ppf(0.5 + value / 2) if kind == "adjacent" else Z95
        if kind == "adjacent":
            a, b = np.triu_indices(n, 1)
        else:
            a, b = (x.ravel() for x in np.meshgrid(order[: int(value)], order[int(value):], indexing="ij"))
        v = np.maximum(np.diag(C)[a] + np.diag(C)[b] - 2 * C[a, b], 1e-12)
        gap = np.abs(theta[a] - theta[b])
        open_ = gap < z * np.sqrt(v)
        a, b, v, gap = a[open_], b[open_], v[open_], gap[open_]
        weight = norm.pdf(gap / np.sqrt(v)) * (gap + 0.05) / (2 * v**1.5) if kind == "adjacent" else np.ones(len(a))
        out = np.zeros((len(a), n))
        out[np.arange(len(a)), a] = np.sqrt(weight)
        out[np.arange(len(a)), b] = -np.sqrt(weight)
        return out
    return np.array(rows).reshape(len(rows), n)


def plan(comparisons: pd.DataFrame, budget: int, target: str = "adjacent:0.95", rule: str = "c-optimal",
         players: int = 2, seed: int = 0, agents: list[str] | None = None) -> PlanResult:
    """Propose `budget` matches (see the module docstring).

    comparisons : a comparisons table (a, b, outcome, cluster); agents : every agent that may be scheduled
    (default: those compared; an agent never compared is scheduled first). players : agents per proposed
    match (2: pairs). Returns a PlanResult whose `matches` has columns match, agent_1..agent_K, rule,
    gain_elo2 (the variance the match is expected to remove from the target, in Elo points squared; the
    log-determinant gain for d-optimal; the sampling weight for arena), reason.
    """
    if budget < 1:
        raise ValueError("--budget must be at least 1")
    names = sorted(set(agents or []) | set(agents_in(comparisons)))
    if players < 2 or players > len(names):
        raise ValueError(f"--players must be between 2 and the {len(names)} agents there are")
    goal = parse_target(target)
    a, b = positions(comparisons["a"], names), positions(comparisons["b"], names)
    outcome = comparisons["outcome"].to_numpy(float)
    n = len(names)
    W = pair_counts(a, b, outcome, n)
    counts = pair_counts(a, b, np.ones(len(a)), n, ties="ignore")
    counts = counts + counts.T
    theta = fit_bt(W, names).theta if len(comparisons) else np.zeros(n)  # its MAP fallback warns the user
    C = covariance(theta, counts)
    se = np.sqrt(np.clip(np.diag(C), 0, None))  # the current fit's, before any proposed match
    rng = np.random.default_rng(seed)
    matches_of = matches_per_agent(comparisons).reindex(names).fillna(0).astype(int).to_numpy()
    proposals: list[tuple[list[int], str, float, str]] = []

    def add(seat: list[int], how: str, gain: float | None, reason: str) -> None:
        nonlocal C
        if gain is None:  # a scheduled match: its expected gain on the target all the same
            need = contrasts(theta, C, goal)
            gain = float(contrast_gains(theta, C, need if len(need) else np.eye(n))[seat[0], seat[1]]) * ELO_SCALE**2
        proposals.append((seat, how, gain, reason))
        for x in range(len(seat)):  # a seating's comparisons counted as independent pairs (an approximation)
            for y in range(x + 1, len(seat)):
                C = update(C, theta, seat[x], seat[y])
                counts[seat[x], seat[y]] += 1
                counts[seat[y], seat[x]] += 1

    part = components(comparisons, names).to_numpy()
    established = np.flatnonzero((matches_of >= MIN_MATCHES) & (part == 1))
    anchors = established if len(established) else np.flatnonzero(part == 1)
    for c in range(2, part.max() + 1):  # bridges first: a rating across components means nothing
        if len(proposals) >= budget:
            break
        members = np.flatnonzero(part == c)
        i = int(members[np.argmax(matches_of[members])])
        j = int(anchors[np.argmin(np.abs(theta[anchors] - theta[i]))])
        add(_seat(i, j, players, theta, anchors, rng), "bridge", None,
            f"links component {c} ({len(members)} agent(s)) to the largest")
    for i in np.argsort(matches_of, kind="stable"):  # then the agents with too few matches
        if len(proposals) >= budget or matches_of[i] >= MIN_MATCHES:
            break
        pool = anchors[anchors != i]
        if not len(pool):
            continue
        j = int(pool[np.argmin(np.abs(theta[pool] - theta[i]))])
        add(_seat(int(i), j, players, theta, pool, rng), "few matches", None,
            f"{matches_of[i]} match(es) so far, fewer than {MIN_MATCHES}")
    for _ in range(budget - len(proposals)):
        need = contrasts(theta, C, goal)
        met = not len(need)
        if PLAN_RULES[rule].spends_rest and met:
            need = np.eye(n)  # the target is met: spend what is left on every rating's precision
        i, j, gain = select(rule, theta, counts, 1, rng, contrasts=need, wins=W)[0]
        scale = 1.0 if PLAN_RULES[rule].gain_scale == "unit" else ELO_SCALE**2
        add(_seat(i, j, players, theta, np.arange(n), rng), rule, gain * scale,
            f"target {target}" + (" already met: every rating's precision" if met else ""))
    rows = [{"match": k + 1, **{f"agent_{s + 1}": names[i] for s, i in enumerate(seat)}, "rule": how,
             "gain_elo2": round(gain, 4), "reason": reason} for k, (seat, how, gain, reason) in enumerate(proposals)]
    ratings = pd.DataFrame({"agent": names, "rating": 1500 + ELO_SCALE * theta, "se": ELO_SCALE * se,
                            "matches": matches_of, "component": part})
    return PlanResult(matches=pd.DataFrame(rows), ratings=ratings, target=target, diagnostics={"converged": True})


def _seat(i: int, j: int, players: int, theta: np.ndarray, pool: np.ndarray, rng: np.random.Generator) -> list[int]:
    """A seating of `players` agents around the pair (i, j): the others are the agents of `pool` nearest the
    pair's mean rating (their comparisons are the most informative), distinct."""
    seat = [i, j]
    if players > 2:
        centre = (theta[i] + theta[j]) / 2
        for k in np.argsort(np.abs(theta[pool] - centre), kind="stable"):
            if len(seat) == players:
                break
            if int(pool[k]) not in seat:
                seat.append(int(pool[k]))
        for k in rng.permutation(len(theta)):  # a pool smaller than the table: fill from everyone
            if len(seat) == players:
                break
            if int(k) not in seat:
                seat.append(int(k))
    return seat


def normal_power(delta_elo: float, matches: np.ndarray, p: float | None = None, level: float = 0.95) -> np.ndarray:
    """Closed-form power of a two-sided Wald test that two agents delta_elo apart differ, after `matches`
    comparisons between them alone: se = 1 / sqrt(m p (1 - p)) on the log-odds scale."""
    delta = delta_elo / ELO_SCALE
    p = 1.0 / (1.0 + math.exp(-delta)) if p is None else p
    se = 1.0 / np.sqrt(np.asarray(matches, float) * p * (1 - p))
    z = norm.ppf(0.5 + level / 2)
    return norm.cdf(delta / se - z) + norm.cdf(-delta / se - z)


def power_curve(comparisons: pd.DataFrame, delta_elo: float, pair: tuple[str, str] | None = None,
                grid: list[int] | None = None, sims: int = 200, seed: int = 0, level: float = 0.95
                ) -> pd.DataFrame:
    """Simulated power to separate two agents `delta_elo` apart after m matches of the current design.

    The design is the current mix of pairs (each pair's share of the comparisons so far); the other agents
    keep their current ratings and the two agents of `pair` (default: the two most compared) are set
    delta_elo apart around their mean. For each m of `grid`, `sims` tournaments of m comparisons are drawn
    from the design, fitted by Bradley-Terry, and the pair counts as separated when its Wald z exceeds the
    level's quantile. Returns matches, power, se (its Monte Carlo standard error), normal (the closed form
    for the pair's own comparisons alone, for reference).
    """
    names = agents_in(comparisons)
    a, b = positions(comparisons["a"], names), positions(comparisons["b"], names)
    n = len(names)
    counts = pair_counts(a, b, np.ones(len(a)), n, ties="ignore")
    counts = np.triu(counts + counts.T, 1)
    if pair is None:
        per = (counts + counts.T).sum(axis=1)
        i, j = (int(k) for k in np.argsort(-per, kind="stable")[:2])
    else:
        i, j = index.get_indexer(list(pair))
        if i < 0 or j < 0:
            raise ValueError(f"--pair: {pair} are not both rated agents")
    W = pair_counts(a, b, comparisons["outcome"].to_numpy(float), n)
    theta = fit_bt(W, names).theta
    mid = (theta[i] + theta[j]) / 2
    theta[i], theta[j] = mid + delta_elo / ELO_SCALE / 2, mid - delta_elo / ELO_SCALE / 2
    pairs = np.argwhere(counts > 0)
    share = counts[counts > 0] / counts.sum()
    rng = np.random.default_rng(seed)
    z = norm.ppf(0.5 + level / 2)
    grid = grid or [int(x) for x in np.unique(np.round(np.geomspace(max(n, 20), 20000, POWER_POINTS)))]
    rows = []
    share_ij = share[(pairs[:, 0] == min(i, j)) & (pairs[:, 1] == max(i, j))].sum()
    with progress.counter(len(grid) * sims, "power curve: simulated tournaments fitted", "fit") as done:
        for m in grid:
            rows.append(_power_point(m, sims, rng, share, pairs, theta, names, i, j, z, share_ij, delta_elo))
            done.update(sims)
    return pd.DataFrame(rows)


def _power_point(m: int, sims: int, rng, share, pairs, theta, names, i: int, j: int, z: float, share_ij: float,
                 delta_elo: float) -> dict:
    """One point of `power_curve`: `sims` tournaments of m comparisons drawn from the design and fitted, the
    share in which the pair's Wald z exceeds `z`."""
    n = len(names)
    d = np.zeros(n)
    d[i], d[j] = 1.0, -1.0  # the pair's contrast
    hits = 0
    for _ in range(sims):
        drawn = rng.multinomial(m, share)
        Wsim = np.zeros((n, n))
        for (x, y), k in zip(pairs, drawn):
            if k:
                px = 1.0 / (1.0 + math.exp(theta[y] - theta[x]))
                wins = rng.binomial(k, px)
                Wsim[x, y] += wins
                Wsim[y, x] += k - wins
        fit = fit_bt(Wsim, names, prior_sd=None if mle_exists(Wsim) else DEFAULT_PRIOR_SD)
        var_diff = d @ np.linalg.pinv(information(fit.theta, Wsim + Wsim.T)) @ d
        hits += abs(fit.theta[i] - fit.theta[j]) > z * math.sqrt(max(var_diff, 1e-300))
    power = hits / sims
    return {"matches": m, "power": power, "se": math.sqrt(power * (1 - power) / sims), "pair_matches": m * share_ij,
            "normal": float(normal_power(delta_elo, np.array([max(m * share_ij, 1e-9)]))[0])}
