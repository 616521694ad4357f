"""The Age of Agents EVAL 01 report by its own protocol: Appendix A.1's table of the twelve agents, the score
formula's reproduction (section 3.4), the three proofs of section 4 (one nation, a 175-fold spread; second
with a dead nation; the strongest nation fourth), the score decomposition, activity against rank (section
5.1), deportation (section 5.4) and the two scores (section 7.1), from one season in a store."""

from __future__ import annotations

import json

import pandas as pd
from scipy import stats

from referee.models.validity.season import PEACE_TARGET_MINUTES
from referee.papers.items import Item, PaperWriter

NARRATIVE = ("Section 6.2", "two false claims caught and corrected",  # the report's own editing, in no data
             "the report's account of its authors' corrections before publication: no season, log or store holds it")
COST_WORDS = ("cost", "spend", "usd", "dollar", "price")  # a measure or event naming one of these is a cost record
REASON_WORDS = {"cooldown": "cooldown", "duplicate": "duplicate or in progress", "invalid_target": "invalid target",
                "malformed": "malformed"}  # the report's categories of rejections (section 5.2), as the log names them
# the report's own season, known by the source its season file names (the published numbers are quoted beside
# the computed ones only for it: another season, a simulated one, is other data)
EVAL01_SOURCE = "Age of Agents EVAL 01 report"
OUTCOME_IS_POWER = ("nation power (outcome_rank ranks the agent rows by their nation's power, 1 = strongest; the "
                    "agents of one nation share a rank): the report's outcome score, "
                    "graded against each agent's own mission, is EVAL 02's and no EVAL 01 log holds it")
MIN_RHO_POINTS = 5  # agents with an action count below which Section 5.1's Spearman rho says nothing
TABLE_COLUMNS = ["rank", "agent", "player", "team", "role", "nation_power", "nation_alive", "universal", "bonus",
                 "score"]


def aoa_paper(store, writer: PaperWriter, match: str | None = None, seed: int = 0) -> tuple[dict, list[str]]:
    """Make the EVAL 01 report's tables and findings from one Age of Agents season of the store (`match`,
    default the first aoa match), into `writer`. Returns (protocol, notes)."""
    from referee.io.loaders import entry
    from referee.io.resources import shipped
    from referee.run.job_table import JOBS

    matches = store.matches()
    seasons = matches.loc[[entry(r).season_audit for r in matches["runner"]],
                          "match_id"].tolist()
    if match is None and not seasons:
        raise ValueError("the store holds no Age of Agents season (runner 'aoa'); `referee paper aoa` reads one")
    if match is not None and match not in seasons:
        shown = ", ".join(seasons[:5]) + (" ..." if len(seasons) > 5 else "") if seasons else "none"
        raise ValueError(f"--match {str(match)[:200]!r} is not an Age of Agents season of the store (seasons: "
                         f"{shown})")
    match = match or seasons[0]
    found = JOBS["audit"].compute(store, match=match, formula=shipped("formulas", "aoa_eval01.toml"), group_by=["team"],
                                  telemetry="universal", assume="higher", no_bayes=True, seed=seed)
    audit, frame, outcomes = found.value, found.table("players"), found.outcomes
    events = store.events()
    events = events[events["match_id"] == match]
    protocol = {"season": match, "formula": "data/formulas/aoa_eval01.toml (the report's section 3.4)",
                "outcomes": outcomes, "regressions": "none (the report's findings are counts and ranks)"}
    notes = list(audit.notes)
    shown = [c for c in TABLE_COLUMNS if c in frame.columns]
    source = _season_source(matches, match)
    reported = source.startswith(EVAL01_SOURCE)  # the season the report is about: its numbers may be quoted
    protocol["published numbers"] = ("quoted beside the computed ones: this is the report's own season" if reported
                                     else f"not quoted: this season ({source}) is not the one the report describes")
    item = Item("Appendix A.1", "all agents ranked by final score: universal, bonus, nation power",
                protocol={"values": f"as the season file gives them, not recomputed from raw logs; its source: {source}"})
    if reported and "score" in frame.columns and frame["score"].notna().any():
        item.quote(15167, "Appendix A.1 (the winner, Sunny)", int(round(frame["score"].max())))
    writer.table(item, frame[shown].sort_values("rank"))
    checks = audit.checks
    inputs = {"Section 3.4": {"inputs": f"the counters and components the season file gives; its source: {source}"},
              "Section 7.1": {"outcome": OUTCOME_IS_POWER}}  # where the season's data differ from the report's
    for number, title, key in (("Section 3.4", "the score formula recomputed from each agent's counters",
                                "reproduction"),
                               ("Section 4.1", "one nation, several agents: the score's spread at one outcome",
                                "hold_outcome_constant"),
                               ("Section 4.2", "an agent ranked near the top whose nation failed its outcome",
                                "failure_at_top"),
                               ("Section 4.4", "what the score is made of: each component's share",
                                "decomposition"),
                               ("Section 7.1", "two scores, never combined: telemetry against outcome",
                                "two_scores")):
        item = Item(number, title, protocol={"check": key, "verdict": checks.get(key, {}).get("verdict"),
                                             **inputs.get(number, {})})
        if key == "hold_outcome_constant":
            spread = _widest_spread(frame)
            if spread is not None and reported:
                item.quote(175, "Section 4.1 (8,940 against 51 within Valdris: 'roughly 175')", round(spread, 1))
        table = checks.get(key, {}).get("table")
        if isinstance(table, pd.DataFrame) and len(table):
            writer.table(item, table)
        else:
            writer.missing(item, checks.get("skipped", {}).get(key, "the check found nothing to tabulate"))
    ranks = _power_ranks(frame)
    item = Item("Section 4.3", "the strongest nation against the winner: each agent's rank by score against its "
                               "nation's rank among the nations by power",
                protocol={"verdict": checks["rank_agreement"]["verdict"]})
    strongest = ranks.loc[ranks["power_rank"] == 1, "rank"]
    if len(strongest) and reported:
        item.quote(4, "Section 4.3 (Tofu, governing Shadowmere, 'finished fourth')", int(strongest.min()))
    writer.table(item, ranks)
    _activity(writer, frame)
    _deportation(writer, events)
    roster = [c for c in ("player", "agent", "team", "role") if c in frame.columns]
    writer.table(Item("Section 3.2", "the roster: each agent, its model, nation and mission",
                      protocol={"columns": "codename (player), model (agent), nation (team), mission (role); the "
                                           "report's Tier and Provider are not in the season file"}),
                 frame[roster].sort_values(roster[0]))
    _rejections(writer, events, checks)
    _timeline(writer, events)
    _peace(writer, events)
    _cost(writer, store, match)
    _harness_counts(writer, checks, reported)
    _spectators(writer, checks, reported)
    writer.missing(Item(*NARRATIVE[:2]), NARRATIVE[2])
    return protocol, notes


