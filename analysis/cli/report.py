"""`referee report and demo`: the HTML report. Each command's parser and what it runs; heavy modules are imported
inside the commands, so that `referee --help` starts at once."""

from __future__ import annotations

from pathlib import Path

from referee.cli.common import (
    _common,
    _open_store,
    _out_arg,
    _sampling,
    _sampling_args,
    _say,
    _seed_arg,
    _store_arg,
)


def cmd_report(args) -> dict:
    from referee.reporting import build_report

    with _open_store(args) as store:
        index = build_report(store, args.out, fit_models=not args.no_models, seed=args.seed,
                             sampling=_sampling(args), command=["referee"] + list(args.argv))
    _say(args, f"wrote {index}")
    return {"index": str(index)}


def cmd_demo(args) -> dict:
    from referee.reporting import run_demo

    index = run_demo(args.out, store=args.store, fit_models=not args.no_models, sampling=_sampling(args),
                     seed=args.seed, command=["referee"] + list(args.argv))
    _say(args, f"wrote {index}")
    return {"index": str(index)}


def add_parsers(sub) -> None:
    """Add the parsers of report, demo to the subparsers `sub`."""
    p = sub.add_parser("report", help="write the HTML report for a store")
    _store_arg(p)
    _out_arg(p, required=False, default=Path("reports/latest"))
    p.add_argument("--no-models", action="store_true", help="skip the Bayesian fits (a quick report)")
    _sampling_args(p)
    _seed_arg(p)
    _common(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("demo", help="ingest the bundled sample data and write the demo report")
    _out_arg(p, required=False, default=Path("reports/demo"))
    p.add_argument("--store", type=Path, help="store file to create afresh (default OUT/demo.duckdb)")
    p.add_argument("--no-models", action="store_true", help="skip the Bayesian fits (a quick report)")
    _sampling_args(p)
    _seed_arg(p)
    _common(p)
    p.set_defaults(func=cmd_demo)
