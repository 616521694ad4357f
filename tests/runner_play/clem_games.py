"""Play real clembench episodes offline with clemcore's own command line and write its records tree (run by the
clem runner's own Python, .cache/runners/clem; see tests/test_runner_clem.py).

    python clem_games.py OUT_DIR

Copies the test game (clem_guess/, a two-player guessing game whose programmatic players succeed, lose or
abort as each instance says) into a games folder, then runs `clem run` for two model pairs, `clem score` and
`clem eval` (the `clem` command's own entry point, called in this one process: importing clemcore takes
about 15 s, once instead of four times): OUT_DIR holds the records tree (<model pair>/guessnumber/<experiment>/instance_N/ with
interactions.json and scores.json) and clembench's own per-episode table raw.csv.
"""

import os
import shutil
import sys
from pathlib import Path

from clemcore import cli


def clem(*args: str, cwd: Path) -> None:
    """`clem ARGS` run in folder `cwd` (the console script's own `main`)."""
    here, argv = os.getcwd(), sys.argv
    os.chdir(cwd)
    sys.argv = ["clem", *args]
    try:
        cli.main()
    finally:
        os.chdir(here)
        sys.argv = argv


def main(out: Path) -> None:
    games = out.parent / "clem-games"
    shutil.copytree(Path(__file__).parent / "clem_guess", games / "guessnumber", dirs_exist_ok=True)
    for pair in (["mock", "programmatic"], ["programmatic", "mock"]):
        clem("run", "-g", "guessnumber", "-m", *pair, "-r", str(out), cwd=games)
    clem("score", "-g", "guessnumber", "-r", str(out), cwd=games)
    clem("eval", "-r", str(out), cwd=games)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