def _season_source(matches: pd.DataFrame, match: str) -> str:
    """Where the season file says its values come from (its `source`, e.g. EVAL 01's hand transcription of
    the report's tables), or that it does not say."""
    attrs = matches.loc[matches["match_id"] == match, "attrs"]
    said = json.loads(attrs.iloc[0]).get("source") if len(attrs) and isinstance(attrs.iloc[0], str) else None
    return said or "the season file does not say"


def _of_kind(events: pd.DataFrame, word: str) -> pd.Series:
    """Which of the season's events have `word` in their type (without case); none where there is no event log."""
    if not len(events) or "type" not in events.columns:
        return pd.Series(False, index=events.index)
    return events["type"].astype(str).str.contains(word, case=False)


def _rejections(writer: PaperWriter, events: pd.DataFrame, checks: dict) -> None:
    """Sections 5.2 and 5.3: rejected actions by the report's categories (the reason the world gave: cooldown,
    duplicate or in progress, invalid target, malformed, then any other reason the engine wrote) and by agent,
    action rejections (stage `act`) and proposal rejections (stage `propose`) counted apart, as the report counts
    them. 5.3 is the audit's event check per agent (`event_diagnostics`, one count of the log); 5.2 cuts the same
    rejections (`is_rejected`) by reason."""
    from referee.models.validity.checks import is_rejected

    diag = checks.get("events", {}).get("table")
    refused = is_rejected(events)
    for number, title in (("Section 5.2", "rejected actions by the report's categories"),
                          ("Section 5.3", "rejected actions by agent")):
        item = Item(number, title, protocol={
            "rejected": "events whose status is 'rejected' (the world refused them); actions (stage act) and "
                        "proposals (stage propose) apart"})
        if not refused.any():
            attempted = int(diag["attempted"].sum()) if isinstance(diag, pd.DataFrame) else 0
            writer.missing(item, f"none of the season's {attempted:,} attempted actions was rejected" if attempted
                           else "the store holds no log of this season's actions (its season file carries final "
                           "statistics and state snapshots, no attempted action)")
        elif number == "Section 5.2":
            writer.table(item, _by_reason(events, refused, item))
        else:
            table = diag.rename(columns={"action_rejections": "actions_rejected",
                                         "proposal_rejections": "proposals_rejected"})
            writer.table(item, table[["actor", "attempted", "actions_rejected", "proposals_rejected", "rejection_rate"]]
                         .sort_values("actions_rejected", ascending=False, kind="stable"))


