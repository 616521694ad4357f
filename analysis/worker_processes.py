"""Worker processes end with the command that started them.

A `referee` command that fans work out to a local process pool (the ingest's file readers, the executor's fits)
must not leave workers behind when it is stopped: `terminated_as_exit()` turns SIGTERM into an exit the command's
`finally` blocks see (its store's transaction rolled back), `stop_pool(pool)` ends a pool's workers at once
instead of waiting for their tasks, and `die_with_parent()`, each worker's first step, asks Linux to end the
worker when its parent ends (a forkserver's workers when the forkserver does, which itself ends with the
command), so that even a SIGKILL of the command leaves nothing running.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends


def die_with_parent(owner: int | None = None) -> None:
    """In a worker process: have the kernel send it SIGTERM when its parent ends (Linux's prctl
    PR_SET_PDEATHSIG), and, given the pid of the command that owns the pool (`owner`: a forkserver's workers
    are the forkserver's children, and hold it open), end the worker within OWNER_POLL seconds of that
    command's end, however it ended (a SIGKILL runs no cleanup)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if owner is not None:
        threading.Thread(target=_watch, args=(owner, _started(owner)), name="referee-owner-watch",
                         daemon=True).start()


OWNER_POLL = 1.0  # seconds between a worker's looks at the command that owns its pool


def _started(pid: int) -> float | None:
    """When process `pid` started (psutil's create_time), None when it is gone: a pid reused by a new process
    is not the owner."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _watch(owner: int, started: float | None) -> None:
    while True:
        time.sleep(OWNER_POLL)
        if started is None or _started(owner) != started:
            os._exit(128 + signal.SIGTERM)


def stop_pool(pool) -> None:
    """End a `concurrent.futures.ProcessPoolExecutor`'s workers now: queued tasks cancelled, running ones
    terminated (the command is ending: nothing will read their results)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=5)


class Terminated(SystemExit):
    """SIGTERM received: the command ends as an exit with code 128 + SIGTERM, running its cleanups."""


@contextlib.contextmanager
def terminated_as_exit() -> Iterator[None]:
    """While the block runs (in the main thread), SIGTERM raises `Terminated` in it instead of killing the
    process outright, so that pools are stopped and transactions rolled back on the way out; the previous
    handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _stop(signum, frame):
        raise Terminated(128 + signum)

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
