"""Construct-validity checks of a score against ground-truth outcomes (Age of Agents EVAL 01, sections 4-7).

Every function takes a tidy per-player table `frame` (one row per player: `player`, `role`, `team`,
`score` (the recorded score), and one column per measure: counters, recorded components, outcomes) and
returns plain tables or dicts; `referee.run.social.audit` runs them, writes the outputs and words the verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from referee.models.fit import CHAINS, TUNE, FitResult, ReadsAsMapping, sample
from referee.models.registry import AUDIT_DRAWS
from referee.models.validity import CHECK_TITLES  # noqa: F401  (re-exported: the audit's vocabulary)
from referee.models.validity.formula import Formula
from referee.models.validity.rank_resamples import resampled_rank_correlations




def _values(row: pd.Series) -> dict[str, float]:
    return {k: float(v) for k, v in row.items() if isinstance(v, (int, float, np.number)) and not pd.isna(v)}


def reproduce(frame: pd.DataFrame, formula: Formula, tolerance: float = 0.5) -> pd.DataFrame:
    """Recompute every player's score and classify mismatches.

    The score is recomputed from counters when the player has every input the formula reads; otherwise from
    the recorded components the formula's total is written in (e.g. universal and bonus), and the row says
    so. Classification: 'reproduces' (with 'raw total hidden by the floor' when the clamp decided it),
    'one component missing: NAME' (the recorded score equals the expected raw total less exactly that
    component, then clamped and rounded), or 'other'; 'not computable' when neither source is complete.

    Returns columns player, role, recorded, expected, raw_total, source, status.
    """
    rows = []
    for _, row in frame.iterrows():
        values = _values(row)
        role = row.get("role")
        source, comps = None, None
        if formula.inputs <= set(values):
            comps = formula.evaluate(values, role)
            source = "counters"
        elif formula.total.names <= set(values):
            env = {n: values[n] for n in formula.total.names}
            raw = formula.total(env)
            comps = dict(env, raw_total=raw, total=formula.finish(raw))
            source = "recorded components"
        recorded = row["score"]
        if comps is None:
            rows.append({"player": row["player"], "role": role, "recorded": recorded, "expected": np.nan,
                         "raw_total": np.nan, "source": "missing inputs", "status": "not computable"})
            continue
        expected, raw = comps["total"], comps["raw_total"]
        if abs(expected - recorded) <= tolerance:
            clamped = formula.floor is not None and raw < formula.floor
            status = "reproduces; raw total hidden by the floor" if clamped else "reproduces"
        else:
            status = "other"
            for part in formula.total.names:
                if part in comps and abs(formula.finish(raw - comps[part]) - recorded) <= tolerance and comps[part] != 0:
                    status = f"one component missing: {part}"
                    break
        rows.append({"player": row["player"], "role": role, "recorded": recorded, "expected": expected,
                     "raw_total": raw, "source": source, "status": status})
    return pd.DataFrame(rows)


def _counters_read(formula: Formula, name: str, role: str | None, seen: frozenset = frozenset()) -> set[str]:
    """The formula inputs component `name` reads for `role`, through the components it is built from."""
    expr = formula.components.get(name)
    if isinstance(expr, dict):
        expr = expr.get(role)
    if expr is None or name in seen:
        return set()
    out = set()
    for n in expr.names:
        out |= _counters_read(formula, n, role, seen | {name}) if n in formula.components else ({n} & formula.inputs)
    return out


def counter_terms(frame: pd.DataFrame, formula: Formula, tolerance: float = 0.5) -> pd.DataFrame:
    """What the published counters of players who have some, not all, of the formula's inputs reproduce.

    For each such player and each component that (through the components it is built from) reads a published
    counter: the component computed from the published counters alone, every unpublished counter taken as 0
    (for a sum of positive terms, the published terms' part of it), beside the recorded component where one
    is recorded. Players with every counter are checked whole by `reproduce`; with none, not here.

    Returns player, role, component, counters (the published ones it reads, comma-separated), from_counters,
    recorded (NaN when not recorded separately), status ('equals the recorded value', 'part of the recorded
    value: the unpublished counters add N', 'not recorded separately').
    """
    rows = []
    for _, row in frame.iterrows():
        values = _values(row)
        published = formula.inputs & set(values)
        if not published or formula.inputs <= set(values):
            continue
        role = row.get("role")
        try:
            computed = formula.evaluate({n: values.get(n, 0.0) for n in formula.inputs}, role)
        except KeyError:  # no branch for this role
            continue
        for name in formula.components:
            reads = _counters_read(formula, name, role) & published
            if not reads:
                continue
            value, recorded = computed[name], values.get(name, np.nan)
            if pd.isna(recorded):
                status = "not recorded separately"
            elif abs(value - recorded) <= tolerance:
                status = "equals the recorded value"
            else:
                status = f"part of the recorded value: the unpublished counters add {recorded - value:g}"
            rows.append({"player": row["player"], "role": role, "component": name, "counters": ", ".join(sorted(reads)),
                         "from_counters": value, "recorded": recorded, "status": status})
    return pd.DataFrame(rows, columns=["player", "role", "component", "counters", "from_counters", "recorded",
                                       "status"])


def decompose(frame: pd.DataFrame, formula: Formula) -> pd.DataFrame:
    """Each player's score split into parts, with each part's share of the sum of absolute parts.

    Parts are the formula's `parts` when every player's counters allow; otherwise, so that all players are
    split at the same level, the components the total is written in (recomputed from counters where there
    are counters, recorded where not). Returns columns player, component, value, share, source.
    """
    rows = []
    all_counters = all(formula.inputs <= set(_values(row)) for _, row in frame.iterrows())
    for _, row in frame.iterrows():
        values = _values(row)
        if formula.inputs <= set(values) and not all_counters:
            comps = formula.evaluate(values, row.get("role"))
            parts, source = sorted(formula.total.names), "counters"
        elif formula.inputs <= set(values):
            comps = formula.evaluate(values, row.get("role"))
            parts, source = formula.parts or list(formula.total.names), "counters"
        elif formula.total.names <= set(values):
            comps, parts, source = values, sorted(formula.total.names), "recorded components"
        else:
            continue
        total = sum(abs(comps[p]) for p in parts) or 1.0
        rows += [{"player": row["player"], "component": p, "value": comps[p], "share": abs(comps[p]) / total,
                  "source": source} for p in parts]
    return pd.DataFrame(rows, columns=["player", "component", "value", "share", "source"])


def hold_outcome_constant(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Among players with identical outcomes (same values of `keys`, e.g. nation, power, alive), the spread of
    the score, described: n, min, max, max/min ratio (NaN when min <= 0), sd (the group's, ddof 1, score points),
    players. Only groups of two or more are returned, widest (sd) first. A description only: the verdict reads
    `variance_kept`, which no shift or rescaling of the score moves.
    """
    data = frame.dropna(subset=keys)
    rows = []
    for key, group in data.groupby(keys):
        if len(group) < 2:
            continue
        s = group["score"].astype(float)
        ratio = s.max() / s.min() if s.min() > 0 else np.nan
        key = key if isinstance(key, tuple) else (key,)
        rows.append({"group": ", ".join(f"{k}={v}" for k, v in zip(keys, key)), "n": len(group), "min": s.min(),
                     "max": s.max(), "max_min_ratio": ratio, "sd": s.std(ddof=1),
                     "players": ", ".join(group.sort_values("score", ascending=False)["player"])})
    out = pd.DataFrame(rows, columns=["group", "n", "min", "max", "max_min_ratio", "sd", "players"])
    return out.sort_values("sd", ascending=False, na_position="last").reset_index(drop=True)


WITHIN_LIMIT = 0.5  # the share of the score's variance players with identical outcomes may keep (docs: the audit)


def variance_kept(frame: pd.DataFrame, keys: list[str], outcome: str | None = None, by: str | None = None,
                  limit: float = WITHIN_LIMIT) -> pd.DataFrame:
    """Check 3 as a number no shift or positive rescaling of the score moves: per part of `by` (e.g. game, whose
    scores may be on different scales; None: the whole table), the share of the score's variance that players
    with identical outcomes (same `keys`) keep: the mean square within groups of two or more, sum over groups of
    (score - group mean)^2 / sum of (n_g - 1), against the score's variance over every player of the part
    (ddof 1). Near 0 when the outcome fixes the score, near 1 when the score is noise to the outcome.

    `outcome` (higher is better, numeric): the outcome a graded score is read against: where the score orders its
    levels with no overlap (every score at a better level at least every score at a worse one) while varying
    within them, the score grades within the outcome (a quality score within success) and passes as graded.

    Returns one row per part: part, players (in groups of two or more), groups, share (NaN where not judged),
    graded, passed (True / False / None where not judged), reason (one sentence)."""
    data = frame.dropna(subset=[*keys, "score"])
    parts = [("all", data)] if by is None else [(str(k), p) for k, p in data.groupby(by, sort=True)]
    rows = []
    for part, block in parts:
        score = block["score"].astype(float)
        sizes = block.groupby(keys)["score"].transform("size")
        held = block[sizes >= 2]
        df_within = int(len(held) - held.groupby(keys).ngroups) if len(held) else 0
        groups = int(held.groupby(keys).ngroups) if len(held) else 0
        row = {"part": part, "players": len(held), "groups": groups, "share": np.nan, "graded": False}
        if df_within == 0:
            rows.append({**row, "passed": None, "reason": "no two players share an identical outcome"})
            continue
        if block.groupby(keys).ngroups == 1:
            rows.append({**row, "passed": None, "reason": "every player shares one outcome: the score cannot be judged "
                                                          "against an outcome that does not vary"})
            continue
        total = float(score.var(ddof=1))
        if not total > 0:
            rows.append({**row, "share": 0.0, "passed": True, "reason": "the score does not vary"})
            continue
        centred = held["score"].astype(float) - held.groupby(keys)["score"].transform("mean").astype(float)
        share = float((centred ** 2).sum() / df_within / total)
        graded = bool(outcome is not None and share > limit and _orders_levels(block, outcome))
        passed = share <= limit or graded
        reason = (f"players with identical outcomes keep {share:.0%} of the score's variance"
                  + (f" (at most {limit:.0%} passes)" if not graded else "")
                  + ("; the score orders the levels of " + outcome + " with no overlap and grades within them: a "
                     "graded score, not a failure" if graded else ""))
        rows.append({**row, "share": share, "graded": graded, "passed": passed, "reason": reason})
    return pd.DataFrame(rows, columns=["part", "players", "groups", "share", "graded", "passed", "reason"])


def _orders_levels(block: pd.DataFrame, outcome: str) -> bool:
    """Whether the score orders the levels of `outcome` (higher better) with no overlap: at least two levels, and
    the lowest score at each level at least the highest at the level below."""
    data = block.dropna(subset=[outcome])
    by_level = data.groupby(outcome)["score"].agg(["min", "max"]).sort_index()
    if len(by_level) < 2:
        return False
    return bool((by_level["min"].to_numpy()[1:] >= by_level["max"].to_numpy()[:-1]).all())


def score_ranks(frame: pd.DataFrame) -> pd.Series:
    """Competition ranks of the recorded score (1 = highest), indexed like `frame`."""
    return frame["score"].rank(method="min", ascending=False)


def failures_at_top(frame: pd.DataFrame, formula: Formula, k: int = 3) -> pd.DataFrame:
    """Players who failed the outcome their role defines (formula's [failure] rules) yet rank in the top k.

    Returns columns player, role, score, rank, failed (every player a rule covers), in_top_k.
    """
    ranks = score_ranks(frame)
    rows = []
    for i, row in frame.iterrows():
        failed = formula.failed(_values(row), row.get("role"))
        if failed is None:
            continue
        rows.append({"player": row["player"], "role": row.get("role"), "score": row["score"], "rank": ranks[i],
                     "failed": failed, "in_top_k": bool(failed and ranks[i] <= k)})
    return pd.DataFrame(rows, columns=["player", "role", "score", "rank", "failed", "in_top_k"])


def rank_agreement(frame: pd.DataFrame, outcome: str, k: int = 3, n_boot: int = 2000, seed: int = 0) -> dict:
    """Spearman and Kendall correlation of score and outcome with percentile bootstrap 95% intervals
    (resampling players), and agreement at the top: overlap of the top-k sets and which score rank holds
    the best outcome. Players without the outcome are left out (and counted)."""
    data = frame.dropna(subset=[outcome, "score"])
    x, y = data["score"].to_numpy(float), data[outcome].to_numpy(float)
    n = len(data)
    out = {"outcome": outcome, "n": n, "left_out": int(len(frame) - n)}
    if n < 3 or np.ptp(y) == 0 or np.ptp(x) == 0:
        out.update(spearman=np.nan, kendall=np.nan)
        return out
    out["spearman"] = float(stats.spearmanr(x, y).statistic)
    out["kendall"] = float(stats.kendalltau(x, y).statistic)
    idx = np.random.default_rng(seed).integers(0, n, (n_boot, n))  # resamples of the players, one a row
    boots = dict(zip(("spearman", "kendall"), resampled_rank_correlations(x, y, idx)))
    for name, values in boots.items():
        values = values[np.isfinite(values)]  # a resample with a constant score or outcome has no correlation
        out[f"{name}_low"], out[f"{name}_high"] = (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)))
    k = min(k, n)
    top_score = set(data.nlargest(k, "score")["player"])
    top_outcome = set(data.nlargest(k, outcome, keep="all")["player"])
    out["top_k"] = k
    out["top_k_overlap"] = len(top_score & top_outcome)
    best = data.loc[data[outcome].idxmax()]
    out["best_outcome_player"] = best["player"]
    out["best_outcome_value"] = float(best[outcome])
    out["best_outcome_score_rank"] = int(data["score"].rank(method="min", ascending=False)[best.name])
    top = data.nlargest(max(k, 3), "score")
    out["top_spearman"] = (float(stats.spearmanr(top["score"], top[outcome]).statistic)
                           if np.ptp(top[outcome].to_numpy(float)) > 0 else np.nan)
    return out