def _by_reason(events: pd.DataFrame, refused: pd.Series, item: Item) -> pd.DataFrame:
    """Section 5.2's table: per reason (the report's categories first, REASON_WORDS), the actions and proposals
    rejected for it and its share of the action rejections; the categories said in `item`'s protocol."""
    reason = events["reason"].fillna("(no reason given)").astype(str) if "reason" in events.columns else \
        pd.Series("(no reason given)", index=events.index)
    table = pd.DataFrame({f"{kind}s_rejected": reason[refused & (events["stage"] == stage)].value_counts()
                          for kind, stage in (("action", "act"), ("proposal", "propose"))}).fillna(0).astype(int)
    order = [r for r in REASON_WORDS if r in table.index] + sorted(set(table.index) - set(REASON_WORDS))
    table = table.loc[order].rename_axis("reason").reset_index()
    table.insert(1, "category", table["reason"].map(REASON_WORDS).fillna("the engine's own word"))
    if table["actions_rejected"].sum():
        table["share_of_action_rejections"] = table["actions_rejected"] / table["actions_rejected"].sum()
    item.protocol["categories"] = "; ".join(
        f"{r.category}: {r.actions_rejected:,} action(s)" + (f", {r.proposals_rejected:,} proposal(s)"
                                                             if r.proposals_rejected else "")
        for r in table.itertuples())
    return table


def _cost(writer: PaperWriter, store, match: str) -> None:
    """Section 3.6: the run's cost, from any measure or event of the season naming a cost (COST_WORDS); refused,
    saying what was searched, where none does."""
    item = Item("Section 3.6", "cost of the run")
    measures = store.measures()
    measures = measures[measures["match_id"] == match]
    named = measures["name"].astype(str).str.lower()
    costs = measures[named.str.contains("|".join(COST_WORDS))]
    if len(costs):
        table = costs.groupby("name")["value"].agg(["sum", "count"]).rename(columns={"sum": "total",
                                                                                     "count": "records"})
        writer.table(item, table.reset_index())
        return
    writer.missing(item, f"none of the season's {len(measures):,} measures ({measures['name'].nunique()} names) "
                         f"names a cost ({', '.join(COST_WORDS)}): the run's API spend is not in its logs")


def _harness_counts(writer: PaperWriter, checks: dict, reported: bool) -> None:
    """Section 3.7's counts, the full event-log totals the report verifies its figures against: action and
    proposal rejections, parse failures, turn skips and missing thoughts (the audit's event check, summed over the
    agents); refused with the audit's own reason where the season has no event log."""
    item = Item("Section 3.7", "errors caught during post-hoc analysis: the event log's full totals",
                protocol={"from": "the season's event log (stages act, propose, harness), as the audit's event check "
                                  "counts it", "not computed": "the report's account of its shared-key check and "
                                  "of the partial counts it withdrew (narrative)"})
    found = checks.get("events")
    if not found:
        writer.missing(item, checks.get("skipped", {}).get("events", "the audit found no event log"))
        return
    total = {k: v for k, v in found["totals"].items() if not k.endswith("_attempts")}  # the faults, not the tries
    if reported:
        item.quote(4722, "Section 3.7 (action rejections)", total["action_rejections"])
    item.protocol["totals"] = ", ".join(f"{v:,} {k.replace('_', ' ')}" for k, v in total.items())
    writer.table(item, pd.DataFrame({"count": list(total), "events": list(total.values())}))


def _spectators(writer: PaperWriter, checks: dict, reported: bool) -> None:
    """Section 6.6: the human-interference channel, from the audit's spectator check: the messages and how many
    carry an agent's attribution, spectator-channel events and events from non-agent sources, with its verdict;
    refused with the check's own reason where the season has no event log."""
    item = Item("Section 6.6", "the human-interference channel: any input from outside the agents?")
    found = checks.get("spectators")
    if not found:
        writer.missing(item, checks.get("skipped", {}).get("spectators", "the audit found no event log"))
        return
    item.protocol.update(verdict=found["verdict"], examples="; ".join(found.get("examples", [])) or "none")
    if reported:
        item.quote(2835, "Section 6.6 (message events, all attributed)", int(found["messages"]))
    writer.table(item, pd.DataFrame({"count": ["message events", "messages attributed to an agent",
                                               "spectator-channel events", "events from non-agent sources"],
                                     "events": [found["messages"], found["attributed"], found["spectator"],
                                                found["non_agent"]]}))


