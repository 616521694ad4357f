"""The commands of the job table (`referee.composing.JOBS`), generated: each job's parser from its typed
options, one handler that opens the store, runs the job and writes its `Result` (tables, figures, documents,
posterior, notes, diagnostics, manifest and provenance) to the results folder, then prints it."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from referee.names import DEFAULT_STORE
from referee.composing import JOBS
from referee.run.job_table import Job
from referee.run.options import Option, bounded, path


def argparse_type(check):
    """A checker (text -> value, ValueError) as an argparse type: the ValueError's words as the usage error."""
    def parse(text: str):
        try:
            return bounded(check(text))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = getattr(check, "__name__", "value")
    return parse


def _help(text: str | None) -> str | None:
    """`text` as argparse's help expects it: a literal % doubled (argparse %-formats help, not descriptions)."""
    return None if text is None else text.replace("%", "%%")


def with_default(option: Option) -> str:
    """An option's help with its default, from the job table, where the help does not already state one (a flag's
    default is off, a missing default is said by the help itself)."""
    text = option.help or ""
    if option.flag or option.positional or option.default in (None, (), [], "") or "default" in text:
        return text
    shown = option.default
    if isinstance(shown, range):
        shown = f"{shown.start}-{shown.stop - 1}"
    elif isinstance(shown, (list, tuple)):
        shown = " ".join(map(str, shown))
    return f"{text} (default {shown})"


def add_option(parser, option: Option) -> None:
    """`option` on the command line: a positional, a flag, a repeatable or a valued option, with its checker,
    choices, default and help (its default said: `with_default`)."""
    kwargs: dict = {"help": _help(with_default(option))}
    if option.type is not None:
        kwargs["type"] = argparse_type(option.type)
    if option.choices is not None:
        kwargs["choices"] = option.choices
        if option.type is None and all(isinstance(c, str) for c in option.choices):
            kwargs["type"] = argparse_type(option._one)  # checked first, so that a typo gets 'did you mean'
    if option.metavar:
        kwargs["metavar"] = option.metavar
    if option.positional:
        nargs = None if option.positional == "1" else option.positional
        parser.add_argument(option.name, nargs=nargs, default=option.default, **kwargs)
        return
    if option.flag:
        parser.add_argument(option.flag_name, dest=option.name, action="store_true", help=_help(option.help))
        return
    if option.nargs:
        kwargs["nargs"] = option.nargs
    elif option.many:
        kwargs["action"] = "append"
    parser.add_argument(option.flag_name, dest=option.name, default=option.default, required=option.required,
                        **kwargs)


def add_job_parser(sub, job: Job) -> None:
    """The parser of `job` (with its variants as sub-commands) in subparsers `sub`."""
    p = sub.add_parser(job.name, help=_help(job.help), description=job.about)
    if job.variants:  # one sub-command per variant, with every option of that variant
        variants = p.add_subparsers(dest=job.options[0].name, required=True, metavar=job.options[0].name.upper(),
                                    title=f"{job.options[0].name}s (`referee {job.name} NAME --help` lists its options "
                                          "and their defaults)")
        for name, options in job.variants.items():
            line = job.variant_help.get(name)
            _add_options(variants.add_parser(name, help=_help(line), description=line), job, options)
        return
    _add_options(p, job, job.options)


def _add_options(p, job: Job, options) -> None:
    """`options`, each in its option group, then the command line's own: the store, the results folder, --json."""
    groups: dict = {}
    for option in options:
        if option.group and option.group not in groups:
            groups[option.group] = p.add_argument_group(option.group)
        add_option(groups[option.group] if option.group else p, option)
    if job.data in ("store", "writable"):
        add_store(p)
    elif job.data == "optional":
        p.add_argument("--store", type=Path, help="record the run in this store; its report links each model's latest")
    elif job.data == "read-optional":
        p.add_argument("--store", type=Path, help="DuckDB store file to read (optional)")
    p.add_argument("--no-figures", action="store_true", help="write the tables and notes only: no figure is drawn "
                   "(and no plotting library loaded)" + ("" if job.figures else "; this command draws none"))
    if job.folder and "out" not in {o.name for o in options}:
        p.add_argument("--out", type=path, required=job.out is None, default=job.out,
                       help="results folder (tables, figures, notes, diagnostics, manifest.json, provenance.json)"
                       + (f"; default {job.out}" if job.out else ""))
    add_json(p)
    p.set_defaults(func=run_command, job=job.name, out_is_folder=job.folder)


