"""`referee map` drafts a mapping from a sample of logs no built-in runner reads (data/formats/mapped.md). On
generated logs of the shapes real benchmarks write, with known skills, the unedited draft stores every game and
Bradley-Terry recovers the skills; on logs without a result line the draft says so and the command fails; the
draft's guesses (ranks or points, the pattern on player ids, per-player result lines) are checked against the
generating truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from referee.cli import main
from referee.io.id_patterns import id_pattern
from referee.io.mapping_draft import _looks_like_ranks, draft_mapping
from referee.io.store import Store
from referee.simulators.benchmark_shapes import points_logs as _points_logs
from referee.simulators.benchmark_shapes import seat_logs as _seat_logs


def _drafted_store_and_ratings(tmp_path, logs, games: int, players: int, capsys) -> tuple[Path, pd.DataFrame, str]:
    """`referee map --check` on `logs` (nothing set aside), ingest through the unedited draft (every game once with
    every player, nothing set aside) and Bradley-Terry on the store: (store, ratings table, what map printed)."""
    draft = tmp_path / "draft.toml"
    assert main(["map", str(logs), "--out", str(draft), "--check"]) == 0
    said = capsys.readouterr().out
    assert "+ set aside 0" in said
    store = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--runner", str(draft), "--store", str(store)]) == 0
    with Store(store, read_only=True) as s:
        assert s.query("SELECT count(*) AS n FROM matches")["n"][0] == games
        assert s.query("SELECT count(*) AS n FROM results")["n"][0] == games * players
        assert s.query("SELECT count(*) AS n FROM quarantine")["n"][0] == 0
    assert main(["ratings", "--store", str(store), "--method", "bt", "--out", str(tmp_path / "r")]) == 0
    return store, pd.read_csv(tmp_path / "r" / "ratings.csv").set_index("agent"), said


@pytest.mark.parametrize("shape, make, players", [("points", _points_logs, 3), ("seats", _seat_logs, 6)])
def test_the_unedited_draft_stores_every_game_and_ratings_recover_the_skills(tmp_path, shape, make, players, capsys):
    logs, games = tmp_path / "logs", 400  # more files than the sample: the draft reads 300 of them
    skill = make(logs, games, seed=11)
    _, table, said = _drafted_store_and_ratings(tmp_path, logs, games, players, capsys)
    assert "from 300 sampled file(s)" in said
    assert sorted(table.index) == sorted(skill)
    assert spearmanr(table["rating"], [skill[a] for a in table.index]).statistic >= 0.9
    text = (tmp_path / "draft.toml").read_text()
    if shape == "points":  # the pattern strips the per-game prefix; the match is the line's game_id
        assert "pattern = '^Player\\d+_Game\\d+_(?P<agent>.+)$'" in text and "match = 'game_id'" in text
    else:  # the seat table in the setup line, match ids from the file names
        assert "table = 'seats'" in text and 'from = "file"' in text and "order = 'ranking'" in text


def test_per_player_result_lines_and_a_model_key_are_drafted_as_the_shipped_mapping_reads_them(tmp_path, capsys):
    assert main(["simulate", "tavern", "--out", str(tmp_path / "sim"), "--games", "60"]) == 0
    draft = tmp_path / "draft.toml"
    assert main(["map", str(tmp_path / "sim" / "logs"), "--out", str(draft)]) == 0
    text = draft.read_text()
    assert "score = 'payload.points'" in text and "rank = 'payload.place'" in text and "agent = 'model'" in text
    counts = {}
    for name, mapping in (("draft", draft), ("shipped", tmp_path / "sim" / "tavern.toml")):
        with Store(tmp_path / f"{name}.duckdb") as store:
            store.ingest([tmp_path / "sim" / "logs"], runner=mapping)
            counts[name] = store.query("SELECT match_id, player, agent, score, rank FROM results ORDER BY ALL")
    pd.testing.assert_frame_equal(counts["draft"], counts["shipped"])


def test_a_draft_on_logs_with_no_result_line_says_so_and_fails(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    for g in range(5):
        lines = [{"game": f"g{g}", "type": t, "player": f"p{k}"} for t in ("move", "chat") for k in range(3)]
        (logs / f"{g}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    draft = tmp_path / "d.toml"
    assert main(["map", str(logs), "--out", str(draft)]) == 1
    said = capsys.readouterr()
    assert "holds a game's result" in said.out and "the draft is incomplete" in said.err
    assert draft.read_text().startswith("# PROBLEM: no line in the 5 sampled file(s) holds a game's result")
    # the draft still reads the events; checked, it says ratings would have nothing to compare
    assert main(["map", str(logs), "--out", str(draft), "--check"]) == 1
    said = capsys.readouterr()
    assert "would store 5 matches, 0 results" in said.out and "stores no results" in said.err


def test_an_existing_mapping_is_checked_as_it_is_and_never_overwritten_without_force(tmp_path, capsys):
    logs = tmp_path / "logs"
    _points_logs(logs, 12, seed=2)
    draft = tmp_path / "d.toml"
    draft.write_text("name = \"mine\"\n[keys]\nmatch = \"game_id\"\ntype = \"type\"\n")
    assert main(["map", str(logs), "--out", str(draft)]) == 1
    assert "exists" in capsys.readouterr().err and "mine" in draft.read_text()
    assert main(["map", str(logs), "--out", str(draft), "--check"]) == 1  # events only: no results
    assert "would store 12 matches, 0 results" in capsys.readouterr().out and "mine" in draft.read_text()
    assert main(["map", str(logs), "--out", str(draft), "--force"]) == 0
    assert "final_positions" in draft.read_text()


def test_ranks_keyed_by_player_are_drafted_as_ranks_and_points_as_scores(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for g in range(6):
        ids = [f"{m}_seat{k}_g{g}" for k, m in enumerate(["gpt-5", "o3-mini", "qwen3-32b"])]
        lines = [{"match": f"m{g}", "type": "turn", "who": i} for i in ids]
        lines.append({"match": f"m{g}", "type": "over", "final_ranks": dict(zip(ids, [2, 1, 3]))})
        (logs / f"{g}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    draft = draft_mapping([logs])
    assert draft.guesses["result"] == {"event": "over", "layout": "ranks", "key": "final_ranks"} and not draft.problems
    # the model leads the id here: the pattern strips the seat and game that follow it
    assert "pattern = '^(?P<agent>.+?)_seat\\d+_g\\d+$'" in draft.text
    (tmp_path / "d.toml").write_text(draft.text)
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([logs], runner=tmp_path / "d.toml")
        first = store.query("SELECT DISTINCT agent FROM results WHERE rank = 1")["agent"].tolist()
    assert first == ["o3-mini"]  # read as ranks (1 best), not as points
    assert not _looks_like_ranks("final_positions", [[12, 9.5, 3]]) and not _looks_like_ranks("points", [[2, 1, 3]])


@pytest.mark.parametrize("ids, pattern, agent", [
    ([{"Player1_Game1_qwen3-32b", "Player2_Game1_gpt-5"}, {"Player1_Game2_gpt-5", "Player2_Game2_qwen3-32b"}],
     r"^Player\d+_Game\d+_(?P<agent>.+)$", "qwen3-32b"),
    ([{"gpt-5:0:a1", "o3:1:a1"}, {"o3:0:a2", "gpt-5:1:a2"}], r"^(?P<agent>.+?):\d+:a\d+$", "gpt-5"),
    ([{"gpt-5", "o3"}, {"o3", "gpt-5"}], "^(?P<agent>.+)$", "gpt-5"),
])
def test_the_pattern_on_player_ids_strips_what_changes_between_games(ids, pattern, agent):
    import re

    found, why = id_pattern(ids)
    assert found == pattern, (found, why)
    assert any(re.search(found, p).group("agent") == agent for f in ids for p in f)


def _episode_documents(folder, n_files: int = 30, seed: int = 4):
    """One pretty-printed JSON document per episode: seats {P1: model}, a list of steps, and the result one
    object down (`data.final_payoff_map`), as many runners write an episode; returns each file's truth."""
    import numpy as np

    rng = np.random.default_rng(seed)
    skill = {f"model_{k}": 0.6 * k for k in range(5)}
    truth = {}
    for i in range(n_files):
        models = list(rng.choice(list(skill), size=3, replace=False))
        seats = {f"P{j + 1}": m for j, m in enumerate(models)}
        payoff = {seat: float(round(skill[m] + rng.normal(0, 0.8), 3)) for seat, m in seats.items()}
        steps = [{"player": seat, "kind": "bid", "amount": int(rng.integers(1, 9)), "step": t}
                 for t in range(4) for seat in seats]
        doc = {"meta": {"episode": f"ep{i}", "env": "auction"}, "seats": seats, "steps": steps,
               "data": {"rounds": 4, "final_payoff_map": payoff}}
        (folder / f"ep{i:03d}.json").write_text(json.dumps(doc, indent=2))
        truth[f"ep{i:03d}"] = {seat: (seats[seat], payoff[seat]) for seat in seats}
    return truth


