"""The first hour (issue 81): a command shows its progress where a person is looking (a bar on a terminal, a plain
line per stage in a log, nothing with --quiet), loads only what its job needs, and its help states the defaults
that run. Each check runs the real command in a process of its own, as a person would: under a pseudo-terminal
for the terminal's case, with its output piped for a log's."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
REFEREE = [sys.executable, "-m", "referee.cli"]


def _env() -> dict:
    return {**os.environ, "COLUMNS": "120"}


def on_a_terminal(argv: list[str], cwd: Path, timeout: float = 300) -> tuple[int, str, str]:
    """(exit code, stdout, what reached stderr) of `argv` run with its stderr on a pseudo-terminal (so that
    `sys.stderr.isatty()` is true in it, as in a person's terminal) and its stdout piped."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal of 40 rows, 120 columns
    proc = subprocess.Popen(argv, cwd=cwd, env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            proc.kill()
            pytest.fail(f"{argv} wrote nothing for {timeout} s")
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal: it has ended
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    code = proc.wait()
    os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


def piped(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """`argv` with stdout and stderr piped (not a terminal: CI, `make demo > log`)."""
    return subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def many_files(tmp_path_factory) -> Path:
    """300 small log files of a runner referee does not know, and the mapping that reads them."""
    from referee.simulators.tavern import simulate_tavern, write_tavern

    out = tmp_path_factory.mktemp("tavern")
    write_tavern(simulate_tavern(n_agents=12, n_matches=300, seed=3), out)
    return out


def test_ingest_shows_files_and_records_on_a_terminal_and_nothing_with_quiet(many_files, tmp_path):
    argv = REFEREE + ["ingest", str(many_files / "logs"), "--runner", str(many_files / "tavern.toml"), "--store"]
    code, out, err = on_a_terminal(argv + [str(tmp_path / "a.duckdb")], tmp_path)
    assert code == 0, err
    assert re.search(r"ingest: +\d+%.*/300 \[", err)  # tqdm's bar over the 300 files
    assert "records read" in err and "set aside" in err  # what the files came to so far
    code, out, err = on_a_terminal(argv + [str(tmp_path / "b.duckdb"), "--quiet"], tmp_path)
    assert code == 0 and err == "", err
    assert "total: read" in out  # the summary still prints: --quiet silences the progress only


@pytest.mark.bayes
def test_a_fit_shows_its_density_loading_and_the_samplers_draws_on_a_terminal_and_nothing_with_quiet(tmp_path):
    from referee.io.store import Store

    store = tmp_path / "inspect.duckdb"
    with Store(store) as s:
        s.ingest([REPO / "data" / "sample" / "inspect"])
    # the default crossed model on the bundled sample, through the pass/fail density (`outcome_density`): its kernels
    # compiled once in a test run, then loaded from numba's cache by every other process
    argv = REFEREE + ["fit", "pass-fail", "--store", str(store), "--draws", "100", "--tune", "100", "--chains", "2",
                      "--no-figures", "--sampler", "nutpie"]
    code, out, err = on_a_terminal(argv + ["--out", str(tmp_path / "a")], tmp_path)
    assert code == 0, err
    assert "the model's hand-written density" in err  # pass/fail: its density's kernels, not PyTensor's compile
    assert "Divergences" in err and "Draws" in err  # nutpie's own terminal display: chains, draws, divergences


def test_a_fit_draws_its_display_only_where_the_mode_asks(monkeypatch):
    """--quiet and --json set the mode 'off' (the ingest test above runs that through a terminal), and the samplers
    draw their own display only in 'bar' and 'notebook'; 'lines' polls nutpie and writes plain lines instead."""
    from referee.models import progress
    from referee.models.fit import progress_enabled

    for mode, drawn in (("off", False), ("lines", False), ("bar", True), ("notebook", True)):
        with progress.showing(mode):
            assert progress_enabled() is drawn, mode


HEAVY = ("matplotlib", "pymc", "pytensor", "arviz", "scipy.stats", "sklearn", "statsmodels", "xgboost")


def _loaded(argv: list[str], cwd: Path) -> list[str]:
    """The heavy libraries (HEAVY) loaded by the time `referee ARGV` returns, run in a fresh process."""
    code = (f"import sys; from referee.cli import main; code = main({argv!r}); "
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules)); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own list literal


def test_a_leaderboard_without_figures_loads_no_plotting_and_no_sampler(tmp_path):
    """`referee leaderboard --no-figures` on a 40-agent board: its table and notes without matplotlib, PyMC,
    PyTensor, ArviZ or scipy.stats; with figures, matplotlib is loaded (so the check can fail)."""
    from referee.io.store import Store
    from referee.simulators.arena import simulate_arena, write_arena

    write_arena(simulate_arena(n_agents=40, n_judgments=4000, seed=2), tmp_path / "arena")
    with Store(tmp_path / "s.duckdb") as s:
        s.ingest([tmp_path / "arena" / "logs"])
    argv = ["leaderboard", "--store", str(tmp_path / "s.duckdb"), "--quiet"]
    assert _loaded(argv + ["--out", str(tmp_path / "a"), "--no-figures"], tmp_path) == []
    assert (tmp_path / "a" / "leaderboard.csv").exists()
    assert "matplotlib" in _loaded(argv + ["--out", str(tmp_path / "b")], tmp_path)
    assert _loaded(["info", "--store", str(tmp_path / "s.duckdb")], tmp_path) == []
    assert _loaded(["formats"], tmp_path) == []


def test_progress_modes_follow_the_command_line_and_a_notebook_argument(monkeypatch):
    from referee.models import progress

    assert progress.chosen(quiet=True, stderr_is_terminal=True) == "off"
    assert progress.chosen(quiet=False, stderr_is_terminal=True) == "bar"
    assert progress.chosen(quiet=False, stderr_is_terminal=False) == "lines"
    monkeypatch.delenv(progress.ENV, raising=False)
    assert progress.mode() == "off"  # a library call is quiet unless asked
    with progress.showing(progress.from_argument(True)):
        assert progress.mode() == "notebook" and os.environ[progress.ENV] == "notebook"  # inherited by workers
    assert progress.mode() == "off" and progress.ENV not in os.environ
    with pytest.raises(ValueError):
        progress.from_argument("loud")


def test_a_long_loop_in_a_log_says_where_it_is(capsys, monkeypatch):
    """'lines': a line at most every `every` seconds with the count, the rate and the status, and one at the end."""
    from referee.models import progress

    ticks = iter(range(0, 1000, 3))  # each item takes 3 s by this clock
    monkeypatch.setattr(progress.time, "perf_counter", lambda: float(next(ticks)))
    seen = list(progress.track(range(5), what="bootstrap", unit="replicate", every=5, status=lambda: "ok so far",
                               show="lines"))
    assert seen == list(range(5))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "bootstrap: 2 of 5 replicates, 6.0 s, 0.3 replicates/s; ok so far"
    assert lines[-1].startswith("bootstrap: 5 replicates in") and lines[-1].endswith("; ok so far")


def test_stages_say_each_stage_with_its_time_and_nothing_when_off(capsys):
    import io

    from referee.models import progress

    for mode, expected in (("lines", 3), ("off", 0)):
        log = io.StringIO()
        with progress.showing(mode):
            stages = progress.Stages("referee demo", 2, log)
            stages.start("2 stages")
            with stages.stage("ingest") as stage:
                stage.wrote("5 records")
            with pytest.raises(KeyError), stages.stage("report"):
                raise KeyError("x")
        lines = log.getvalue().splitlines()
        assert len(lines) == expected
        if expected:
            assert lines[0] == "referee demo: 2 stages"
            assert re.fullmatch(r"referee demo \[1/2\] ingest: \d\.\d s \(5 records\); \d\.\d s in all", lines[1])
            assert re.fullmatch(r"referee demo \[2/2\] report: failed after \d\.\d s; \d\.\d s in all", lines[2])
    assert capsys.readouterr().err == ""


def test_a_count_of_tasks_in_a_log_says_where_it_is(capsys, monkeypatch):
    """The sweeps' counter (tasks finishing in other processes): a line at most every `every` seconds, one at the
    end, nothing for one task or with 'off'."""
    from referee.models import progress

    ticks = iter(range(0, 1000, 4))
    monkeypatch.setattr(progress.time, "perf_counter", lambda: float(next(ticks)))
    with progress.counter(6, "calibration", "task", show="lines", every=10) as count:
        for _ in range(6):
            count.update()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "calibration: 3 of 6 tasks, 16.0 s" and lines[-1].startswith("calibration: 6 tasks in")
    for show, total in (("off", 6), ("lines", 1)):
        with progress.counter(total, "x", show=show, every=0) as count:
            count.update()
    assert capsys.readouterr().err == ""


def test_a_background_samplers_count_is_of_steps_made_not_of_padding():
    """nutpie runs as many chains at once as there are cores and pads the chains not yet started to the longest
    one's length in its trace so far: 4 chains of which 2 have made 100 tuning steps and 30 draws are 260 steps,
    not 4 x 130 (the count read 12,000 of 12,000 halfway through a fit on 2 cores)."""
    import arviz as az
    import numpy as np

    from referee.models.compiled import _drawn

    def stats(made: int, length: int) -> dict:
        step = np.full((4, length), np.nan)
        step[:2, :made] = 0.3
        diverging = np.zeros((4, length), bool)
        diverging[0, :2] = True
        return {"step_size": step, "diverging": diverging}

    trace = az.InferenceData(warmup_sample_stats=az.dict_to_dataset(stats(100, 100)),
                             sample_stats=az.dict_to_dataset(stats(30, 30)))

    class Sampler:
        def inspect(self):
            return trace

    assert _drawn(Sampler()) == "260 (2 divergent)"


def test_a_progress_lines_look_at_a_tuning_trace_lets_no_warning_through():
    """A progress line counts the steps of nutpie's trace so far (`sampler.inspect()`); during tuning the trace has
    no draws and ArviZ warns 'More chains (4) than draws (0)', which reached the demo's log 24 times."""
    import warnings

    import arviz as az
    import numpy as np

    from referee.models.compiled import _drawn

    class Tuning:
        def inspect(self):
            warnings.warn("More chains (4) than draws (0). Passed array should have shape (chains, draws, *shape)",
                          UserWarning)
            return az.InferenceData(warmup_sample_stats=az.dict_to_dataset({"step_size": np.ones((4, 3))}))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _drawn(Tuning()) == "12"
    assert not caught
