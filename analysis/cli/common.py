"""What every command shares: printing, the results folder, argument types, the store's selected tables,
the sampling and executor options, and the option groups."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from referee.models.registry import CHAINS, DRAWS, LAYOUT_DRAWS, LAYOUT_TUNE, TUNE
from referee.names import DEFAULT_STORE

if TYPE_CHECKING:  # the heavy modules, imported where used
    from referee.io.store import Store
    from referee.present.outputs import ResultsFolder


def _say(args, text: str = "") -> None:
    """Print human-readable output unless --json was given."""
    if not args.json:
        print(text)


def _notes(args, fit) -> None:
    for note in getattr(fit, "notes", []):
        _say(args, f"note: {note}")


def _folder(args, store: Store | None = None, extra: dict | None = None) -> ResultsFolder:
    from referee.present.outputs import ResultsFolder

    return ResultsFolder(args.out, command=["referee"] + list(args.argv), seed=getattr(args, "seed", None),
                         store=store, extra=extra)


def _written(folder: ResultsFolder) -> list[str]:
    return [str(p) for p in folder.files]


def _positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _count(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _float_where(text: str, ok, what: str) -> float:
    """`text` as a float for which `ok(value)` holds, else argparse's error saying it must be `what`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
    return value


def _positive_float(text: str) -> float:
    return _float_where(text, lambda v: math.isfinite(v) and v > 0, "a positive finite number")


def _probability(text: str) -> float:
    return _float_where(text, lambda v: 0 <= v < 1, "a probability in [0, 1)")


def _finite_float(text: str) -> float:
    return _float_where(text, math.isfinite, "a finite number")


def _dims_range(text: str) -> range:
    lo, sep, hi = text.partition("-")
    try:
        start, stop = int(lo), int(hi if sep else lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected D or LOW-HIGH (e.g. 1-7), got {text!r}") from None
    if not 1 <= start <= stop <= 7:
        raise argparse.ArgumentTypeError(f"dimensions must satisfy 1 <= LOW <= HIGH <= 7, got {text!r}")
    return range(start, stop + 1)


def _pairs(pairs: list[str], option: str, form: str) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option} takes {form}, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def _open_store(args) -> Store:
    if not args.store.exists():
        raise FileNotFoundError(f"{args.store}: no store here; run `referee ingest` first")
    from referee.io.store import Store

    return Store(args.store, read_only=True)


def _stored_tables(args):
    """(the chosen runner's matches in the chosen phases, their results, the results folder with the store's
    provenance)."""
    from referee.run.stored import stored_tables

    with _open_store(args) as store:
        matches, results = stored_tables(store, args.runner, getattr(args, "phase", None), getattr(args, "where", []))
        return matches, results, _folder(args, store)


def _excluded(args, matches, results) -> list[str]:
    """Say how many of `matches` are test runs, and how many forfeits and aborted matches `results` hold, that
    ratings treat apart; returns those notes (empty when there are none)."""
    from referee.prepare.selection import exclusion_note, outcome_note

    notes = [n for n in (exclusion_note(matches), outcome_note(results)) if n]
    for note in notes:
        _say(args, f"note: {note}")
    return notes


def _stored_comparisons(args):
    """(comparisons of the chosen runner's matches, the results folder with the store's provenance)."""
    from referee.prepare.comparisons import comparisons_from_tables

    matches, results, folder = _stored_tables(args)
    folder.notes(_excluded(args, matches, results))
    return comparisons_from_tables(matches, results, parallel=args.parallel), folder


def _model_data(args):
    from referee.run.score_models import model_scores

    with _open_store(args) as store:
        data = model_scores(store, phases=args.phase)
        folder = _folder(args, store)
    return data, folder


def _fit_payload(args, fit, table, folder) -> dict:
    _say(args, table.to_string(index=False))
    _notes(args, fit)
    _say(args, f"diagnostics: {json.dumps(fit.diagnostics)}")
    _say(args, "wrote " + ", ".join(str(p) for p in folder.files))
    return {"model": fit.model, "diagnostics": fit.diagnostics, "notes": fit.notes,
            "table": table.to_dict("records"), "written": _written(folder)}


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object (results, notes, warnings, files)")


