"""The games behind the numbers: which matches made an agent's rating, the most surprising first, under the
board's own model (`referee.run.ratings.board`), and which matches carry a tier boundary's evidence.

Pure functions of a comparisons table (a, b, outcome, cluster: `referee.prepare.comparisons`) and the board's
ratings (agent -> Elo points). Under Bradley-Terry on the Elo scale, P(a beats b) = 1 / (1 + 10^((r_b - r_a) /
400)); a comparison's surprise is the information of its outcome, -log2 P(outcome) in bits (a tie counts half a
win each way: -(log2 p + log2 (1 - p)) / 2). An agent's match is as surprising as the sum over its comparisons in
it: an upset won or lost scores high, an expected result low.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from referee.models.ratings.bradley_terry import elo_win_probability

GAMES_PER_AGENT = 5  # the report's page of an agent lists its most surprising matches,
TRACED_PER_AGENT = 3  # and writes the trace pages of the first few (the report grows by a fifth at most)
HEAD_TO_HEAD = 3  # each pair of ranked neighbours' head-to-head matches listed, at most this many,
TRACED_PER_PAIR = 1  # the most surprising of them traced
EVIDENCE = 3  # a tier boundary names the matches across it that carry most of its evidence


def _surprise(p_a: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Bits of surprise of each outcome (1: a won, 0: b won, 0.5: tie) given P(a beats b) = `p_a`."""
    p = np.clip(p_a, 1e-12, 1 - 1e-12)
    return -(outcome * np.log2(p) + (1 - outcome) * np.log2(1 - p))


def _results(score: pd.Series) -> dict[str, np.ndarray]:
    """Per comparison, whether the agent won (score 1), lost (0) or tied (0.5), as 0/1 counts to sum per group."""
    values = score.to_numpy(float)
    return {"won": (values == 1).astype(np.int64), "lost": (values == 0).astype(np.int64),
            "tied": (values == 0.5).astype(np.int64)}


def match_surprise(comparisons: pd.DataFrame, ratings: pd.Series) -> pd.DataFrame:
    """One row per (match, agent) of the rated agents' comparisons: match (the comparison's cluster), agent,
    opponents (text), won, lost, tied (its comparisons in the match), expected (its expected wins: sum of
    P(win)), surprise (bits, summed over its comparisons), upset ('won against the odds' where it won more of its
    comparisons that the board expected it to lose than it lost of those it expected to win, 'lost against the
    odds' the other way, else ''). Most surprising first."""
    rated = comparisons[comparisons["a"].isin(ratings.index) & comparisons["b"].isin(ratings.index)]
    if rated.empty:
        return pd.DataFrame(columns=["match", "agent", "opponents", "won", "lost", "tied", "expected", "surprise",
                                     "upset"])
    outcome = rated["outcome"].to_numpy(float)
    p = elo_win_probability(ratings.reindex(rated["a"]).to_numpy(), ratings.reindex(rated["b"]).to_numpy())
    bits = _surprise(p, outcome)
    both = pd.concat([
        pd.DataFrame({"match": rated["cluster"].astype(str).to_numpy(), "agent": rated["a"].to_numpy(),
                      "opponent": rated["b"].to_numpy(), "score": outcome, "p": p, "bits": bits}),
        pd.DataFrame({"match": rated["cluster"].astype(str).to_numpy(), "agent": rated["b"].to_numpy(),
                      "opponent": rated["a"].to_numpy(), "score": 1 - outcome, "p": 1 - p, "bits": bits})])
    both = both.assign(**_results(both["score"]))
    both["odds_won"] = (both["score"] == 1) & (both["p"] < 0.5)  # a comparison won that the board expected lost
    both["odds_lost"] = (both["score"] == 0) & (both["p"] > 0.5)
    grouped = both.groupby(["match", "agent"], sort=False)
    out = grouped.agg(won=("won", "sum"), lost=("lost", "sum"), tied=("tied", "sum"), expected=("p", "sum"),
                      surprise=("bits", "sum"), odds_won=("odds_won", "sum"), odds_lost=("odds_lost", "sum")
                      ).reset_index()
    named = (both[["match", "agent", "opponent"]].drop_duplicates().sort_values("opponent")
             .groupby(["match", "agent"], sort=False)["opponent"].agg(", ".join))  # each opponent once, by name
    out["opponents"] = named.reindex(pd.MultiIndex.from_frame(out[["match", "agent"]])).to_numpy()
    out["upset"] = np.where(out["odds_won"] > out["odds_lost"], "won against the odds",
                            np.where(out["odds_lost"] > out["odds_won"], "lost against the odds", ""))
    columns = ["match", "agent", "opponents", "won", "lost", "tied", "expected", "surprise", "upset"]
    return out[columns].sort_values(["surprise", "match"], ascending=[False, True]).reset_index(drop=True)


