"""The house: one installed name (`referee`), a notebook API on it, a command line that starts without the numerical
stack, modules of at most 600 lines, layers that import only downward, one registry per family, and every result
under the FitResult contract. (The non-editable install's shadowing check is in tests/test_install.py.)"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent
LAYERS = {"analysis": "referee", "models": "referee.models"}


def _python(code: str, cwd: Path | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_import_referee_and_the_help_load_no_numerical_stack():
    found = _python("import sys, referee; from referee.cli import build_parser; build_parser().format_help(); "
                    "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'pymc', 'duckdb') if m in sys.modules))")
    assert found == "[]"


def test_referee_imports_from_a_folder_with_its_own_models_and_analysis(tmp_path):
    for name in ("models", "analysis"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("MINE = True\n")
    found = _python("import models, analysis, referee, referee.models.ratings.bradley_terry as bt, referee.api; "
                    "print(models.MINE, analysis.MINE, callable(referee.ratings), 'referee' in bt.__name__)",
                    cwd=tmp_path)
    assert found == "True True True True"


def _modules(top: str) -> list[Path]:
    return sorted((REPO / top).rglob("*.py"))


def test_no_module_over_600_lines():
    long = {str(p.relative_to(REPO)): n for top in LAYERS for p in _modules(top)
            if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_layers_import_only_downward():
    present = {str(p.relative_to(REPO)): sorted(n for n in _imports(p) if n.startswith("referee.run"))
               for p in _modules("analysis/present")}
    assert {k: v for k, v in present.items() if v} == {}
    run = {str(p.relative_to(REPO)): sorted(n for n in _imports(p) if n.startswith("referee.present.figures")
                                             or n.startswith("referee.present.plan_figures"))
           for p in _modules("analysis/run")}
    assert {k: v for k, v in run.items() if v} == {}
    models = {str(p.relative_to(REPO)): sorted(n for n in _imports(p) if n.startswith("referee.")
                                                and not n.startswith("referee.models"))
              for p in _modules("models")}
    assert {k: v for k, v in models.items() if v} == {}


def test_every_layer_imports_only_below_it():
    """io, prepare and models never import run, present, cli, the API or the report; run draws no figure and
    writes no file except through the jobs that write (`run/writing_jobs.py`: simulate, report, paper)."""
    above = ("referee.run", "referee.present", "referee.cli", "referee.api", "referee.reporting")
    low = {str(p.relative_to(REPO)): sorted(n for n in _imports(p) if n.startswith(above))
           for top in ("analysis/io", "analysis/prepare", "models") for p in _modules(top)}
    assert {k: v for k, v in low.items() if v} == {}
    run = {str(p.relative_to(REPO)): sorted(n for n in _imports(p) if n.startswith(above[1:]))
           for p in _modules("analysis/run") if p.name != "writing_jobs.py"}
    assert {k: v for k, v in run.items() if v} == {}


# every package of the installed `referee`, bottom first; a package imports only from the rows below its own
PACKAGE_LAYERS = (
    ("referee.names", "referee.markdown_text", "referee.result", "referee.worker_processes", "referee.scratch"),
    ("referee.models",),
    ("referee.io",),
    ("referee.simulators", "referee.prepare"),
    ("referee.readings",),
    ("referee.present",),
    ("referee.run",),
    ("referee.reporting", "referee.papers"),
    ("referee.composing",),
    ("referee.api", "referee.cli"),
    ("referee",),
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    parts = (["referee", "models"] if parts[0] == "models" else ["referee"]) + parts[1:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph() -> dict[str, set[str]]:
    """Every module of `analysis/` and `models/` (as installed) -> the modules of the two it imports, lazily or
    not (`from a import b` names module `a.b` when there is one, else `a`)."""
    modules = {_module_name(p): p for top in LAYERS for p in _modules(top)}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
                found |= subs if len(subs) == len(node.names) else subs | {node.module}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _package(module: str) -> str:
    """The layer unit a module belongs to: `referee.models` whole (its own layering is the models' test above),
    else the top-level package or module under `referee`."""
    return ".".join(module.split(".")[:2])


def test_every_package_is_in_a_layer_and_imports_only_below_it():
    graph = _module_graph()
    row = {package: k for k, packages in enumerate(PACKAGE_LAYERS) for package in packages}
    assert {_package(m) for m in graph} - row.keys() == set()  # a new package is placed in a layer
    up = sorted(f"{m} -> {n}" for m, targets in graph.items() for n in targets
                if _package(m) != _package(n) and row[_package(n)] >= row[_package(m)])
    assert up == []


def test_no_registry_string_names_a_function_in_a_higher_layer():
    """Issue 86: a registry's 'module:function' strings (the job table's, the models' registry's) point down the
    layers or across: a registry on the ground floor never names a job or a figure above it."""
    row = {package: k for k, packages in enumerate(PACKAGE_LAYERS) for package in packages}
    named = re.compile(r"^(referee(?:\.\w+)+):\w*$")
    up = []
    for top in LAYERS:
        for path in _modules(top):
            mine = _package(_module_name(path))
            for node in ast.walk(ast.parse(path.read_text())):
                found = named.match(node.value) if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
                if found and row[_package(found.group(1))] > row[mine]:
                    up.append(f"{path.relative_to(REPO)}: {node.value}")
    assert up == []


def test_no_import_circle_between_modules():
    """Tarjan's strongly connected components of the module graph: none holds two modules."""
    graph, order, low, stack, on, circles = _module_graph(), {}, {}, [], set(), []

    def visit(v):
        order[v] = low[v] = len(order)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on.discard(component[-1])
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in order:
            visit(v)
    assert circles == []


