"""The report as a person sees it: index.html opened from disk in headless Chromium (Debian's chromium and
chromium-driver, which `make test` installs when missing), with a screenshot; the page loads without console
errors and every figure is shown."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PIL import Image

from referee.reporting import SAMPLE, build_report
from referee.io.store import Store

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
# the flags the machine's notes give for a closed network: no background connections, no sandbox as root
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,1600")


def browser(profile):
    """A headless Chromium driver (selenium) with the closed-network flags and the browser's console logged; the
    caller quits it."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.fail("headless Chromium is needed: apt-get install chromium chromium-driver (make test does this "
                    "on Debian when run as root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + (f"--user-data-dir={profile}",):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def open_in_browser(page, profile, screenshot) -> dict:
    """Open `page` (a file) in headless Chromium; returns the document's readyState, the console messages
    (level, message), every image's (complete, natural width, shown width) and writes a screenshot."""
    driver = browser(profile)
    try:
        driver.get(page.resolve().as_uri())
        state = driver.execute_script("return document.readyState")
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().width,"
            " i.offsetParent !== null])")
        console = [(entry["level"], entry["message"]) for entry in driver.get_log("browser")]
        driver.save_screenshot(str(screenshot))
    finally:
        driver.quit()
    return {"state": state, "console": console, "images": images}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report with figures of every kind that needs no sampling: scores and ratings (Concordia sample),
    prediction and socio-cognitive figures (COMPACT sample), an audit (Age of Agents EVAL 01)."""
    out = tmp_path_factory.mktemp("report")
    with Store(out / "store.duckdb") as store:
        store.ingest([SAMPLE / "concordia" / "logs"], catalogue=SAMPLE / "concordia" / "catalogue.toml")
        store.ingest([SAMPLE / "compact" / "logs"])
        store.ingest([SAMPLE / "aoa_eval01" / "season.json"])
        return build_report(store, out, fit_models=False)


def test_the_report_opens_without_errors_and_shows_every_figure(report, tmp_path):
    seen = open_in_browser(report, tmp_path / "profile", tmp_path / "screenshot.png")
    assert seen["state"] == "complete"
    assert [c for c in seen["console"] if c[0] in ("SEVERE", "WARNING")] == []
    figures = sorted((report.parent / "figures").glob("*.png"))
    assert len(figures) >= 10 and len(seen["images"]) == len(figures)
    for complete, natural_width, shown_width, displayed in seen["images"]:
        assert complete and natural_width > 0 and displayed and shown_width > 200
    shot = np.asarray(Image.open(tmp_path / "screenshot.png").convert("L"), float)
    assert shot.shape[1] >= 1000 and shot.std() > 10  # a rendered page, not a blank one


def test_the_browser_check_sees_a_broken_page(tmp_path):
    """The check can fail: a missing figure and a script error are both seen."""
    page = tmp_path / "broken.html"
    page.write_text('<!doctype html><html><body><img src="figures/missing.png">'
                    '<script>undefinedFunction()</script></body></html>')
    seen = open_in_browser(page, tmp_path / "profile", tmp_path / "screenshot.png")
    assert any(level == "SEVERE" and "undefinedFunction" in message for level, message in seen["console"])
    [(complete, natural_width, _, _)] = seen["images"]
    assert natural_width == 0


LAYOUT = """
var wrap = document.querySelector('.table-wrap.leaderboard'), board = wrap && wrap.querySelector('table');
if (!board) return null;
var first = document.querySelector('table');
var wrapped = [];
document.querySelectorAll('.leaderboard td').forEach(function (td) {
  var text = td.textContent.trim();
  if (!/^[-+<>≥≤]?\\s?[0-9][0-9.,–\\s-]*$/.test(text)) return;  // a number, an interval or a rank set
  var range = document.createRange(); range.selectNodeContents(td);
  var tops = new Set(Array.from(range.getClientRects()).map(function (r) { return Math.round(r.top); }));
  if (tops.size > 1) wrapped.push(text);
});
return {first_is_board: first === board, top: board.getBoundingClientRect().top, height: window.innerHeight,
        overflow: board.scrollWidth - wrap.clientWidth, page: document.documentElement.scrollWidth - window.innerWidth,
        columns: board.tHead.rows[0].cells.length, wrapped: wrapped};
"""


def lay_out(page, profile, width: int, height: int) -> dict:
    """The leaderboard of `page` as Chromium lays it out in a `width` x `height` window (CSS pixels)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS[:-1] + (f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.set_window_size(width, height)
        driver.get(page.resolve().as_uri())
        return driver.execute_script(LAYOUT)
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def board_report(tmp_path_factory):
    """The report of a generated 80-agent board with seats, 10 of its agents rare (issue 67's bar)."""
    from helpers import duels
    from referee.cli import main

    out = tmp_path_factory.mktemp("board")
    rows, _ = duels(80, 6000, rare=10, seat=0.4, seed=12)
    rows["agent"] = rows["agent"].str.replace("ag", "a-model-with-a-long-name-", regex=False)
    rows.to_csv(out / "duels.csv", index=False)
    assert main(["ingest", str(out / "duels.csv"), "--store", str(out / "s.duckdb"), "--measure",
                 "seat=telemetry"]) == 0
    assert main(["report", "--store", str(out / "s.duckdb"), "--out", str(out / "report"), "--no-models"]) == 0
    return out / "report" / "index.html"


@pytest.mark.parametrize("which", ["demo", "80 agents"])
@pytest.mark.parametrize("width,height", [(1280, 800), (794, 1123)], ids=["screen", "A4"])
def test_the_board_is_on_the_first_screen_fits_and_no_number_wraps(which, width, height, report, board_report,
                                                                    tmp_path):
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.fail("headless Chromium is needed: apt-get install chromium chromium-driver")
    seen = lay_out(report if which == "demo" else board_report, tmp_path / "profile", width, height)
    assert seen is not None and seen["first_is_board"], seen
    assert seen["top"] < 0.6 * seen["height"], seen  # the board starts on the first screen
    assert seen["overflow"] <= 0 and seen["page"] <= 0, seen  # no horizontal scrolling, table or page
    assert seen["columns"] <= 12 and seen["wrapped"] == [], seen


def test_the_layout_check_sees_a_wrapped_number_and_an_overflow(tmp_path):
    """The check can fail: a board narrower than its numbers wraps them and overflows."""
    page = tmp_path / "narrow.html"
    cells = "".join(f"<td>{1000 + i} 2000</td>" for i in range(14))
    page.write_text('<!doctype html><html><body><div class="table-wrap leaderboard" style="width:200px;overflow:auto">'
                    f'<table><thead><tr>{"<th>x</th>" * 14}</tr></thead><tbody><tr>{cells}</tr></tbody></table>'
                    '</div></body></html>')
    seen = lay_out(page, tmp_path / "profile", 800, 600)
    assert seen["overflow"] > 0 and seen["columns"] == 14 and len(seen["wrapped"]) > 0
