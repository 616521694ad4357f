"""Mission progress and the spectator check (Age of Agents EVAL 01 sections 5.6 and 6.3): hand-computed
examples with the report's numbers (peace 15 of 60 minutes; 2,835 messages), the audit on a simulated season
checked against its own season file, and the EVAL 01 sample, which carries neither."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from referee.cli import main
from referee.io.loaders import aoa
from referee.io.loaders.base import LoadOptions, file_hash
from referee.io.store import Store
from referee.reporting import SAMPLE
from referee.run.social.audit import audit_frame, formula_from, run_audit
from referee.simulators.aoa import simulate_aoa, write_aoa
from referee.models.validity.season import mission_progress, spectator_input

FORMULA = "data/formulas/aoa_eval01.toml"
T0 = pd.Timestamp("2026-06-07 15:00")


def _events(rows: list[dict]) -> pd.DataFrame:
    columns = ["match_id", "seq", "round", "time", "stage", "actor", "type", "target", "text", "value", "status", "reason"]
    frame = pd.DataFrame(rows).reindex(columns=columns)
    frame["time"] = pd.to_datetime(frame["time"])
    return frame


def _snapshot(minute: int, nation: str, power: float, alive: int = 1, agents: int = 1) -> list[dict]:
    time = T0 + pd.Timedelta(minutes=minute)
    return [{"time": time, "stage": "snapshot", "actor": nation, "type": kind, "value": value}
            for kind, value in (("power", power), ("alive", alive), ("agents", agents))]


def test_power_lead_among_governed_living_nations_by_hand():
    rows = (_snapshot(0, "A", 100) + _snapshot(0, "B", 100) + _snapshot(0, "C", 100)
            + _snapshot(60, "A", 130) + _snapshot(60, "B", 100) + _snapshot(60, "C", 90)
            + _snapshot(120, "A", 120) + _snapshot(120, "B", 100) + _snapshot(120, "C", 80)
            + _snapshot(120, "Dead", 900, alive=0) + _snapshot(120, "Ungoverned", 800, agents=0))
    power = mission_progress(_events(rows))["power"]
    # t=60: 130 / 100 - 1 = 30 % (the peak); t=120: 120 / 100 - 1 = 20 %, the dead and ungoverned nations left out
    assert power["peak_lead"] == pytest.approx(0.30) and power["leader"] == "A"
    assert power["share_of_target"] == pytest.approx(0.60) and not power["reached"]
    assert power["table"]["lead"].round(6).tolist() == [0.0, 0.3, 0.2]
    assert (power["final_third_leader"], power["final_third_share"], power["snapshots"]) == ("A", 1.0, 3)


def test_peace_timer_peak_is_a_quarter_of_the_hour_as_on_eval01():
    rows = [{"time": T0 + pd.Timedelta(minutes=m), "stage": "snapshot", "actor": None, "type": "peace_timer",
             "value": v} for m, v in ((0, 0), (15, 5), (30, 15), (45, 3))]
    progress = mission_progress(_events(rows))
    peace = progress["peace"]
    assert (peace["peak_minutes"], peace["target_minutes"], peace["share_of_target"]) == (15.0, 60.0, 0.25)
    assert peace["source"] == "the engine's peace timer" and peace["at"] == str(T0 + pd.Timedelta(minutes=30))
    assert progress["power"] is None and progress["missing"] == ["no power snapshots of two or more governed nations"]


def test_without_a_timer_the_longest_calm_between_hostile_actions_is_a_stated_proxy():
    def act(minute, kind, status="accepted"):
        return {"time": T0 + pd.Timedelta(minutes=minute), "stage": "act", "actor": "X", "type": kind,
                "status": status}
    rows = [act(0, "attack"), act(20, "sabotage"), act(40, "attack", "rejected"), act(50, "trade"), act(65, "attack")]
    peace = mission_progress(_events(rows))["peace"]
    assert peace["peak_minutes"] == 45.0  # 20 -> 65: the rejected attack and the trade do not break the peace
    assert "proxy" in peace["source"] and peace["share_of_target"] == pytest.approx(0.75)


def test_spectator_check_counts_messages_and_catches_outside_input():
    players = {"Sunny", "Tofu"}
    messages = [{"stage": "communicate", "type": "message", "actor": "Sunny" if i % 2 else "Tofu"}
                for i in range(2835)]
    clean = spectator_input(_events(messages + [{"stage": "snapshot", "type": "power", "actor": "Valdris"}]), players)
    assert clean == {"messages": 2835, "attributed": 2835, "spectator": 0, "non_agent": 0, "examples": [],
                     "passed": True}
    dirty = spectator_input(_events(messages + [{"stage": "spectator", "type": "spectator", "actor": None},
                                                {"stage": "communicate", "type": "message", "actor": "admin"}]), players)
    assert (dirty["passed"], dirty["spectator"], dirty["non_agent"], dirty["attributed"]) == (False, 1, 1, 2835)
    assert dirty["examples"] == ["spectator/spectator by nobody", "communicate/message by admin"]
    assert spectator_input(_events([{"stage": "final", "type": "power", "actor": "A"}]), players)["passed"] is None


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    root = tmp_path_factory.mktemp("season")
    paths = write_aoa(simulate_aoa(n_agents=12, n_nations=6, seed=5, validity=0.5), root / "sim")
    with Store(root / "s.duckdb") as store:
        store.ingest([paths["logs"]])
        frame, events = audit_frame(store, match="aoa:sim")
    result = run_audit(frame, events, formula_from(FORMULA, frame), ["nation_power"], ["team"], "universal", bayes=False)
    return result, json.loads(paths["season"].read_text())


def test_audit_reads_progress_from_the_season_file(simulated):
    result, season = simulated
    progress = result["mission_progress"]
    assert progress["peace"]["peak_minutes"] == max(r["minutes"] for r in season["peace"])
    leads = []
    for time in sorted({s["time"] for s in season["snapshots"]}):  # the lead computed straight from the file
        powers = sorted((s["power"] for s in season["snapshots"] if s["time"] == time and s["alive"] and s["agents"]),
                        reverse=True)
        leads.append(powers[0] / powers[1] - 1)
    assert progress["power"]["peak_lead"] == pytest.approx(max(leads))
    assert f"peaked at {max(leads):.0%}" in progress["verdict"]


def test_audit_spectator_check_passes_on_agent_messages_only(simulated):
    result, season = simulated
    spectators = result["spectators"]
    assert spectators["passed"] is True
    assert spectators["messages"] == sum(a["counters"]["messages_sent"] for a in season["agents"])
    assert f"All {spectators['messages']:,} message events carry an agent's attribution" in spectators["verdict"]


def test_eval01_sample_says_it_carries_neither(tmp_path):
    with Store(tmp_path / "e.duckdb") as store:
        store.ingest([SAMPLE / "aoa_eval01" / "season.json"])
    assert main(["audit", "--store", str(tmp_path / "e.duckdb"), "--formula", FORMULA, "--no-bayes",
                 "--out", str(tmp_path / "a")]) == 0
    text = (tmp_path / "a" / "audit.md").read_text()
    assert "## 9. Mission progress (NOT RUN)" in text and "no peace timer" in text
    assert "## 10. Spectator input (NOT RUN)" in text and "no event log" in text


def test_loader_reads_messages_spectator_events_and_peace_readings(tmp_path):
    log = tmp_path / "events.jsonl"
    lines = [{"season": "s", "seq": 1, "agent": "Sunny", "type": "message", "target": "Tofu", "text": "hi"},
             {"season": "s", "seq": 2, "type": "spectator", "text": "attack Valdris!"},
             {"season": "s", "seq": 3, "type": "message", "text": "who sent this?"}]
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = aoa.load(log, file_hash(log), LoadOptions())
    assert (result.read, result.accepted) == (3, 2)
    events = result.tables["events"].to_pandas().set_index("seq")
    assert events.loc[1, "stage"] == "communicate" and events.loc[2, "stage"] == "spectator"
    bad = result.quarantine.iloc[0]
    assert (bad["field"], bad["reason"]) == ("agent", "missing field")  # a message must name its sender
    season = tmp_path / "season.json"
    season.write_text(json.dumps({"season": "s", "agents": [{"agent": "Sunny", "model": "m", "nation": "N",
                                                             "mission": "World Peace", "final_score": 1}],
                                  "peace": [{"time": "2026-06-07T15:00:00Z", "minutes": 12},
                                            {"time": "2026-06-07T15:15:00Z", "minutes": -3}]}))
    result = aoa.load(season, file_hash(season), LoadOptions())
    assert (result.read, result.accepted) == (3, 2)
    assert result.tables["events"]["type"].tolist() == ["peace_timer"]
    bad = result.quarantine.iloc[0]
    assert (bad["record"], bad["field"]) == ("peace[1]", "minutes")
