"""The items an LLM judge rates, built from stored events: one per (match, round, player, other), (match, round,
player) or (match, player), as a rubric's unit asks (`referee.io.rubric.UNIT_VARIABLES`).

`judge_items(unit, matches, events)` returns one row per item: match_id, player, other, round (NULL where the
unit has none) and `variables` (a dict: the template's values). Text is read from events: messages (stage
`communicate`), reasoning and actions (stage `act`, types `reasoning` / anything else), predictions (stage
`predict`), each as 'actor: text' lines in sequence order.

- dyad-round: a pair that exchanged messages in a round, in both orders (player influences other): `chat`
  (their messages both ways), `reasoning` and `action` (the other's, that round);
- player-round: a player's round with reasoning: `reasoning` (that round's) and `history` (everything the
  player said, predicted, reasoned and did up to and including the round);
- player-match: `transcript` (everything the player said and did in the match).
"""

from __future__ import annotations

import pandas as pd

NONE = "(nothing recorded)"


def _line(row) -> str:
    target = f" to {row.target}" if isinstance(row.target, str) and row.stage == "communicate" else ""
    what = {"communicate": "says", "predict": "predicts", "act": "reasons" if row.type == "reasoning" else "does"}
    return f"round {row.round}: {row.actor}{target} {what.get(row.stage, row.stage)}: {row.text}"


def _text(rows: pd.DataFrame, line=_line) -> str:
    return "\n".join(line(r) for r in rows.sort_values("seq").itertuples()) or NONE


def judge_items(unit: str, matches: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """The items of `unit` in `matches` (module docstring). events : canonical events (text-bearing rows are
    used). Returns match_id, player, other, round, variables; empty when the events carry no text to judge."""
    columns = ["match_id", "player", "other", "round", "variables"]
    events = events[events["match_id"].isin(matches["match_id"]) & events["text"].notna() & events["actor"].notna()]
    if events.empty:
        return pd.DataFrame(columns=columns)
    game = dict(zip(matches["match_id"], matches["game"].fillna(matches["runner"])))
    rows = []
    if unit == "dyad-round":
        chat = events[events["stage"] == "communicate"]
        acts = dict(iter(events[events["stage"] == "act"].groupby(["match_id", "round"])))  # grouped once
        empty = events.iloc[:0]
        for (match, rnd), said in chat.groupby(["match_id", "round"]):
            pairs = {tuple(sorted(p)) for p in zip(said["actor"], said["target"]) if isinstance(p[1], str) and p[0] != p[1]}
            mine = acts.get((match, rnd), empty)
            for a, b in sorted(pairs):
                talk = said[said["actor"].isin([a, b]) & said["target"].isin([a, b])]
                for player, other in ((a, b), (b, a)):
                    theirs = mine[mine["actor"] == other]
                    rows.append({"match_id": match, "player": player, "other": other, "round": int(rnd), "variables": {
                        "game": game[match], "match": match, "round": int(rnd), "player": player, "other": other,
                        "chat": _text(talk), "reasoning": _text(theirs[theirs["type"] == "reasoning"]),
                        "action": _text(theirs[theirs["type"] != "reasoning"])}})
    elif unit == "player-round":
        reasoning = events[(events["stage"] == "act") & (events["type"] == "reasoning")]
        by_match = dict(iter(events.groupby("match_id")))  # each item reads its own match only
        for (match, player, rnd), part in reasoning.groupby(["match_id", "actor", "round"]):
            own = by_match[match]
            seen = own[(own["round"] <= rnd) & ((own["actor"] == player) | (own["target"] == player))]
            rows.append({"match_id": match, "player": player, "other": None, "round": int(rnd), "variables": {
                "game": game[match], "match": match, "round": int(rnd), "player": player,
                "history": _text(seen), "reasoning": _text(part)}})
    elif unit == "player-match":
        for (match, player), part in events.groupby(["match_id", "actor"]):
            rows.append({"match_id": match, "player": player, "other": None, "round": None, "variables": {
                "game": game[match], "match": match, "player": player, "transcript": _text(part)}})
    else:
        raise ValueError(f"unknown unit {unit!r}")
    return pd.DataFrame(rows, columns=columns)
