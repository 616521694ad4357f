"""One way to run a sweep of independent tasks: here, in local processes, or on a Dask cluster.

referee's heavy work is embarrassingly parallel: bootstrap blocks, cross-validation folds, per-fold model
fits, simulate-fit cycles. A sweep is a list of `Task`s (a name, a module-level function, picklable
arguments, each with its own seed derived from the command's seed by `task_seeds`), and `run_tasks(tasks,
executor)` returns their results in task order, whoever ran them (`start_tasks(tasks, executor)` starts them and
returns at once, so that this process works on while they run; its `finish()` waits for them, and `Then` carries
what is made of their results along):

- `executor=None` or `Executor(jobs=1)`: in this process, one task after another;
- `Executor(jobs=N)`: N local worker processes;
- `Executor(scheduler="tcp://HOST:PORT")`: an existing `dask.distributed` cluster (or `"local:N"` for a
  `LocalCluster` of N worker processes started and stopped with the executor).

Large inputs travel as Parquet: `executor.share(name, frame)` writes the frame once to the executor's exchange
folder (which every worker must reach; a temporary folder by default, `exchange=` for a remote cluster) and
returns a `Shared` reference whose `load()` each task calls. A task that raises is retried once; one that
fails again is reported by name in a `SweepError` after the rest have finished, never dropped. Since every
task carries its own seed and its inputs, the same command gives bit-identical results on any executor.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import tempfile
import uuid
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
from referee.models import progress as shows
from referee.worker_processes import die_with_parent, stop_pool

RETRIES = 1  # a failed task runs once more before it is reported


class SweepError(RuntimeError):
    """Some tasks failed twice; `failures` maps each task's name to its error."""

    def __init__(self, failures: dict[str, str], total: int):
        self.failures = failures
        names = ", ".join(list(failures)[:10]) + (" ..." if len(failures) > 10 else "")
        first = next(iter(failures.values()))
        super().__init__(f"{len(failures)} of {total} task(s) failed after {RETRIES} retry: {names}; first error: {first}")


@dataclass(frozen=True)
class Task:
    """One unit of a sweep: `fn(*args, **kwargs)` under the name `name` (unique within the sweep). `fn` must be
    a module-level function and the arguments picklable (they travel to other processes)."""

    name: str
    fn: Callable
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def __call__(self):
        return self.fn(*self.args, **self.kwargs)


@dataclass(frozen=True)
class Shared:
    """A frame a sweep's tasks read: inline (in-process runs) or a Parquet file every worker can reach."""

    frame: pd.DataFrame | None = None
    path: str | None = None

    def load(self) -> pd.DataFrame:
        """The frame (read from Parquet when it travelled as a file)."""
        return self.frame if self.path is None else pd.read_parquet(self.path)


def task_seeds(seed: int, n: int) -> list[int]:
    """`n` independent seeds (non-negative 32-bit ints) for the tasks of a sweep run with command seed `seed`:
    `numpy.random.SeedSequence(seed).spawn(n)`, so task i's seed depends on (seed, i) only."""
    return [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(n)]


