"""Communicate-predict-act games (COMPACT): typed JSON lines, format in `data/formats/compact.md`.

Every line is one record with a `record` kind: `game` (header), `player` (who plays whom), `message`,
`prediction`, `reasoning`, `action`, `reward`, `judge`. Games become matches (`match_id` = game_id,
variant = framing), players and rewards results, judge ratings `judge` measures (player = subject,
other = object, rater = judge), and the rest events: messages (stage communicate), predictions (stage
predict), reasoning and actions (stage act). Predictions and actions carry the same fields (`action`
text, numeric `value`, `target` player), so that prediction accuracy can be computed from events alone.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from referee.io.loaders.runner import Runner
from referee.io.loaders.base import LoadOptions, LoadResult, ResultBuilder
from referee.io.loaders.detect import share
from referee.io.loaders.jsonl import not_in, read_records, repeated_keys, screen, split_invalid

NAME = "compact"
GAMES = ("coalition", "scheduler", "tragedy_of_the_commons", "survivor", "hupi")
RECORDS = ("game", "player", "message", "prediction", "reasoning", "action", "reward", "judge")
JUDGE_METRICS = ("influence", "planning", "learning")
FIELDS = {
    "record": pa.string(), "game_id": pa.string(), "game": pa.string(), "framing": pa.string(),
    "communication": pa.bool_(), "phase": pa.string(), "started_at": pa.string(), "round": pa.int64(),
    "player": pa.string(), "agent": pa.string(), "sender": pa.string(), "recipient": pa.string(),
    "target": pa.string(), "action": pa.string(), "value": pa.float64(), "text": pa.string(),
    "reward": pa.float64(), "judge": pa.string(), "metric": pa.string(), "subject": pa.string(),
    "object": pa.string(),
}
# required fields per record kind
REQUIRED = {
    "game": ("game_id", "game"),
    "player": ("game_id", "player", "agent"),
    "message": ("game_id", "round", "sender", "recipient", "text"),
    "prediction": ("game_id", "round", "player", "target"),
    "reasoning": ("game_id", "round", "player", "text"),
    "action": ("game_id", "round", "player"),
    "reward": ("game_id", "player", "reward"),
    "judge": ("game_id", "judge", "metric", "subject", "value"),
}
# which field names the acting player, per record kind (checked against the game's declared players)
ACTOR = {"message": "sender", "prediction": "player", "reasoning": "player", "action": "player",
         "reward": "player", "judge": "subject"}
OTHER = {"message": "recipient", "prediction": "target", "judge": "object"}


def sniff(path: Path, head: str, sample: list) -> float:
    """The share of sampled JSON lines with a `record` kind and a `game_id`."""
    return share(sample, lambda r: r.get("record") in RECORDS and "game_id" in r) if path.suffix.lower() == ".jsonl" else 0.0


def _key(table: pa.Table, player_field: str) -> pa.ChunkedArray:
    return pc.binary_join_element_wise(table["game_id"], table[player_field], "\x1f")


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one COMPACT trace file; every line is one record, bad lines quarantined by number and field."""
    out, table = read_records(path, content_hash, NAME, FIELDS, options.progress)
    if table is None:
        return out.build()
    kind = table["record"]
    checks = [(pc.is_null(kind), "missing field", "record", "required field 'record' is missing"),
              (not_in(kind, RECORDS), "wrong value", "record", f"record must be one of {list(RECORDS)}")]
    for rec, fields in REQUIRED.items():
        is_rec = pc.equal(kind, rec)
        for f in fields:
            checks.append((pc.and_(is_rec, pc.is_null(table[f])), "missing field", f, f"a {rec} record needs '{f}'"))
    acts = pc.is_in(kind, value_set=pa.array(["prediction", "action"]))
    checks += [
        (pc.and_(acts, pc.and_(pc.is_null(table["action"]), pc.is_null(table["value"]))), "missing field", "action",
         "a prediction or action needs 'action' or 'value'"),
        (pc.and_(pc.equal(kind, "judge"), not_in(table["metric"], JUDGE_METRICS)), "wrong value", "metric",
         f"metric must be one of {list(JUDGE_METRICS)}"),
        (pc.and_(pc.equal(kind, "judge"), pc.or_(pc.less(table["value"], 0), pc.greater(table["value"], 3))),
         "wrong value", "value", "a judge rating is 0 to 3"),
        (pc.and_(pc.equal(kind, "game"), not_in(table["game"], GAMES)), "wrong value", "game",
         f"game must be one of {list(GAMES)}"),
        (pc.is_inf(pc.fill_null(table["reward"], 0.0)), "infinite", "reward", "'reward' is infinite"),
        (pc.is_inf(pc.fill_null(table["value"], 0.0)), "infinite", "value", "'value' is infinite"),
    ]
    good, invalid = split_invalid(table, checks)
    # structural checks: one header per game, each player declared once, every actor a declared player
    headers = good.filter(pc.equal(good["record"], "game"))
    players = good.filter(pc.equal(good["record"], "player"))
    rewards = good.filter(pc.equal(good["record"], "reward"))
    header_dups = repeated_keys(headers, ["game_id"])
    player_dups = repeated_keys(players, ["game_id", "player"])
    reward_dups = repeated_keys(rewards, ["game_id", "player"])
    declared_games = pc.unique(headers["game_id"])
    player_keys = pc.unique(_key(players, "player"))
    kind = good["record"]
    checks = [
        (pc.is_in(good["_line"], value_set=header_dups), "duplicate match id", "game_id", "this game is declared on an earlier line"),
        (pc.is_in(good["_line"], value_set=player_dups), "player listed twice", "player", "this player is declared on an earlier line"),
        (pc.is_in(good["_line"], value_set=reward_dups), "player listed twice", "player", "this player's reward appears on an earlier line"),
        (pc.and_(pc.equal(kind, "player"), pc.invert(pc.is_in(good["game_id"], value_set=declared_games))),
         "unknown match", "game_id", "no game record declares this game_id in the file"),
    ]
    for rec, field in ACTOR.items():
        checks.append((pc.and_(pc.equal(kind, rec), pc.invert(pc.is_in(_key(good, field), value_set=player_keys))),
                       "unknown player", field, f"'{field}' is not a declared player of this game"))
    for rec, field in OTHER.items():
        checks.append((pc.and_(pc.and_(pc.equal(kind, rec), pc.is_valid(good[field])),
                               pc.invert(pc.is_in(_key(good, field), value_set=player_keys))),
                       "unknown player", field, f"'{field}' is not a declared player of this game"))
    good = screen(out, good, checks, "started_at", earlier=invalid)
    _emit(out, good, path, content_hash)
    return out.build()