def _store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", type=Path, default=DEFAULT_STORE, help=f"DuckDB store file (default {DEFAULT_STORE})")


def _seed_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=_int, default=0, help="seed of every random choice (default 0)")


def _out_arg(p: argparse.ArgumentParser, required: bool = True, default: Path | None = None) -> None:
    p.add_argument("--out", type=Path, required=required, default=default,
                   help="results folder (tables, figures, notes, diagnostics, manifest.json, provenance.json)"
                   + (f"; default {default}" if default else ""))


def _sampling_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sampling (every Bayesian fit; the defaults converge at contest scale)")
    g.add_argument("--draws", type=_positive_int, help=f"draws per chain after tuning (default {DRAWS}; tag "
                   f"effects 1500, the Measurement Layout {LAYOUT_DRAWS}, the audit's regression 5000)")
    g.add_argument("--tune", type=_count, help=f"tuning steps per chain (default {TUNE}; the Measurement Layout {LAYOUT_TUNE})")
    g.add_argument("--chains", type=_positive_int, help=f"chains (default {CHAINS}; R-hat needs several)")
    g.add_argument("--sampler", choices=["auto", "pymc", "nutpie"], default="auto",
                   help="auto (default): nutpie when installed, else PyMC's NUTS")


def _prior_sd(text: str) -> float | None:
    """A positive number of Elo points, or 'none'."""
    return None if text.strip().lower() == "none" else _positive_float(text)


def _sampling(args) -> dict:
    """The sampling options given on the command line (draws, tune, chains, sampler); the ones left out
    are each model's default."""
    return {k: getattr(args, k) for k in ("draws", "tune", "chains", "sampler") if getattr(args, k, None) is not None}


def _scheduler(text: str) -> str:
    """A --scheduler value checked before any work: 'local:N' with N a whole number from 1, or a Dask address
    PROTOCOL://HOST:PORT (or HOST:PORT)."""
    import re

    if text.startswith("local:"):
        count = text.split(":", 1)[1]
        if not count.isdigit() or int(count) < 1:
            raise argparse.ArgumentTypeError(f"{text!r}: local:N needs N, the number of worker processes, to be a "
                                             "whole number from 1 (e.g. local:2)")
        return text
    if not re.fullmatch(r"(?:[a-z][a-z0-9+.-]*://)?[^\s:/]+:\d{1,5}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a scheduler address: give tcp://HOST:PORT (an existing Dask "
                                         "scheduler) or local:N (a local cluster of N processes)")
    return text


def _executor_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where the sweep runs (bootstrap blocks, folds, simulations; same results anywhere)")
    g.add_argument("--jobs", type=_positive_int, default=1, help="local worker processes (default 1: this process)")
    g.add_argument("--scheduler", type=_scheduler, metavar="tcp://HOST:PORT|local:N",
                   help="an existing Dask scheduler, or local:N for a Dask LocalCluster of N processes")
    g.add_argument("--exchange", type=Path, metavar="DIR",
                   help="folder the sweep's inputs are written to as Parquet; every worker must reach it "
                        "(default: a temporary folder; give a shared path for a remote cluster)")


def _executor(args):
    """The executor the sweep options ask for (a context manager), or a null context for an in-process run."""
    import contextlib

    from referee.run.executor import executor_from

    found = executor_from(args.jobs, args.scheduler, args.exchange)
    return found if found is not None else contextlib.nullcontext()


def _phase_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--phase", action="append", metavar="NAME",
                   help="only matches of this contest phase (repeatable: several phases pooled; default every match)")


def _data_args(p: argparse.ArgumentParser) -> None:
    _store_arg(p)
    p.add_argument("--runner", help="use this runner's matches (required when the store holds several)")
    _phase_arg(p)
    p.add_argument("--parallel", action="store_true",
                   help="add COMPACT's parallel-game comparisons (same game, size, framing and communication, "
                   "identical opponents)")
    p.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                   help="only matches with this value, e.g. communication=true (repeatable)")
    _seed_arg(p)