class Executor:
    """Where a sweep runs (module docstring). jobs : local worker processes (1: this process). scheduler : a
    Dask scheduler address 'tcp://HOST:PORT', or 'local:N' for a LocalCluster of N processes. exchange : the
    folder shared inputs are written to (default: a new temporary folder, removed by `close`)."""

    def __init__(self, jobs: int = 1, scheduler: str | None = None, exchange: str | Path | None = None,
                 progress: bool | None = None):
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.jobs, self.scheduler, self.progress = jobs, scheduler, progress
        self._own_exchange = exchange is None
        self.exchange = Path(exchange or tempfile.mkdtemp(prefix="referee-exchange-"))
        self.exchange.mkdir(parents=True, exist_ok=True)
        self._client = self._cluster = None

    @property
    def workers(self) -> int:
        """How many tasks can run at once."""
        if self.scheduler is None:
            return self.jobs
        return max(1, len(self.client().scheduler_info()["workers"]))

    def client(self):
        """The dask.distributed Client (connected, or a LocalCluster started, on first use)."""
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.scheduler.startswith("local:"):
                n = int(self.scheduler.split(":", 1)[1])
                self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=":0")
                self._client = Client(self._cluster)
            else:
                try:
                    self._client = Client(self.scheduler, timeout=f"{SCHEDULER_TIMEOUT}s")
                except (OSError, TimeoutError, MemoryError, ValueError) as exc:  # a listener that is not Dask's
                    why = ("what answered speaks another protocol: its reply read as a message of absurd length"
                           if isinstance(exc, MemoryError) else f"{type(exc).__name__}: {str(exc)[:200]}")
                    raise ValueError(f"--scheduler {self.scheduler}: no Dask scheduler answered there within "
                                     f"{SCHEDULER_TIMEOUT} s ({why}); is it a Dask scheduler's address (`dask "
                                     "scheduler` prints it)?") from None
        return self._client

    def share(self, name: str, frame: pd.DataFrame) -> Shared:
        """`frame` as the sweep's tasks will read it: written once as `exchange/{name}-{id}.parquet`."""
        path = self.exchange / f"{name}-{uuid.uuid4().hex[:12]}.parquet"
        frame.to_parquet(path, index=False)
        return Shared(path=str(path))

    def close(self) -> None:
        """Disconnect (stopping a LocalCluster this executor started) and remove its own exchange folder."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        if self._own_exchange:
            shutil.rmtree(self.exchange, ignore_errors=True)

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def share(executor: Executor | None, name: str, frame: pd.DataFrame) -> Shared:
    """`executor.share(name, frame)`, or the frame inline when the sweep runs here without an executor."""
    return Shared(frame=frame) if executor is None else executor.share(name, frame)


def _attempt(task: Task) -> tuple[bool, Any]:
    try:
        return True, task()
    except Exception as exc:  # noqa: BLE001 - a task's failure is retried, then reported by name
        return False, f"{type(exc).__name__}: {exc}"


def _inline(tasks: list[Task], bar) -> tuple[list, dict[str, str]]:
    results, failures = [None] * len(tasks), {}
    for i, task in enumerate(tasks):
        for _ in range(RETRIES + 1):
            ok, value = _attempt(task)
            if ok:
                break
        if ok:
            results[i] = value
        else:
            failures[task.name] = value
        bar.update()
    return results, failures


SCHEDULER_TIMEOUT = 10  # seconds a Dask scheduler has to answer the client's handshake
WORKER_NICENESS = 10  # a local worker's CPU priority below its caller's (`_share_cores`)


def _share_cores(threads: int, owner: int | None = None) -> None:
    """A local worker's start: its BLAS and OpenMP pools get `threads` threads (the cores shared among the
    workers), as Dask's nanny does for its workers; N workers each running a pool sized for every core
    oversubscribe the machine (a 200-fit bt-md bootstrap on 2 processes took 54 s this way, 12 s in one).
    Its priority is lowered by WORKER_NICENESS: a caller that works on while the tasks run (`start_tasks`, the
    report beside its layouts' folds) keeps its core, and one that only waits loses nothing (the cold demo, whose
    main process compiles one model after another while the folds sample: 153 s -> 144 s)."""
    from threadpoolctl import threadpool_limits

    die_with_parent(owner)
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)
    threadpool_limits(limits=threads)


def _submit_processes(tasks: list[Task], jobs: int):
    """A local pool of `jobs` worker processes with every task of `tasks` submitted: (pool, {future: index})."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if context.get_start_method() == "forkserver":  # workers fork from a server that imported the tasks' modules once
        context.set_forkserver_preload(sorted({task.fn.__module__ for task in tasks}))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_share_cores,
                               initargs=(threads, os.getpid()))
    return pool, {pool.submit(_attempt, task): i for i, task in enumerate(tasks)}


def _collect_processes(tasks: list[Task], pool, pending: dict, bar) -> tuple[list, dict[str, str]]:
    """Wait for the submitted tasks of a local pool (a failed one runs once more), then shut the pool down."""
    results, failures = [None] * len(tasks), {}
    tries = dict.fromkeys(range(len(tasks)), 0)
    try:
        _wait_for(tasks, pool, pending, bar, results, failures, tries)
    except BaseException:  # stopped (Ctrl-C, SIGTERM) or failing: no worker outlives the command
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return results, failures


def _wait_for(tasks: list[Task], pool, pending: dict, bar, results: list, failures: dict, tries: dict) -> None:
    """`_collect_processes`' loop: each finished task's result or failure recorded, a failed one resubmitted."""
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            i = pending.pop(future)
            try:
                ok, value = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died: retried like a failure
                ok, value = False, f"{type(exc).__name__}: {exc}"
            tries[i] += 1
            if not ok and tries[i] <= RETRIES:
                try:
                    pending[pool.submit(_attempt, tasks[i])] = i
                    continue
                except BrokenProcessPool:  # the pool lost a worker: nothing more runs in it; say so by name
                    value = f"{value}; the local worker pool broke, so the retry could not run"
            if ok:
                results[i] = value
            else:
                failures[tasks[i].name] = value
            bar.update()


def _submit_dask(tasks: list[Task], client) -> dict:
    """Every task of `tasks` submitted to a Dask cluster: {future: index}."""
    token = uuid.uuid4().hex[:8]
    return {client.submit(task.fn, *task.args, key=f"{task.name}-{token}", retries=RETRIES, pure=False,
                          **task.kwargs): i for i, task in enumerate(tasks)}


def _collect_dask(tasks: list[Task], futures: dict, bar) -> tuple[list, dict[str, str]]:
    from distributed import as_completed as completed

    results, failures = [None] * len(tasks), {}
    for future in completed(list(futures)):
        i = futures[future]
        if future.status == "finished":
            results[i] = future.result()
        else:
            failures[tasks[i].name] = f"{type(future.exception()).__name__}: {future.exception()}"
        bar.update()
    return results, failures


