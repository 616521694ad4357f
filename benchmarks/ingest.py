"""Ingest speed: a simulated one-million-event Age-of-Agents season, referee vs pandas.read_json(lines=True).

Run: .venv/bin/python benchmarks/ingest.py [--events 1000000] [--seed 0]

Both read the same event log in this process. referee's time covers parsing, checking every line, building
the canonical events and writing them to a DuckDB store; pandas' covers parsing into a DataFrame only. The
target (issue 3) is at least 3x pandas' events per second, in under 1 GB resident memory.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from analysis.io.store import Store

EVENTS_AT_SCALE_ONE = 3400  # roughly, for the default 12 agents and seed 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        # simulate in a child process, so that the simulation's memory does not count against the ingest
        code = ("import sys, json; from analysis.simulate.aoa import simulate_aoa, write_aoa; "
                f"sim = simulate_aoa(seed={args.seed}, event_scale={args.events / EVENTS_AT_SCALE_ONE}); "
                f"write_aoa(sim, {str(Path(tmp) / 'season')!r}); print(sim.truth['n_events'])")
        n = int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
        events, season = Path(tmp) / "season" / "logs" / "events.jsonl", Path(tmp) / "season" / "logs" / "season.json"
        print(f"simulated {n:,} events ({events.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        t0 = time.perf_counter()
        with Store(Path(tmp) / "bench.duckdb") as store:
            report = store.ingest([events, season])
        referee_s = time.perf_counter() - t0
        referee_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        assert report.quarantined == 0 and report.accepted >= n

        t0 = time.perf_counter()
        frame = pd.read_json(events, lines=True)
        pandas_s = time.perf_counter() - t0
        assert len(frame) == n

    print(f"referee ingest   {n / referee_s:12,.0f} events/s  ({referee_s:.2f} s; peak RSS {referee_rss:.0f} MB, "
          f"{before:.0f} MB before ingest)")
    print(f"pandas.read_json {n / pandas_s:12,.0f} events/s  ({pandas_s:.2f} s)")
    print(f"ratio referee/pandas: {pandas_s / referee_s:.1f}x (target >= 3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
