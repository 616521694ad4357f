"""The report's pages of the games behind a board: one page per rated agent (its most surprising matches under the
board's ratings, its record by opponent) and one per match those list (its trace in order and its result), written
beside index.html under `games/`. Draws only: the matches and their surprise come from
`referee.run.ratings.games`, the traces from `referee.io.traces`. Every text is escaped by the template (players'
messages are untrusted: an HTML message shows as text); a long text is folded."""

from __future__ import annotations

import hashlib
import math
import re

import pandas as pd

from referee.present.report import html_templates

FOLD = 280  # characters of a text shown before it is folded behind a click
TRACE_ROWS = 200  # events shown on one match page; the rest is `referee show MATCH` away
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
    numeric = [j + 1 for j, c in enumerate(frame.columns)  # columns right-aligned by one rule, not per cell
               if rows and sum(r["cells"][j]["number"] for r in rows) > len(rows) / 2]
    return {"caption": caption, "columns": list(frame.columns), "rows": rows, "empty": empty, "numeric": numeric}


def _filled(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` without the columns no row fills (a runner that records no status or round): a page says what the
    match holds, nothing more."""
    return frame.loc[:, frame.notna().any() & frame.astype(str).ne("").any()] if len(frame) else frame


def _from_the_other_side(result: str) -> str:
    """'won 2, lost 1' read by the other agent: 'lost 2, won 1'."""
    return re.sub(r"\b(won|lost)\b", lambda m: "lost" if m.group(1) == "won" else "won", result)


def _agent_page(template, runner: str, agent: str, row, found: pd.DataFrame, games, to_agent, to_match) -> str:
    said = (f"Rating {row['rating']:.0f} (Elo points, {row['status']})"
            + (f", rank {int(row['rank'])}, tier {int(row['tier'])}" if pd.notna(row.get("rank")) else
               ", not ranked") + ".")
    shown = found.assign(expected=found["expected"].round(2), surprise=found["surprise"].round(2))
    text = [said, f"Its {len(found)} most surprising matches under the board's ratings (surprise: -log2 P(result), "
            "bits, over its comparisons in the match), then its record. `referee show MATCH`: any match's trace; "
            "`referee show --agent NAME`: more matches."]
    pairs = [(b if a == agent else a, met) for (a, b), met in games.neighbours.items() if agent in (a, b)]
    tables = [_table("Most surprising matches", shown.drop(columns="agent"), {"match": to_match, "own_match": to_match},
                     "no rated match"),
              _table("Record by opponent", games.records[agent], {}, "no comparison")]
    for other, met in pairs:
        mine = met if (agent, other) in games.neighbours else met.assign(
            result=met["result"].map(_from_the_other_side), p_a_beats_b=1 - met["p_a_beats_b"])
        tables.append(_table(f"Head to head with {other}, its ranked neighbour", mine.rename(
            columns={"p_a_beats_b": f"P({agent} beats {other})"}).round(3), {"match": to_match}, "they never met"))
    return template.render(title=f"{agent} ({runner})", back=REPORT, runner=runner, text=text, tables=tables)


def _match_page(template, runner: str, match: str, trace, to_agent) -> str:
    events = trace.events.head(TRACE_ROWS)
    cut = len(trace.events) - len(events)
    where = ", ".join(f"{k} {_text(trace.match.get(k))}" for k in ("game", "scenario", "phase")
                      if _text(trace.match.get(k)))
    text = [f"Match {match} of runner {trace.match.get('runner')}" + (f" ({where})" if where else "") + ": its "
            "result, then every event in the order the runner wrote it (rejected actions marked)."
            + (f" The first {len(events):,} of {len(trace.events):,} events are shown; `referee show {match}` prints "
               "them all." if cut else "")]
    rejected = events["status"].astype(str).str.lower().eq("rejected") if len(events) else None
    return template.render(title=f"Match {match}", back=REPORT, runner=runner, text=text, tables=[
        _table("Result", _filled(trace.results), {"agent": to_agent}, "no result stored"),
        _table("Trace", _filled(events), {}, "no event stored", rejected)])


def agent_pages(runner: str, games) -> dict[str, str]:
    """agent -> the path (relative to the report) of its page: every agent of `games.matches`."""
    return {agent: page_path("agents", f"{runner}/{agent}") for agent in games.matches}


def write_game_pages(folder, runner: str, games, board: pd.DataFrame, traces: dict, budget: float = float("inf")
                     ) -> tuple[int, int]:
    """Write the pages of one board's games (`GamesBehind`) into the results folder `folder`: every agent of
    `games.matches` (`agent_pages`), and the match pages of `traces` (match id -> `Trace`, in `games.pages`' order
    of priority: each agent's most surprising first) while the bytes written stay within `budget`; an agent page
    links only the match pages written. Returns (pages written, bytes written)."""
    environment = html_templates()
    template = environment.get_template("game_page.html")
    css = folder.path("games/games.css")  # the pages' one stylesheet (shipped as a template: package data is .html)
    if not css.exists():
        css.write_text(environment.loader.get_source(environment, "games_css.html")[0], encoding="utf-8")
    agents = agent_pages(runner, games)
    paths = {m: page_path("matches", f"{runner}/{m}") for m in traces}
    rows = board.set_index("agent")
    to_agent = lambda name: "../" + agents[name].split("/", 1)[1] if name in agents else None  # noqa: E731

    def render_agents(kept: set) -> dict:
        to_match = lambda m: "../" + paths[m].split("/", 1)[1] if m in kept else None  # noqa: E731
        return {agent: _agent_page(template, runner, agent, rows.loc[agent], found, games, to_agent, to_match)
                for agent, found in games.matches.items()}

    size = lambda text: len(text.encode("utf-8"))  # noqa: E731
    spent = sum(map(size, render_agents(set(traces)).values()))
    kept: dict[str, str] = {}
    for match in [m for m in games.pages if m in traces]:
        page = _match_page(template, runner, match, traces[match], to_agent)
        if spent + size(page) > budget:
            break
        kept[match] = page
        spent += size(page)
    for agent, page in render_agents(set(kept)).items():
        folder.path(agents[agent]).write_text(page, encoding="utf-8")
    for match, page in kept.items():
        folder.path(paths[match]).write_text(page, encoding="utf-8")
    return len(agents) + len(kept), spent
