"""Worker processes end with the command (issue 104): a command stopped by SIGTERM while its local pool runs
leaves no process of it behind, and exits 128 + 15; a worker whose parent is killed outright ends too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

SWEEP = textwrap.dedent("""
    import time
    from referee.run.executor import Executor, Task, run_tasks
    from referee.worker_processes import terminated_as_exit

    with terminated_as_exit():
        run_tasks([Task(f"sleep-{i}", time.sleep, (120,)) for i in range(4)], Executor(jobs=2, progress=False))
""")


def _started(main: psutil.Process, workers: int, timeout: float = 60) -> list[psutil.Process]:
    """The process tree under `main` once it holds `workers` processes or more (a forkserver and its workers)."""
    end = time.time() + timeout
    while time.time() < end:
        kids = main.children(recursive=True)
        if len(kids) >= workers:
            return kids
        time.sleep(0.2)
    pytest.fail(f"no {workers} worker processes under {main.pid} after {timeout} s")


def _left(processes: list[psutil.Process], wait: float = 10) -> list[psutil.Process]:
    end = time.time() + wait
    while time.time() < end:
        alive = [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return []
        time.sleep(0.2)
    return alive


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_sweep_leaves_no_worker_running(sig):
    run = subprocess.Popen([sys.executable, "-c", SWEEP], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        kids = _started(psutil.Process(run.pid), 3)  # the forkserver and two workers sleeping
        time.sleep(1)
        os.kill(run.pid, sig)
        run.wait(timeout=30)
        assert run.returncode == (128 + signal.SIGTERM if sig == signal.SIGTERM else -signal.SIGKILL)
        assert _left(kids) == [], [p.cmdline()[:4] for p in kids if p.is_running()]
        if sig == signal.SIGTERM:
            assert b"Traceback" not in run.stderr.read()
    finally:
        run.kill()
        run.wait()


def test_a_command_leaves_no_temporary_file_behind(tmp_path, monkeypatch):
    """Issue 104: every fit left PyTensor's generated numba sources in $TMPDIR (26 files a fit, written with
    delete=False, more in each worker); a command runs with its own scratch folder as the temporary directory,
    for itself and the processes it starts, and removes it with whatever was left there."""
    import tempfile

    import referee.cli as cli

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    seen = {}

    def command(argv):  # what a fit does: a file left with delete=False, here and in a process it starts
        with tempfile.NamedTemporaryFile(delete=False) as fh:
            fh.write(b"def numba_funcified(): pass")
        seen["file"], seen["folder"] = fh.name, tempfile.gettempdir()
        subprocess.run([sys.executable, "-c", "import tempfile; tempfile.NamedTemporaryFile(delete=False)"],
                       check=True)
        return 0

    monkeypatch.setattr(cli, "_main", command)
    assert cli.main([]) == 0
    assert seen["folder"] != str(tmp_path) and os.path.dirname(seen["folder"]) == str(tmp_path)
    assert not os.path.exists(seen["file"]) and list(tmp_path.iterdir()) == []
    assert tempfile.gettempdir() == str(tmp_path)