def _emit(out: ResultBuilder, good: pa.Table, path: Path, content_hash: str) -> None:
    kind = good["record"]
    small = good.filter(pc.is_in(kind, value_set=pa.array(["game", "player", "reward", "judge"]))).to_pandas()
    games = small[small["record"] == "game"]
    players = small[small["record"] == "player"]
    rewards = small[small["record"] == "reward"].set_index(["game_id", "player"])["reward"]
    judges = small[small["record"] == "judge"]
    counts = players.groupby("game_id").size()
    matches = pd.DataFrame({
        "match_id": games["game_id"], "runner": NAME, "game": games["game"], "variant": games["framing"],
        "phase": games["phase"], "communication": games["communication"],
        "n_players": games["game_id"].map(counts).fillna(0).astype(int), "started_at": games["_t"],
        "source_file": str(path), "content_hash": content_hash, "record_index": games["_line"].astype(str)})
    results = players[["game_id", "player", "agent"]].rename(columns={"game_id": "match_id"})
    results["score"] = [rewards.get((g, p)) for g, p in zip(players["game_id"], players["player"])]
    results["rank"] = results.groupby("match_id")["score"].rank(method="min", ascending=False)
    measures = pd.DataFrame({
        "match_id": judges["game_id"], "player": judges["subject"], "name": judges["metric"],
        "value": judges["value"], "kind": "judge", "other": judges["object"], "round": judges["round"],
        "rater": judges["judge"]})
    events = good.filter(pc.is_in(kind, value_set=pa.array(["message", "prediction", "reasoning", "action"])))
    ekind = events["record"]
    stage = pc.if_else(pc.equal(ekind, "message"), "communicate", pc.if_else(pc.equal(ekind, "prediction"), "predict", "act"))
    actor = pc.if_else(pc.equal(ekind, "message"), events["sender"], events["player"])
    target = pc.if_else(pc.equal(ekind, "message"), events["recipient"], events["target"])
    text = pc.if_else(pc.is_in(ekind, value_set=pa.array(["prediction", "action"])), events["action"], events["text"])
    out.accept_bulk(good.num_rows, matches=matches, results=results, measures=measures, events=pa.table({
        "match_id": events["game_id"], "seq": events["_line"], "round": events["round"], "stage": stage,
        "actor": actor, "type": ekind, "target": target, "text": text, "value": events["value"]}))
    out.add_records(good["game_id"], good["_line"])


# its predictions, actions and judge ratings are what `referee socio` reads by default
RUNNER = Runner(NAME, sniff, load, {"line": list(FIELDS), "record kinds": list(REQUIRED)}, socio_cognitive=True)
