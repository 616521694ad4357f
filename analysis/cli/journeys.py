"""The manual's journeys run as written, and what they print shown beside them.

Every ```sh block of a journey page (docs/journeys/*.md, docs/getting-started.md) is a list of `referee` commands
a reader types from the repository's root; a ```shell block is a template that needs the reader's own data, a key
or a server, and is never run. `journey_blocks(page)` reads a page's runnable blocks; `run_blocks(blocks,
folder)` runs them in order in `folder` (a scratch copy of the repository's layout: `data/`'s shipped folders
linked, the default store `data/referee.duckdb` holding every bundled sample, as `ingest data/sample/` makes it),
each command in this process, and returns what each printed; `quick=True` runs the fits with few draws (the
tests). `write_outputs()` (`python -m referee.cli.journeys`) writes each block's output to
docs/journeys/printed/PAGE-K.txt, which the page includes under the block; tests/test_journeys.py runs every
block again and checks that what it prints still reads as the committed output does (numbers and times aside).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from referee.io.resources import SOURCE_DATA

ROOT = SOURCE_DATA.parent  # the repository: the pages are docs/, the shipped folders data/
PAGES = ("getting-started", "journeys/contest", "journeys/compact", "journeys/audit", "journeys/arena",
         "journeys/planning", "journeys/inspect", "journeys/new-runner", "journeys/sweeps")
BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
OUTPUTS = "journeys/printed"  # committed: what each block printed when it was last run here
SHOWN_LINES = 24  # lines of one command's output a page shows (the rest are in the files it writes)
QUICK = {"--draws": "100", "--tune": "100", "--chains": "2"}  # a fit in the tests: its options where it takes them
# sweeps and simulations the tests run smaller (the page shows the output of its own numbers)
QUICK_CAPS = {"--sims": 2, "--bootstrap": 20, "--judgments": 20000}


@dataclass
class Command:
    """One command line of a block: `argv` after the `referee` program, as the page writes it."""

    line: str
    argv: list[str]


def journey_blocks(page: str) -> list[list[Command]]:
    """The runnable blocks of `page` (a path under docs/ without .md), each a list of its `referee` commands, the
    comments and line continuations of the page read as a shell reads them."""
    text = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    blocks = []
    for block in BLOCK.findall(text):
        commands = []
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if not words:
                continue
            if not words[0].endswith("bin/referee"):
                raise ValueError(f"docs/{page}.md: a ```sh block runs `referee` only; make this a ```shell block "
                                 f"(a template): {line.strip()}")
            commands.append(Command(" ".join(words), words[1:]))
        blocks.append(commands)
    return blocks


def workspace(folder: Path) -> Path:
    """`folder` laid out as the repository's root is for a reader: data/'s shipped folders linked in (samples,
    formulas, catalogues, rubrics, formats), reports/ empty, and the default store holding every bundled sample."""
    from referee.cli import main

    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    (folder / "reports").mkdir(exist_ok=True)
    for shipped in (ROOT / "data").iterdir():
        if shipped.is_dir() and not shipped.name.startswith("_") and not (data / shipped.name).exists():
            (data / shipped.name).symlink_to(shipped, target_is_directory=True)
    store = data / "referee.duckdb"
    if not store.exists():
        with contextlib.chdir(folder), contextlib.redirect_stdout(io.StringIO()):
            code = main(["ingest", "data/sample/", "--store", str(store.relative_to(folder)), "-q"])
        if code not in (0, 1):
            raise RuntimeError(f"ingesting the bundled samples into {store} ended with exit {code}")
    return folder


def _quick(argv: list[str], parser) -> list[str]:
    """`argv` with few draws where its command (parsed by `parser`, the command line's) fits a model, and its
    sweeps capped (QUICK, QUICK_CAPS)."""
    from referee.cli.manual import _commands

    out = list(argv)
    for flag, cap in QUICK_CAPS.items():
        if flag in out and out.index(flag) + 1 < len(out):
            at = out.index(flag) + 1
            out[at] = str(min(int(out[at]), cap))
    sub = _commands(parser).get(argv[0])
    if sub is not None and _commands(sub) and len(out) > 1:  # a command with variants: `calibrate tag-effects`
        sub = _commands(sub).get(out[1])
    if sub is not None:
        out += [w for flag, value in QUICK.items() if flag in sub._option_string_actions and flag not in out
                for w in (flag, value)]
    return out


def run_blocks(blocks: list[list[Command]], folder: Path, quick: bool = False,
               say=None) -> list[list[tuple[Command, int, str]]]:
    """Run every command of `blocks` in order in `folder` (`workspace`), in this process: per block, (command,
    exit code, what it printed on standard output). `say(line)`, when given, hears each command as it starts and
    ends (its own progress display is held back with its standard error)."""
    from referee.cli import build_parser, main

    parser = build_parser() if quick else None
    done = []
    for block in blocks:
        ran = []
        for command in block:
            argv = _quick(command.argv, parser) if quick else command.argv
            if say:
                say(f"referee {' '.join(command.argv)} ...")
            started = time.perf_counter()
            out = io.StringIO()
            with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                try:
                    code = main(argv)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 2
            ran.append((command, code, out.getvalue()))
            if say:
                say(f"  exit {code} in {time.perf_counter() - started:.1f} s")
        done.append(ran)
    return done


def shown(ran: list[tuple[Command, int, str]]) -> str:
    """What a page shows under a block: each command as typed, then the first SHOWN_LINES lines it printed."""
    parts = []
    for command, code, printed in ran:
        lines = printed.rstrip("\n").splitlines()
        cut = lines[:SHOWN_LINES] + ([f"... ({len(lines) - SHOWN_LINES} more lines)"] if len(lines) > SHOWN_LINES else [])
        parts.append("\n".join([f"$ referee {' '.join(shlex.quote(w) for w in command.argv)}", *cut]))
    return "\n\n".join(parts) + "\n"


NUMBER = re.compile(r"[-+]?\d[\d,_]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def shape(text: str) -> list[str]:
    """`text` as compared across runs and machines: each line's words with every number read as '#' and runs of
    spaces as one (a table's column widths follow its numbers), blank lines left out."""
    return [" ".join(NUMBER.sub("#", line).split()) for line in text.splitlines() if line.strip()]


def output_file(page: str, k: int) -> Path:
    return ROOT / "docs" / OUTPUTS / f"{page.replace('/', '-')}-{k + 1}.txt"


def write_outputs(pages: tuple[str, ...] = PAGES, quick: bool = True) -> list[Path]:
    """Run every page's blocks in a scratch workspace and write what each block printed to its output file
    (`quick=False`: as the page writes them, every fit at its defaults)."""
    import tempfile

    written = []
    with tempfile.TemporaryDirectory(prefix="referee-journeys-") as tmp:
        for page in pages:
            folder = workspace(Path(tmp) / page.replace("/", "-"))
            for k, ran in enumerate(run_blocks(journey_blocks(page), folder, quick=quick,
                                               say=lambda line: print(line, file=sys.stderr, flush=True))):
                path = output_file(page, k)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(shown(ran), encoding="utf-8")
                written.append(path)
                print(f"{path.relative_to(ROOT)}: {len(ran)} command(s), exits {[c for _, c, _ in ran]}",
                      file=sys.stderr, flush=True)
    return written


if __name__ == "__main__":  # the pages' own commands at the models' defaults: what a reader's run prints
    write_outputs(tuple(sys.argv[1:]) or PAGES, quick=False)
