"""The manual's journeys run as written (issue 105): every `referee` command of every ```sh block of the journey
pages and of Getting started, in order, from a folder laid out as the repository is (the default store holding
every bundled sample), with few draws where a fit is named; each ends with exit 0, and what each block prints
reads as the output the page shows under it (docs/journeys/printed/, written by `python -m referee.cli.journeys`
from the page's own commands at the defaults): the same lines and words, numbers and the fits' diagnostic notes
aside (few draws move both)."""

from __future__ import annotations

import pytest

from referee.cli.journeys import PAGES, journey_blocks, output_file, run_blocks, shape, shown, workspace


def _compared(text: str) -> list[tuple[str, list[str]]]:
    """What of a block's output must read alike across runs with other draws: per command as typed, the first word
    of each line it printed (a table's row labels and header, each kind of sentence), in order of the words, and
    the files it says it wrote; its diagnostics (notes, warnings), numbers, times and a fit's verdict words (which
    follow the number of draws) left out."""
    out, command, words = [], None, []
    for line in shape(text) + ["$ end"]:
        if line.startswith("$ "):
            if command is not None:
                out.append((command, sorted(words)))
            command, words = line, []
        elif not line.startswith(("note:", "warning:", "... (#")):
            words.append(line if line.startswith("wrote ") else line.split()[0])
    return out


# Getting started's tour and the contest journey run `paper concordia` (and the tour `report`), which fit every model
# of the paper (140-160 s of compiling on an empty cache, whichever of the two comes first): make test-all runs
# them, as it runs the paper's and the report's own fits; make test runs the other seven pages
HEAVY_PAGES = {"getting-started", "journeys/contest"}


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.heavy) if p in HEAVY_PAGES else p for p in PAGES])
def test_a_journey_runs_as_written_and_prints_what_its_page_shows(page, tmp_path):
    blocks = journey_blocks(page)
    assert blocks, f"docs/{page}.md has no runnable block"
    folder = workspace(tmp_path / "root")
    for k, ran in enumerate(run_blocks(blocks, folder, quick=True)):
        failed = [(command.line, code) for command, code, _ in ran if code != 0]
        assert not failed, failed
        committed = output_file(page, k)
        assert committed.exists(), f"{committed} is missing: run `python -m referee.cli.journeys {page}`"
        want, got = _compared(committed.read_text(encoding="utf-8")), _compared(shown(ran))
        assert [c for c, _ in got] == [c for c, _ in want], (page, k)  # the page's commands, as it writes them
        assert got == want, (page, k, [(g, w) for g, w in zip(got, want) if g != w][:2])


def test_every_block_is_a_command_or_a_template():
    """A ```sh block holds `referee` commands only (a line that needs your own logs, a key or a server goes in a
    ```shell block, a template the tests do not run), and every runnable block shows what it printed."""
    import re

    from referee.cli.journeys import ROOT

    for page in PAGES:
        text = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
        for k, _ in enumerate(journey_blocks(page)):
            assert f"/{output_file(page, k).relative_to(ROOT / 'docs')}" in text, (page, k)
        assert len(re.findall(r"```sh\n", text)) == len(journey_blocks(page))
