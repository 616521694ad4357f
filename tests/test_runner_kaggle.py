"""Kaggle Environments (and Game Arena's OpenSpiel games) played for real: episodes of connectx, rock paper
scissors, four-player hungry geese and OpenSpiel's tic-tac-toe and connect four, with built-in, scripted,
illegal-moving and crashing agents, played by the runner in its own venv (tests/runner_play/kaggle_games.py),
written as the replays Kaggle serves, ingested with no options, and checked against what the runner reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.io.store import Store
from referee.prepare.comparisons import comparisons_from_tables
from conftest import forfeit_written_over, ingest_beside, play_runner

pytestmark = pytest.mark.runners


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("kaggle")
    out = play_runner("kaggle", "kaggle_games.py", root / "replays")
    expected = json.loads((out / "expected.json").read_text())
    (out / "expected.json").unlink()  # the harness's notes, not a replay
    store = root / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(out)]) == 0  # detected with no options
    return store, expected


def rule(rewards: list, statuses: list, misbehaves: int | None) -> list[str]:
    """The outcome each seat should get, from what the runner reported and the seat the harness made
    misbehave (written apart from the loader's rule)."""
    if all(s != "DONE" for s in statuses):
        return ["aborted"] * len(statuses)
    if misbehaves is not None:
        return ["forfeit" if i == misbehaves else "win" for i in range(len(statuses))]
    best = max(rewards)
    if len(set(rewards)) == 1:
        return ["tie"] * len(rewards)
    return ["win" if r == best else "loss" for r in rewards]


def test_every_episode_and_seat_is_ingested_as_the_runner_reported(played):
    store, expected = played
    with Store(store, read_only=True) as s:
        matches, results, events, quarantine = (s.table(t) for t in ("matches", "results", "events", "quarantine"))
    assert len(quarantine) == 0 and set(matches["runner"]) == {"kaggle"} and len(matches) == len(expected)
    seen = set()
    for episode in expected:
        mid = f"kaggle:{episode['id']}"
        match = matches.set_index("match_id").loc[mid]
        assert match["game"] == episode["env"] and match["n_players"] == len(episode["agents"])
        mine = results[results["match_id"] == mid].set_index("player")
        want = rule(episode["rewards"], episode["statuses"], episode["misbehaves"])
        for i, (agent, reward) in enumerate(zip(episode["agents"], episode["rewards"])):
            row = mine.loc[f"seat {i}"]
            assert row["agent"] == agent and row["outcome"] == want[i], (episode, i)
            assert (reward is None and row["score"] != row["score"]) or row["score"] == reward
        seen |= set(want)
        moves = events[events["match_id"] == mid]
        assert 0 < len(moves) <= episode["steps"] * len(episode["agents"])
    assert seen == {"win", "loss", "tie", "forfeit", "aborted"}  # every outcome type, played for real
    assert set(matches["n_players"]) == {2, 4}


def test_the_illegal_move_is_the_refused_event_and_forfeits_lose_in_ratings(played):
    store, expected = played
    with Store(store, read_only=True) as s:
        matches, results, events = s.table("matches"), s.table("results"), s.table("events")
    for episode in expected:
        if episode["misbehaves"] is None or episode["statuses"][episode["misbehaves"]] == "ERROR":
            continue
        mid = f"kaggle:{episode['id']}"
        refused = events[(events["match_id"] == mid) & (events["status"] == "rejected")]
        assert list(refused["actor"]) == [f"seat {episode['misbehaves']}"]
    comparisons = comparisons_from_tables(matches, results)
    aborted = set(results.loc[results["outcome"] == "aborted", "match_id"])
    assert aborted and not aborted & set(comparisons["cluster"])  # aborted episodes have no comparison
    for row in results[results["outcome"] == "forfeit"].itertuples():
        mine = comparisons[comparisons["cluster"] == row.match_id]
        lost = ((mine["a"] == row.agent) & (mine["outcome"] == 0)) | ((mine["b"] == row.agent) & (mine["outcome"] == 1))
        assert len(mine) == 1 and lost.all()


def test_the_audit_leaves_aborted_episodes_out_and_ranks_forfeits_last(played):
    from referee.run.social.audit import audit_frame

    store, expected = played
    with Store(store, read_only=True) as s:
        frame, _ = audit_frame(s, runner="kaggle")
    aborted = sum(all(st != "DONE" for st in e["statuses"]) for e in expected)
    assert frame["match_id"].nunique() == len(expected) - aborted
    forfeits = frame[frame["outcome"] == "forfeit"]
    misbehaved = sum(e["misbehaves"] is not None and any(st == "DONE" for st in e["statuses"]) for e in expected)
    assert len(forfeits) == misbehaved and (forfeits["win"] == 0).all()
    last = frame.groupby("match_id")["rank"].max()
    assert (forfeits["rank"].to_numpy() == last[forfeits["match_id"]].to_numpy()).all()
    assert f"{misbehaved} forfeit(s)" in frame.attrs["outcome_note"]
    assert f"{aborted} aborted" in frame.attrs["outcome_note"]


def test_the_llm_harness_forfeit_is_the_forfeiting_seats_loss_as_the_environment_pays_it(played):
    """Kaggle's LLM harness forfeits a model that gave no legal move by submitting -1 with 'Failed to parse a legal
    move after 5 attempts; forfeiting.' (issue 87): the environment's own code refuses it, marks both seats DONE
    and pays -1 / +1; referee stores the forfeiting seat's `forfeit` (a loss to every other player) and the
    other's win, never a tie."""
    store, expected = played
    [episode] = [e for e in expected if "os-forfeit" in e["agents"]]
    assert episode["statuses"] == ["DONE", "DONE"] and episode["rewards"] == [1, -1]  # the environment's reward
    with Store(store, read_only=True) as s:
        results = s.table("results")
    mine = results[results["match_id"] == f"kaggle:{episode['id']}"].set_index("agent")
    assert mine.at["os-forfeit", "outcome"] == "forfeit" and mine.at["os-random-1", "outcome"] == "win"


@pytest.mark.parametrize("game", ["open_spiel_markov_soccer", "open_spiel_oshi_zumo"])
def test_a_simultaneous_move_forfeit_copy_is_set_aside_by_its_own_contradiction_and_the_real_game_kept(
        played, tmp_path, capsys, game):
    """Issue 103: Kaggle's forfeit-edited copies of its simultaneous-move games are not cut short (the same steps
    and actionHistory; only the last move replaced), so no step count tells them apart; they sort first
    ('test-forfeit-replay' < 'test-replay') and share the real replay's id. The copy of a game played here for
    real is set aside as an edited replay naming the replaced move, the real game is stored (seat 0 won, +1), and
    the copy alone is never stored either (the real result can only come from the real file)."""
    store, expected = played
    [episode] = [e for e in expected if e["env"] == game]
    with Store(store, read_only=True) as s:
        source = s.table("matches").set_index("match_id").loc[f"kaggle:{episode['id']}", "source_file"]
    replay = json.loads(Path(source).read_text())
    assert replay["rewards"] == [1.0, -1.0] and len(replay["steps"]) == episode["steps"]
    db, out = ingest_beside(tmp_path, forfeit_written_over(replay), replay, capsys)
    assert out["accepted"] == 1 and out["quarantined"] == 1 and set(out["by_reason"]) == {"edited replay"}, out
    with Store(db, read_only=True) as s:
        results, quarantine = s.table("results"), s.table("quarantine")
    assert dict(zip(results["player"], results["outcome"])) == {"seat 0": "win", "seat 1": "loss"}
    assert dict(zip(results["player"], results["score"])) == {"seat 0": 1.0, "seat 1": -1.0}
    [row] = quarantine.itertuples()
    assert row.source_file.endswith("test-forfeit-replay.json"), row.source_file
    assert "seat 0's last action is submission -1" in row.message and "recorded" in row.message, row.message


def test_forfeits_whose_rewards_contradict_them_are_set_aside_never_ranked_first(played, tmp_path, capsys):
    """Issue 104: the played harness forfeit (connect four, seat 1 submits -1; the environment pays -1 / +1)
    edited four ways Kaggle's code never writes: the forfeiter paid +1 (it would rank first), both seats
    forfeiting in one step, a forfeit by the seat not to move, a failed status with a reward (core.py nulls it).
    Each is set aside naming its field; the played replay itself is stored with the forfeiter last."""
    store, expected = played
    [episode] = [e for e in expected if "os-forfeit" in e["agents"]]
    with Store(store, read_only=True) as s:
        source = s.table("matches").set_index("match_id").loc[f"kaggle:{episode['id']}", "source_file"]
    replay = json.loads(Path(source).read_text())
    last, before = replay["steps"][-1], replay["steps"][-2]
    forfeiter = 1
    assert last[forfeiter]["action"]["submission"] == -1 and replay["rewards"] == [1, -1]

    def paid_first(doc):
        doc["rewards"] = [-1, 1]
        doc["steps"][-1][0]["reward"], doc["steps"][-1][1]["reward"] = -1, 1

    def both(doc):
        doc["steps"][-1][0]["action"] = dict(doc["steps"][-1][forfeiter]["action"])

    def not_to_move(doc):
        doc["steps"][-2][forfeiter]["status"] = "INACTIVE"

    def failed_paid(doc):
        doc["statuses"][0] = doc["steps"][-1][0]["status"] = "ERROR"
        doc["rewards"][0] = doc["steps"][-1][0]["reward"] = 5.0

    cases = {"paid_first": (paid_first, "rewards[1]", "would rank first"),
             "both": (both, "steps[", "not to move"),  # in a turn-based game the second was not to move
             "not_to_move": (not_to_move, "steps[", "not to move"),
             "failed_paid": (failed_paid, "rewards[0]", "nulls the reward")}
    assert before[forfeiter]["status"] == "ACTIVE"
    for name, (change, field, words) in cases.items():
        logs = tmp_path / name
        logs.mkdir()
        doc = json.loads(json.dumps(replay))
        change(doc)
        (logs / "edited.json").write_text(json.dumps(doc))
        (logs / "played.json").write_text(json.dumps({**replay, "id": "played-" + name}))
        db = tmp_path / f"{name}.duckdb"
        assert main(["ingest", str(logs), "--store", str(db), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["accepted"] == 1 and out["by_reason"] == {"contradiction": 1}, (name, out)
        with Store(db, read_only=True) as s:
            results, quarantine = s.table("results"), s.table("quarantine")
        [row] = quarantine.itertuples()
        assert row.field.startswith(field) and words in row.message, (name, row.field, row.message)
        mine = results.set_index("agent")
        assert mine.at["os-forfeit", "outcome"] == "forfeit" and mine.at["os-forfeit", "rank"] == 2