class Started:
    """A sweep under way (`start_tasks`): its tasks already running in local worker processes or on a Dask
    cluster (in-process sweeps run when their results are asked for), while this process does other work.
    `finish()` waits for them, showing how many have finished, and returns them in task order."""

    def __init__(self, tasks: list[Task], executor: Executor | None, what: str):
        names = [t.name for t in tasks]
        if len(set(names)) != len(names):
            raise ValueError("task names must be unique within a sweep")
        self.tasks, self.executor, self.what = tasks, executor, what
        self._pool = self._pending = None
        if not tasks or executor is None or (executor.scheduler is None and executor.jobs == 1):
            self.kind = "inline"
        elif executor.scheduler is None:
            self.kind = "processes"
            self._pool, self._pending = _submit_processes(tasks, min(executor.jobs, len(tasks)))
        else:
            self.kind = "dask"
            self._pending = _submit_dask(tasks, executor.client())

    def finish(self) -> list:
        """The tasks' results in task order, once all have finished. Raises SweepError naming every task that
        failed twice, after the others have finished."""
        executor = self.executor
        show = "off" if executor is not None and executor.progress is False else None  # None: the mode in force
        with shows.counter(len(self.tasks), self.what, "task", show=show) as bar:
            if self.kind == "inline":
                results, failures = _inline(self.tasks, bar)
            elif self.kind == "processes":
                results, failures = _collect_processes(self.tasks, self._pool, self._pending, bar)
            else:
                results, failures = _collect_dask(self.tasks, self._pending, bar)
        if failures:
            raise SweepError(failures, len(self.tasks))
        return results

    def cancel(self) -> None:
        """Stop what has not started and let the pool go (the sweep's results are not wanted)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        elif self.kind == "dask" and self._pending:
            for future in self._pending:
                future.cancel()


class Then:
    """Work under way (`source`: a `Started`, another `Then`, a `Done`) and what is made of its result: `finish()`
    is `make(source.finish())`, `cancel()` lets the work go unread; `close` (what the work held: an executor) runs
    once, after whichever comes first."""

    def __init__(self, source, make: Callable, close: Callable[[], None] | None = None):
        self.source, self.make, self._close = source, make, close

    def _closed(self) -> None:
        close, self._close = self._close, None
        if close is not None:
            close()

    def finish(self):
        """What `make` makes of the work's result, once the work is done."""
        try:
            found = self.source.finish()
        finally:
            self._closed()
        return self.make(found)

    def cancel(self) -> None:
        """Stop the work that has not started (after `finish`, nothing is left to stop)."""
        try:
            self.source.cancel()
        finally:
            self._closed()


class Done:
    """Work already done when it was begun (a job started where nothing runs apart): `finish()` gives its result."""

    def __init__(self, result):
        self.result = result

    def finish(self):
        """The result."""
        return self.result

    def cancel(self) -> None:
        """Nothing is under way."""
        return None


class Failed:
    """Work that could not begin: `finish()` raises the error its start raised (where its result is read)."""

    def __init__(self, error: Exception):
        self.error = error

    def finish(self):
        """Raises the start's error."""
        raise self.error

    def cancel(self) -> None:
        """Nothing is under way."""
        return None


def start_tasks(tasks: list[Task], executor: Executor | None = None, what: str = "tasks") -> Started:
    """Start `tasks` where `executor` runs them (module docstring) and return at once: `Started.finish()`
    waits for them. Local processes and Dask work while this process goes on; without an executor (or with
    jobs=1) the tasks run here when their results are asked for."""
    return Started(tasks, executor, what)


def run_tasks(tasks: list[Task], executor: Executor | None = None, what: str = "tasks") -> list:
    """Run `tasks` and return their results in task order (`start_tasks(...).finish()`).

    executor : None (or jobs=1) runs them here; otherwise local processes or Dask (module docstring).
    what : the progress bar's label (shown when the executor asks for progress).
    Raises SweepError naming every task that failed twice, after the others have finished.
    """
    return start_tasks(tasks, executor, what).finish()


def sweep_executor(options: dict, progress: bool | None = None):
    """The executor a job's sweep options ask for (jobs, scheduler, exchange: `referee.run.options.SWEEP_OPTIONS`),
    as a context manager: an `Executor`, or a null context yielding None for a plain in-process run. Progress
    follows `referee.models.progress.mode()` (in-process runs too) unless `progress` is False."""
    jobs, scheduler, exchange = options.get("jobs"), options.get("scheduler"), options.get("exchange")
    if scheduler is None and (jobs or 1) == 1 and exchange is None:
        return contextlib.nullcontext()
    return Executor(jobs=jobs or 1, scheduler=scheduler, exchange=exchange, progress=progress)
