"""Every notebook in notebooks/ runs top to bottom (its code cells executed in order in one namespace)."""

import json
from pathlib import Path

import matplotlib
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    matplotlib.use("Agg")
    notebook = json.loads(path.read_text())
    namespace: dict = {"__name__": "__notebook__"}
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code, "a notebook without code"
    for number, cell in enumerate(code, start=1):
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name}[code cell {number}]", "exec"), namespace)  # our own notebook's code
    assert "does not measure" in namespace["result"]["summary"]["verdict"]
