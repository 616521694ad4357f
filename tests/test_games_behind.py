"""The games behind the numbers (issue 102): from the board to each agent's page of its most surprising matches, to a
match's trace in order, players' texts escaped; `referee show` prints the same trace; a comparison and a tier
boundary name their matches. Checked on held-out social-game logs with one planted upset (the weakest agent first
and the strongest last) whose weakest player whispers a message holding HTML."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import referee
from referee.cli import main
from referee.io.mapping_draft import draft_mapping
from referee.models.ratings.bradley_terry import elo_win_probability as win_probability
from referee.run.ratings.games import boundary_evidence, match_surprise
from referee.simulators.social_shapes import HTML_MESSAGE, plant_upset, whisper_logs


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(report folder, store, skills, the planted match id) of 120 held-out games and the planted upset."""
    base = tmp_path_factory.mktemp("upset")
    skill = whisper_logs(base / "logs", 120, 7)
    match = plant_upset(base / "logs", skill)
    (base / "map.toml").write_text(draft_mapping([base / "logs"]).text)
    store = base / "s.duckdb"
    assert main(["ingest", str(base / "logs"), "--runner", str(base / "map.toml"), "--store", str(store), "-q"]) == 0
    assert main(["report", "--store", str(store), "--out", str(base / "report"), "--no-models", "-q"]) == 0
    return base / "report", store, skill, match


class _Links(HTMLParser):
    """Every href of a page, and the text of every table cell (in order)."""

    def __init__(self):
        super().__init__()
        self.links, self.cells, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs).get("href"))
        if tag == "td":
            self._cell = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag == "td":
            self.cells.append(self._cell)
            self._cell = None


def _read(page: Path) -> _Links:
    found = _Links()
    found.feed(page.read_text(encoding="utf-8"))
    return found


def _page_rows(page: Path) -> list[list[str]]:
    """The rows of a page's first table after its header, as cell texts."""
    text = page.read_text(encoding="utf-8")
    body = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_the_board_links_every_rated_agent_to_its_page_and_the_weakest_lists_the_planted_upset(planted):
    report, store, skill, match = planted
    index = _read(report / "index.html")
    pages = {Path(h).name: h for h in index.links if h and h.startswith("games/agents/")}
    board = referee.leaderboard(str(store)).table()
    ranked = board.loc[board["block"] == "ranked", "agent"]
    assert len(ranked) == len(skill) and all(any(f"-{a}-" in name for name in pages) for a in ranked)
    weakest = min(skill, key=skill.get)
    page = report / next(h for name, h in pages.items() if f"-{weakest}-" in name)
    top = [row[0] for row in _page_rows(page)[:3]]
    assert match in top, top  # among its three most surprising results: here the first


