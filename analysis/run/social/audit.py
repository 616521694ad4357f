"""The construct-validity audit: does a scoring metric measure the outcome it claims? (`referee audit`)

`audit_frame(store, runner, match)` builds the per-player table the checks read: results joined with every
measure (one column per measure name: counters, recorded components, outcomes) plus a derived `win`
outcome (sole first place). `run_audit(frame, events, formula, ...)` runs the checks of
`referee.models.validity.checks` and returns an `AuditResult` (the `referee.models.fit.FitResult` contract; it also reads
as a mapping of checks); `referee.readings.audit_markdown(result)` gives `audit.md` (a verdict per
check in plain words, with the numbers), the checks table and the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from referee.prepare.selection import outcome_note, with_outcomes
from referee.models.fit import FitResult, ReadsAsMapping, collect_notes
from referee.models.registry import DIRECTIONS
from referee.models.validity import checks as validity
from referee.models.validity import season
from referee.models.validity import CHECK_TITLES
from referee.models.validity.formula import Formula, load_formula
from referee.readings import cut_list
from referee.run.social.audit_outcomes import (  # noqa: F401  (DERIVED, UndeclaredDirection: re-exported)
    DERIVED, UndeclaredDirection, agents_events, declared_directions, function_of_score, is_the_score,
    outcome_directions, runner_directions, runner_roles, stored_directions)

# the event log's counts the events check totals (`validity.event_diagnostics`' columns)
EVENT_TOTALS = ["action_attempts", "action_rejections", "proposal_attempts", "proposal_rejections", "parse_failures",
                "turn_skips", "missing_thoughts"]
VALIDITY_CHECKS = ("hold_outcome_constant", "failure_at_top", "rank_agreement", "assignment_luck")


def audit_frame(store, runner: str | None = None, match: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(frame, events) for the audit: one row per player (per match), with measures as columns.

    When the selection spans several matches, `player` becomes 'match/player'. Recorded outcomes
    (`referee.prepare.selection.with_outcomes`): an aborted match has no outcome to audit against and is left
    out; a player who forfeited ranks last (its score stays as recorded: the score is what is audited);
    `frame.attrs["outcome_note"]` says how many (None when there were none), and `run_audit` adds it to its notes;
    `frame.attrs["directions"]` the outcome directions the runners and the ingest declared, `frame.attrs["kinds"]`
    each measure's kind.
    """
    matches = store.matches()
    if runner is not None:
        matches = matches[matches["runner"] == runner]
    if match is not None:
        matches = matches[matches["match_id"] == match]
    if matches.empty:
        raise ValueError("no matches selected for the audit (check --runner / --match)")
    ids = set(matches["match_id"])
    results = store.results()
    results = results[results["match_id"].isin(ids)].copy()
    note = outcome_note(results)
    kept, ranked = with_outcomes(matches, results)  # aborted matches have no outcome; a forfeit ranks last
    if kept.empty:
        raise ValueError("every selected match was aborted: there is no outcome to audit against")
    results = ranked.assign(score=results.loc[ranked.index, "score"])  # the audited score stays as recorded
    matches, ids = kept, set(kept["match_id"])
    measures = store.measures()
    measures = measures[measures["match_id"].isin(ids)]
    measures = pd.concat([measures[measures["player"].notna()], episode_outcomes(measures, results)],
                         ignore_index=True)
    wide = measures.pivot_table(index=["match_id", "player"], columns="name", values="value", aggfunc="mean")
    frame = results.merge(wide.reset_index(), on=["match_id", "player"], how="left")
    frame["win"] = derived_win(frame)
    if matches["match_id"].nunique() > 1:
        frame["player"] = frame["match_id"] + "/" + frame["player"]
    frame = frame.merge(matches[["match_id", "game"]], on="match_id", how="left")
    events = store.events()
    events = events[events["match_id"].isin(ids)]
    frame = frame.reset_index(drop=True)
    frame.attrs["outcome_note"] = note
    runners = sorted(matches["runner"].dropna().unique())
    frame.attrs["runner_roles"] = runner_roles(runners)
    frame.attrs["directions"] = {**runner_directions(runners),
                                 **stored_directions(measures)}
    # each measure's declared kind (outcome, telemetry, ...), so that what was declared at ingest counts unasked
    frame.attrs["kinds"] = measures.drop_duplicates("name").set_index("name")["kind"].to_dict()
    return frame, events


