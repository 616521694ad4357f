"""The report's pages of the games behind a board: one page per rated agent (its most surprising matches under the
board's ratings, its record by opponent) and one per match those list (its trace in order and its result), written
beside index.html under `games/`. Draws only: the matches and their surprise come from
`referee.run.ratings.games`, the traces from `referee.io.traces`. Every text is escaped by the template (players'
messages are untrusted: an HTML message shows as text); a long text is folded."""

from __future__ import annotations

import hashlib
import math
import re

import jinja2
import pandas as pd

FOLD = 280  # characters of a text shown before it is folded behind a click
TRACE_ROWS = 2000  # events shown on one match page; the rest is `referee show MATCH` away
REPORT = "../../index.html"  # from games/<kind>/<page>.html back to the report


def page_path(kind: str, key: str) -> str:
    """The page of an agent or a match (`kind`: 'agents' or 'matches'), relative to the report: a readable slug of
    `key` and 8 hex digits of its SHA-1 (two keys never share a page, whatever characters they hold)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", str(key)).strip("-")[:60] or "page"
    return f"games/{kind}/{slug}-{hashlib.sha1(str(key).encode()).hexdigest()[:8]}.html"


def _text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _cell(value, href: str | None = None) -> dict:
    text = _text(value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and text != ""
    if len(text) > FOLD:
        return {"text": text, "long": True, "short": text[:FOLD // 2] + " ...", "number": False}
    return {"text": text, "href": href, "number": number, "wrap": len(text) > 40}


def _table(caption: str, frame: pd.DataFrame, links: dict | None = None, empty: str = "none",
           rejected: pd.Series | None = None) -> dict:
    """A table for the template: `links` column -> (value -> href or None)."""
    links = links or {}
    rows = []
    for i, record in enumerate(frame.to_dict("records")):
        cells = [_cell(v, links[c](v) if c in links else None) for c, v in record.items()]
        rows.append({"cells": cells, "rejected": bool(rejected.iloc[i]) if rejected is not None else False})
    return {"caption": caption, "columns": list(frame.columns), "rows": rows, "empty": empty}


def _from_the_other_side(result: str) -> str:
    """'won 2, lost 1' read by the other agent: 'lost 2, won 1'."""
    return re.sub(r"\b(won|lost)\b", lambda m: "lost" if m.group(1) == "won" else "won", result)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("referee.present", "templates"),
                              autoescape=jinja2.select_autoescape(["html"]))


def write_game_pages(folder, runner: str, games, board: pd.DataFrame, traces: dict) -> dict[str, str]:
    """Write the pages of one board's games (`GamesBehind`) into the results folder `folder`: every agent of
    `games.matches` and every match of `games.pages` the store holds (`traces`: match id -> `Trace`). Returns
    agent -> its page's path relative to the report."""
    template = _environment().get_template("game_page.html")
    agents = {agent: page_path("agents", f"{runner}/{agent}") for agent in games.matches}
    matches = {m: page_path("matches", f"{runner}/{m}") for m in traces}
    to_agent = lambda name: "../../" + agents[name] if name in agents else None  # noqa: E731
    to_match = lambda m: "../../" + matches[m] if m in matches else None  # noqa: E731
    rows = board.set_index("agent")
    for agent, found in games.matches.items():
        row = rows.loc[agent]
        said = (f"Rating {row['rating']:.0f} (Elo points, {row['status']})"
                + (f", rank {int(row['rank'])}, tier {int(row['tier'])}" if pd.notna(row.get("rank")) else
                   ", not ranked") + ".")
        shown = found.assign(expected=found["expected"].round(2), surprise=found["surprise"].round(2))
        text = [said, "Its matches, most surprising first under the board's ratings: the surprise of a result is "
                f"-log2 of its probability given the fitted strengths, summed over the agent's comparisons in the "
                f"match (an upset won or lost scores high). The {len(found)} most surprising are listed; "
                "`referee show --agent NAME` lists more."]
        pairs = [(b if a == agent else a, found_) for (a, b), found_ in games.neighbours.items() if agent in (a, b)]
        tables = [_table("Most surprising matches", shown.drop(columns="agent"), {"match": to_match,
                                                                                 "own_match": to_match},
                         "no rated match"),
                  _table("Record by opponent", games.records[agent], {"opponent": to_agent}, "no comparison")]
        for other, met in pairs:
            mine = met if (agent, other) in games.neighbours else met.assign(
                result=met["result"].map(_from_the_other_side), p_a_beats_b=1 - met["p_a_beats_b"])
            tables.append(_table(f"Head to head with {other}, its ranked neighbour", mine.rename(
                columns={"p_a_beats_b": f"P({agent} beats {other})"}).round(3), {"match": to_match}, "they never met"))
        page = template.render(title=f"{agent} ({runner})", back=REPORT, runner=runner, text=text, tables=tables)
        folder.path(agents[agent]).write_text(page, encoding="utf-8")
    for match, trace in traces.items():
        events = trace.events.head(TRACE_ROWS)
        cut = len(trace.events) - len(events)
        where = ", ".join(f"{k} {_text(trace.match.get(k))}" for k in ("game", "scenario", "phase")
                          if _text(trace.match.get(k)))
        text = [f"Match {match} of runner {trace.match.get('runner')}" + (f" ({where})" if where else "") + ": its "
                "result, then every event in the order the runner wrote it (rejected actions marked)."
                + (f" The first {len(events):,} of {len(trace.events):,} events are shown; `referee show {match}` "
                   "prints them all." if cut else "")]
        rejected = events["status"].astype(str).str.lower().eq("rejected") if len(events) else None
        page = template.render(title=f"Match {match}", back=REPORT, runner=runner, text=text, tables=[
            _table("Result", trace.results, {"agent": to_agent}, "no result stored"),
            _table("Trace", events, {}, "no event stored", rejected)])
        folder.path(matches[match]).write_text(page, encoding="utf-8")
    return agents
