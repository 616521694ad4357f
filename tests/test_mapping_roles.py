"""`referee map` drafts that map the events a person would (issue 100): speakers, voters, proposers and bidders as
actors, recipients and candidates as targets, amounts as values, ids resolved to the players the results name,
and never one agent for every player of a game. Checked line by line against what each stand-in wrote, on the line
shapes of two public benchmarks' own logs (lechmazur/elimination_game, lechmazur/pgg_bench) and on held-out
shapes no runner writes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import spearmanr

import referee
from referee.cli import main
from referee.io.id_patterns import id_pattern, resolve_reference
from referee.io.loaders.mapped import MappingError, read_runner_map
from referee.io.mapping_draft import draft_mapping
from referee.io.store import Store
from referee.simulators.social_shapes import (elimination_game_logs, numbered_winners_logs, public_goods_logs,
                                              whisper_logs)


def _drafted(tmp_path: Path, make, games: int, seed: int = 7) -> tuple[Path, dict, pd.DataFrame, Path]:
    """The stand-in's logs, its skills, the events an unedited draft stores, and the store."""
    logs = tmp_path / "logs"
    skill = make(logs, games, seed)
    draft = draft_mapping([logs])
    mapping = tmp_path / "map.toml"
    mapping.write_text(draft.text)
    store = tmp_path / "s.duckdb"
    with Store(store) as s:
        s.ingest([logs], runner=mapping)
        events, results = s.events(), s.results()
    return logs, skill, events.merge(results[["match_id", "player", "agent"]].rename(columns={"player": "actor"}),
                                     on=["match_id", "actor"], how="left"), store