def episode_outcomes(measures: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """A runner's episode-level outcome measures (player empty, kind outcome: clem's Success, Lose, Aborted) as
    one row per player of the episode, so that `--outcome Success` judges each player's score by its episode's
    outcome; a player's own measure of the same name wins over its episode's."""
    shared = measures[measures["player"].isna() & (measures["kind"] == "outcome") & measures["round"].isna()]
    if shared.empty:
        return shared
    own = set(zip(measures.loc[measures["player"].notna(), "match_id"], measures.loc[measures["player"].notna(),
                                                                                     "name"]))
    shared = shared[[(m, n) not in own for m, n in zip(shared["match_id"], shared["name"])]]
    players = results[["match_id", "player"]].drop_duplicates()
    return shared.drop(columns=["player"]).merge(players, on="match_id")


def derived_win(frame: pd.DataFrame) -> np.ndarray:
    """The derived outcome `win` per player row (match_id, rank, outcome): 1 for a stored outcome `win`, 0 for
    `loss` or `forfeit`, 1/k for a `tie` among k players; where no outcome is stored, from the ranks: 1/k for a
    first place shared by k players, 0 below, and 0 in a match where everyone shares first place (no winner).
    So the derived win agrees with the results the runner stored (clem stores a shared rank 1 and the win)."""
    outcome = frame["outcome"] if "outcome" in frame.columns else pd.Series(None, index=frame.index, dtype=object)
    first = (frame["rank"] == 1).groupby(frame["match_id"]).transform("sum")
    size = frame.groupby("match_id")["rank"].transform("size")
    by_rank = np.where((frame["rank"] == 1) & (first < size), 1.0 / first.clip(lower=1), 0.0)
    tied = (outcome == "tie").groupby(frame["match_id"]).transform("sum").clip(lower=1)
    stored = np.select([outcome == "win", outcome.isin(["loss", "forfeit"]), outcome == "tie"],
                       [1.0, 0.0, 1.0 / tied], default=np.nan)
    return np.where(np.isnan(stored), by_rank, stored)


@dataclass
class AuditResult(ReadsAsMapping, FitResult):
    """A construct-validity audit (the `referee.models.fit.FitResult` contract). `checks` maps each check's key to
    its figures (`verdict`, `passed` True/False/None, tables); the result also reads as that mapping
    (`result["summary"]["verdict"]`). `table()`: one row per check: check, title, ran, passed, verdict.
    `diagnostics` holds the Bayesian regression's convergence when it ran."""

    checks: dict = field(default_factory=dict)
    model: str = "audit"
    frame: object | None = None  # the per-player table audited, when the caller keeps it (`referee.audit`)
    MAPPING = "checks"  # reads as its checks (`ReadsAsMapping`)

    @property
    def verdict(self) -> str:
        """The audit's one-paragraph verdict (its summary's)."""
        return self.checks.get("summary", {}).get("verdict", "")

    @property
    def outcomes(self) -> list[str]:
        """The outcome measures audited against."""
        return list(self.checks.get("outcomes", []))

    @property
    def judged(self) -> list[str]:
        """The outcome measures the score was judged against (names; an outcome refused as constant or as the
        score itself is not among them)."""
        return list(self.checks.get("judged", []))

    @property
    def directions(self) -> dict[str, str]:
        """outcome -> 'higher' or 'lower': which way each outcome is better, as the audit read it."""
        return dict(self.checks.get("directions", {}))

    def table(self) -> pd.DataFrame:
        """check, title, ran, passed (True/False/None), verdict, why_not_run, for every check the audit knows."""
        rows = []
        skipped = self.checks.get("skipped", {})
        for key, title in CHECK_TITLES.items():
            check = self.checks.get(key)
            rows.append({"check": key, "title": title, "ran": check is not None,
                         "passed": None if check is None else check.get("passed"),
                         "verdict": "" if check is None else check["verdict"],
                         "why_not_run": "" if check is not None else skipped.get(key, "")})
        return pd.DataFrame(rows)


def run_audit(frame: pd.DataFrame, events: pd.DataFrame, formula: Formula | None, outcomes: list[str],
              group_by: list[str], telemetry: str | None, top_k: int = 3, seed: int = 0, bayes: bool = True,
              sampling: dict | None = None, directions: dict[str, str] | None = None,
              assume: str | None = None) -> AuditResult:
    """Run every check that the data allow; returns an AuditResult whose checks each carry a `verdict` and
    `passed` (None where a check does not judge), `skipped` (check -> why it did not run) and `summary`
    with the overall verdict. Warnings raised by the checks are in its notes; `sampling` (draws, tune,
    chains, sampler) goes to the Bayesian regression; `directions` (outcome -> 'higher'/'lower', see
    `outcome_directions`) says which way each outcome is better; an undeclared one raises UndeclaredDirection
    unless `assume` gives the direction to take (stated in `outcomes` and the notes). Values in the verdicts
    are printed as recorded, whichever way is better.

    Raises ValueError for an outcome, group-by or telemetry name the data do not have, and for a derived
    outcome (DERIVED: `win`, `rank`) that is a function of the score itself (circular: see
    `function_of_score`). A recorded outcome measure is never refused: a perfect score would look the same."""
    numeric = sorted(c for c in frame.columns if frame[c].dtype.kind in "fi")
    for kind, names in (("outcome measure", outcomes), ("--group-by column", group_by),
                        ("telemetry measure", [telemetry] if telemetry else [])):
        missing = [n for n in names if n not in frame.columns]
        if missing:
            raise ValueError(f"{kind}(s) {missing} not in the data; available: {numeric}")
    circular = [o for o in outcomes if o in DERIVED and function_of_score(frame, o)]
    if circular:
        raise ValueError(
            f"outcome(s) {circular} are a function of the score itself (within every match their order follows "
            "the score's), so checking the score against them is circular. Supply a ground-truth outcome recorded "
            "apart from the score: an outcome column of a table (`referee ingest --measure NAME=outcome`), or the "
            "outcome measures a runner's logs carry (data/formats/), and name it with --outcome")
    frame, contradictions = without_contradictions(frame, {**frame.attrs.get("directions", {}), **(directions or {})})
    scored = frame[frame["score"].notna()] if "score" in frame.columns else frame
    itself = [o for o in outcomes if o != "score" and is_the_score(scored, o)]
    constant = {o: scored[o].dropna().unique() for o in outcomes if o not in itself}
    constant = {o: values for o, values in constant.items() if len(values) <= 1}
    said = "; ".join([f"{o} is {_value_text(v[0]) if len(v) else 'missing'} for every player with a score"
                      for o, v in constant.items()] + [f"{o} is the audited score itself" for o in itself])
    if constant or itself:
        if len(constant) + len(itself) == len(outcomes):
            raise ValueError(f"no outcome to judge the score against ({said}): a score cannot be judged against an "
                             "outcome that does not vary, nor against itself, so the audit gives no verdict. Name an "
                             "outcome that differs between players with --outcome (the store's outcome measures: "
                             "`referee info`)")
        outcomes = [o for o in outcomes if o not in constant and o not in itself]
    directions = {**frame.attrs.get("directions", {}), **(directions or {})}  # the runner's, then the user's
    assumed = [o for o, way in declared_directions(outcomes, formula, directions).items() if way is None]
    directions = outcome_directions(outcomes, formula, directions, assume)
    work = frame.copy()
    for o, way in directions.items():
        if way == "lower":
            work[o] = -work[o]  # every check reads higher as better; verdicts print the recorded values
    notes: list[str] = [frame.attrs["outcome_note"]] if frame.attrs.get("outcome_note") else []
    notes += contradictions
    if constant or itself:
        notes.append(f"not judged against {', '.join([*constant, *itself])} ({said}); judged against "
                     f"{', '.join(outcomes)}")
    if assumed:
        notes.append(f"which way is better for {', '.join(assumed)} was not declared; read as {assume} is better "
                     f"(declare it: referee audit --outcome {assumed[0]}:higher|lower)")
    with collect_notes(notes):
        out = _run_checks(work, events, formula, outcomes, group_by, telemetry, top_k, seed, bayes, sampling,
                          recorded=frame, signs={o: -1.0 if w == "lower" else 1.0 for o, w in directions.items()})
    out["directions"] = directions
    out["judged"] = list(outcomes)  # the outcomes the score was judged against (constant or circular ones refused)
    out["outcomes"] = [f"{o} ({directions[o]} is better{', assumed' if o in assumed else ''})" for o in outcomes]
    luck = out.get("assignment_luck", {})
    idata = out.pop("_assignment_idata", None)
    diagnostics = dict(luck.get("bayes_diagnostics", {"converged": True}))  # the audit's only sampled fit
    return AuditResult(checks=out, notes=notes, diagnostics=diagnostics, idata=idata)


def without_contradictions(frame: pd.DataFrame, directions: dict) -> tuple[pd.DataFrame, list[str]]:
    """`frame` without the players whose outcome flags contradict each other, and a note naming them: a 0/1
    outcome where higher is better (clem's Success) and one where lower is better (clem's Lose) both at 1 say the
    player both succeeded and failed (clemcore scores them as exclusive episode flags; clem's LM-Playschool run has
    clean_up episodes with both). Counted per pair of flags and per game, set apart, never judged."""
    def binary(name: str) -> bool:
        values = set(pd.unique(frame[name].dropna()))
        return bool(values) and values <= {0, 1, 0.0, 1.0}

    flags = {o: w for o, w in directions.items() if o in frame.columns and binary(o)}
    apart = pd.Series(False, index=frame.index)
    notes = []
    for good in (o for o, w in flags.items() if w == "higher"):
        for bad in (o for o, w in flags.items() if w == "lower"):
            both = (frame[good] == 1) & (frame[bad] == 1)
            if both.any():
                where = (frame.loc[both, "game"].fillna("(no game)").value_counts() if "game" in frame.columns
                         else pd.Series({"all": int(both.sum())}))
                notes.append(f"{int(both.sum())} player(s) carry {good} = 1 and {bad} = 1 together (contradictory "
                             f"outcome flags: the one says the player succeeded, the other that it failed); set apart "
                             f"from the audit: " + ", ".join(f"{g} ({n})" for g, n in where.items()))
                apart |= both
    if not apart.any():
        return frame, notes
    kept = frame[~apart].copy()
    kept.attrs = dict(frame.attrs)
    return kept, notes


def _event_verdict(diag: pd.DataFrame, frame: pd.DataFrame) -> dict:
    """The event-log check in words: the report's categories counted apart, the spread of rejections per
    attempt over models (the activity control), and the quiet agents whose few rejections are not skill."""
    total = {k: int(v) for k, v in diag[EVENT_TOTALS].sum().items()}  # the log's full totals (EVAL 01 3.7)
    verdict = (f"{total['action_rejections']:,} of {total['action_attempts']:,} actions and "
               f"{total['proposal_rejections']:,} of {total['proposal_attempts']:,} proposals were rejected; "
               f"the harness logged {total['parse_failures']:,} parse failures, {total['turn_skips']:,} "
               f"turn skips and {total['missing_thoughts']:,} missing thoughts.")
    models = frame[["player", "agent"]].drop_duplicates("player")
    by_model = diag.merge(models, left_on="actor", right_on="player", how="left").assign(
        agent=lambda t: t["agent"].fillna(t["actor"])).groupby("agent")[["attempted", "rejected"]].sum()
    by_model = by_model[by_model["attempted"] > 0]
    if len(by_model):
        rate = (by_model["rejected"] / by_model["attempted"]).sort_values()
        verdict += (f" Rejections per attempt range over models from {rate.iloc[0]:.0%} ({rate.index[0]}) to "
                    f"{rate.iloc[-1]:.0%} ({rate.index[-1]}).")
    quiet = diag.loc[diag["quiet"], "actor"].tolist()
    if quiet:
        verdict += f" Quiet agents whose low counts reflect little activity, not skill: {', '.join(quiet)}."
    return {"table": diag, "verdict": verdict, "passed": None, "totals": total,
            "by_model": by_model.assign(rejection_rate=by_model["rejected"] / by_model["attempted"]).reset_index()}


def _progress_verdict(progress: dict) -> dict:
    """The mission-progress check in words (EVAL 01 section 5.6); INFO, not a verdict on the score."""
    parts = []
    peace, power = progress["peace"], progress["power"]
    if peace:
        parts.append(f"World Peace: {peace['source']} peaked at {peace['peak_minutes']:.0f} of the "
                     f"{peace['target_minutes']:.0f} minutes of sustained peace it needs ({peace['share_of_target']:.0%}).")
    if power:
        parts.append(f"Total Control: the top governed nation's power lead over the second-ranked one peaked at "
                     f"{power['peak_lead']:.0%} ({power['leader']}, {power['at']}), {power['share_of_target']:.0%} of the "
                     f"{power['target']:.0%} it needs" + (" (reached)" if power["reached"] else "") +
                     f"; {power['final_third_leader']} was on top in {power['final_third_share']:.0%} of the last third "
                     f"of the {power['snapshots']} snapshots.")
    if progress["missing"]:
        parts.append("The data carries " + ", and ".join(progress["missing"]) + ".")
    tables = {"power_lead": power["table"]} if power else {}
    return {"verdict": " ".join(parts), "passed": None, "peace": peace and dict(peace),
            "power": power and {k: v for k, v in power.items() if k != "table"}, **tables}


def _spectator_verdict(found: dict) -> dict:
    """The spectator check in words (EVAL 01 section 6.3): passes when nothing came from outside the agents."""
    if found["passed"]:
        verdict = (f"All {found['messages']:,} message events carry an agent's attribution and no event comes from "
                   "a spectator or another non-agent source: no sign of outside input.")
        if not found["messages"]:
            verdict = "The log holds no message events; no event comes from a spectator or another non-agent source."
    else:
        verdict = (f"{found['spectator']:,} spectator-channel event(s) and {found['non_agent']:,} event(s) from sources "
                   f"that are not the season's agents (e.g. {'; '.join(found['examples'])}); "
                   f"{found['attributed']:,} of {found['messages']:,} messages carry an agent's attribution. Outside "
                   "input may have shaped the run.")
    return {"verdict": verdict, "passed": found["passed"], **{k: v for k, v in found.items() if k != "passed"}}


def _run_checks(frame, events, formula, outcomes, group_by, telemetry, top_k, seed, bayes, sampling,
                recorded=None, signs=None) -> dict:
    """Every check on `frame` (outcomes oriented so that higher is better); `recorded` is the frame as recorded
    (what verdicts print and what identical outcomes are grouped on), `signs` the orientation per outcome."""
    recorded = frame if recorded is None else recorded
    signs = signs or {}
    out: dict = {"players": len(frame), "outcomes": outcomes, "formula": formula.name if formula else None}
    primary = outcomes[0]
    if formula is not None:
        rep = validity.reproduce(frame, formula)
        ok = rep["status"].str.startswith("reproduces")
        computable = rep["status"] != "not computable"
        by_source = {k: sorted(rep.loc[rep["source"] == k, "player"]) for k in ("counters", "recorded components")}
        verdict = f"{int(ok.sum())} of {int(computable.sum())} recorded scores reproduce from the formula."
        if by_source["recorded components"]:
            verdict += (f" For {len(by_source['recorded components'])} players the raw counters are not available, so "
                        "the audit recomputed the total from the recorded components it has.")
        if by_source["counters"] and by_source["recorded components"]:
            verdict += (f" Checked from raw counters: {', '.join(by_source['counters'])}; from the recorded components "
                        f"only: {', '.join(by_source['recorded components'])}.")
        for r in rep[~ok & computable].itertuples():
            verdict += f" {r.player}: recorded {r.recorded:g}, expected {r.expected:g} ({r.status})."
        for r in rep[rep["status"].str.contains("floor")].itertuples():
            verdict += f" {r.player}'s raw total ({r.raw_total:g}) is hidden by the floor at {formula.floor:g}."
        out["reproduction"] = {"table": rep, "reproduce": int(ok.sum()), "computable": int(computable.sum()),
                               "verdict": verdict, "passed": bool(ok[computable].all())}
        terms = validity.counter_terms(frame, formula)
        if len(terms):
            equal = terms["status"] == "equals the recorded value"
            # name the terms a reader checks against a report: the parts and what the total is written in
            named = set(formula.total.names) | set(formula.parts)
            verdict = (f"{terms['player'].nunique()} players have some of the formula's counters published, not all: "
                       + cut_list([f"{r.player}'s {r.component} from {r.counters} = {r.from_counters:g}"
                                   + ("" if pd.isna(r.recorded) else f" of the recorded {r.recorded:g}")
                                   for r in terms.itertuples() if r.component in named], where="the table below",
                                  sep="; ")
                       + f". {int(equal.sum())} recorded component(s) reproduce exactly from the published counters.")
            out["counter_terms"] = {"table": terms, "verdict": verdict, "passed": None}
        parts = validity.decompose(frame, formula)
        if not parts.empty:
            share = parts.groupby("component")["share"].mean().sort_values(ascending=False)
            out["decomposition"] = {"table": parts, "mean_share": share.to_dict(), "passed": None,
                                    "verdict": f"On average {share.index[0]} makes up {share.iloc[0]:.0%} of a score "
                                               f"(shares of the absolute parts: " +
                                               ", ".join(f"{k} {v:.0%}" for k, v in share.items()) + ")."}
    skipped: dict[str, str] = {}
    if formula is None:
        skipped["reproduction"] = skipped["decomposition"] = "no scoring formula given (--formula)"
        skipped["counter_terms"] = "no scoring formula given (--formula)"
        skipped["failure_at_top"] = "no scoring formula given (--formula), so no per-role failure rule"
    else:
        if "counter_terms" not in out:
            skipped["counter_terms"] = ("no player has some, but not all, of the formula's counters (each is "
                                        "checked whole from its counters or from its recorded components)")
        if "decomposition" not in out:
            skipped["decomposition"] = "no player has the inputs the formula's parts need"
    keys = [k for k in group_by + outcomes if k in frame.columns]
    if keys:  # the players the score is audited on: a player without a score has nothing to hold constant
        out["hold_outcome_constant"] = _held_constant(frame, recorded, keys, primary, skipped)
    else:
        skipped["hold_outcome_constant"] = "no outcome or --group-by column to hold constant"
    if formula is not None and not formula.failure:
        skipped["failure_at_top"] = "the formula defines no per-role failure rule ([failure])"
    if formula is not None and formula.failure:
        fails = validity.failures_at_top(frame, formula, top_k)
        top = fails[fails["in_top_k"]].head(top_k)
        verdict = (" ".join(f"{r.player} ranks {int(r.rank)} although it failed the outcome its role "
                            f"({r.role}) defines." for r in top.itertuples())
                   or f"No player who failed its role's outcome ranks in the top {top_k}.")
        out["failure_at_top"] = {"table": fails, "verdict": verdict, "passed": top.empty}
    agreements = {}
    for outcome in outcomes:
        if outcome not in frame.columns:
            continue
        agree = validity.rank_agreement(frame, outcome, k=top_k, seed=seed)
        agreements[outcome] = agree
    if primary in agreements and not math.isnan(agreements[primary].get("spearman", math.nan)):
        a = agreements[primary]
        absent = a["spearman_low"] <= 0
        # at the top: negative agreement among the top-k by score, or no overlap of the two top-k sets
        top_reversed = bool(a.get("top_spearman", 0) < 0)
        top_bad = top_reversed or a["top_k_overlap"] == 0
        ranks = score_ranks_roles(frame, top_k)
        best_value = signs.get(primary, 1.0) * a["best_outcome_value"]  # as recorded
        verdict = (f"Score and {primary} agree with Spearman {a['spearman']:.2f} (95% bootstrap interval "
                   f"{a['spearman_low']:.2f} to {a['spearman_high']:.2f}) and Kendall {a['kendall']:.2f} over "
                   f"{a['n']} players ({a['left_out']} without the outcome left out). The best {primary} "
                   f"({a['best_outcome_player']}, {best_value:g}) belongs to the player ranked "
                   f"{a['best_outcome_score_rank']} by score; the top {a['top_k']} by score and by {primary} share "
                   f"{a['top_k_overlap']} player{'' if a['top_k_overlap'] == 1 else 's'}. Top {top_k} by score: {ranks}.")
        if absent:
            verdict += (f" Overall agreement is not shown: the interval reaches {a['spearman_low']:.2f}, at or below "
                        "zero.")
        if top_reversed:
            verdict += (f" Among the top {top_k} by score, {primary} runs the other way (Spearman "
                        f"{a['top_spearman']:.2f} among them), where attention goes.")
        if a["top_k_overlap"] == 0:
            verdict += f" The top {a['top_k']} by score and by {primary} share no player, where attention goes."
        if not (absent or top_bad):
            verdict += " Agreement holds overall and at the top."
        out["rank_agreement"] = {"by_outcome": agreements, "verdict": verdict, "passed": not (absent or top_bad),
                                 "top_roles": ranks}
    else:
        skipped["rank_agreement"] = (f"the outcome {primary} or the score does not vary over 3 or more players"
                                     if primary in frame.columns else f"no outcome measure {primary}")
    assignment = "role" if frame["role"].notna().any() and frame["role"].nunique() > 1 else None
    if assignment and primary in frame.columns:
        luck = validity.assignment_luck(frame, assignment, primary, seed=seed, bayes=bayes, sampling=sampling)
        if "r2_assignment" in luck:
            worse = luck["r2_assignment"] > luck["r2_outcome"]
            verdict = (f"The randomly assigned {assignment} explains {luck['r2_assignment']:.0%} of the score's "
                       f"variance, the outcome ({primary}) {luck['r2_outcome']:.0%} (partial eta squared "
                       f"{luck['partial_eta2_assignment']:.2f} vs {luck['partial_eta2_outcome']:.2f}).")
            if "p_outcome_slope_positive" in luck:
                verdict += (f" In a Bayesian regression of the standardised score on both, P(outcome slope > 0) = "
                            f"{luck['p_outcome_slope_positive']:.2f}.")
            verdict += (" The draw of the assignment matters more than the outcome." if worse else
                        " The outcome explains more than the assignment.")
            luck.update(verdict=verdict, passed=not worse)
            out["assignment_luck"] = dict(luck.values)  # the JSON-able reading; the posterior is the result's
            out["_assignment_idata"] = luck.idata
        else:
            skipped["assignment_luck"] = "too few players per assigned role to compare the variance explained"
    else:
        skipped["assignment_luck"] = "no randomly assigned role that varies between players"
    if telemetry and telemetry in frame.columns and primary in frame.columns:
        both = validity.two_scores(frame, telemetry, primary)
        odd = both[both["discordant"] != ""]
        verdict = (f"Telemetry ({telemetry}) and outcome ({primary}) reported side by side, never summed. " +
                   (_discordant(odd) or "No player is high on one and low on the other."))
        out["two_scores"] = {"table": both, "verdict": verdict, "passed": None}
    else:
        skipped["two_scores"] = "no process-telemetry measure (--telemetry)"
    if not events.empty:
        diag = validity.event_diagnostics(events)
        if not diag.empty:
            out["events"] = _event_verdict(diag, frame)
    if "events" not in out:
        skipped["events"] = "no action events with an accepted/rejected status in the data"
    progress = season.mission_progress(events)
    if progress["peace"] or progress["power"]:
        out["mission_progress"] = _progress_verdict(progress)
    else:
        skipped["mission_progress"] = "the data carries " + ", and ".join(progress["missing"])
    spectators = season.spectator_input(agents_events(events, recorded), set(frame["player"]))
    if spectators["passed"] is None:
        skipped["spectators"] = "the data carries no event log of the agents' actions or messages"
    else:
        out["spectators"] = _spectator_verdict(spectators)
    # the validity verdict rests on the checks against the outcome; reproduction is an integrity check
    judged = {k: v["passed"] for k, v in out.items() if isinstance(v, dict) and v.get("passed") is not None
              and k in VALIDITY_CHECKS}
    valid = all(judged.values()) if judged else None
    out["skipped"] = {k: why for k, why in skipped.items() if k not in out}
    not_run = "; ".join(f"{CHECK_TITLES[k]}: {why}" for k, why in out["skipped"].items())
    basis = (f" ({len(judged)} of {len(VALIDITY_CHECKS)} checks against the outcome judged"
             + (f"; not run: {not_run}" if not_run else "") + ")")
    out["summary"] = {
        "checks_passed": [k for k, v in judged.items() if v], "checks_failed": [k for k, v in judged.items() if not v],
        "measures_outcome": valid, "skipped": out["skipped"],
        "verdict": (("The score measures the outcome it claims: every judged check passed" if valid else
                     "The score does not measure the outcome it claims: failed checks: "
                     + ", ".join(k for k, v in judged.items() if not v)) + basis + ".") if judged else
        "Nothing could be judged: give a formula and an outcome measure" + basis + ".",
    }
    return out


def _held_constant(frame: pd.DataFrame, recorded: pd.DataFrame, keys: list[str], primary: str, skipped: dict) -> dict:
    """Check 3 (holding the outcome constant) in words: judged by the share of the score's variance players with
    identical outcomes keep (`validity.variance_kept`: no shift or rescaling of the score moves it), per game
    where the audited players span several (their scores need not share a scale), a graded score read against
    the primary outcome; the widest group of identical outcomes described as recorded."""
    scored = frame["score"].notna() if "score" in frame.columns else pd.Series(True, index=frame.index)
    by = "game" if "game" in frame.columns and frame.loc[scored, "game"].nunique() > 1 else None
    kept = validity.variance_kept(frame[scored], keys, primary if primary in frame.columns else None, by)
    held = validity.hold_outcome_constant(recorded[scored], keys)
    judged = kept[kept["passed"].notna()]
    if judged.empty:
        skipped["hold_outcome_constant"] = "no two players share an identical outcome"
        return {"keys": keys, "table": held, "parts": kept, "passed": None,
                "verdict": "No two players share an identical outcome: this check has nothing to hold constant."}
    failed = judged[~judged["passed"].astype(bool)]
    if by is None:
        row = judged.iloc[0]
        verdict = f"With the outcome held constant, {row['reason']}."
        if len(held) and held.iloc[0]["max"] > held.iloc[0]["min"]:
            widest = held.iloc[0]
            names = widest["players"].split(", ")
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            ratio = (f" ({widest['max_min_ratio']:.3g}x as recorded: a ratio reads the score's zero, so it describes and "
                     "does not judge)" if widest["min"] > 0 else "")
            verdict += (f" The widest group ({widest['group']}: {shown}) spans {widest['min']:g} to "
                        f"{widest['max']:g}{ratio}.")
    else:
        passed = judged[judged["passed"].astype(bool)]
        verdict = (f"Judged per game (scores of different games need not share a scale): {len(passed)} of "
                   f"{len(judged)} game(s) pass. "
                   + " ".join(f"{r.part}: {'PASS' if r.passed else 'FAIL'}, {r.reason}." for r in judged.itertuples()))
        for reason, block in kept[kept["passed"].isna()].groupby("reason", sort=False):
            verdict += f" Not judged: {cut_list(list(block['part']))} ({reason})."
    verdict += (" A metric that measured the outcome could not vary this much among identical outcomes." if len(failed)
                else f" Within identical outcomes the score keeps at most {validity.WITHIN_LIMIT:.0%} of its variance "
                     "(or grades within the outcome).")
    return {"keys": keys, "table": held, "parts": kept, "by": by, "verdict": verdict, "passed": failed.empty}


def _discordant(odd: pd.DataFrame) -> str:
    """The discordant players by kind, the first LIST_ITEMS of each named and the rest counted."""
    return " ".join(f"{kind.capitalize()}: {cut_list(block['player'], where='the table below')}."
                    for kind, block in odd.groupby("discordant", sort=True))


def score_ranks_roles(frame: pd.DataFrame, k: int) -> str:
    """'1. player (role), 2. ...' for the top k by recorded score."""
    top = frame.assign(score_rank=validity.score_ranks(frame)).nsmallest(k, "score_rank")
    return ", ".join(f"{int(r.score_rank)}. {r.player}" + (f" ({r.role})" if pd.notna(r.role) and r.role is not None
                                                            else "") for r in top.itertuples())


def _value_text(value) -> str:
    """A value as a reader writes it (3, 0.5, 'win'), never a numpy repr."""
    return f"{value:g}" if isinstance(value, (int, float, np.number)) else str(value)


def outcome_arg(text: str) -> tuple[str, str | None]:
    """'NAME' or 'NAME:higher' / 'NAME:lower' -> (name, direction or None)."""
    name, sep, way = text.partition(":")
    if sep and way not in DIRECTIONS:
        raise ValueError(f"--outcome takes NAME, NAME:higher or NAME:lower (which is better), got {text!r}")
    return name, way or None


def default_outcomes(frame: pd.DataFrame, store_measures: pd.DataFrame | None = None) -> list[str]:
    """Outcome measures present in the data (kind 'outcome'; from `store_measures`, else the kinds `audit_frame`
    recorded), power-like first; else the derived `win`."""
    kinds = (frame.attrs.get("kinds", {}) if store_measures is None else
             dict(zip(store_measures["name"], store_measures["kind"])))
    names = sorted(n for n, kind in kinds.items() if kind == "outcome")
    names = sorted(names, key=lambda n: (0 if "power" in n else 1, n))
    return [n for n in names if n in frame.columns] or ["win"]


def formula_from(path, frame: pd.DataFrame) -> Formula:
    """Load a formula checked against the measures this frame has (plus every AoA counter name)."""
    from referee.io.loaders.aoa import COUNTERS

    inputs = set(COUNTERS) | {c for c in frame.columns if frame[c].dtype.kind in "fi"}
    return load_formula(path, inputs)
