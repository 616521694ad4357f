"""Sphinx configuration of referee's manual (`make docs` builds it into docs/_build/html; tests/test_manual.py builds
it with warnings as errors). The reference pages are generated from the code when the site builds
(`referee.cli.manual.write_pages`) into docs/_generated/, never edited by hand."""

from __future__ import annotations

import os
import sys
import time
import shutil
from pathlib import Path

from referee.cli.manual import write_pages

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

project = "referee"
author = "referee's authors"
copyright = "2026, referee's authors"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "pydata_sphinx_theme"
html_title = "referee"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # the runners' format documents start at their own heading levels

# the API pages: every public name's docstring (a public function that loses its docstring fails the build)
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_validation_checks = {"GL08"}  # GL08: the object has no docstring

# the gallery: the three notebooks, executed with few draws (REFEREE_QUICK=1, as tests/test_notebooks.py runs them)
# and cached in .cache/jupyter (a second build executes nothing unchanged); REFEREE_DOCS_EXECUTE=off renders them
# as committed (without outputs), which the tests do: they execute the notebooks themselves
nb_execution_mode = os.environ.get("REFEREE_DOCS_EXECUTE", "cache")
nb_execution_cache_path = str(ROOT / ".cache" / "jupyter")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
os.environ.setdefault("REFEREE_QUICK", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
# the kernels' own start-up log (ipykernel 7 warns on every start that its loopback TCP is not encrypted: a
# kernel on this machine, for this build) kept out of the build's output: a profile of the build's own
_KERNEL_PROFILE = ROOT / ".cache" / "ipython" / "profile_default"
_KERNEL_PROFILE.mkdir(parents=True, exist_ok=True)
(_KERNEL_PROFILE / "ipython_kernel_config.py").write_text('c.IPKernelApp.log_level = "ERROR"\n')
os.environ["IPYTHONDIR"] = str(_KERNEL_PROFILE.parent)

GENERATED = HERE / "_generated"
write_pages(GENERATED, ROOT / "data" / "formats")
for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
    target = HERE / "gallery" / notebook.name
    if not target.exists() or target.read_bytes() != notebook.read_bytes():
        shutil.copyfile(notebook, target)


def _notebook_started(app, docname, source):
    """A line per notebook as its execution starts (`make docs` runs quiet otherwise: a notebook can take minutes)."""
    if docname.startswith("gallery/") and docname != "gallery/index":
        app._referee_started = {**getattr(app, "_referee_started", {}), docname: time.perf_counter()}
        how = ("rendered as committed (execution off)" if nb_execution_mode == "off" else
               "executing (or read from the cache in .cache/jupyter)")
        print(f"docs: {docname}: {how} ...", file=sys.stderr, flush=True)


def _notebook_done(app, doctree):
    docname = app.env.docname
    started = getattr(app, "_referee_started", {}).pop(docname, None)
    if started is not None:
        print(f"docs: {docname}: done in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


def setup(app):
    app.connect("source-read", _notebook_started)
    app.connect("doctree-read", _notebook_done)
