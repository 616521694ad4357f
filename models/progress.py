"""Progress of work that takes more than a few seconds, shown where the person running it is looking.

One mode at a time (`mode()`), chosen where the work is started:

- 'bar': a terminal (the command line, when stderr is a terminal): tqdm bars on stderr, redrawn in place, and
  nutpie's own sampler display;
- 'lines': not a terminal (CI, `make demo > log`): plain lines, one per stage with its time, and one at most
  every `LINE_SECONDS` inside a long loop, so that a log shows what is happening without a redrawn bar;
- 'notebook': tqdm.auto's widget and nutpie's HTML display (the notebook API's `progress=True`);
- 'off': nothing (`--quiet`, `--json`, and the notebook API by default).

The command line sets the mode once, through $REFEREE_PROGRESS, so that the processes a job starts inherit it;
a notebook call sets it for its own duration with `showing(mode)`. Lines and bars go to stderr, except the
stages of a job whose output is the work it did (`Stages(..., stream=sys.stdout)`: the demo, the report, the
paper), whose stage lines are that job's log.

Light: imports nothing heavy (tqdm when a bar is drawn).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from contextvars import ContextVar
from typing import IO, Callable, Iterable, Iterator, TypeVar

MODES = ("bar", "lines", "notebook", "off")
ENV = "REFEREE_PROGRESS"
LINE_SECONDS = 10.0  # 'lines': at most one line a loop per this many seconds
_MODE: ContextVar[str | None] = ContextVar("referee_progress", default=None)
T = TypeVar("T")


def mode() -> str:
    """The progress mode in force: the one `showing` set, else $REFEREE_PROGRESS, else 'off' (a library call is
    quiet unless asked)."""
    found = _MODE.get()
    if found is not None:
        return found
    value = os.environ.get(ENV, "off")
    return value if value in MODES else "off"


def chosen(quiet: bool, stderr_is_terminal: bool) -> str:
    """The command line's mode: 'off' when asked to be quiet (--quiet, --json), 'bar' on a terminal, else
    'lines'."""
    return "off" if quiet else "bar" if stderr_is_terminal else "lines"


def from_argument(progress: bool | str | None) -> str | None:
    """A notebook call's `progress=` as a mode: True the notebook widget, False 'off', a mode's name itself,
    None (not given) leaves the mode in force. ValueError for anything else."""
    if progress is None:
        return None
    if isinstance(progress, bool):
        return "notebook" if progress else "off"
    if progress in MODES:
        return progress
    raise ValueError(f"progress must be True, False or one of {', '.join(MODES)}, got {progress!r}")


@contextlib.contextmanager
def showing(new: str | None) -> Iterator[None]:
    """Within the block, progress is shown in mode `new` (None: as it was), here and in processes started
    inside it."""
    if new is None:
        yield
        return
    if new not in MODES:
        raise ValueError(f"progress mode must be one of {', '.join(MODES)}, got {new!r}")
    token, before = _MODE.set(new), os.environ.get(ENV)
    os.environ[ENV] = new
    try:
        yield
    finally:
        _MODE.reset(token)
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def say(text: str, stream: IO[str] | None = None, show: str | None = None) -> None:
    """One line of progress in mode `show` (default: the mode in force; nothing when 'off'), written so that a
    bar being drawn is not broken."""
    show = show or mode()
    if show == "off":
        return
    out = stream if stream is not None else sys.stderr
    if show in ("bar", "notebook"):
        from tqdm.auto import tqdm

        tqdm.write(text, file=out)
    else:
        print(text, file=out, flush=True)


def seconds(value: float) -> str:
    """A duration as a person reads it: '0.4 s', '12.3 s', '2 min 05 s'."""
    if value < 60:
        return f"{value:.1f} s"
    minutes, rest = divmod(int(round(value)), 60)
    return f"{minutes} min {rest:02d} s"


def track(items: Iterable[T], total: int | None = None, what: str = "", unit: str = "item",
          every: float = LINE_SECONDS, least: int = 2, status: Callable[[], str] | None = None,
          show: str | None = None) -> Iterator[T]:
    """`items`, passed through, with their progress: a bar ('bar', 'notebook'), a line at most every `every`
    seconds and one at the end when the loop took longer than that ('lines'), nothing ('off' or fewer than
    `least` items). `what` names the work, `unit` one item ('file', 'replicate', 'fold'); `status`, when given,
    says what the items came to so far ('12,004 records, 3 set aside'), read after each item. `show`: this
    loop's mode (default: the mode in force when the loop starts)."""
    current = show or mode()
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if current == "off" or (total is not None and total < least):
        yield from items
        return
    if current in ("bar", "notebook"):
        bar = _bar(current, total, what, unit, items)
        for k, item in enumerate(bar):
            yield item
            if status is not None:
                bar.set_postfix_str(status(), refresh=k == 0)  # said at once, then at the bar's own pace
        return
    start = last = time.perf_counter()
    done = 0
    for item in items:
        yield item
        done += 1
        now = time.perf_counter()
        if now - last >= every:
            last = now
            of = f" of {total:,}" if total is not None else ""
            said = f"; {status()}" if status is not None else ""
            say(f"{what}: {done:,}{of} {unit}s, {seconds(now - start)}, {done / (now - start):,.1f} {unit}s/s{said}",
                show=current)
    took = time.perf_counter() - start
    if took >= every:
        said = f"; {status()}" if status is not None else ""
        say(f"{what}: {done:,} {unit}s in {seconds(took)}{said}", show=current)