def pair_records(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Every pair's record in one pass, the one count of it that compare and the agents' pages read: one row per pair
    that met, first < second: first, second, wins, losses, ties (the first's against the second) and met_in (the
    distinct matches, clusters, they met in)."""
    a, b = comparisons["a"].to_numpy(), comparisons["b"].to_numpy()
    swap = a > b
    score = np.where(swap, 1.0 - comparisons["outcome"].to_numpy(float), comparisons["outcome"].to_numpy(float))
    counted = _results(pd.Series(score))
    frame = pd.DataFrame({"first": np.where(swap, b, a), "second": np.where(swap, a, b), "wins": counted["won"],
                          "losses": counted["lost"], "ties": counted["tied"], "cluster": comparisons["cluster"].to_numpy()})
    grouped = frame.groupby(["first", "second"])
    return grouped[["wins", "losses", "ties"]].sum().assign(met_in=grouped["cluster"].nunique()).reset_index()


def pair_lookup(records: pd.DataFrame) -> dict[tuple[str, str], dict[str, int]]:
    """`pair_records` as a dict, (first, second) -> its counts, for many lookups (a board of 200 agents has 19,900
    pairs)."""
    counts = ["wins", "losses", "ties", "met_in"]
    return {(row[0], row[1]): dict(zip(counts, map(int, row[2:])))
            for row in records[["first", "second"] + counts].itertuples(index=False)}


def record_of(records: dict[tuple[str, str], dict[str, int]], a: str, b: str) -> dict:
    """A's record against B from `pair_lookup`: wins, losses, ties and the matches they met in (zeros when they never
    met)."""
    key, flip = ((a, b), False) if a < b else ((b, a), True)
    row = records.get(key)
    if row is None:
        return {"wins": 0, "losses": 0, "ties": 0, "met_in": 0}
    wins, losses = (row["losses"], row["wins"]) if flip else (row["wins"], row["losses"])
    return {"wins": wins, "losses": losses, "ties": row["ties"], "met_in": row["met_in"]}


def record_by_opponent(records: pd.DataFrame, agent: str) -> pd.DataFrame:
    """An agent's record against each opponent, read from `pair_records`: opponent, won, lost, tied, matches
    (distinct matches), most matches first."""
    mine = records[(records["first"] == agent) | (records["second"] == agent)]
    if mine.empty:
        return pd.DataFrame(columns=["opponent", "won", "lost", "tied", "matches"])
    flip = (mine["second"] == agent).to_numpy()
    out = pd.DataFrame({"opponent": np.where(flip, mine["first"], mine["second"]),
                        "won": np.where(flip, mine["losses"], mine["wins"]),
                        "lost": np.where(flip, mine["wins"], mine["losses"]),
                        "tied": mine["ties"].to_numpy(), "matches": mine["met_in"].to_numpy()})
    return out.sort_values(["matches", "opponent"], ascending=[False, True]).reset_index(drop=True)


def head_to_head(comparisons: pd.DataFrame, ratings: pd.Series, a: str, b: str) -> pd.DataFrame:
    """The matches a and b met in: match, a's result against b there (won / lost / tied, and how many times),
    P(a beats b) on the board, and the surprise of those results (bits), most surprising first."""
    pair = comparisons[((comparisons["a"] == a) & (comparisons["b"] == b)) |
                       ((comparisons["a"] == b) & (comparisons["b"] == a))]
    if pair.empty:
        return pd.DataFrame(columns=["match", "result", "p_a_beats_b", "surprise"])
    score = np.where(pair["a"].to_numpy() == a, pair["outcome"].to_numpy(float), 1 - pair["outcome"].to_numpy(float))
    p = float(elo_win_probability(ratings.get(a, np.nan), ratings.get(b, np.nan))) if a in ratings and b in ratings \
        else np.nan
    frame = pd.DataFrame({"match": pair["cluster"].astype(str).to_numpy(), "score": score,
                          "bits": _surprise(np.full(len(score), p), score) if np.isfinite(p) else np.nan})
    grouped = frame.groupby("match", sort=False)
    words = grouped["score"].agg(lambda s: ", ".join(f"{w} {n}" if n > 1 else w for w, n in (
        ("won", int((s == 1).sum())), ("lost", int((s == 0).sum())), ("tied", int((s == 0.5).sum()))) if n))
    out = pd.DataFrame({"match": words.index, "result": words.to_numpy(), "p_a_beats_b": p,
                        "surprise": grouped["bits"].sum().to_numpy()})
    return out.sort_values(["surprise", "match"], ascending=[False, True]).reset_index(drop=True)


def boundary_evidence(comparisons: pd.DataFrame, ratings: pd.Series, above: list[str], below: list[str],
                      limit: int = EVIDENCE) -> list[str]:
    """The matches across a tier boundary (an agent of `above` against one of `below`) whose results carry most of
    its evidence: the log2-likelihood ratio of the observed results under the board's ratings against equal
    strengths, summed per match (bits for 'above is stronger'), largest first; at most `limit` match ids."""
    up, down = set(above), set(below)
    across = comparisons[(comparisons["a"].isin(up) & comparisons["b"].isin(down)) |
                         (comparisons["a"].isin(down) & comparisons["b"].isin(up))]
    if across.empty:
        return []
    outcome = across["outcome"].to_numpy(float)
    p = elo_win_probability(ratings.reindex(across["a"]).to_numpy(), ratings.reindex(across["b"]).to_numpy())
    bits = 1.0 - _surprise(p, outcome)  # log2 P(outcome | ratings) - log2 P(outcome | equal) = 1 - surprise
    evidence = pd.Series(bits, index=across["cluster"].astype(str).to_numpy()).groupby(level=0).sum()
    evidence = evidence[evidence > 0]
    ordered = sorted(evidence.index, key=lambda m: (-round(float(evidence[m]), 12), m))  # ties by match id
    return ordered[:limit]


@dataclass
class GamesBehind:
    """The games behind one board: per agent its record by opponent and its most surprising matches
    (`match_surprise` rows), the head-to-head matches of each pair of ranked neighbours, and the match ids whose
    trace a page may show, in order of priority (`pages`: every agent's most surprising first)."""

    records: dict
    matches: dict
    neighbours: dict
    pages: list


def games_behind(comparisons: pd.DataFrame, board: pd.DataFrame, own: pd.DataFrame | None = None,
                 per_agent: int = GAMES_PER_AGENT, per_pair: int = HEAD_TO_HEAD, traced: int = TRACED_PER_AGENT,
                 traced_pair: int = TRACED_PER_PAIR) -> GamesBehind:
    """The `GamesBehind` a board (`Board.table`: agent, rating, block, rank, component) and its comparisons: every
    rated agent (ranked and provisional), its `per_agent` most surprising matches, the first `traced` with a page
    (its own match where a unit pools several: `own`, the leaderboard's `Board.own`);
    each pair of ranked neighbours, its `per_pair` most surprising head-to-head matches, the first `traced_pair`
    with a page."""
    rated = board[board["rating"].notna()]
    ratings = rated.set_index("agent")["rating"].astype(float)
    found = match_surprise(comparisons, ratings)
    # a pooled unit ('scenario:repetition') is several matches: the agent's own is the one its page opens, and a
    # head-to-head there has no one match to trace
    pooled = own is not None and len(own) > 0 and not (own["unit"] == own["match_id"]).all()
    if pooled:
        found = found.merge(own.rename(columns={"unit": "match", "match_id": "own_match"}), on=["match", "agent"],
                            how="left")
    records, matches, neighbours, ranks = {}, {}, {}, []
    pairs = pair_records(comparisons)
    for agent in rated["agent"]:
        records[agent] = record_by_opponent(pairs, agent)
        matches[agent] = found[found["agent"] == agent].head(per_agent).reset_index(drop=True)
        ranks.append(list(matches[agent]["own_match" if pooled else "match"].dropna()[:traced]))
    # in order of priority: every agent's most surprising match, then its second, ...; the neighbours' after the first
    pages = [r[0] for r in ranks if r]
    ranked = board[board["block"] == "ranked"].sort_values(["component", "rank"])
    for _, part in ranked.groupby("component"):
        names = list(part["agent"])
        for a, b in zip(names, names[1:]):
            neighbours[(a, b)] = head_to_head(comparisons, ratings, a, b).head(per_pair)
            if not pooled:
                pages += list(neighbours[(a, b)]["match"][:traced_pair])
    pages += [r[k] for k in range(1, traced) for r in ranks if len(r) > k]
    return GamesBehind(records, matches, neighbours, list(dict.fromkeys(str(p) for p in pages)))
