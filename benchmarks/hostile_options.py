"""Every documented option given absurd values, each command run for real (issue 104).

    python -m benchmarks.hostile_options [--timeout S] [--only COMMAND ...]

Walks the command line's own parser (the one the generated CLI reference is written from): for every option of
every command that takes a value, a few absurd values by the option's type (numbers: nan, -inf, -1, 0, 1e400,
0x10, empty; paths: empty, a folder, a FIFO, /dev/zero; text: empty, '../x', 'x=y=z', 300 characters; choices:
empty, '../x'). A value the parser or the job's checks refuse is counted; every value accepted is run as its own
`referee` process on a two-match store and must end with exit 0, 1 or 2, no traceback, within the timeout.
Prints one line per case that breaks that (BAD, TIMEOUT) and per case slower than 20 s (SLOW), then the counts.
Exit 1 when any case is BAD or TIMEOUT. `tests/test_hostile_round_six.py` runs the parse-and-check half of this
walk on every option and the runs of the cheap commands; this runs all of them (about 15 minutes).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

NUMBERS = ("nan", "-inf", "-1", "0", "1e400", "0x10", "")
PATHS = ("", "{root}", "{root}/fifo", "/dev/zero")
TEXTS = ("", "../x", "x=y=z", "a" * 300)
CHOICES = ("", "../x")


def absurd_values(action: argparse.Action, root: Path) -> list[str]:
    """The absurd values given to one option, by what it takes."""
    kind = getattr(action.type, "__name__", "")
    if action.choices:
        return list(CHOICES)
    if kind in ("Path", "path", "folder", "toml_path"):
        return [v.format(root=root) for v in PATHS]
    if action.type is None:
        return list(TEXTS)
    return list(NUMBERS)


def cases(root: Path, only: list[str] | None = None) -> list[tuple[list[str], str]]:
    """(argv, what the parser and the job's checks said: 'accepted', 'refused' or the unexpected) of every option
    of every command (the positionals given ordinary values), checked in this process."""
    from referee.cli import _check, build_parser
    from referee.cli.manual import _commands

    parser = build_parser()
    out = []
    for name, sub in _commands(parser).items():
        if only and name not in only:
            continue
        given = [sorted(a.choices)[0] if a.choices else str(root / "t.csv") for a in sub._actions
                 if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]
        for action in sub._actions:
            if not action.option_strings or action.nargs == 0 or action.dest == "help":
                continue
            flag = action.option_strings[-1]
            for value in absurd_values(action, root):
                argv = [name, *given, flag, value]
                for other, default in (("--store", str(root / "s.duckdb")), ("--out", str(root / "out"))):
                    if other in sub._option_string_actions and flag != other:
                        argv += [other, default]
                said = io.StringIO()
                try:
                    with contextlib.redirect_stderr(said):
                        args = parser.parse_args(argv)
                        args.argv = argv
                        _check(args)
                    out.append((argv, "accepted"))
                except SystemExit as exc:
                    named = any(f in said.getvalue() for f in action.option_strings)
                    out.append((argv, "refused" if exc.code == 2 and named else f"exit {exc.code} without the "
                                f"option named: {said.getvalue()[-200:]}"))
                except ValueError:
                    out.append((argv, "refused"))  # the job's own check, said in words (exit 1)
                except Exception as exc:  # noqa: BLE001 - what a check must never do
                    out.append((argv, f"{type(exc).__name__}: {exc}"[:300]))
    return out


def run(argv: list[str], root: Path, timeout: float) -> tuple[str, int | None, float, str]:
    """(verdict, exit code, seconds, last line of stderr) of one accepted case run as its own process."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "referee.cli", *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=root, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", None, time.perf_counter() - start, ""
    seconds = time.perf_counter() - start
    last = (done.stderr.strip().splitlines() or [""])[-1]
    bad = done.returncode not in (0, 1, 2) or "Traceback" in done.stderr
    return ("BAD" if bad else "SLOW" if seconds > 20 else "ok"), done.returncode, seconds, last


def workspace(root: Path) -> None:
    """A two-match table, its store, and a FIFO, under `root`."""
    from referee.cli import main

    pd.DataFrame({"match": ["m1", "m1", "m2", "m2"], "agent": ["a", "b", "a", "b"],
                  "score": [1, 0, 0, 1]}).to_csv(root / "t.csv", index=False)
    assert main(["ingest", str(root / "t.csv"), "--store", str(root / "s.duckdb"), "-q"]) == 0
    os.mkfifo(root / "fifo")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=90, help="seconds one case may run (default 90)")
    parser.add_argument("--only", nargs="*", help="these commands only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hostile-options-") as folder:
        root = Path(folder)
        workspace(root)
        found = cases(root, args.only)
        accepted = [argv for argv, said in found if said == "accepted"]
        odd = [(argv, said) for argv, said in found if said not in ("accepted", "refused")]
        print(f"{len(found)} cases: {len(found) - len(accepted) - len(odd)} refused before any work, "
              f"{len(accepted)} accepted (run below), {len(odd)} odd at the check", flush=True)
        for argv, said in odd:
            print(f"BAD   check {' '.join(a[:40] for a in argv[:6])} -> {said}", flush=True)
        counts = {"ok": 0, "SLOW": 0, "BAD": 0, "TIMEOUT": 0}
        for k, case in enumerate(accepted, start=1):
            if k % 50 == 0:
                print(f"... {k} of {len(accepted)} run ({counts})", flush=True)
            verdict, code, seconds, last = run(case, root, args.timeout)
            counts[verdict] += 1
            if verdict != "ok":
                print(f"{verdict:7s} exit {code} {seconds:5.1f} s  {' '.join(a[:40] for a in case[:6])} -> "
                      f"{last[:200]}", flush=True)
        print(f"runs: {counts}; odd checks: {len(odd)}")
        return 1 if counts["BAD"] or counts["TIMEOUT"] or odd else 0


if __name__ == "__main__":
    sys.exit(main())