def _widest_spread(frame: pd.DataFrame) -> float | None:
    """Section 4.1's number: the largest ratio of the highest to the lowest positive score among the agents of
    one nation (every agent of a nation shares its outcome); None without a nation of two scored agents."""
    if "team" not in frame.columns or "score" not in frame.columns:
        return None
    scored = frame[frame["score"] > 0].groupby("team")["score"].agg(["max", "min", "size"])
    scored = scored[scored["size"] >= 2]
    return float((scored["max"] / scored["min"]).max()) if len(scored) else None


def _power_ranks(frame: pd.DataFrame) -> pd.DataFrame:
    """player (the codename), agent (its model), team, score rank, nation power and the nation's rank among the
    nations (1 = strongest; a
    nation counts once however many agents it has; nations without power left blank) and how many there are."""
    out = frame[[c for c in ("player", "agent", "team", "rank", "nation_power") if c in frame.columns]].copy()
    nations = out.dropna(subset=["team"]).groupby("team")["nation_power"].first()
    out["power_rank"] = out["team"].map(nations.rank(ascending=False, method="min"))
    out["nations"] = int(nations.notna().sum())
    return out.sort_values("rank")


def _activity(writer: PaperWriter, frame: pd.DataFrame) -> None:
    """Section 5.1: actions against rank, the busiest agent's place, and Spearman's rho."""
    item = Item("Section 5.1", "activity against rank: does the busiest agent win?",
                protocol={"activity": "actions_total", "association": "Spearman's rho of actions and final rank"})
    if "actions_total" not in frame.columns or frame["actions_total"].isna().all():
        writer.missing(item, "the season records no per-agent action count")
        return
    shown = [c for c in ("player", "agent", "rank", "actions_total", "votes_cast") if c in frame.columns]
    data = frame[shown].dropna(subset=["actions_total"])
    busiest = data.sort_values("actions_total", ascending=False).iloc[0]
    who = busiest["player"] if "player" in data.columns else busiest["agent"]  # a model may run two agents
    item.protocol.update(agents_with_counts=len(data), busiest=f"{who} ({busiest['agent']})",
                         busiest_rank=int(busiest["rank"]))
    if len(data) >= MIN_RHO_POINTS:
        item.protocol["spearman_rho"] = float(stats.spearmanr(data["actions_total"], data["rank"]).statistic)
    else:
        item.protocol["spearman_rho"] = (f"not computed: {len(data)} agent(s) carry an action count; a rank "
                                         f"correlation needs {MIN_RHO_POINTS} or more")
    writer.table(item, data.sort_values("actions_total", ascending=False))


CARRIED_OUT = ("deported", "deportation", "relocat")  # event types naming a deportation that happened, not a vote


def _deportation(writer: PaperWriter, events: pd.DataFrame) -> None:
    """Section 5.4: deport votes against deportations carried out, apart: each deport-related kind of event counted
    with how many the world accepted (a vote cast) and rejected (`is_rejected`), and the deportations carried out
    (events whose type names one that happened: deported, a deportation, a relocation), or that the log records
    none. A vote accepted is a vote cast, never a deportation."""
    from referee.models.validity.checks import is_rejected

    item = Item("Section 5.4", "deportation: deport votes by kind, accepted (cast) and rejected, against the "
                               "deportations carried out")
    related = events[_of_kind(events, "deport")] if len(events) else events
    if not len(related):
        writer.missing(item, "the store holds no event log with deport-related events for this season (the season "
                             "file alone carries final statistics)")
        return
    kinds = related["type"].astype(str).str.lower()
    done = kinds.str.contains("|".join(CARRIED_OUT)) & ~is_rejected(related)
    votes = related[~done]
    refused = is_rejected(votes)
    table = pd.DataFrame({"events": votes["type"].astype(str).value_counts(),
                          "accepted": votes.loc[votes["status"] == "accepted", "type"].astype(str).value_counts(),
                          "rejected": votes.loc[refused, "type"].astype(str).value_counts()}).fillna(0).astype(int)
    item.protocol["votes"] = (f"{len(votes):,} deport-related vote event(s): {int((votes['status'] == 'accepted').sum()):,} "
                              f"accepted (cast) and {int(refused.sum()):,} rejected; a vote cast is not a deportation")
    item.protocol["deportations carried out"] = (f"{int(done.sum()):,} (events whose type names a deportation that "
                                                 "happened)" if done.any() else "the log records no deportation "
                                                 "carried out (no event names one that happened)")
    writer.table(item, table.rename_axis("event").reset_index())