@dataclass
class AssignmentLuck(ReadsAsMapping, FitResult):
    """`assignment_luck`'s result (the `referee.models.fit.FitResult` contract), read like a mapping of its
    `values` (n, r2_assignment, r2_outcome, partial eta squared, p_outcome_slope_positive, bayes_diagnostics,
    ...). `idata` holds the Bayesian regression's posterior (coords `assignment_level`: the levels against the
    first); `diagnostics` its convergence, or the OLS fits' (always converged) without `bayes`."""

    values: dict = field(default_factory=dict)
    model: str = "assignment-luck"

    def update(self, **more) -> None:
        self.values.update(more)

    def table(self) -> pd.DataFrame:
        """One row: the variance explained by the assignment and by the outcome (and the Bayesian reading)."""
        return pd.DataFrame([{k: v for k, v in self.values.items() if not isinstance(v, dict)}])


def assignment_luck(frame: pd.DataFrame, assignment: str, outcome: str, seed: int = 0, bayes: bool = True,
                    sampling: dict | None = None) -> AssignmentLuck:
    """How much of the score's variance a randomly assigned factor explains, compared with the outcome.

    statsmodels OLS: R^2 of score ~ C(assignment) and of score ~ outcome, and partial eta^2 of each in the
    joint model (type II ANOVA). With `bayes`, a PyMC regression of the standardised score on the
    standardised outcome and assignment dummies gives the posterior probability that the outcome slope is
    positive, and `bayes_diagnostics` its convergence (R-hat, ESS, divergences). `sampling` holds the
    sampler's options (draws, tune, chains, sampler) for `referee.models.fit.sample`.
    """
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    data = frame.dropna(subset=[outcome, "score", assignment]).rename(columns={outcome: "_outcome",
                                                                               assignment: "_assign"})
    out = {"assignment": assignment, "outcome": outcome, "n": len(data)}
    if len(data) < 4 or data["_assign"].nunique() < 2:
        return AssignmentLuck(values=out, diagnostics={"converged": False, "reason": "too few players"})
    r2_assign = smf.ols("score ~ C(_assign)", data).fit().rsquared
    r2_outcome = smf.ols("score ~ _outcome", data).fit().rsquared
    joint = smf.ols("score ~ _outcome + C(_assign)", data).fit()
    table = anova_lm(joint, typ=2)
    resid = table.loc["Residual", "sum_sq"]
    eta = {term: table.loc[term, "sum_sq"] / (table.loc[term, "sum_sq"] + resid) for term in table.index[:-1]}
    out.update(r2_assignment=float(r2_assign), r2_outcome=float(r2_outcome),
               partial_eta2_assignment=float(eta["C(_assign)"]), partial_eta2_outcome=float(eta["_outcome"]))
    if not bayes:
        return AssignmentLuck(values=out, diagnostics={"converged": True, "fit": "ols"})
    out["p_outcome_slope_positive"], out["bayes_diagnostics"], idata = _bayes_slope(data, seed, **(sampling or {}))
    return AssignmentLuck(values=out, diagnostics=dict(out["bayes_diagnostics"]), idata=idata)


