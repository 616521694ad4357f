"""The manual's generated parts, from the code that they describe (one source each): the command line's reference
(one page per command, from the job table and the parser the command line runs), the runner formats (from
`data/formats/`), the store's schema (`referee.io.schema.TABLES`), and the typed stub of the notebook API
(`analysis/__init__.pyi`, which type checkers read: every job a function with its real options).

`docs/conf.py` writes the pages when the site builds (`write_pages`); the stub is committed, and a test compares it
with `api_stub()`. Pure functions from the registries to text.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import os
from pathlib import Path

from referee.run.job_table import Job
from referee.run.options import Option

# what a notebook may pass for an option whose checker returns this type (the checkers read text as well)
_WIDER = {"Path": "str | PathLike[str]", "list[str]": "str | Sequence[str]", "range": "range | int | str",
          "float | None": "float | str | None"}


def annotation(option: Option) -> str:
    """The type a notebook passes for `option`, as stub text: the Literal of its names where it takes one of a
    few (a model, a method: a misspelt one fails the type check), else its checker's return type (widened where
    the checker reads more, e.g. a path as text), a list of it for a repeatable option, bool for an on/off flag,
    `| None` when its default is None."""
    if option.flag:
        return "bool"
    returns = inspect.signature(option.type).return_annotation if option.type is not None else None
    if option.choices and all(isinstance(c, str) for c in option.choices):  # a misspelt name fails the type check
        text = "Literal[" + ", ".join(repr(c) for c in option.choices) + "]"
    elif returns not in (None, inspect.Signature.empty):
        text = _WIDER.get(str(returns), str(returns))
    elif isinstance(option.default, bool):
        text = "bool"
    elif isinstance(option.default, (int, float)):
        text = type(option.default).__name__
    else:  # the command line hands it over as text
        text = "str"
    if option.many:
        text = f"{text} | Sequence[{text}]" if "Sequence" not in text else text
    if option.default is None and not option.required and "None" not in text:
        text += " | None"
    return text


def job_stub(job: Job) -> str:
    """One job's function in the stub: `def NAME(data, options..., *, progress) -> Result` with the options in the
    order `referee.api` binds them (a required option after an optional one is keyword-only)."""
    params = []
    if job.data != "none":
        params.append("data: Data" + (" | None = ..." if job.data in ("optional", "read-optional") else ""))
    keyword_only = False
    for option in job.options:
        if option.required and params and params[-1].endswith("= ...") and not keyword_only:
            params.append("*")
            keyword_only = True
        params.append(f"{option.name}: {annotation(option)}" + ("" if option.required else " = ..."))
    if not keyword_only:
        params.append("*")
    params.append("progress: bool | None = ...")
    return f"def {job.api}({', '.join(params)}) -> Result: ...\n"


def api_stub() -> str:
    """The text of `analysis/__init__.pyi`: the notebook API (`referee.*`) as type checkers read it."""
    from referee.composing import JOBS

    head = '''"""Types of the notebook API (`referee.*`), written by `referee.cli.manual.api_stub()` from the job table:
do not edit by hand (tests/test_manual.py compares this file with it)."""

from os import PathLike
from pathlib import Path
from typing import Any, Literal, Sequence

from pandas import DataFrame

from referee.io.store import Store
from referee.result import Result as Result

# what a job reads: a store, a store file, logs to ingest (a file, a folder or a list of them), or a results table
Data = Store | str | PathLike[str] | Sequence[str | PathLike[str]] | DataFrame

__version__: str

def open(source: Data, runner: str | PathLike[str] | None = ..., catalogue: str | PathLike[str] | None = ...,
         store: str | PathLike[str] | None = ..., **ingest: Any) -> Store: ...
def sample(*parts: str) -> Path: ...
def use_style() -> None: ...
def trace(data: Data, match: str) -> DataFrame: ...
'''
    return head + "".join(job_stub(job) for job in JOBS.values())


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The sub-command parsers of `parser`, by name, in the order `referee --help` lists them."""
    for action in parser._actions:  # argparse keeps its sub-commands on this action only
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options_table(options: tuple[Option, ...]) -> str:
    rows = ["| option | Python | default | what it is |", "|---|---|---|---|"]
    for o in options:
        default = "(required)" if o.required else f"`{o.default!r}`"
        choices = f" One of: {', '.join(f'`{c}`' for c in o.choices)}." if o.choices else ""
        text = (o.help + choices).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{o.flag_name if not o.positional else o.name.upper()}` | `{o.name}: {annotation(o)}` "
                    f"| {default} | {text} |")
    return "\n".join(rows)


def command_page(name: str, parser: argparse.ArgumentParser, job: Job | None) -> str:
    """The reference page of command `name`: its help as the command line prints it (every option, its default
    and choices), and for a job its options as the notebook takes them and its Python function's docstring."""
    lines = [f"(cli-{name})=", f"# `referee {name}`", ""]
    if job is not None:
        lines += [job.help[0].upper() + job.help[1:] + ".", ""]
    lines += ["```text", parser.format_help().rstrip(), "```", ""]
    for variant, sub in _commands(parser).items():
        lines += [f"## `referee {name} {variant}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    if job is not None:
        lines += ["## Options", "", _options_table(job.options), "",
                  f"## In Python: `referee.{job.api}`", "", "```{eval-rst}", f".. autofunction:: referee.{job.api}", "```", ""]
    return "\n".join(lines)


