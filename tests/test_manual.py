"""The manual is checked like code: the site builds with no warning (a public function without a docstring, a
missing page or a broken reference fails it), every command and option the command line takes is in its
generated reference, the commands the manual shows parse with the real parser, the README's Python runs, and a type
checker reads the typed API (a misspelt option is flagged in a user's file)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_the_typed_stub_is_the_one_the_job_table_generates():
    """analysis/__init__.pyi is `api_stub()` (regenerate it with
    `python -c "from referee.cli.manual import api_stub; open('analysis/__init__.pyi', 'w').write(api_stub())"`)."""
    from referee.cli.manual import api_stub

    assert (ROOT / "analysis" / "__init__.pyi").read_text() == api_stub()
    assert (ROOT / "analysis" / "py.typed").exists()


def test_a_type_checker_flags_a_misspelt_option_in_a_users_file(tmp_path):
    (tmp_path / "bad.py").write_text("import referee\n\nstore = referee.open('logs/')\n"
                                     "referee.ratings(store, bootstrapp=3)\n")
    (tmp_path / "good.py").write_text("import referee\n\nstore = referee.open('logs/')\n"
                                      "board = referee.ratings(store, 'bt', bootstrap=200)\nprint(board.table())\n"
                                      "referee.fit(store, 'tag-effects', draws=500, seed=1)\n")
    run = lambda name: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / ".mypy"), "--no-error-summary", name],
        cwd=tmp_path, capture_output=True, text=True)
    bad = run("bad.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert 'Unexpected keyword argument "bootstrapp" for "ratings"' in bad.stdout
    good = run("good.py")
    assert good.returncode == 0, good.stdout + good.stderr
    # issue 105: types down to the table (pandas-stubs), and a model's name checked against the job's own choices
    (tmp_path / "typed.py").write_text("import referee\n\nstore = referee.open('logs/')\n"
                                       "reveal_type(referee.leaderboard(store).table())\n"
                                       "referee.fit(store, 'pass-fial')\n")
    typed = run("typed.py")
    assert 'Revealed type is "pandas.core.frame.DataFrame"' in typed.stdout, typed.stdout
    assert 'Argument 2 to "fit" has incompatible type "Literal[\'pass-fial\']"' in typed.stdout, typed.stdout


def test_every_public_function_says_what_it_does():
    """Every name of the notebook API has a docstring of its own: each job's implementation (the function the
    command runs, whose docstring `referee.<job>` carries), and `open`, `sample`, `use_style`, `Result`."""
    import inspect

    import referee
    from referee.composing import JOBS
    from referee.models.registry import implementation

    missing = [job.name for job in JOBS.values() if not (implementation(job.function).__doc__ or "").strip()]
    missing += [name for name in ("open", "sample", "use_style", "Result")
                if not (inspect.getdoc(getattr(referee, name)) or "").strip()]
    assert not missing


def _commands():
    from referee.cli import build_parser
    from referee.cli.manual import _commands

    return _commands(build_parser())


def test_every_command_and_option_is_in_the_generated_reference():
    """Each command the parser has gets a page, and every flag of it (and of each of its sub-commands) is on it;
    each job's options table lists every option of the job table."""
    from referee.composing import JOBS
    from referee.cli.manual import cli_pages

    pages = cli_pages()
    commands = _commands()
    assert set(pages) == {f"{name}.md" for name in commands} | {"index.md"}
    for name, parser in commands.items():
        page = pages[f"{name}.md"]
        subs = [parser, *(_sub for _sub in _sub_parsers(parser))]
        for p in subs:
            for action in p._actions:
                for flag in action.option_strings:
                    assert flag in page, (name, flag)
        if name in JOBS:
            for option in JOBS[name].options:
                assert f"`{option.name}: " in page, (name, option.name)


def _sub_parsers(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.values()


def _shown_commands() -> list[tuple[str, str]]:
    """(file, command line) of every `referee ...` command in a shell block of the README and the manual."""
    found = []
    for path in [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "_generated" not in p.parts
                                            and "_build" not in p.parts)]:
        text = path.read_text()
        for block in re.findall(r"```(?:sh|shell)\n(.*?)```", text, flags=re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split("  #")[0].split(" # ")[0].strip()
                words = line.split()
                at = next((i for i, w in enumerate(words) if w.endswith("bin/referee")), None)
                if at is not None:
                    found.append((path.name, " ".join(words[at + 1:])))
    return found


def test_the_commands_the_manual_shows_parse_with_the_real_parser():
    """Every `referee ...` line in the README's and the manual's shell blocks is a command the parser accepts
    (a renamed option or a misspelt command in a page fails here)."""
    from referee.cli import build_parser

    shown = _shown_commands()
    assert len(shown) > 40
    bad = []
    for where, line in shown:
        try:
            build_parser().parse_args(shlex.split(line))
        except SystemExit:
            bad.append(f"{where}: referee {line}")
    assert not bad, "\n".join(bad)


def test_the_readmes_python_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert code
    namespace: dict = {}
    exec(compile(code[0], "README.md", "exec"), namespace)  # noqa: S102 - the README's own example
    board = namespace["board"]
    assert board.table()["agent"].nunique() >= 2


def test_the_manual_builds_with_no_warning(tmp_path):
    """The site builds with warnings as errors (the notebooks rendered as committed: tests/test_notebooks.py runs
    them) and has a page per runner format, per command (with its Python function), the API's other names, the
    three notebooks and the reading-the-numbers page."""
    env = dict(os.environ, REFEREE_DOCS_EXECUTE="off")
    out = tmp_path / "html"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                          str(out), "-d", str(tmp_path / "doctrees")], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    formats = sorted(p.stem for p in (ROOT / "data" / "formats").glob("*.md"))
    for name in formats:
        assert (out / "_generated" / "runners" / f"{name}.html").exists(), name
    from referee.composing import JOBS

    for name in _commands():
        page = out / "_generated" / "cli" / f"{name}.html"
        assert page.exists(), name
        if name in JOBS:
            assert f'id="referee.{JOBS[name].api}"' in page.read_text(), name
    api = (out / "api.html").read_text()
    for name in ("open", "sample", "use_style", "Result"):
        assert f'id="referee.{name}"' in api, name
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert (out / "gallery" / f"{notebook.stem}.html").exists()
    assert "could be first" in (out / "reading-the-numbers.html").read_text()


@pytest.mark.parametrize("path", [ROOT / "README.md"])
def test_the_readme_is_short(path):
    assert len(path.read_text().splitlines()) < 250