# The regression is tiny (a few dozen players) and nearly free per draw with nutpie, whose compile time
# dominates the fit; P(outcome slope > 0) is reported near 0 or 1, where its Monte Carlo error rests on the
# tail ESS, so it draws 5,000 per chain (20,000 in all) by default.
# nutpie's default step-size target (0.8) left 1-3 divergent transitions in 20,000 draws on 6 of 20 simulated
# seasons (issue 53's sweep); a smaller step at 0.9 costs a fraction of a second here
AUDIT_TARGET_ACCEPT = 0.9


def build_assignment_regression(x: np.ndarray, dummies: np.ndarray, y: np.ndarray, levels: list[str] | None = None):
    """The assignment-luck regression as a PyMC model: y ~ Normal(intercept + slope x + dummies @ assignment,
    sigma), Normal(0, 1) priors on intercept, slope and the assignment effects, HalfNormal(1) on sigma.
    x, y : (n,); dummies : (n, k) indicators of the assignments (one left out); levels : their k names (the
    `assignment_level` coordinate of the posterior)."""
    import pymc as pm

    levels = list(levels) if levels is not None else [f"level_{k}" for k in range(dummies.shape[1])]
    with pm.Model(coords={"assignment_level": levels}) as model:
        # the data as `pm.Data`: every audit's regression is one compiled structure, whatever its season
        # (`referee.models.compiled_structure`), compiled once per process and kept on disk for the next
        x_data = pm.Data("outcome_z", np.asarray(x, float))
        dummies_data = pm.Data("assignment_dummies", np.asarray(dummies, float).reshape(len(x), -1))
        slope = pm.Normal("slope", 0.0, 1.0)
        effects = pm.Normal("assignment", 0.0, 1.0, dims="assignment_level")
        intercept = pm.Normal("intercept", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Normal("y", intercept + slope * x_data + pm.math.dot(dummies_data, effects), sigma,
                  observed=pm.Data("score_z", np.asarray(y, float)))
    return model


def _bayes_slope(data: pd.DataFrame, seed: int, draws: int = AUDIT_DRAWS, tune: int = TUNE, chains: int = CHAINS,
                 sampler: str = "auto") -> tuple[float, dict, object]:
    z = lambda v: (v - v.mean()) / (v.std() or 1.0)  # noqa: E731
    y = z(data["score"].astype(float)).to_numpy()
    x = z(data["_outcome"].astype(float)).to_numpy()
    indicators = pd.get_dummies(data["_assign"], drop_first=True)
    dummies = indicators.to_numpy(float)
    model = build_assignment_regression(x, dummies, y, [str(c) for c in indicators.columns])
    idata, diagnostics = sample(model, ["slope", "assignment", "intercept", "sigma"], draws, tune, chains, seed,
                                sampler, target_accept=AUDIT_TARGET_ACCEPT, reuse=True)
    return float((idata.posterior["slope"] > 0).mean()), diagnostics, idata


def two_scores(frame: pd.DataFrame, telemetry: str, outcome: str) -> pd.DataFrame:
    """Telemetry and outcome side by side (never summed), with each one's rank and the discordant players:
    in the top third on one and the bottom third on the other."""
    data = frame.dropna(subset=[telemetry, outcome])[["player", "role", telemetry, outcome]].copy()
    n = len(data)
    data["telemetry_rank"] = data[telemetry].rank(method="min", ascending=False)
    data["outcome_rank"] = data[outcome].rank(method="min", ascending=False)
    third = max(1, n // 3)
    high_low = (data["telemetry_rank"] <= third) & (data["outcome_rank"] > n - third)
    low_high = (data["outcome_rank"] <= third) & (data["telemetry_rank"] > n - third)
    data["discordant"] = np.where(high_low, "high telemetry, low outcome",
                                  np.where(low_high, "low telemetry, high outcome", ""))
    return data.sort_values("telemetry_rank").reset_index(drop=True)


HARNESS = {"parse_failure": "parse_failures", "turn_skip": "turn_skips", "missing_thought": "missing_thoughts"}


def is_rejected(events: pd.DataFrame) -> pd.Series:
    """Which events the world refused: the one reading of an event's status (`events.status` = 'rejected', as
    every loader stores it, `referee.io.schema.EVENT_STATUSES`); all False where the table has no status."""
    if "status" not in events.columns:
        return pd.Series(False, index=events.index)
    return (events["status"] == "rejected").fillna(False).astype(bool)


def event_diagnostics(events: pd.DataFrame, quiet_share: float = 0.25) -> pd.DataFrame:
    """Per actor, the event log counted as the EVAL 01 report counts it (section 5.3): action and proposal
    attempts and rejections apart (stages `act` and `propose`), the harness's parse failures, turn skips and
    missing thoughts (stage `harness`), the rejection rate per attempt (the activity control), rejections by
    reason, and a 'quiet' flag for actors with fewer attempts than `quiet_share` of the median (few rejections
    from few attempts are not skill).

    events : canonical events (actor, stage, type, status, reason, seq). Returns one row per actor: actor,
    action_attempts, action_rejections, proposal_attempts, proposal_rejections, attempted, rejected,
    rejection_rate, parse_failures, turn_skips, missing_thoughts, 'rejected: REASON' columns, quiet; sorted
    by attempts (most first). Empty when the log has no actions, proposals or harness events.
    """
    base = ["actor", "action_attempts", "action_rejections", "proposal_attempts", "proposal_rejections", "attempted",
            "rejected", "rejection_rate"] + list(HARNESS.values()) + ["quiet"]
    logged = events[events["stage"].isin(["act", "propose", "harness"])]
    if logged.empty:
        return pd.DataFrame(columns=base)
    rejected = is_rejected(logged)
    counts = pd.DataFrame({
        "actor": logged["actor"],
        "action_attempts": logged["stage"] == "act", "action_rejections": (logged["stage"] == "act") & rejected,
        "proposal_attempts": logged["stage"] == "propose",
        "proposal_rejections": (logged["stage"] == "propose") & rejected,
        **{column: (logged["stage"] == "harness") & (logged["type"] == kind) for kind, column in HARNESS.items()},
    })
    table = counts.groupby("actor").sum().astype(int)
    table["attempted"] = table["action_attempts"] + table["proposal_attempts"]
    table["rejected"] = table["action_rejections"] + table["proposal_rejections"]
    table["rejection_rate"] = table["rejected"] / table["attempted"].where(table["attempted"] > 0)
    acts = logged[logged["stage"].isin(["act", "propose"]) & rejected]
    if len(acts):
        reasons = acts.pivot_table(index="actor", columns="reason", values="seq", aggfunc="count", fill_value=0)
        table = table.join(reasons.add_prefix("rejected: "), how="left")
        reason_columns = [c for c in table.columns if str(c).startswith("rejected: ")]
        table[reason_columns] = table[reason_columns].fillna(0).astype(int)
    table["quiet"] = table["attempted"] < quiet_share * table["attempted"].median()
    table = table.reset_index()
    return table[base + [c for c in table.columns if c not in base]].sort_values(
        "attempted", ascending=False, kind="stable").reset_index(drop=True)