def cli_pages(width: int = 100) -> dict[str, str]:
    """Every command's page (file name -> Markdown), in the order `referee --help` lists them, and the index."""
    from referee.cli import build_parser
    from referee.composing import JOBS

    parser = build_parser()
    commands = _commands(parser)
    for p in [parser, *commands.values(), *(s for c in commands.values() for s in _commands(c).values())]:
        p.formatter_class = functools.partial(p.formatter_class, width=width)  # one width, not the terminal's
    pages = {f"{name}.md": command_page(name, sub, JOBS.get(name)) for name, sub in commands.items()}
    toc = "\n".join(f"{name}" for name in commands)
    pages["index.md"] = ("# The command line\n\nEvery command, generated from the job table and the parser the "
                         "command line runs (`referee COMMAND --help` prints the same).\n\n```text\n"
                         + parser.format_help().rstrip() + "\n```\n\n```{toctree}\n:maxdepth: 1\n\n" + toc + "\n```\n")
    return pages


def runner_pages(formats: Path, relative: str) -> dict[str, str]:
    """One page per runner format document in `formats` (`data/formats/NAME.md`), included as it is (one source:
    `referee formats NAME` prints the same file) from `relative` (the folder as the pages' folder reaches it),
    and the index."""
    names = sorted(p.stem for p in formats.glob("*.md"))
    pages = {f"{name}.md": f"(runner-{name})=\n# Runner `{name}`\n\n```{{include}} {relative}/{name}.md\n"
                           f":heading-offset: 1\n```\n" for name in names}
    pages["index.md"] = ("# Runner formats\n\nOne page per runner referee reads, each its format document from "
                         "`data/formats/` (`referee formats NAME` prints the same).\n\n```{toctree}\n:maxdepth: 1\n\n"
                         + "\n".join(names) + "\n```\n")
    return pages


def store_page() -> str:
    """The store's schema: every canonical table with its columns, DuckDB types, nullability and allowed values."""
    from referee.io.schema import TABLES

    lines = ["# The store's tables", "", "Every table of the store (`referee.io.schema.TABLES`; `referee export "
             "--table NAME` writes one as CSV or Parquet).", ""]
    for table, cols in TABLES.items():
        lines += [f"## `{table}`", "", "| column | type | NULL allowed | allowed values |", "|---|---|---|---|"]
        lines += [f"| `{c.name}` | {c.sql} | {'yes' if c.nullable else 'no'} | "
                  f"{', '.join(c.allowed) if c.allowed else ''} |" for c in cols]
        lines.append("")
    return "\n".join(lines)


def write_pages(folder: Path, formats: Path) -> list[Path]:
    """Write the generated pages under `folder` (cli/, runners/, store.md); returns the files written. A page whose
    text is unchanged is not rewritten (Sphinx then does not read it again)."""
    written = []
    pages = {f"cli/{k}": v for k, v in cli_pages().items()}
    relative = os.path.relpath(formats, folder / "runners")
    pages |= {f"runners/{k}": v for k, v in runner_pages(formats, relative).items()}
    pages["store.md"] = store_page()
    for name, text in pages.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        written.append(target)
    return written