def test_a_folder_of_pretty_printed_episode_documents_is_drafted_and_ingested_without_edits(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    truth = _episode_documents(logs)
    mapping = tmp_path / "auction.toml"
    assert main(["map", str(logs), "--out", str(mapping), "--check"]) == 0, capsys.readouterr()
    text = mapping.read_text()
    assert "data.final_payoff_map" in text and "table = 'seats'" in text
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--runner", str(mapping), "--store", str(db)]) == 0
    capsys.readouterr()
    with Store(db, read_only=True) as store:
        results = store.table("results")
    assert len(results) == sum(len(v) for v in truth.values())
    for _, row in results.iterrows():
        agent, score = truth[row["match_id"].split(":")[-1]][row["player"]]
        assert (row["agent"], row["score"]) == (agent, score)


def test_the_real_sotopia_tournament_documents_are_drafted_into_a_mapping_that_matches_the_native_reader(
        tmp_path, capsys):
    from conftest import shared_file

    folder = shared_file("real", "sotopia-werewolves")
    mapping = tmp_path / "ww.toml"
    assert main(["map", str(folder), "--out", str(mapping), "--check"]) == 0, capsys.readouterr()
    mapped, native = tmp_path / "m.duckdb", tmp_path / "n.duckdb"
    assert main(["ingest", str(folder), "--runner", str(mapping), "--store", str(mapped)]) == 0
    assert main(["ingest", str(folder), "--store", str(native)]) == 0
    capsys.readouterr()
    with Store(mapped, read_only=True) as a, Store(native, read_only=True) as b:
        ra, rb = a.table("results"), b.table("results")
    key = ["agent", "score"]
    assert sorted(map(tuple, ra[key].to_numpy())) == sorted(map(tuple, rb[key].to_numpy()))


def test_a_winners_list_is_drafted_as_winners_tied_first_and_the_others_tied_below(tmp_path, capsys):
    """A result given only as who won (a team game's `winners`): the winners share rank 1, the rest the next."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(20):
        seats = {f"p{j}": f"model_{(i + j) % 5}" for j in range(4)}
        winners = [f"p{i % 4}", f"p{(i + 1) % 4}"] if i % 2 else [f"p{i % 4}"]
        doc = {"id": f"g{i}", "turns": [{"who": s, "act": "move", "n": t} for t in range(2) for s in seats],
               "outcome": {"seats": seats, "winners": winners, "length": 8}}
        (logs / f"g{i:02d}.json").write_text(json.dumps(doc, indent=1))
    mapping = tmp_path / "w.toml"
    assert main(["map", str(logs), "--out", str(mapping), "--check"]) == 0, capsys.readouterr()
    assert "winners = 'outcome.winners'" in mapping.read_text()
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--runner", str(mapping), "--store", str(db)]) == 0
    capsys.readouterr()
    with Store(db, read_only=True) as store:
        results = store.table("results")
    one = results[results["match_id"].str.endswith("g01")].set_index("player")["rank"]
    assert one.to_dict() == {"p0": 3.0, "p1": 1.0, "p2": 1.0, "p3": 3.0}
    two = results[results["match_id"].str.endswith("g02")].set_index("player")["rank"]
    assert two.to_dict() == {"p0": 2.0, "p1": 2.0, "p2": 1.0, "p3": 2.0}


def test_seats_named_by_different_keys_on_different_lines_are_merged_into_one_player_key(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(12):
        players = [f"s{j}" for j in range(3)]
        lines = [{"kind": "join", "agent_id": p, "model": f"m{(i + j) % 4}"} for j, p in enumerate(players)]
        lines += [{"kind": "bid", "player_id": p, "amount": j} for j, p in enumerate(players)]
        lines += [{"kind": "talk", "seat_id": p, "text": "hi"} for p in players]
        lines += [{"kind": "end", "points": {p: float((i + j) % 3) for j, p in enumerate(players)}}]
        (logs / f"g{i}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    draft = draft_mapping([logs])
    assert draft.guesses["player"] == "agent_id"
    line = next(l for l in draft.text.splitlines() if l.startswith("player ="))
    assert all(k in line.split("#")[0] for k in ("agent_id", "player_id", "seat_id")), line
    mapping = tmp_path / "m.toml"
    mapping.write_text(draft.text)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--runner", str(mapping), "--store", str(db)]) == 0
    capsys.readouterr()
    with Store(db, read_only=True) as store:
        events = store.table("events")
    assert events["actor"].notna().all() and set(events["actor"]) == {"s0", "s1", "s2"}


@pytest.mark.parametrize("kind", ["line\nname = \"hijack\"", "tab\there", "bell\x07", "emoji \U0001F600", "it's \"q\"",
                                  "back\\slash", "]\n[keys]\ntype = 'x'", "\x7f"])
def test_a_draft_is_valid_toml_whatever_the_event_types_hold(tmp_path, kind):
    import tomllib

    logs = tmp_path / "logs"
    logs.mkdir()
    for g in range(4):
        lines = [{"game_id": f"G{g}", "type": kind, "player": f"P{k}_{m}"} for k, m in enumerate(("m-a", "m-b", "m-c"))]
        lines.append({"game_id": f"G{g}", "type": "final", "final_positions": {"P0_m-a": 3, "P1_m-b": 2, "P2_m-c": 1}})
        (logs / f"g{g}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    draft = draft_mapping([logs])
    parsed = tomllib.loads(draft.text)  # valid TOML: the writer escaped the value, the comment shows escapes
    assert parsed["name"] != "hijack" and set(parsed) <= {"name", "keys", "events", "results", "agents", "match",
                                                          "event_keys"}
    assert kind in [k for stage in parsed["events"].values() for k in stage]  # the type survives exactly
    assert list(parsed.get("event_keys", {kind: None})) == [kind]  # also as its own table's name


def test_a_type_match_or_player_that_is_a_list_or_an_object_is_drafted_past_and_set_aside(tmp_path, capsys):
    """`referee map` on logs where one line's type, game id or player is a list or an object (issue 51: exit 3,
    'unhashable'): the draft is written and parses as TOML, and ingest through it sets those lines aside (the
    match key stays the game id: an id that is an object on one line is that line's fault)."""
    import json
    import tomllib

    from referee.cli import main
    from referee.simulators.benchmark_shapes import points_logs

    logs = tmp_path / "logs"
    points_logs(logs, 12, 1, turns=2, talk=1)
    first = sorted(logs.glob("*.jsonl"))[0]
    lines = first.read_text(encoding="utf-8").splitlines()
    odd = [json.loads(lines[1]) for _ in range(4)]
    odd[0]["type"], odd[1]["game_id"], odd[2]["player"], odd[3]["type"] = ["move"], {"g": 1}, ["x"], {"a": 1}
    first.write_text("\n".join(lines + [json.dumps(o) for o in odd]) + "\n", encoding="utf-8")
    mapping = tmp_path / "m.toml"
    assert main(["map", str(logs), "--out", str(mapping)]) == 0
    drafted = tomllib.loads(mapping.read_text(encoding="utf-8"))
    assert drafted["keys"]["match"] == "game_id"  # one line's object id is that line's fault, not the file's
    assert main(["ingest", str(logs), "--runner", str(mapping), "--store", str(tmp_path / "s.duckdb")]) == 0
    from referee.io.store import Store

    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        aside = store.table("quarantine")
    mine = aside[aside["source_file"] == str(first)]
    assert sorted(zip(mine["field"], mine["reason"])) == [("game_id", "wrong type"), ("player", "wrong type"),
                                                           ("type", "wrong type"), ("type", "wrong type")]
    capsys.readouterr()


@pytest.mark.parametrize("shape", ["walk", "werewolf"])
def test_the_draft_takes_the_result_a_person_would_and_a_vote_is_cast_by_its_voter(tmp_path, shape, capsys):
    """Issue 68's raw-log shapes: a winners list beside a number of steps (3 players), and 8-player games whose
    `final_ranks` leaves players out in one game of ten while `final_ranks_full` ranks everyone, with votes
    naming the voter in `voter` and an id written past 64 bits on some lines and as text on others. The
    unedited draft stores every game once with every player, and Bradley-Terry recovers the skills; the steps
    walked (what the draft took before) order the models against their skill."""
    from referee.simulators.benchmark_shapes import BIG_ID, walk_logs, werewolf_logs

    make, players = {"walk": (walk_logs, 3), "werewolf": (werewolf_logs, 8)}[shape]
    logs, games = tmp_path / "logs", 240
    skill = make(logs, games, seed=5)
    store, table, _ = _drafted_store_and_ratings(tmp_path, logs, games, players, capsys)
    with Store(store, read_only=True) as s:
        if shape == "werewolf":  # one match per game although its id is a number on vote lines, text on others
            ids = set(s.query("SELECT match_id FROM matches")["match_id"])
            assert ids == {str(BIG_ID + g) for g in range(games)}
            votes = s.query("SELECT actor, count(*) AS n FROM events WHERE stage = 'vote' GROUP BY actor")
            # every player casts one vote a round (two a game); the one voted for (7 votes on player_0) is no actor
            assert len(votes) == 8 and set(votes["n"]) == {2 * games}
    rho = spearmanr(table["rating"], [skill[a] for a in table.index]).statistic
    assert rho >= 0.95, rho
    text = (tmp_path / "draft.toml").read_text()
    if shape == "walk":
        assert "winners = 'winners'" in text and "steps_walked" in text.split("[results]")[1].split("event =")[0]
        # the steps walked, read from the logs themselves, order the models against their skill
        steps: dict[str, list[int]] = {}
        for path in sorted(logs.glob("*.jsonl")):
            lines = [json.loads(x) for x in path.read_text().splitlines()]
            seats, end = lines[0]["seats"], lines[-1]
            for seat, walked in end["steps_walked"].items():
                steps.setdefault(seats[seat], []).append(walked)
        by_steps = spearmanr([np.mean(steps[a]) for a in skill], list(skill.values())).statistic
        assert by_steps < 0 < rho, by_steps
    else:
        assert "ranks = 'final_ranks_full'" in text and "player = ['voter', 'player']" in text


@pytest.mark.parametrize("shape", ["race", "elimination"])
def test_unedited_drafts_of_issue_84s_shapes_rate_by_who_won_and_votes_by_their_voter(tmp_path, shape, capsys):
    """Issue 84's raw-log shapes, as stand-ins: 3-player races whose `final` line holds `winners` beside
    `final_positions` keyed by player (no other line lists the players; the positions order the models against
    their skill), and 8-player elimination games whose votes carry `target_id` before `voter_id` and whose result
    names players by a short id (`P5` for `Player5_<model>`). The unedited draft rates by the winners, takes the
    voter as a vote's actor, sets aside no game for the short ids, is named after the benchmark's folder, and
    Bradley-Terry recovers the skills (Spearman >= 0.95)."""
    from referee.simulators.benchmark_shapes import elimination_logs, race_positions_logs

    make, players = {"race": (race_positions_logs, 3), "elimination": (elimination_logs, 8)}[shape]
    logs, games = tmp_path / "bench-84" / "logs", 300
    skill = make(logs, games, seed=8)
    store, table, said = _drafted_store_and_ratings(tmp_path, logs, games, players, capsys)
    rho = spearmanr(table["rating"], [skill[a] for a in table.index]).statistic
    assert rho >= 0.95, rho
    text = (tmp_path / "draft.toml").read_text()
    assert "name = 'bench-84'" in text
    if shape == "race":
        assert "winners = 'winners'" in text
        assert "final_positions" in text.split("[results]")[1].split("event =")[0]  # set aside, and said
        positions: dict[str, list[int]] = {}
        for path in sorted(logs.glob("*.jsonl")):
            end = json.loads(path.read_text().splitlines()[-1])
            for player, cells in end["final_positions"].items():
                positions.setdefault(player.split("_", 1)[1], []).append(cells)
        by_positions = spearmanr([np.mean(positions[a]) for a in skill], list(skill.values())).statistic
        assert by_positions < 0 < rho, by_positions  # the distractor orders the models against their skill
    else:
        assert text.count("voter_id") >= 1 and "player = ['voter_id'" in text
        assert "the results name some players by a shorter form of the ids there" in text  # the seat table's comment
        with Store(store, read_only=True) as s:
            votes = s.query("SELECT match_id, actor, count(*) AS n FROM events WHERE stage = 'vote' GROUP BY ALL")
            targets = s.query("SELECT count(*) AS n FROM events WHERE stage = 'vote' AND actor = target")["n"][0]
        # each of the 8 players casts one vote a round (two a game); the one voted for (7 votes a round) is no actor
        assert set(votes["n"]) == {2} and votes.groupby("match_id").size().eq(8).all() and len(votes) == 8 * games
        assert targets == 0 and votes["actor"].str.startswith("Player").all()


@pytest.mark.parametrize("odd", ["empty", "null", "short ids"])
def test_a_winners_list_outranks_the_seating_list_when_one_game_is_a_draw_or_names_a_winner_shortly(
        tmp_path, capsys, odd):
    """Issue 104: eight games whose `end` line holds the seating list `players` and `winners`; one game is a draw
    (`winners: []` or null) or names its winner by a short id ('P2' for 'Player2_beta'). The draft takes the
    winners list (never the seating list as the finishing order), says why the seating list was not taken, and
    the ingest stores 8 of 8 results right: the winner alone at rank 1, a draw as every player tied at 1."""
    rng = np.random.default_rng(1)
    models = ["alpha", "beta", "gamma", "delta"]
    logs = tmp_path / "logs"
    logs.mkdir()
    truth = {}
    for g in range(8):
        seated = [models[i] for i in rng.permutation(4)]
        players = [f"Player{s}_{m}" for s, m in enumerate(seated)] if odd == "short ids" else seated
        won = int(rng.integers(4))
        winners = [players[won]]
        if g == 3:
            winners = {"empty": [], "null": None, "short ids": [f"P{won}"]}[odd]
        truth[f"game_{g}.jsonl"] = [] if not winners else [players[won]]
        lines = [{"type": "start", "game": g, "players": players}]
        lines += [{"type": "move", "game": g, "player": p, "turn": t, "amount": int(rng.integers(10))}
                  for t in range(3) for p in players]
        lines.append({"type": "end", "game": g, "players": players, "winners": winners})
        (logs / f"game_{g}.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    draft, store = tmp_path / "draft.toml", tmp_path / "s.duckdb"
    assert main(["map", str(logs), "--out", str(draft)]) == 0
    text = draft.read_text()
    results = text.split("[results]")[1].split("\n[")[0]
    assert "winners = 'winners'" in results and "order = 'players'" not in results, results
    assert "is a seating list" in results, results
    assert main(["ingest", str(logs), "--runner", str(draft), "--store", str(store)]) == 0
    capsys.readouterr()
    with Store(store, read_only=True) as s:
        rows = s.query("SELECT m.source_file, r.player, r.rank FROM results r JOIN matches m USING (match_id)")
    right = 0
    for name, winners in truth.items():
        mine = rows[rows["source_file"].str.endswith(name)]
        first = set(mine.loc[mine["rank"] == 1, "player"])
        right += len(mine) == 4 and (first == set(winners) if winners else (mine["rank"] == 1).all())
    assert right == 8, rows
