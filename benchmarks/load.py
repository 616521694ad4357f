"""Other work on the machine, for benchmarks that measure referee beside it (a laptop, a CI runner).

`busy(processes=2)` starts that many processes that keep a core each busy (a pure-Python loop: no BLAS, no
I/O, so that they compete for cores only), for at most `seconds`, and stops them when the block ends.
`quiet_and_loaded(fn)` times `fn` on the quiet machine and again beside two busy processes and returns both
times and their ratio.
"""

from __future__ import annotations

import multiprocessing
import time
from contextlib import contextmanager
from typing import Callable, Iterator


def _spin(stop, seconds: float) -> None:
    end = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < end:
        for _ in range(10_000):
            pass


@contextmanager
def busy(processes: int = 2, seconds: float = 900.0) -> Iterator[None]:
    """Within the block, `processes` other processes keep cores busy (each stops by itself after `seconds`)."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    workers = [context.Process(target=_spin, args=(stop, seconds), daemon=True) for _ in range(processes)]
    for worker in workers:
        worker.start()
    time.sleep(0.5)  # let them reach their loops
    try:
        yield
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()


def timed(fn: Callable, *args, **kwargs) -> tuple[object, float]:
    """(fn's result, its wall time in seconds)."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def quiet_and_loaded(fn: Callable, *args, **kwargs) -> tuple[float, float]:
    """(seconds on the quiet machine, seconds beside two busy processes) of fn(*args, **kwargs)."""
    _, quiet = timed(fn, *args, **kwargs)
    with busy(2):
        _, loaded = timed(fn, *args, **kwargs)
    return quiet, loaded
