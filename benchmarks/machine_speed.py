"""This machine's single-threaded speed, as one number beside every timing the first-hour benchmark prints.

Machines of one kind differ 2-5x in single-threaded Python while a multi-threaded read barely moves, and most of
`make test` and `make demo` is single-threaded Python (compiling, parsing, fitting small models): a time read
without the machine's speed cannot be compared with a goal measured elsewhere. The workload is the plain read of
issue 70's held-out folder: 6,000 generated 3-player logs of 24 turns (212 MB of JSON lines, seed 1,
`referee.simulators.benchmark_shapes.points_logs`), every line parsed by orjson in one thread
(`benchmarks.ingest._plain_lines`), the median of 3 after one untimed read.

The reference is the figure issue 81 gives for the machines the README's timings come from: orjson reads those
212 MB in 0.5 s there (0.46-0.53 s in the ingest benchmark's runs; 3.0 s on the slower machine that filed it).
`factor` = this machine's seconds / 0.5: a goal of "10 minutes times the factor" is 10 minutes there.

Run: .venv/bin/python -m benchmarks.machine_speed
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from benchmarks.ingest import _plain_lines

REFERENCE_SECONDS = 0.5  # orjson, the 212 MB held-out folder, on the README's reference machines (issue 81)


def measure(runs: int = 3, files: int = 6000, folder: Path | None = None) -> dict:
    """{'seconds': median seconds of the plain read (scaled to 6,000 files when fewer are written), 'factor':
    seconds / REFERENCE_SECONDS, 'runs': every run's seconds, 'megabytes': the folder's size}. `folder`: where the
    workload is written, or read when a run before wrote it there (a caller measuring more than once writes it
    once); a temporary folder when None."""
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="referee-speed-") as tmp:
            return measure(runs, files, Path(tmp) / "held-out")
    from referee.simulators.benchmark_shapes import points_logs

    if not folder.exists():
        points_logs(str(folder), files, 1, turns=24, talk=2)
    paths = sorted(folder.glob("*.jsonl"))
    size = sum(p.stat().st_size for p in paths)
    _plain_lines(paths)  # untimed: the files in the page cache, the allocator warm
    times = [_plain_lines(paths) * 6000 / files for _ in range(runs)]
    seconds = statistics.median(times)
    return {"seconds": seconds, "factor": seconds / REFERENCE_SECONDS, "runs": times, "megabytes": size / 1e6}


def describe(found: dict) -> str:
    """One line: the workload's time and the speed factor against the reference machines."""
    return (f"machine speed: orjson reads the 212 MB held-out folder in {found['seconds']:.2f} s (median of "
            f"{len(found['runs'])}; reference machines {REFERENCE_SECONDS} s): factor {found['factor']:.2f}, so a goal "
            f"of N minutes there is {found['factor']:.2f} N minutes here")


if __name__ == "__main__":
    print(describe(measure()))
