"""The `referee` command line: parse, check every argument, call one function, print or write its result.

The analyses are generated from the job table (`referee.composing.JOBS`, through `referee.cli.jobs`): each
command parses its job's typed options, runs the job's one function and writes its `Result` through one writer
(`referee.present.result_files`: tables, figures, notes, diagnostics, manifest and provenance). The tools that are
not analyses (map, formats, info, export, demo) are in `referee.cli.tools`. Every command accepts `--json` (one
JSON object on stdout instead of text) and `--quiet` (no progress); otherwise work that takes more than a few
seconds shows its progress (`referee.models.progress`: bars on stderr at a terminal, plain lines elsewhere). Warnings raised while a command works are printed once each as `warning: ...` on stderr (and
listed under "warnings" with `--json`); a fit's notes are printed as `note: ...`.

Exit codes: 0 success; 1 a handled error (bad input, bad arguments found while working, a refused strict
ingest); 2 a usage error found by argument parsing; 3 an unexpected internal error (a one-line message with
a hint to report it; `--debug` shows the traceback).
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
import warnings

from referee.cli import tools
from referee.models import progress
from referee.cli.jobs import add_job_parser, check_request
from referee.names import HANDLED, referee_version
from referee.composing import JOBS

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser for all referee commands."""
    parser = argparse.ArgumentParser(
        prog="referee", description="Bayesian analysis of multi-agent gameplay traces.",
        epilog="Exit codes: 0 success; 1 handled error (message names the cause); 2 usage error; "
               "3 unexpected internal error (rerun with --debug and report it).")
    parser.add_argument("--version", action="version", version=f"referee {referee_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", required=True)

    for job in JOBS.values():  # the analyses, in the job table's order, then the tools
        add_job_parser(sub, job)
    tools.add_parsers(sub)
    return parser


def _check(args) -> None:
    """Checks before any work starts: the job's checks of its options together (`jobs.check_request`), then those
    that need the file system."""
    check_request(args)
    out = getattr(args, "out", None)
    if out is not None and getattr(args, "out_is_folder", True):  # a command whose --out is not a results folder says so
        from referee.present.outputs import check_writable

        check_writable(out)


# an OSError naming a path with one of these is about the path the user gave (too long, missing, not a folder,
# not allowed, read-only ...): said in words, exit 1, not as a bug
PATH_ERRORS = frozenset({errno.ENAMETOOLONG, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM,
                         errno.ELOOP, errno.EROFS, errno.EEXIST, errno.ENXIO, errno.ENODEV})
EXIT_PIPE = 128 + 13  # a reader that closed the pipe (`referee formats | head`): 128 + SIGPIPE, as Unix tools end


def closed_pipe() -> int:
    """End quietly after the reader closed standard output: what is still buffered goes nowhere (Python's own
    advice for SIGPIPE), and the exit status is the conventional one."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_PIPE


def _open_streams() -> None:
    """A standard stream the caller closed (`2>&-`, `>&-`: Python then holds None) writes to the null device, so
    the command still runs, says nothing there, and exits as it would."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - lives as long as the process


def _unwritable(exc: OSError) -> int:
    """A standard stream that cannot take the output (`> /dev/full`: no space left): said on standard error where
    that can still be written, exit 1."""
    try:
        print(f"referee: error: cannot write the output ({exc.strerror or exc}); what the command wrote to files "
              "stands", file=sys.stderr)
        sys.stderr.flush()
    except OSError:
        pass
    try:  # what is still buffered for the full stream goes nowhere, so that exiting does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_ERROR


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `referee` command; returns the exit code (module docstring); a closed pipe ends
    quietly with EXIT_PIPE, a closed standard stream is the null device, a full one exits 1 saying so."""
    from referee.scratch import scratch_folder
    from referee.worker_processes import terminated_as_exit

    _open_streams()
    try:
        # SIGTERM: pools stopped and the store's transaction rolled back on the way out; temporary files the
        # libraries leave (PyTensor's numba sources) go with the command's scratch folder
        with terminated_as_exit(), scratch_folder():
            code = _main(argv)
        sys.stdout.flush()  # inside the guard: a reader gone before the last buffer is a closed pipe too
        return code
    except BrokenPipeError:
        return closed_pipe()
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EIO, errno.EBADF):
            raise
        return _unwritable(exc)


def _bug(exc: BaseException) -> str:
    """What the command says of an error no check foresaw (exit EXIT_INTERNAL)."""
    return (f"unexpected {type(exc).__name__}: {exc} (this is a bug in referee: rerun with --debug and report the "
            "traceback)")


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s: %(message)s")
    json_mode = getattr(args, "json", False)
    shown = progress.chosen(json_mode or getattr(args, "quiet", False), sys.stderr.isatty())
    code, payload, error = EXIT_OK, {}, None
    with warnings.catch_warnings(record=True) as caught, progress.showing(shown):
        warnings.simplefilter("always")
        # ArviZ's notice of its own coming refactor, raised on import, says nothing about the user's data
        warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning)
        try:
            _check(args)
            payload = args.func(args) or {}
            if getattr(args, "failure", None):  # the command finished, and its result says it did not succeed
                code, error = EXIT_ERROR, args.failure
        except BrokenPipeError:
            raise
        except HANDLED as exc:
            code, error = EXIT_ERROR, str(exc).strip("'\"")
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EIO, errno.EBADF) and getattr(exc, "filename", None) is None:
                raise  # standard output could not take what the command printed: `main` says so
            if args.debug:
                raise
            if exc.errno in PATH_ERRORS and getattr(exc, "filename", None) is not None:  # a path the user gave
                code, error = EXIT_ERROR, f"{str(exc.filename)[:200]}: {exc.strerror or exc}"
            else:
                code, error = EXIT_INTERNAL, _bug(exc)
        except Exception as exc:  # noqa: BLE001 - the top level never shows a raw traceback unless asked
            if args.debug:
                raise
            code, error = EXIT_INTERNAL, _bug(exc)
    shown = []
    for w in caught:
        text = f"{w.category.__name__}: {w.message}" if w.category is not UserWarning else str(w.message)
        if text not in shown:
            shown.append(text)
    if json_mode:
        payload = dict(payload, warnings=shown)
        if error:
            payload["error"] = error
        from referee.present.outputs import json_text

        print(json_text(payload))
    for text in shown:
        print(f"warning: {text}", file=sys.stderr)
    if error:
        print(f"referee {args.command}: error: {error}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
