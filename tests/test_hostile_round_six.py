"""Hostile input, round six (issue 104): closed and full standard streams. With standard error closed every command
exited 1 saying nothing (`sys.stderr.isatty()` on None); with standard output closed or full, a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from referee.cli import main

REFEREE = [sys.executable, "-m", "referee.cli"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("streams")
    table = pd.DataFrame({"match": ["m1", "m1", "m2", "m2"], "agent": ["a", "b", "a", "b"], "score": [1, 0, 0, 1]})
    table.to_csv(tmp / "t.csv", index=False)
    assert main(["ingest", str(tmp / "t.csv"), "--store", str(tmp / "s.duckdb"), "-q"]) == 0
    return tmp / "s.duckdb"


def _run(command: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`command` (a shell line; REFEREE expands to the referee command) through a shell, so that its redirections
    close or fill the streams as a user's would."""
    line = command.replace("REFEREE", " ".join(f"'{part}'" for part in REFEREE))
    return subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_a_closed_standard_error_runs_the_command(store, tmp_path):
    found = _run(f"REFEREE info --store {store} 2>&-", tmp_path)
    assert found.returncode == 0 and "matches" in found.stdout


def test_a_closed_standard_output_runs_the_command(store, tmp_path):
    found = _run(f"REFEREE ratings --store {store} --out {tmp_path / 'r'} >&-", tmp_path)
    assert found.returncode == 0 and "Traceback" not in found.stderr
    assert (tmp_path / "r" / "ratings.csv").is_file()


def test_a_full_standard_output_exits_1_saying_so(store, tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this machine")
    found = _run(f"REFEREE info --store {store} > /dev/full", tmp_path)
    assert found.returncode == 1 and "Traceback" not in found.stderr
    assert "cannot write the output (No space left on device)" in found.stderr


def test_an_out_that_cannot_be_what_the_command_writes_is_refused_in_words(tmp_path, capsys):
    """`simulate --out <a file>` ended in a NotADirectoryError and `map --out <a folder>` in an IsADirectoryError
    (exit 3); each is refused, naming the --out, before any work."""
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder").mkdir()
    assert main(["simulate", "ranked", "--out", str(tmp_path / "a-file"), "-q"]) == 1
    assert "--out" in capsys.readouterr().err
    assert main(["map", str(tmp_path), "--out", str(tmp_path / "a-folder"), "--force"]) == 1
    assert "a folder; name the mapping file" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["contest", "--top", str(10**30)], ["ratings", "--jobs", "100000"],
                                  ["judge-agreement", "--seed", str(2**40)], ["calibrate", "pass-fail", "--size",
                                                                              str(10**30)]])
def test_an_absurd_whole_number_is_refused_in_words_naming_the_option(argv, store, capsys):
    """Issue 104: whole-number options had no upper bound (10**30 accepted; `--jobs` any count): every whole number
    is at most 2**32 - 1, local workers at most 256, refused before any work with the option named (exit 2)."""
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--store", str(store)])
    assert exit_.value.code == 2
    flag = argv[-2]
    assert f"argument {flag}: must be " in capsys.readouterr().err  # its own bound, or the global one