def test_the_planted_match_page_shows_its_trace_in_order_with_the_html_as_text(planted):
    report, store, skill, match = planted
    [page] = [p for p in (report / "games" / "matches").glob("*.html") if f"-{match}-" in p.name]
    text = page.read_text(encoding="utf-8")
    assert "<script>" not in text and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in text  # escaped, as text
    trace = referee.trace(str(store), match)
    tables = text.split("<h2>Trace</h2>", 1)[1]
    header = re.findall(r"<th>(.*?)</th>", tables)
    rows = [dict(zip(header, [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]))
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", tables.split("<tbody>", 1)[1], re.S)]
    weakest, strongest = min(skill, key=skill.get), max(skill, key=skill.get)
    assert [r["actor"] for r in rows] == trace["actor"].tolist() == [weakest, strongest, weakest]  # in order
    assert [r["target"] for r in rows][:2] == trace["target"].tolist()[:2] == [strongest, weakest]
    assert "text" in header and "value" in header  # a column the match fills is shown, an empty one is not
    assert "status" not in header
    assert trace["text"].iloc[0] == HTML_MESSAGE and trace["type"].tolist() == ["whisper", "ballot", "bid"]


def test_every_local_link_of_the_report_resolves(planted):
    report, *_ = planted
    pages = [report / "index.html", *sorted((report / "games").rglob("*.html"))]
    assert len(pages) > 10
    checked = 0
    for page in pages:
        for href in _read(page).links:
            if not href or re.match(r"^[a-z]+:", href) or href.startswith("#"):
                continue
            assert (page.parent / href.split("#")[0]).resolve().is_file(), (page, href)
            checked += 1
    assert checked > 20


def test_referee_show_prints_the_same_trace(planted, capsys):
    report, store, skill, match = planted
    capsys.readouterr()
    assert main(["show", match, "--store", str(store)]) == 0
    printed = capsys.readouterr().out
    trace = referee.trace(str(store), match)
    lines = [line.split() for line in printed.splitlines()[1:1 + len(trace)]]
    assert [line[3] for line in lines] == trace["actor"].tolist() and "<script>alert" in printed
    assert main(["show", "--agent", min(skill, key=skill.get), "--store", str(store), "--limit", "3"]) == 0
    assert match in capsys.readouterr().out.splitlines()[1]  # the planted upset first
    with pytest.raises(ValueError, match="did you mean 'night-upset'"):
        referee.show(str(store), match="nite-upset")


def test_a_browser_goes_from_the_board_to_an_agent_to_a_match(planted, tmp_path):
    from selenium.webdriver.common.by import By

    from tests.test_browser import browser

    report, store, skill, match = planted
    weakest = min(skill, key=skill.get)
    driver = browser(tmp_path / "profile")
    try:
        driver.get((report / "index.html").resolve().as_uri())
        driver.find_element(By.CSS_SELECTOR, "details.games summary").click()
        driver.find_element(By.LINK_TEXT, weakest).click()
        assert driver.title.startswith(weakest)
        driver.find_element(By.LINK_TEXT, match).click()
        assert driver.title == f"Match {match}"
        assert HTML_MESSAGE in driver.find_element(By.TAG_NAME, "body").text  # shown as text, never run
        assert driver.execute_script("return document.querySelectorAll('td script, td b').length") == 0
        console = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
        assert console == []
        driver.find_element(By.LINK_TEXT, "Back to the report").click()
        assert driver.title == "referee report" or "report" in driver.title.lower()
    finally:
        driver.quit()


def test_surprise_is_the_information_of_each_result_under_the_boards_ratings():
    """Two agents 400 Elo points apart: P(stronger wins) = 1 / (1 + 10^-1) = 0.909; its loss carries -log2(0.0909)
    = 3.46 bits, its win 0.138; a tie half of each."""
    assert float(win_probability(1900.0, 1500.0)) == pytest.approx(1 / (1 + 10 ** -1))
    comparisons = pd.DataFrame({"a": ["s", "s", "s"], "b": ["w", "w", "w"], "outcome": [0.0, 1.0, 0.5],
                                "cluster": ["upset", "expected", "tie"]})
    found = match_surprise(comparisons, pd.Series({"s": 1900.0, "w": 1500.0})).set_index(["match", "agent"])
    p = 1 / (1 + 10 ** -1)
    assert found.loc[("upset", "w"), "surprise"] == pytest.approx(-math.log2(1 - p))
    assert found.loc[("expected", "s"), "surprise"] == pytest.approx(-math.log2(p))
    assert found.loc[("tie", "s"), "surprise"] == pytest.approx(-(math.log2(p) + math.log2(1 - p)) / 2)
    assert found.loc[("upset", "w"), "upset"] == "won against the odds"
    assert found.loc[("upset", "s"), "upset"] == "lost against the odds" and found.loc[("expected", "s"), "upset"] == ""


def test_a_tier_boundary_and_a_comparison_name_their_matches(planted):
    report, store, skill, match = planted
    tests = referee.leaderboard(str(store)).table("tier_tests")
    boundaries = tests[tests["new_tier"].astype(bool)]
    assert len(boundaries) and boundaries["evidence"].str.len().gt(0).all()
    comparisons = pd.DataFrame({"a": ["x", "x", "y"], "b": ["y", "y", "x"], "outcome": [1.0, 0.0, 0.0],
                                "cluster": ["m1", "m2", "m3"]})
    ratings = pd.Series({"x": 1700.0, "y": 1500.0})
    assert boundary_evidence(comparisons, ratings, ["x"], ["y"]) == ["m1", "m3"]  # x's wins; its loss says against
    weakest, strongest = min(skill, key=skill.get), max(skill, key=skill.get)
    found = referee.compare(str(store), weakest, strongest)
    met = found.table("head_to_head")
    top = met.loc[np.isclose(met["surprise"], met["surprise"].max()), "match"]  # every upset of the pair alike
    assert match in set(top) and f"{match} (won)" in found.lines[0].split("their matches, most surprising first: ")[1]
    assert np.isclose(met["p_a_beats_b"].iloc[0], float(win_probability(found.difference, 0.0)))


def test_a_matchs_record_counts_each_result_and_names_each_opponent_once():
    """A four-player match as its six comparisons, and a second match: each agent's won, lost and tied are counted
    from its own comparisons, its opponents named once each in name order; its record by opponent sums them over
    matches (hand-counted)."""
    from referee.run.ratings.games import pair_records, record_by_opponent

    comparisons = pd.DataFrame({
        "a": ["p", "p", "p", "q", "q", "r", "p"], "b": ["q", "r", "s", "r", "s", "s", "q"],
        "outcome": [1.0, 0.5, 0.0, 1.0, 1.0, 0.0, 0.0], "cluster": ["m1"] * 6 + ["m2"]})
    ratings = pd.Series({"p": 1500.0, "q": 1500.0, "r": 1500.0, "s": 1500.0})
    found = match_surprise(comparisons, ratings).set_index(["match", "agent"])
    assert found.loc[("m1", "p"), ["won", "lost", "tied"]].tolist() == [1, 1, 1]
    assert found.loc[("m1", "s"), ["won", "lost", "tied"]].tolist() == [2, 1, 0]
    assert found.loc[("m1", "q"), "opponents"] == "p, r, s" and found.loc[("m2", "q"), "opponents"] == "p"
    assert found.loc[("m2", "q"), ["won", "lost", "tied"]].tolist() == [1, 0, 0]
    record = record_by_opponent(pair_records(comparisons), "p").set_index("opponent")
    assert record.loc["q", ["won", "lost", "tied", "matches"]].tolist() == [1, 1, 0, 2]
    assert record.loc["r", ["won", "lost", "tied", "matches"]].tolist() == [0, 0, 1, 1]
    assert record.index.tolist() == ["q", "r", "s"]  # most matches first, then by name


def test_a_pairs_record_is_counted_from_both_sides_of_its_comparisons():
    """compare's head-to-head record (`pair_records`, read by `record_of` from either agent's side): wins,
    losses and ties of a against b whichever of them the comparison lists first, and the distinct matches they met
    in (hand-counted); a pair that never met has zeros."""
    from referee.run.ratings.games import pair_lookup, pair_records, record_of

    comparisons = pd.DataFrame({"a": ["x", "y", "x", "y", "x", "z"], "b": ["y", "x", "y", "x", "z", "y"],
                                "outcome": [1.0, 1.0, 0.5, 0.0, 1.0, 0.5], "cluster": ["m1", "m1", "m2", "m3", "m3", "m4"]})
    records = pair_lookup(pair_records(comparisons))
    assert record_of(records, "x", "y") == {"wins": 2, "losses": 1, "ties": 1, "met_in": 3}
    assert record_of(records, "y", "x") == {"wins": 1, "losses": 2, "ties": 1, "met_in": 3}
    assert record_of(records, "z", "y") == {"wins": 0, "losses": 0, "ties": 1, "met_in": 1}
    assert record_of(records, "w", "x") == {"wins": 0, "losses": 0, "ties": 0, "met_in": 0}