class Counter:
    """A count of done items in the mode in force (`counter`): `update(n)` after each; a tqdm bar, lines at most
    every `every` seconds, or nothing."""

    def __init__(self, total: int, what: str, unit: str, show: str, every: float):
        self.total, self.what, self.unit, self.show, self.every = total, what, unit, show, every
        self.done, self.start = 0, time.perf_counter()
        self.last = self.start
        self.bar = None
        if show in ("bar", "notebook"):
            self.bar = _bar(show, total, what, unit)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.show == "lines" and time.perf_counter() - self.last >= self.every:
            self.last = time.perf_counter()
            say(f"{self.what}: {self.done:,} of {self.total:,} {self.unit}s, {seconds(self.last - self.start)}",
                show="lines")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.show == "lines" and time.perf_counter() - self.start >= self.every:
            say(f"{self.what}: {self.done:,} {self.unit}s in {seconds(time.perf_counter() - self.start)}", show="lines")


@contextlib.contextmanager
def counter(total: int, what: str, unit: str = "item", show: str | None = None, every: float = LINE_SECONDS,
            least: int = 2) -> Iterator[Counter]:
    """A `Counter` of `total` items for work that is not one loop (tasks finishing in other processes): shown in
    mode `show` (default: the mode in force), nothing for fewer than `least` items."""
    current = show or mode()
    made = Counter(total, what, unit, "off" if total < least else current, every)
    try:
        yield made
    finally:
        made.close()


def _bar(show: str, total: int | None, what: str, unit: str, items: Iterable | None = None):
    """A tqdm bar on stderr ('bar': the terminal's; 'notebook': tqdm.auto's widget), cleared when it closes."""
    if show == "bar":
        from tqdm import tqdm
    else:
        from tqdm.auto import tqdm
    size = dict(dynamic_ncols=True) if _columns() else dict(ncols=100, nrows=24)
    return tqdm(items, total=total, desc=what, unit=unit, file=sys.stderr, leave=False, **size)


def _columns() -> int:
    """The width of the terminal stderr is on (0 when it reports none, as a terminal without a size does: tqdm
    then draws no bar, so it is given a size)."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


def sized_stages(large: bool, job: str, total: int, first: str) -> Callable[[str], contextlib.AbstractContextManager]:
    """A job's stages as a function name -> context: when `large` (a job of tens of seconds), its first line `first`
    now, then each stage's line as it ends (`Stages`, `total` of them); otherwise (a job of a few seconds) nothing."""
    if not large:
        return lambda name: contextlib.nullcontext()
    stages = Stages(job, total)
    stages.start(first)
    return stages.stage


class Stages:
    """A job's stages, each said as it ends with its time: `with stages.stage("leaderboards") as s: ...;
    s.wrote("tables/board.csv")`. In 'lines' and 'bar' modes each stage writes one line, '[k/n] name: 4.2 s
    (what it wrote); 12.0 s in all', to `stream` (default stderr); 'off' writes nothing. `start()` says the job
    and its stages at once, before any of them runs."""

    def __init__(self, job: str, total: int | None = None, stream: IO[str] | None = None):
        self.job, self.total, self.stream = job, total, stream
        self.k, self.began = 0, time.perf_counter()

    def start(self, text: str) -> None:
        """The job's first line, before any work: what it will do."""
        say(f"{self.job}: {text}", self.stream)

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator["_Stage"]:
        """One stage: its line when it ends (with 'failed' when it raised)."""
        self.k += 1
        current = _Stage()
        start = time.perf_counter()
        failed = True
        try:
            yield current
            failed = False
        finally:
            took, total = time.perf_counter() - start, time.perf_counter() - self.began
            of = f"/{self.total}" if self.total else ""
            detail = f" ({'; '.join(current.done)})" if current.done else ""
            say(f"{self.job} [{self.k}{of}] {name}: {'failed after ' if failed else ''}{seconds(took)}{detail}; "
                f"{seconds(total)} in all", self.stream)


class _Stage:
    """What one stage did, said on its line."""

    def __init__(self):
        self.done: list[str] = []

    def wrote(self, text: str) -> None:
        """Add `text` (what the stage wrote or found) to the stage's line."""
        self.done.append(text)