SNAPSHOT_TYPES = ("power", "alive", "agents")  # a nation's state in a snapshot (data/formats/aoa.md)


def _timeline(writer: PaperWriter, events: pd.DataFrame) -> None:
    """Appendix A.3: the run's timeline from the season's snapshots (stage `snapshot`): each nation's power,
    whether it is alive and its governing agents at each snapshot time, and when each nation died (its first
    snapshot with alive 0)."""
    item = Item("Appendix A.3", "run timeline and nation deaths",
                protocol={"from": "the season's snapshots (events of stage 'snapshot', actor = nation)"})
    snaps = events[(events["stage"] == "snapshot") & events["type"].isin(SNAPSHOT_TYPES) & events["actor"].notna()] \
        if len(events) else events
    if not len(snaps):
        writer.missing(item, "the store holds no snapshot of the nations' state for this season (its season file "
                             "has no `snapshots` list), only the final state")
        return
    wide = snaps.pivot_table(index=["time", "actor"], columns="type", values="value", aggfunc="last").reset_index()
    wide = wide.rename(columns={"actor": "nation"}).sort_values(["time", "nation"])
    if "alive" in wide.columns:
        dead = wide[wide["alive"] == 0].groupby("nation")["time"].min()
        wide["died_at"] = wide["nation"].map(lambda nation: dead.get(nation, pd.NaT))  # none died: every cell NaT
        item.protocol["nation deaths"] = (", ".join(f"{n} at {t}" for n, t in dead.sort_values().items())
                                          or "none in the snapshots")
    item.protocol["snapshots"] = f"{wide['time'].nunique()} times, {wide['nation'].nunique()} nations"
    writer.table(item, wide)


def _peace(writer: PaperWriter, events: pd.DataFrame) -> None:
    """Section 5.6: progress in the run window from the series the season holds: the board-wide peace timer
    (minutes, stage `snapshot`, type `peace_timer`) over time, beside the power gap between the strongest and the
    second nation at the snapshot times where the nations' power is recorded."""
    item = Item("Section 5.6", "mission progress in the run window",
                protocol={"from": "the season's peace-timer readings and power snapshots"})
    peace = events[(events["stage"] == "snapshot") & (events["type"] == "peace_timer")] if len(events) else events
    if not len(peace):
        writer.missing(item, "the store holds no peace-timer reading for this season (its season file has no "
                             "`peace` list): no series to show progress over the run window")
        return
    series = peace.groupby("time")["value"].max().rename("peace_timer_minutes").to_frame()
    power = events[(events["stage"] == "snapshot") & (events["type"] == "power")]
    if len(power):
        def gap(values: pd.Series) -> float:
            top = values.nlargest(2).to_numpy()
            return float(top[0] - top[1]) if len(top) == 2 else float("nan")

        def lead(values: pd.Series) -> float:  # Total Control's condition: a 50 % lead over the second nation
            top = values.nlargest(2).to_numpy()
            return float(100 * (top[0] - top[1]) / top[1]) if len(top) == 2 and top[1] > 0 else float("nan")
        series["power_gap"] = power.groupby("time")["value"].apply(gap)
        series["power_lead_pct"] = power.groupby("time")["value"].apply(lead)
        item.protocol["power lead"] = ("the strongest nation's power over the second's, in per cent of the second's "
                                       "(Total Control needs 50); power_gap is the same in power points")
    series = series.reset_index()
    longest = float(series["peace_timer_minutes"].max())
    item.protocol.update(readings=len(peace), longest_peace_minutes=longest)
    # each mission's progress against its own condition, as the report reads it (models.validity.season)
    item.protocol["World Peace"] = (f"the peace timer peaked at {longest:.1f} of the {PEACE_TARGET_MINUTES:g} minutes of "
                                    f"sustained peace World Peace needs ({longest / PEACE_TARGET_MINUTES:.0%})"
                                    + ("; reached" if longest >= PEACE_TARGET_MINUTES else "; not reached"))
    if "power_lead_pct" in series.columns and series["power_lead_pct"].notna().any():
        top = float(series["power_lead_pct"].max())
        item.protocol["largest power lead"] = f"{top:.2f} % (Total Control needs 50 %)"
        item.protocol["Total Control"] = (f"the top nation's lead over the second peaked at {top:.2f} % of the 50 % "
                                          f"Total Control needs ({top / 50:.0%})" + ("; reached" if top >= 50 else
                                                                                    "; not reached"))
    item.protocol["Last Standing"] = "each nation's survival over the run: Appendix A.3 (when each nation died)"
    writer.table(item, series)