def test_no_module_outside_io_reads_the_store_by_table_name_or_sql():
    """The store's typed readers (`referee.io.store_reads`) are the one way in: no `store.table(...)`,
    `store.query(...)`, `.con` or SQL text outside `analysis/io/`."""
    import re

    from referee.io.schema import TABLES

    pattern = re.compile(r"\bstore\.(table|query)\(|\.con\.(execute|sql)\(|\bSELECT\s.+\bFROM\b|"
                         r"\.table\([\"'](" + "|".join(TABLES) + r")[\"']\)")
    found = {str(p.relative_to(REPO)): [line.strip() for line in p.read_text().splitlines() if pattern.search(line)]
             for top in LAYERS for p in _modules(top) if "analysis/io/" not in str(p)}
    assert {k: v for k, v in found.items() if v} == {}


def test_no_name_of_a_registered_family_is_compared_outside_its_registry():
    import re

    pattern = re.compile(r"\b(method|model|rule|paper|family|simulator|runner)\s*(==|!=)\s*\"|"
                         r"\b(method|model|rule|paper|family|runner)\s+(not )?in\s+\(\"")
    found = {str(p.relative_to(REPO)): [line.strip() for line in p.read_text().splitlines() if pattern.search(line)]
             for top in ("analysis", "models") for p in _modules(top) if p.name != "registry.py"}
    assert {k: v for k, v in found.items() if v} == {}


def _runner_modules() -> dict[str, Path]:
    """The loader modules: every module of io/loaders with a `load` and a `sniff` of its own."""
    found = {}
    for path in sorted((REPO / "analysis" / "io" / "loaders").glob("*.py")):
        defined = {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}
        if {"load", "sniff"} <= defined:
            found[path.stem] = path
    return found


def test_every_runner_is_one_declared_entry_and_nothing_else_asks_a_loader_module():
    """Issue 86: a runner is one `Runner` entry its loader module declares; no code reads a loader module's
    attributes by name (getattr/hasattr), and no code outside the loaders compares a runner's name."""
    from referee.io.loaders import RUNNERS, Runner, mapped
    from referee.io.resources import shipped

    modules = _runner_modules()
    declared = {path.stem for path in modules.values() if re.search(r"^RUNNER = Runner\(", path.read_text(), re.M)}
    assert declared == set(modules)  # every loader module declares its entry
    entries = [*RUNNERS.values(), mapped.RUNNER]
    assert all(isinstance(r, Runner) and r.fields and shipped("formats", r.page).is_file() for r in entries)
    assert {r.load.__module__.rsplit(".", 1)[1] for r in RUNNERS.values()} == set(modules)  # each registered
    # nothing asks a loader module or the registry for an attribute by name
    asks = re.compile(r"\b(getattr|hasattr)\(\s*(RUNNERS|loaders|entry|module\b|" + "|".join(modules) + r")")
    found = {str(p.relative_to(REPO)): [line.strip() for line in p.read_text().splitlines() if asks.search(line)]
             for top in ("analysis", "models") for p in _modules(top)}
    assert {k: v for k, v in found.items() if v} == {}
    # no runner's name compared outside the loaders (a runner's traits are its entry's fields)
    names = "|".join(re.escape(n) for n in (*RUNNERS, mapped.RUNNER.name))
    literal = rf"[\"']({names})[\"']"
    compared = re.compile(rf"runner.*((==|!=)\s*{literal}|\bin\s*[\(\[{{][^)\]}}]*{literal})|{literal}\s*(==|!=).*runner")
    outside = {str(p.relative_to(REPO)): [line.strip() for line in p.read_text().splitlines() if compared.search(line)]
               for top in ("analysis", "models") for p in _modules(top) if "loaders" not in p.parts}
    assert {k: v for k, v in outside.items() if v} == {}


