"""What a season's event log says beyond the score (Age of Agents EVAL 01, sections 5.6 and 6.3).

- `mission_progress`: how far the board came towards the missions' win conditions: World Peace's sustained
  peace (the engine's peace timer against its target, 60 minutes on EVAL 01, which peaked at 15) and Total
  Control's power lead of the top nation over the second-ranked one (target 50 %; EVAL 01's leader reached
  the low thirties), both read against the governed field (nations with a governing agent).
- `spectator_input`: whether anything in the log came from a spectator or another non-agent source (EVAL 01:
  all 2,835 message events carry an agent's attribution; no spectator-channel event).

Both take canonical events (`referee.io.schema`: stage, actor, type, value, time, status) and return plain
dicts; each says what the data does not carry instead of guessing.
"""

from __future__ import annotations

import pandas as pd

PEACE_TARGET_MINUTES = 60.0  # World Peace: a sustained hour of board-wide peace
LEAD_TARGET = 0.5  # Total Control: a 50 % power lead over the second-ranked nation
HOSTILE_ACTIONS = ("attack", "sabotage")  # accepted actions that break the peace (the proxy's definition)
STATE_STAGES = ("snapshot", "final")  # engine state, whose actor is a nation, not an agent


def _peace(events: pd.DataFrame, target: float) -> dict | None:
    """The peace reading: the engine's timer when the log carries it, else the longest calm between
    accepted hostile actions (a proxy, said so), else None."""
    timer = events[(events["stage"] == "snapshot") & (events["type"] == "peace_timer")]
    if len(timer):
        peak = timer.loc[timer["value"].idxmax()]
        return {"source": "the engine's peace timer", "peak_minutes": float(peak["value"]),
                "at": None if pd.isna(peak["time"]) else str(peak["time"]), "target_minutes": target,
                "share_of_target": float(peak["value"]) / target, "readings": int(len(timer))}
    hostile = events[(events["stage"] == "act") & events["type"].isin(HOSTILE_ACTIONS)
                     & (events["status"] == "accepted") & events["time"].notna()]
    if len(hostile) < 2:
        return None
    times = pd.to_datetime(hostile["time"]).sort_values()
    gaps = times.diff().dt.total_seconds().div(60).iloc[1:]
    longest = gaps.idxmax()
    return {"source": "the longest interval between accepted hostile actions (" + ", ".join(HOSTILE_ACTIONS)
                      + "): a proxy, the log carries no peace timer",
            "peak_minutes": float(gaps[longest]), "at": str(times[longest]), "target_minutes": target,
            "share_of_target": float(gaps[longest]) / target, "readings": int(len(hostile))}


def _power(events: pd.DataFrame, target: float) -> dict | None:
    """The top nation's power lead over the second-ranked one at each snapshot, among governed, living nations."""
    snaps = events[events["stage"] == "snapshot"]
    state = snaps.pivot_table(index=["time", "actor"], columns="type", values="value", aggfunc="last")
    if "power" not in state.columns:
        return None
    state = state.reset_index()
    if "alive" in state.columns:
        state = state[state["alive"].fillna(1) > 0]
    if "agents" in state.columns:
        state = state[state["agents"].fillna(1) > 0]
    rows = []
    for time, at in state.groupby("time"):
        ranked = at.sort_values("power", ascending=False)
        if len(ranked) < 2 or ranked["power"].iloc[1] <= 0:
            continue
        first, second = ranked.iloc[0], ranked.iloc[1]
        rows.append({"time": time, "leader": first["actor"], "lead": first["power"] / second["power"] - 1.0})
    if not rows:
        return None
    leads = pd.DataFrame(rows).sort_values("time").reset_index(drop=True)
    peak = leads.loc[leads["lead"].idxmax()]
    last_third = leads.iloc[len(leads) * 2 // 3:]
    on_top = last_third["leader"].value_counts()
    return {"peak_lead": float(peak["lead"]), "leader": str(peak["leader"]), "at": str(peak["time"]),
            "target": target, "share_of_target": float(peak["lead"]) / target, "reached": bool(peak["lead"] >= target),
            "final_third_leader": str(on_top.index[0]), "final_third_share": float(on_top.iloc[0] / len(last_third)),
            "snapshots": int(len(leads)), "table": leads}


def mission_progress(events: pd.DataFrame, peace_target: float = PEACE_TARGET_MINUTES,
                     lead_target: float = LEAD_TARGET) -> dict:
    """How far the board came towards World Peace and Total Control.

    events : canonical events of one season. peace_target : minutes of sustained peace World Peace needs.
    lead_target : the power lead (a fraction: 0.5 = 50 %) over the second-ranked nation Total Control needs.

    Returns {"peace": dict or None, "power": dict or None, "missing": [what the data lacks, as 'no ...']}. peace:
    source, peak_minutes, at, target_minutes, share_of_target, readings. power: peak_lead (fraction), leader,
    at, target, share_of_target, reached, final_third_leader and final_third_share (the nation most often on
    top in the last third of the snapshots, and how often), snapshots, table (time, leader, lead).
    """
    missing = []
    peace = _peace(events, peace_target)
    if peace is None:
        missing.append("no peace timer (season 'peace' readings) and no timed attack or sabotage events")
    power = _power(events, lead_target)
    if power is None:
        missing.append("no power snapshots of two or more governed nations")
    return {"peace": peace, "power": power, "missing": missing}


def spectator_input(events: pd.DataFrame, players: set[str]) -> dict:
    """Whether any event came from a spectator or from a source that is not one of the season's agents.

    events : canonical events of one season. players : the agents' codenames (results.player).

    Returns {"messages" (events of stage 'communicate'), "attributed" (messages whose actor is a player), "spectator" (events of stage or
    type 'spectator'), "non_agent" (events other than engine state whose actor is not a player), "examples"
    (up to 5 of the latter two as 'stage/type by actor'), "passed" (True when nothing came from outside the
    agents, None when the log has no agent events at all)}.
    """
    logged = events[~events["stage"].isin(STATE_STAGES)]
    if logged.empty:
        return {"messages": 0, "attributed": 0, "spectator": 0, "non_agent": 0, "examples": [], "passed": None}
    messages = logged[logged["stage"] == "communicate"]
    spectator = (logged["stage"] == "spectator") | logged["type"].astype(str).str.contains("spectator")
    outside = ~logged["actor"].isin(players)
    odd = logged[spectator | outside]
    examples = [f"{r.stage}/{r.type} by {r.actor if pd.notna(r.actor) else 'nobody'}" for r in odd.head(5).itertuples()]
    return {"messages": int(len(messages)), "attributed": int(messages["actor"].isin(players).sum()),
            "spectator": int(spectator.sum()), "non_agent": int((outside & ~spectator).sum()), "examples": examples,
            "passed": bool(odd.empty)}
