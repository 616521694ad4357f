"""Scale: a long event log ingests in bounded memory. Heavy: 1M lines with REFEREE_FULL=1, 200k in CI."""

import json
import os
import subprocess
import sys

import pytest

from referee.simulators.aoa import simulate_aoa, write_aoa

FULL = bool(os.environ.get("REFEREE_FULL"))
EVENTS = 1_000_000 if FULL else 200_000
LIMIT_MB = 1024


@pytest.mark.slow
def test_event_log_ingests_in_bounded_memory(tmp_path):
    sim = simulate_aoa(seed=0, event_scale=EVENTS / 3400)
    paths = write_aoa(sim, tmp_path / "season")
    n = sim.truth["n_events"]
    del sim
    # VmHWM is this process image's own peak resident set (ru_maxrss would include the forking parent's)
    code = (
        "import json, re; from referee.io.store import Store\n"
        f"store = Store({str(tmp_path / 's.duckdb')!r})\n"
        f"report = store.ingest([{str(paths['logs'])!r}], progress=True)\n"
        "peak = int(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)) / 1024\n"
        "print(json.dumps(dict(report.as_dict(), events=store.info()['events'], rss_mb=peak)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["quarantined"] == 0 and out["read"] == out["accepted"]
    assert out["events"] >= n
    assert 50 < out["rss_mb"] < LIMIT_MB, out  # a real measurement, under the limit
    assert "events.jsonl" in done.stderr and "line" in done.stderr  # the progress bar was shown