def _written(logs: Path, match_key: str) -> pd.DataFrame:
    """Every line the stand-in wrote, with its match, line number (what the store's `seq` holds) and type, each
    key as `w_KEY`."""
    rows = []
    for path in sorted(logs.glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            record = json.loads(line)
            rows.append({"match_id": str(record[match_key]), "seq": number, "type": record.get("type", record.get(
                "what")), **{f"w_{k}": v for k, v in record.items()}})  # w_: as written (no clash with events')
    return pd.DataFrame(rows)


def _share(found: pd.DataFrame, kind: str, column: str, expected) -> float:
    """The share of `kind` events whose stored `column` is what the line says (`expected`: line -> value)."""
    block = found[found["type"] == kind]
    return float((block[column].to_numpy() == block.apply(expected, axis=1).to_numpy()).mean())


def _rated(store: Path, skill: dict) -> float:
    table = referee.ratings(str(store)).table()
    table = table[table["rating"].notna()]
    return float(spearmanr([skill[a] for a in table["agent"]], table["rating"]).statistic)


def test_held_out_social_game_whispers_ballots_and_bids_keep_their_actors_targets_and_values(tmp_path):
    """Whispers (sender -> recipient), ballots (voter -> candidate) and bids (amount) of players named by a long id
    while the placements are keyed by model: every one stored with its actor and target (the player the results
    rate) and every bid with its amount (>= 95 % each; all of them here), and the agents rated."""
    logs, skill, events, store = _drafted(tmp_path, whisper_logs, 200)
    lines = _written(logs, "night")
    found = events.merge(lines, on=["match_id", "seq", "type"], how="left")
    model = lambda text: text.split("/")[1]  # noqa: E731 - the player the results name: the model in the long id
    for kind, actor, target in (("whisper", "sender", "recipient"), ("ballot", "voter", "candidate")):
        assert _share(found, kind, "actor", lambda r: model(r["w_" + actor])) >= 0.95
        assert _share(found, kind, "target", lambda r: model(r["w_" + target])) >= 0.95
    assert _share(found, "bid", "actor", lambda r: model(r["w_bidder"])) >= 0.95
    assert _share(found, "bid", "value", lambda r: float(r["w_amount"])) >= 0.95
    assert _rated(store, skill) >= 0.9


def test_the_elimination_game_shape_stores_speakers_voters_proposers_and_their_targets(tmp_path):
    """lechmazur/elimination_game's lines: `private` (speaker_id -> target_id, the largest type) was stored with
    the recipient as its actor; votes had no target and proposals no actor. Now each is stored as written, the
    short ids of proposals (`P7`) read as the players the final ranks name, and the agents rated."""
    logs, skill, events, store = _drafted(tmp_path, elimination_game_logs, 60)
    lines = _written(logs, "game_id")
    found = events.merge(lines, on=["match_id", "seq", "type"], how="left")
    full = {(m, f"P{p.split('_')[0][6:]}"): p for m, block in found.groupby("match_id")
            for p in block["w_speaker_id"].dropna().unique()}
    assert _share(found, "private", "actor", lambda r: r["w_speaker_id"]) == 1.0
    assert _share(found, "private", "target", lambda r: r["w_target_id"]) == 1.0
    for kind in ("vote", "private_vote_reason"):
        assert _share(found, kind, "actor", lambda r: r["w_voter_id"]) == 1.0
        assert _share(found, kind, "target", lambda r: r["w_target_id"]) == 1.0
    assert _share(found, "preference_proposal", "actor", lambda r: full[(r["match_id"], r["w_proposer"])]) == 1.0
    assert _share(found, "preference_proposal", "target", lambda r: full[(r["match_id"], r["w_target"])]) == 1.0
    assert _share(found, "elimination", "target", lambda r: r["w_eliminated_player"]) == 1.0
    assert found.loc[found["type"] == "elimination", "actor"].isna().all()  # the eliminated never acts
    assert _rated(store, skill) >= 0.95


def test_the_public_goods_shape_stores_messages_contributions_and_punishments(tmp_path):
    """lechmazur/pgg_bench's lines: public messages by a long player id while the results are keyed by model (0 of
    36,492 had an actor), contributions without their number, punishments punisher -> target with the spend."""
    logs, skill, events, store = _drafted(tmp_path, public_goods_logs, 300)
    lines = _written(logs, "game_id")
    found = events.merge(lines, on=["match_id", "seq", "type"], how="left")
    rated = found.loc[found["type"].isin(["public_message", "contribution", "punishment"])]
    assert rated["agent"].notna().all()  # every actor is a player the results rate
    assert _share(found, "contribution", "value", lambda r: float(r["w_contribution"])) == 1.0
    assert _share(found, "punishment", "value", lambda r: float(r["w_punisher_spend"])) == 1.0
    punished = found[found["type"] == "punishment"]
    agent = dict(zip(zip(events["match_id"], events["actor"]), events["agent"]))
    assert (punished["target"].map(lambda t: t.rsplit("_", 1)[-1])
            == punished["w_target_id"].map(lambda t: t.rsplit("_", 1)[-1])).all()
    assert all(agent[(m, a)] == p.rsplit("_", 1)[-1] for m, a, p in
               zip(punished["match_id"], punished["actor"], punished["w_punisher_id"]))
    assert _rated(store, skill) >= 0.95


def test_winners_logs_whose_ids_end_in_a_number_rate_every_agent(tmp_path):
    """Players `llm-0` ... `llm-7`: the draft took the `-N` for a seat number and made one agent of all eight
    players of every game ("no comparisons to rate"); each id is now its own agent, and the draft says why."""
    logs = tmp_path / "logs"
    skill = numbered_winners_logs(logs, 1500, 3)
    draft = draft_mapping([logs])
    assert "would make one agent of two players of one game" in draft.text
    mapping = tmp_path / "map.toml"
    mapping.write_text(draft.text)
    with Store(tmp_path / "s.duckdb") as s:
        s.ingest([logs], runner=mapping)
    assert _rated(tmp_path / "s.duckdb", skill) >= 0.95


@pytest.mark.parametrize("ids, merged", [
    ([{f"llm-{k}" for k in range(8)}] * 6, True), ([{f"agent-{k}" for k in range(4)}] * 6, True),
    ([{f"Player{k}_Game{g}_m{(k + g) % 5}" for k in range(3)} for g in range(6)], False)])
def test_a_pattern_that_merges_the_players_of_a_game_is_never_drafted(ids, merged):
    regex, why = id_pattern(ids)
    agents = [{re.search(regex, p).group("agent") for p in game} for game in ids]
    assert all(len(a) == len(g) for a, g in zip(agents, ids))  # never one agent for two players of a game
    assert ("would make one agent" in why) == merged


def test_an_event_id_resolves_to_the_player_its_results_name():
    known = {"Player7_Game17_o3-mini", "Player3_Game17_mistral"}
    assert resolve_reference("P7", known) == "Player7_Game17_o3-mini"
    by_model = {"mistral", "gemini_20_flash", "gemini_20_flash_thinking_exp_0121"}
    assert resolve_reference("Player4_Game9_gemini_20_flash", by_model) == "gemini_20_flash"
    assert resolve_reference("Player1_Game9_gemini_20_flash_thinking_exp_0121", by_model) == \
        "gemini_20_flash_thinking_exp_0121"
    assert resolve_reference("seat-3/mistral/run07", by_model) == "mistral"
    assert resolve_reference("someone-else", by_model) is None


def test_map_check_counts_each_event_types_actors_targets_and_values(tmp_path, capsys):
    logs = tmp_path / "logs"
    public_goods_logs(logs, 20, 2)
    assert main(["map", str(logs), "--out", str(tmp_path / "m.toml"), "--check"]) == 0
    printed = capsys.readouterr().out
    assert "punishment: 60 events; actor 100%, target 100%, value 100%, rated 100%" in printed
    assert "contribution: 300 events; actor 100%, target 0%, value 100%, rated 100%" in printed
    assert "types with no actor, target or value: round_end, init" in printed


def test_an_unknown_field_of_an_event_type_is_refused_by_name(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('name = "x"\n[keys]\nmatch = "m"\ntype = "t"\n[event_keys.vote]\nplayr = "voter"\n')
    with pytest.raises(MappingError, match=r"'playr' is not a field read per event type \(did you mean 'player'\?\)"):
        read_runner_map(path)
    path.write_text('name = "x"\n[keys]\nmatch = "m"\ntype = "t"\n[event_keys.vote]\nplayer = "voter"\n')
    assert read_runner_map(path).type_keys == {"vote": {"player": (("voter",),)}}
    shutil.rmtree(tmp_path / "unused", ignore_errors=True)
