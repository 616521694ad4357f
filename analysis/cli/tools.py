"""The command line's own tools, which are not analyses: `referee map` (draft a mapping for logs no runner reads),
`formats` (what referee reads), `info` (what a store holds), `export` (the store as Parquet) and `demo` (the main
job on the bundled samples). The analyses are the job table's commands (`referee.cli.jobs`)."""

from __future__ import annotations

from pathlib import Path

from referee.cli.jobs import add_json, add_option, add_store, argparse_type, open_store
from referee.names import MEASURE_KINDS
from referee.run.options import SAMPLING_OPTIONS, SEED, path, positive_int


def _say(args, text: str = "") -> None:
    """Print human-readable output unless --json was given."""
    if not args.json:
        print(text)


def cmd_map(args) -> dict:
    from referee.io.mapping_draft import draft_mapping, sample_files

    out: Path = args.out
    drafted = None
    if out.is_dir():  # the draft is one file: a folder there is refused in words, before any work
        raise ValueError(f"--out {out}: a folder; name the mapping file to write (e.g. {out / 'mapping.toml'})")
    if out.exists() and not args.force:
        if not args.check:
            args.failure = f"{out} exists: pass --check to check it as it is, or --force to draft it again"
            return {"mapping": str(out), "drafted": False}
        _say(args, f"{out} exists: checking it as it is (--force drafts it again)")
    else:
        drafted = draft_mapping(args.paths, name=args.name, limit=args.files)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(drafted.text, encoding="utf-8")
        _say(args, f"drafted {out} from {len(drafted.files)} sampled file(s):")
        _say(args, "\n".join("  " + line for line in drafted.text.splitlines() if line and not line.startswith("#")))
        for problem in drafted.problems:
            _say(args, f"problem: {problem}")
        if drafted.problems:
            args.failure = f"the draft is incomplete: {drafted.problems[0]}"
    summary = {"mapping": str(out), "drafted": drafted is not None,
               "problems": drafted.problems if drafted else [], "guesses": drafted.guesses if drafted else {}}
    if args.check:
        from referee.io import loaders

        files = drafted.files if drafted else sample_files(loaders.data_files(args.paths), args.files)
        summary["check"] = _check_mapping(args, out, files)
    return summary


def _check_mapping(args, mapping: Path, files: list[Path]) -> dict:
    """Ingest `files` with `mapping` into a throwaway store and print what would be stored."""
    import tempfile

    from referee.io.store import Store

    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "check.duckdb") as store:
        report = store.ingest(files, runner=mapping)
        info = store.info()
        counts = {k: info[k] for k in ("matches", "results", "agents", "events")}
        counts["measures"] = len(store.measures())
        agents = store.agent_counts(8)
        roles = store.event_roles()
    _say(args, f"check: {len(files)} sampled file(s) read with {mapping}: read {report.read:,} = accepted "
               f"{report.accepted:,} + set aside {report.quarantined:,}")
    _say(args, f"  would store {counts['matches']:,} matches, {counts['results']:,} results of {counts['agents']} "
               f"agents, {counts['events']:,} events, {counts['measures']:,} measures")
    if len(agents):
        _say(args, "  agents (results): " + ", ".join(f"{a} ({n})" for a, n in zip(agents["agent"], agents["n"]))
             + (" ..." if counts["agents"] > len(agents) else ""))
    for (_, reason), n in sorted(report.by_reason.items()):
        example = report.quarantine.loc[report.quarantine["reason"] == reason, "message"].head(1).tolist()
        _say(args, f"  set aside, {reason}: {n}" + (f"; e.g. {example[0]}" if example else ""))
    if len(roles):
        _say(args, "  events by type: with an actor / a target / a value / an actor the results rate")
        for row in roles.itertuples():
            _say(args, f"    {row.type}: {row.events:,} events; " + ", ".join(
                f"{name} {getattr(row, name) / row.events:.0%}" for name in ("actor", "target", "value", "rated")))
        bare = roles.loc[(roles["actor"] == 0) & (roles["target"] == 0) & (roles["value"] == 0), "type"].tolist()
        if bare:
            _say(args, f"  types with no actor, target or value: {', '.join(map(str, bare))} (add [event_keys.TYPE] "
                       "where their lines name one)")
    if not counts["results"]:
        args.failure = f"{mapping} stores no results from the sample: ratings would have nothing to compare"
    return {**counts, "read": report.read, "accepted": report.accepted, "quarantined": report.quarantined,
            "set_aside": {reason: n for (_, reason), n in report.by_reason.items()},
            "events_by_type": roles.to_dict("records")}


