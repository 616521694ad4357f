"""Does the report's leaderboard fit a printed page (issue 48)? The 80-agent board of the leaderboard test (two-seat
games, 10 rare agents, a planted seat advantage) is written as a report, and headless Chromium lays the report out
at the width of an A4 page's printable area (210 mm less 2 x 10 mm margins = 718 CSS px) and prints it to PDF.

Run: .venv/bin/python -m benchmarks.print_page [--out reports/print-check] [--chromium /usr/bin/chromium]

Prints the leaderboard table's laid-out width (scrollWidth) against the page width, the number of columns, the
widest cell, and where the PDF went. Exit 0 when the table fits (no horizontal overflow), 1 when it does not,
2 when Chromium is absent (install Debian's `chromium`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.cli import main as referee

from tests.helpers import duels

PAGE_PX = 718  # A4's 210 mm less two 10 mm margins, at 96 CSS px per inch
PROBE = """<script>
window.addEventListener("load", function () {
  var wrap = document.querySelector(".leaderboard"), table = wrap.querySelector("table");
  var widest = 0;
  table.querySelectorAll("td, th").forEach(function (c) { widest = Math.max(widest, c.getBoundingClientRect().width); });
  var found = document.createElement("pre");
  found.id = "probe";
  found.textContent = "PROBE table=" + table.scrollWidth + " box=" + wrap.clientWidth + " columns=" +
    table.tHead.rows[0].cells.length + " widest=" + Math.round(widest);
  document.body.appendChild(found);
});
</script>"""


def layout(chromium: str, html: Path, width: int) -> dict[str, int]:
    """Headless Chromium's layout of `html` at `width` CSS px: the leaderboard's table width, its box, columns,
    widest cell (px)."""
    probed = html.with_name("probe.html")
    probed.write_text(html.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={width},1200",
                          "--virtual-time-budget=5000", "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=180).stdout
    found = re.search(r"PROBE table=(\d+) box=(\d+) columns=(\d+) widest=(\d+)", dom)
    if not found:
        raise RuntimeError("Chromium laid the page out but the probe did not run")
    return dict(zip(("table", "box", "columns", "widest"), map(int, found.groups())))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/print-check"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    args = parser.parse_args()
    if not args.chromium:
        print("no chromium on PATH: apt-get install chromium", file=sys.stderr)
        return 2
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        rows, _ = duels(80, 6000, rare=10, seat=0.4, seed=12)
        csv, store = Path(work) / "duels.csv", Path(work) / "duels.duckdb"
        rows.to_csv(csv, index=False)
        if referee(["ingest", str(csv), "--store", str(store)]) or \
                referee(["report", "--store", str(store), "--out", str(args.out), "--no-models"]):
            print("the report was not written", file=sys.stderr)
            return 1
    html = args.out / "index.html"
    found = layout(args.chromium, html, PAGE_PX)
    pdf = args.out / "report.pdf"
    subprocess.run([args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf.resolve()}", html.resolve().as_uri()], capture_output=True, timeout=180)
    fits = found["table"] <= found["box"]
    print(f"leaderboard at an A4 page's {PAGE_PX} px: table {found['table']} px in a {found['box']} px box, "
          f"{found['columns']} columns, widest cell {found['widest']} px -> {'fits' if fits else 'OVERFLOWS'}; "
          f"ratio {found['table'] / found['box']:.2f}; PDF {pdf} ({time.perf_counter() - start:.0f} s)")
    return 0 if fits else 1


if __name__ == "__main__":
    sys.exit(main())