TOY_LOADER = """
import json
from pathlib import Path

from referee.io.loaders.base import LoadOptions, LoadResult, RecordError, load_match_lines
from referee.io.loaders.detect import share
from referee.io.loaders.runner import Runner

NAME = "toy"
KEYS = ("toy_game", "winner", "loser")


def sniff(path: Path, head: str, sample: list) -> float:
    return share(sample, lambda r: set(r) == set(KEYS))


def _rows(record) -> dict:
    if not isinstance(record, dict) or set(record) != set(KEYS):
        raise RecordError("missing field", None, f"a toy line has exactly {KEYS}")
    match = {"runner": NAME, "game": "toy", "n_players": 2, "given_id": record["toy_game"]}
    return {"matches": [match], "results": [
        {"player": "p1", "agent": record["winner"], "score": 1.0, "rank": 1, "outcome": "win"},
        {"player": "p2", "agent": record["loser"], "score": 0.0, "rank": 2, "outcome": "loss"}]}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    return load_match_lines(path, content_hash, NAME, _rows, prefix="toy:")


RUNNER = Runner(NAME, sniff, load, {"line": list(KEYS)}, seats=True)
"""


def test_adding_a_runner_is_its_loader_module_its_format_page_and_its_tests(tmp_path):
    """Issue 86: a runner added as one loader module with its entry and one format page, nothing else, is
    detected, ingested, listed by `referee formats` with its fields and read for its traits (a copy of the
    installed tree, so the repository is untouched)."""
    import shutil

    import referee

    tree = tmp_path / "site" / "referee"
    shutil.copytree(Path(referee.__file__).parent, tree, symlinks=True)
    (tree / "io" / "loaders" / "toy.py").write_text(TOY_LOADER)
    (tree / "shipped" / "formats" / "toy.md").write_text("# toy: one game per line\n")
    lines = "".join(json.dumps({"toy_game": i, "winner": "a" if i % 4 else "b", "loser": "b" if i % 4 else "a"}) + "\n"
                    for i in range(12))
    (tmp_path / "games.jsonl").write_text(lines)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import json, referee, referee.io.loaders as L; "
            "from referee.prepare.covariates import seated_runners; "
            "from referee.cli import main; "
            "store = referee.open(sys.argv[2] + '/games.jsonl', store=sys.argv[2] + '/s.duckdb'); "
            "print(json.dumps({'file': referee.__file__, 'detected': L.detect(__import__('pathlib').Path(sys.argv[2]) "
            "/ 'games.jsonl'), 'matches': len(store.matches()), 'runners': store.runners(), "
            "'seats': 'toy' in seated_runners(), 'fields': L.runner_fields()['toy']}))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "site"), str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["file"].startswith(str(tmp_path))  # the copy, not the installed tree
    assert found == {**found, "detected": "toy", "matches": 12, "runners": ["toy"], "seats": True,
                     "fields": {"line": ["toy_game", "winner", "loser"]}}
    listed = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                             "from referee.cli import main; sys.exit(main(['formats', 'toy']))", str(tmp_path / "site")],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "# toy: one game per line" in listed.stdout, listed.stderr[-1000:]


