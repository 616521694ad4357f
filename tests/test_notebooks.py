"""The three journey notebooks (contest, COMPACT, your own score's audit) run top to bottom in a Jupyter kernel
(nbclient) in their bounded form (REFEREE_QUICK=1: few draws), are committed without outputs, and what each
finds agrees with the truth its bundled sample was simulated from."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

FOLDER = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))


def execute(path: Path, cwd: Path, monkeypatch) -> nbformat.NotebookNode:
    """Run notebook `path` in a fresh python3 kernel with its working directory `cwd`; returns it with outputs.
    A cell that raises fails the test with that cell's traceback (nbclient's CellExecutionError)."""
    monkeypatch.setenv("REFEREE_QUICK", "1")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own (inline) backend, as in a user's Jupyter
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return notebook


def said_before_any_unconverged_fit(notebook: nbformat.NotebookNode) -> bool:
    """Issue 105: a quick run says, above its first number, that its fits are not for reading, before any cell
    prints NOT CONVERGED."""
    texts = ["".join(o.get("text", "") or "".join(o.get("data", {}).get("text/plain", "")) for o in c.outputs)
             for c in notebook.cells if c.cell_type == "code"]
    said = next((i for i, t in enumerate(texts) if "not for reading" in t), None)
    unconverged = next((i for i, t in enumerate(texts) if "NOT CONVERGED" in t), len(texts))
    return said is not None and said <= unconverged


def images(notebook: nbformat.NotebookNode) -> int:
    """How many figures the run showed (PNG outputs)."""
    return sum("image/png" in o.get("data", {}) for c in notebook.cells if c.cell_type == "code" for o in c.outputs)


def summary(notebook: nbformat.NotebookNode) -> dict:
    """The dict the notebook's last code cell shows (its 'against the truth' summary)."""
    last = [c for c in notebook.cells if c.cell_type == "code"][-1]
    [result] = [o for o in last.outputs if o.output_type == "execute_result"]
    return ast.literal_eval(result.data["text/plain"])


def test_there_is_one_notebook_per_journey_committed_without_outputs():
    assert [p.name for p in NOTEBOOKS] == ["01_contest_analysis.ipynb", "02_communicate_predict_act.ipynb",
                                           "03_audit_your_own_score.ipynb"]
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.heavy  # make test-all (issue 65: make test under 20 minutes on 2 cores)
def test_the_contest_notebook(tmp_path, monkeypatch):
    run = execute(FOLDER / "01_contest_analysis.ipynb", tmp_path, monkeypatch)
    assert said_before_any_unconverged_fit(run)
    found = summary(run)
    assert images(run) == 5 and found["agents"] == 8
    assert found["spearman: Bradley-Terry rating vs true strength"] > 0.8
    assert found["spearman: baseline contrast vs true strength"] > 0.8


def test_the_compact_notebook(tmp_path, monkeypatch):
    run = execute(FOLDER / "02_communicate_predict_act.ipynb", tmp_path, monkeypatch)
    assert said_before_any_unconverged_fit(run)
    found = summary(run)
    assert images(run) == 3 and found["agents"] == 6
    assert found["spearman: Bradley-Terry rating vs true strength"] > 0.7
    assert found["largest fitted weight"].startswith(found["strongest driver of winning in the simulation"].split("_")[0][:6])


def test_the_audit_notebook(tmp_path, monkeypatch):
    run = execute(FOLDER / "03_audit_your_own_score.ipynb", tmp_path, monkeypatch)
    assert said_before_any_unconverged_fit(run)
    found = summary(run)
    assert images(run) == 2 and found["your score passes"] is False
    assert found["your score's verdict"] == "The score does not measure the outcome it claims"
    assert found["a score equal to the outcome, verdict"].startswith("The score measures")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_import_the_package_rather_than_reimplement_it(path):
    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert "import referee" in code
    assert "from analysis" not in code and "from models" not in code and "from referee." not in code  # public API only
    assert "def " not in code  # no function of the package written again in a notebook
