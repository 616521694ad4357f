"""How much the pages of the games behind the boards add to a report (issue 102: at most a fifth), on a
20,000-episode run: `referee simulate ranked` (8-player games with per-turn logs), ingested, reported with
`--no-models` (the smallest report, so the hardest bar), then the bytes under `games/` against the rest of the
report folder, side by side in one run. Prints the ratio and the pages written; exits 1 above the target.

Run: .venv/bin/python -m benchmarks.game_pages [--games 20000] [--agents 30]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from referee.cli import main as referee

TARGET = 0.2  # the games' pages add at most this share to the rest of the report


def folder_bytes(folder: Path) -> int:
    return sum((Path(d) / f).stat().st_size for d, _, files in os.walk(folder) for f in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--agents", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        assert referee(["simulate", "ranked", "--agents", str(args.agents), "--games", str(args.games), "--out",
                        str(tmp / "sim"), "-q"]) == 0
        assert referee(["ingest", str(tmp / "sim"), "--store", str(tmp / "s.duckdb"), "-q"]) == 0
        start = time.perf_counter()
        assert referee(["report", "--store", str(tmp / "s.duckdb"), "--out", str(tmp / "report"), "--no-models",
                        "-q"]) == 0
        seconds = time.perf_counter() - start
        games, whole = folder_bytes(tmp / "report" / "games"), folder_bytes(tmp / "report")
        agents = len(list((tmp / "report" / "games" / "agents").glob("*.html")))
        matches = len(list((tmp / "report" / "games" / "matches").glob("*.html")))
    ratio = games / (whole - games)
    print(f"{args.games:,} episodes, {args.agents} agents: the report {whole - games:,} bytes without the games' pages, "
          f"{games:,} bytes of them ({agents} agent pages, {matches} match pages): ratio {ratio:.3f} "
          f"(target <= {TARGET}); the report took {seconds:.1f} s")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