def cmd_formats(args) -> dict:
    from referee.io import loaders
    from referee.io.loaders import table
    from referee.io.loaders.base import suggest
    from referee.io.resources import shipped

    entries = {**loaders.RUNNERS, loaders.mapped.RUNNER.name: loaders.mapped.RUNNER}
    docs = {name: shipped("formats", runner.page) for name, runner in entries.items()}
    if args.runner:
        if args.runner not in docs:
            raise KeyError(f"unknown runner {args.runner!r}{suggest(args.runner, docs)}; runners: {sorted(docs)}")
        text = docs[args.runner].read_text(encoding="utf-8")
        _say(args, text)
        return {"runner": args.runner, "document": text}
    listing, fields = {}, loaders.runner_fields()
    for name, path in docs.items():
        title = path.read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
        listing[name] = title
        _say(args, f"{name:>10}  {title}")
        for kind, names in fields.get(name, {}).items():
            _say(args, f"{'':>12}{kind}: {', '.join(names)}")
    _say(args, f"\ntable runner columns: required {list(table.REQUIRED)}; optional {list(table.OPTIONAL)}; "
               "map any of them with --map CANONICAL=COLUMN; read extra columns as measures with "
               f"--measure COLUMN=KIND (kinds {list(MEASURE_KINDS)})")
    _say(args, "a runner with no module: --runner FILE.toml (see `referee formats mapped`)")
    _say(args, "`referee formats NAME` prints a runner's format document")
    return {"runners": listing, "fields": fields,
            "table": {"required": list(table.REQUIRED), "optional": list(table.OPTIONAL),
                      "measure_kinds": list(MEASURE_KINDS)}}


def cmd_info(args) -> dict:
    from referee.io.loaders import comparison_unit

    with open_store(args.store) as store:
        info = store.info()
        units = {runner: comparison_unit(runner) for runner in store.runners()}
    for key, value in info.items():
        _say(args, f"{key:>12}  {value}")
    for runner, unit in units.items():
        _say(args, f"{runner}: one comparison is {unit}")
    return info | {"comparison_units": units}


def cmd_export(args) -> dict:
    with open_store(args.store) as store:
        written = store.export_parquet(args.parquet)
    for table, info in written.items():
        _say(args, f"{table:>14}  {info['rows']:>10,} rows  {info['path']}")
    return {"tables": written}


def cmd_demo(args) -> dict:
    from referee.reporting import run_demo

    from referee.run.options import sampling

    index = run_demo(args.out, store=args.store, fit_models=not args.no_models, sampling=sampling(vars(args)),
                     seed=args.seed, command=["referee"] + list(args.argv))
    _say(args, f"wrote {index}")
    return {"index": str(index)}


def add_parsers(sub) -> None:
    """Add the parsers of map, formats, info, export and demo to the subparsers `sub`."""
    p = sub.add_parser(
        "map", help="draft a mapping file for JSON logs (lines, or one document per file) no built-in runner reads",
        description="Read a bounded sample of the logs (the first lines and the end of up to --files files) and "
                    "draft a runner mapping (data/formats/mapped.md): the match, event type, player, time and round "
                    "keys, which event ends a game and how its result is laid out, and where each player's agent "
                    "comes from. Every guess is commented with its evidence. --check ingests the sampled files "
                    "with the mapping into a throwaway store and prints what would be stored.",
        epilog="Exit codes: 0 drafted (and, with --check, results would be stored); 1 the draft is incomplete (no "
               "result line or no agent found: it says so), the file exists (without --check or --force), or "
               "the check stores no results; 2 usage error; 3 internal error.")
    p.add_argument("paths", nargs="+", help="log files or folders (read recursively)")
    p.add_argument("--out", type=path, required=True, metavar="FILE.toml", help="the mapping file to write (or check)")
    p.add_argument("--check", action="store_true",
                   help="ingest the sampled files with the mapping and print what would be stored; an existing "
                        "FILE.toml is checked as it is (your edits kept) unless --force")
    p.add_argument("--force", action="store_true", help="draft again over an existing FILE.toml")
    p.add_argument("--name", help="the runner's name in the draft (default: the logs' folder name)")
    p.add_argument("--files", type=argparse_type(positive_int), default=300, metavar="N",
                   help="files sampled (default 300)")
    add_json(p)
    p.set_defaults(func=cmd_map, out_is_folder=False)  # --out is the mapping file

    p = sub.add_parser("formats", help="list the runners referee reads, or print one runner's format document")
    p.add_argument("runner", nargs="?", help="a runner (e.g. table, records, mapped)")
    add_json(p)
    p.set_defaults(func=cmd_formats)

    p = sub.add_parser("info", help="count what the store holds")
    add_store(p)
    add_json(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("export", help="write the store as Parquet (data tables partitioned by runner and game) for "
                       "DuckDB, pandas, Dask or a cluster's workers")
    add_store(p)
    p.add_argument("--parquet", type=path, required=True, metavar="DIR", help="a new or empty folder")
    add_json(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("demo", help="ingest the bundled sample data and write the demo report")
    p.add_argument("--out", type=path, default=Path("reports/demo"), help="the report's folder (default reports/demo)")
    p.add_argument("--store", type=Path, help="store file to create afresh (default OUT/demo.duckdb)")
    p.add_argument("--no-models", action="store_true", help="skip the Bayesian fits (a quick report)")
    for option in SAMPLING_OPTIONS + (SEED,):
        add_option(p, option)
    add_json(p)
    p.set_defaults(func=cmd_demo)
