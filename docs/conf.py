"""Sphinx configuration of referee's manual (`make docs` builds it into docs/_build/html; tests/test_manual.py builds
it with warnings as errors). The reference pages are generated from the code when the site builds
(`referee.cli.manual.write_pages`) into docs/_generated/, never edited by hand."""

from __future__ import annotations

import os
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

GENERATED = HERE / "_generated"
write_pages(GENERATED, ROOT / "data" / "formats")
for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
    target = HERE / "gallery" / notebook.name
    if not target.exists() or target.read_bytes() != notebook.read_bytes():
        shutil.copyfile(notebook, target)