def add_store(p) -> None:
    """--store: the DuckDB store file a command reads."""
    p.add_argument("--store", type=Path, default=DEFAULT_STORE, help=f"DuckDB store file (default {DEFAULT_STORE})")


def add_json(p) -> None:
    """--json: one JSON object on stdout instead of text; --quiet: no progress (with --json, none either)."""
    p.add_argument("--json", action="store_true", help="print one JSON object (results, notes, warnings, files); "
                   "no progress is shown")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="show no progress (default: bars on a terminal, a plain line per stage elsewhere)")


def open_store(path: Path, read_only: bool = True, create: bool = False):
    """The store at `path` (a context manager); FileNotFoundError saying to ingest first when there is none and
    `create` is not set."""
    if not create and not path.exists():
        raise FileNotFoundError(f"{path}: no store here; run `referee ingest` first")
    from referee.io.store import Store

    return Store(path, read_only=read_only)


def opened_store(job: Job, path: Path | None):
    """The store `job` reads (a context manager): read-only, writable, or none."""
    if job.data == "none" or (job.data in ("optional", "read-optional") and path is None):
        return contextlib.nullcontext()
    # a store a run is recorded in is made when new
    return open_store(path, read_only=job.data in ("store", "read-optional"), create=job.data == "optional")


def job_options(job: Job, args) -> dict:
    """The options of `job` the command line was given (its parser's values, defaults included)."""
    return {o.name: getattr(args, o.name) for o in job.options if hasattr(args, o.name)}


def check_request(args) -> None:
    """The job's own checks of the options together (its work estimate: `Job.bind`), before the command creates
    its results folder or opens the store: a refused request leaves nothing behind."""
    if getattr(args, "job", None) in JOBS:
        JOBS[args.job].bind(job_options(JOBS[args.job], args))


def run_command(args) -> dict:
    """Run the job `args.job` with the options parsed into `args`; write and print its result; returns the
    JSON payload. A result's `failure` becomes the command's (exit 1)."""
    from referee.present.outputs import COMMAND, ResultsFolder
    from referee.present.result_files import write_result

    job = JOBS[args.job]
    if job.folder and args.out is None:
        raise ValueError(f"referee {job.name} writes its results to a folder: give --out FOLDER")
    options = job_options(job, args)
    token = COMMAND.set(["referee"] + list(args.argv))
    try:
        with opened_store(job, getattr(args, "store", None)) as store:
            result = job.run(store, figures=not getattr(args, "no_figures", False), **options)
            folder = ResultsFolder(args.out, seed=getattr(args, "seed", None), store=store) if job.folder else None
    finally:
        COMMAND.reset(token)
    if folder is not None:
        write_result(result, folder)
    say = (lambda text: None) if args.json else print
    if result.tables and len(result.table()):
        from referee.present.cells import readable
        from referee.models.registry import implementation

        shown = implementation(job.view)(result) if job.view else readable(result.table())
        say(shown.to_string(index=False))  # as the report prints it: no NaN, <NA> or inf
    for line in result.lines:
        say(line)
    for note in result.notes:
        say(f"note: {note}")
    if folder is not None:
        say(f"wrote {args.out}/ ({len(folder.files)} files)")
    args.failure = result.failure
    if not args.json:  # every table as records only for the one JSON object
        return {}
    return {**result.payload(), **({"written": [str(p) for p in folder.files]} if folder is not None else {})}
