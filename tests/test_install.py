"""A non-editable install (`pip install .` semantics, built from the tracked files alone) into a fresh venv
carries referee's shipped data and runs the demo from a folder outside the source tree."""

import json
import shutil
import tomllib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(*cmd, cwd=None):
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.mark.heavy  # make test-all (issue 65: make test under 20 minutes on 2 cores)
def test_non_editable_install_runs_the_demo(tmp_path):
    uv = Path(sys.executable).parent / "uv"
    source = tmp_path / "source"
    tracked = _run("git", "ls-files", cwd=REPO).splitlines()
    for name in tracked:
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    _run(uv, "pip", "install", "--quiet", "--python", python, "--require-hashes", "--no-deps", "-r",
         source / "requirements" / "lock.txt")
    _run(uv, "pip", "install", "--quiet", "--python", python, "--no-deps", "--no-build-isolation", source)
    where = _run(python, "-c", "import referee, referee.io.resources as r; print(referee.__file__); "
                               "print(r.data_root())", cwd=tmp_path).splitlines()
    assert str(venv) in where[0] and where[1].endswith("site-packages/referee/shipped"), where  # its own data
    # one top-level name: a user's own analysis/ and models/ packages beside a notebook shadow nothing
    user = tmp_path / "user"
    for name in ("analysis", "models"):
        (user / name).mkdir(parents=True)
        (user / name / "__init__.py").write_text("MINE = True\n")
    found = _run(python, "-c", "import models, analysis, referee, referee.models.ratings.bradley_terry as bt; "
                               "print(models.MINE, analysis.MINE, referee.ratings.__module__, bt.__file__)", cwd=user)
    assert found.split()[:3] == ["True", "True", "referee.api"] and str(venv) in found.split()[3], found
    listing = _run(python, "-c", "import importlib.metadata as m; print(sorted({str(f).split('/')[0] for f in "
                                 "m.files('referee') if str(f).endswith('.py')}))", cwd=user)
    assert listing.strip() == "['referee']", listing  # no top-level analysis or models installed
    work = tmp_path / "elsewhere"
    work.mkdir()
    out = _run(venv / "bin" / "referee", "demo", "--no-models", "--out", "demo", "--json", cwd=work)
    assert json.loads(out)["index"].endswith("index.html")
    html = (work / "demo" / "index.html").read_text()
    assert "Scenario catalogue" in html and "<td>concordia</td>" in html


def test_the_package_list_names_every_package_of_the_source_tree():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    installed = {"analysis": "referee", "models": "referee.models"}  # pyproject's package-dir
    found = {".".join([installed[top], *p.parent.relative_to(REPO / top).parts]) for top in installed
             for p in (REPO / top).rglob("__init__.py")}
    assert listed == found | {"referee.shipped"}


def test_the_lock_satisfies_every_requirement_of_pyproject():
    # a changed requirement in pyproject.toml without `make lock` fails here, not on a fresh machine
    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    locked = {}
    for line in (REPO / "requirements" / "lock.txt").read_text().splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, _, pinned = line.split(" ")[0].partition("==")
            locked[name.lower().replace("_", "-")] = pinned
    extras = ("test", "fast", "bench")  # the Makefile's EXTRAS
    wanted = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    for text in wanted:
        req = Requirement(text)
        name = req.name.lower().replace("_", "-")
        assert name in locked, f"{name} is required by pyproject.toml but not in the lock: run `make lock`"
        assert req.specifier.contains(locked[name], prereleases=True), \
            f"{name}=={locked[name]} in the lock does not satisfy {text!r}: run `make lock`"
    makefile = (REPO / "Makefile").read_text()
    assert all(f"--extra {e}" in makefile for e in extras)


def test_the_lock_was_resolved_from_this_pyproject():
    # any edit to pyproject.toml (requirements or packaging) without `make lock` fails here
    import hashlib

    lock = (REPO / "requirements" / "lock.txt").read_text()
    recorded = [line.rsplit(" ", 1)[1] for line in lock.splitlines()
                if line.startswith("# resolved from pyproject.toml sha256 ")]
    current = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    assert recorded == [current], "pyproject.toml changed since the lock was resolved: run `make lock`"


def test_each_runner_lock_was_resolved_from_its_requirements():
    # the runners played in venvs of their own (Makefile RUNNER_ENVS): each lock names the input it came from
    import hashlib
    import re

    from packaging.requirements import Requirement

    envs = re.search(r"^RUNNER_ENVS := (.+)$", (REPO / "Makefile").read_text(), re.M).group(1).split()
    assert envs == ["kaggle", "clem", "inspect"]
    for name in envs:
        source = REPO / "requirements" / "runners" / f"{name}.in"
        lock = (REPO / "requirements" / "runners" / f"{name}.txt").read_text()
        recorded = [line.rsplit(" ", 1)[1] for line in lock.splitlines()
                    if line.startswith(f"# resolved from requirements/runners/{name}.in sha256 ")]
        assert recorded == [hashlib.sha256(source.read_bytes()).hexdigest()], f"{source} changed: run `make lock`"
        pinned = {line.split("==")[0]: line.split("==")[1].split()[0] for line in lock.splitlines()
                  if "==" in line and not line.startswith((" ", "#"))}
        for text in source.read_text().splitlines():
            if text.strip() and not text.startswith("#"):
                req = Requirement(text)
                assert req.specifier.contains(pinned[req.name]), f"{req.name} in {name}.txt does not satisfy {text}"
        assert all("--hash=sha256:" in block for block in lock.split("\n\n") if "==" in block)


def test_the_development_install_is_a_tree_of_links_that_static_tools_follow():
    """`make install` puts referee on sys.path as a folder of links named as imported (`referee/run/...`), so an
    editor or type checker resolves `referee.*` without running an import hook; every link leads to the file in
    the design card's folder (analysis/, models/, data/)."""
    import site
    import referee

    paths = [Path(line.strip()) for pth in Path(site.getsitepackages()[0]).glob("__editable__*referee*.pth")
             for line in pth.read_text().splitlines() if line.strip() and not line.startswith("import")]
    assert len(paths) == 1, f"`make install` should leave one .pth naming the link tree, found {paths}"
    tree = paths[0] / "referee"
    assert Path(referee.__file__).parent == tree  # imports go through the links
    pairs = {tree / "__init__.py": REPO / "analysis" / "__init__.py",
             tree / "models" / "registry.py": REPO / "models" / "registry.py",
             tree / "shipped" / "SCHEMA.md": REPO / "data" / "SCHEMA.md"}
    for link, source in pairs.items():
        assert link.resolve() == source.resolve(), link
    modules = {p.relative_to(REPO / "analysis") for p in (REPO / "analysis").rglob("*.py")}
    linked = {p.relative_to(tree) for p in tree.rglob("*.py") if p.is_symlink()}
    linked = {p for p in linked if p.parts[0] not in ("models", "shipped")}
    assert modules == linked, f"run `make install` to refresh the links: {sorted(map(str, modules ^ linked))[:5]}"