def test_one_registry_per_family_agrees_with_the_implementations():
    from referee.io.loaders import RUNNERS
    from referee.models.calibration import FAMILIES
    from referee.models.registry import CALIBRATION_FAMILIES, RATING_METHODS, VOTING_METHODS, methods_with
    from referee.models.voting import METHODS as VOTING
    from referee.run.ratings.rating_labels import ANCHORABLE
    from referee.run.ratings.ratings import METHODS, ONLINE, STREAMABLE

    assert all(name == runner.name for name, runner in RUNNERS.items())
    assert tuple(VOTING) == VOTING_METHODS and tuple(FAMILIES) == CALIBRATION_FAMILIES
    assert METHODS == tuple(RATING_METHODS) and ONLINE == methods_with(online=True)
    assert STREAMABLE == ("elo", "bt") and "plackett-luce" in ANCHORABLE and "bt-md" not in ANCHORABLE
    # a method's interval and its one-sided bound are traits of its registry entry, read where they are used
    from referee.run.ratings.intervals import PROFILE_METHODS

    assert PROFILE_METHODS == ("elo", "bt", "bt-davidson", "plackett-luce")
    assert {n: m.interval for n, m in RATING_METHODS.items() if m.interval} == {
        "bt": "Wald 95 %", "bt-davidson": "Wald 95 %", "plackett-luce": "Wald 95 %", "bayes-bt": "94 % HDI",
        "trueskill": "mu -/+ 1.96 sigma", "openskill": "mu -/+ 1.96 sigma"}
    source = (REPO / "analysis" / "run" / "ratings" / "ratings.py").read_text()
    assert "ONLINE = (" not in source and "SEPARATE_FITS = (" not in source  # derived, not listed again


def test_every_result_type_is_a_fit_result_and_silence_is_not_convergence():
    from referee.models.fit import FitResult
    from referee.models.ratings.bootstrap import BootstrapResult
    from referee.models.social.determinants import Determinants
    from referee.models.validity.checks import AssignmentLuck, assignment_luck
    from referee.run.social.socio import SocioResult

    for kind in (BootstrapResult, Determinants, SocioResult, AssignmentLuck):
        assert issubclass(kind, FitResult)
    assert FitResult(model="x").converged is False  # a fit that reports nothing is not taken as converged
    boot = BootstrapResult(agents=["a", "b"], ratings=np.array([[1500.0, 1400.0], [1510.0, 1390.0]]))
    assert boot.converged and list(boot.table()["agent"]) == ["a", "b"]
    frame = pd.DataFrame({"score": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "role": list("aabbcc"),
                          "outcome": [1.0, 2.0, 2.5, 4.0, 5.5, 6.0]})
    luck = assignment_luck(frame, "role", "outcome", bayes=False)
    assert luck.converged and luck["n"] == 6 and "r2_assignment" in luck and len(luck.table()) == 1


@pytest.fixture(scope="module")
def concordia():
    import referee

    return referee.open(referee.sample("concordia", "logs"), catalogue=referee.sample("concordia", "catalogue.toml"))


def test_the_notebook_api_matches_the_command_line(concordia, tmp_path):
    import referee
    from referee.cli import main

    found = referee.ratings(concordia, "bt", bootstrap=40, seed=3)
    assert {"agent", "rating", "lower", "upper", "rank_set", "tier", "status"} <= set(found.table().columns)
    assert "<table" in found._repr_html_() and found.plot().get_axes()
    store = tmp_path / "s.duckdb"
    assert main(["ingest", str(referee.sample("concordia", "logs")), "--store", str(store), "--catalogue",
                 str(referee.sample("concordia", "catalogue.toml"))]) == 0
    assert main(["ratings", "--store", str(store), "--method", "bt", "--bootstrap", "40", "--seed", "3",
                 "--out", str(tmp_path / "r")]) == 0
    cli = pd.read_csv(tmp_path / "r" / "ratings.csv").set_index("agent")
    api = found.table().set_index("agent")
    assert np.allclose(cli.loc[api.index, "rating"], api["rating"]) and np.allclose(cli.loc[api.index, "upper"],
                                                                                     api["upper"])
    pair = referee.compare(concordia, "agent_01", "rational_agent", bootstrap=100).table().iloc[0]
    assert 0 <= pair["p_better"] <= 1 and pair["matches"] > 0
    votes = referee.rank(concordia, "copeland").table()
    assert {"agent", "score", "rank", "matches", "status"} <= set(votes.columns)
    with pytest.raises(AttributeError):
        referee.no_such_call


def test_run_is_rooms_by_family_with_a_small_top():
    """run/ holds at most 12 files at its top; each room's `__init__` says what lives there."""
    top = sorted(p.name for p in (REPO / "analysis" / "run").glob("*.py"))
    assert len(top) <= 12, top
    rooms = [p for p in (REPO / "analysis" / "run").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert {p.name for p in rooms} >= {"ratings", "scores", "social"}
    for room in rooms:
        doc = ast.get_docstring(ast.parse((room / "__init__.py").read_text()))
        assert doc and len(doc) > 80, room
