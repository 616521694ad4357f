"""`referee ingest, map, formats, info and export`: logs into the store, a drafted mapping for logs no runner reads,
what it reads, what it holds, Parquet out. Each
command's parser and what it runs; heavy modules are imported inside the commands, so that `referee --help` starts
at once."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from referee.cli.common import _common, _open_store, _pairs, _positive_int, _say, _store_arg
from referee.names import MEASURE_KINDS, RUNNER_NAMES


def cmd_ingest(args) -> dict:
    from referee.io import loaders
    from referee.io.loaders.table import read_mapping
    from referee.io.store import Store

    mapping, measures = read_mapping(args.mapping) if args.mapping else ({}, {})
    mapping.update(_pairs(args.map, "--map", "CANONICAL=COLUMN"))
    measures.update(_pairs(args.measure, "--measure", "COLUMN=KIND"))
    existed = args.store.exists()
    try:
        with Store(args.store) as store:
            report = store.ingest(args.paths, runner=args.runner, catalogue=args.catalogue, mapping=mapping,
                                  measures=measures, strict=args.strict, replace=args.replace,
                                  progress=os.environ.get("REFEREE_PROGRESS") == "1", phase=args.phase,
                                  score=args.score)
    except BaseException:
        if not existed:  # a refused or failed ingest into a new store leaves no file behind
            for leftover in (args.store, Path(f"{args.store}.wal")):
                try:
                    leftover.unlink(missing_ok=True)
                except OSError:  # nothing was made there (a file stands where its folder would be)
                    pass
        raise
    totals = report.as_dict()
    if args.per_file:
        files = report.files.drop(columns=["whole"]).assign(runner=report.files["runner"].fillna("(none)"))
        _say(args, files.to_string(index=False) + "\n")
    for row in report.by_runner().itertuples():
        _say(args, f"{row.runner}: {row.files} file(s) {row.status}, read {row.read} = accepted {row.accepted} "
                   f"+ quarantined {row.quarantined}")
    _say(args, f"total: read {totals['read']} = accepted {totals['accepted']} + quarantined {totals['quarantined']}")
    for (runner, reason), n in sorted(report.by_reason.items()):
        example = report.quarantine.loc[report.quarantine["reason"] == reason, "message"].head(1).tolist()
        _say(args, f"  quarantined ({'no runner' if runner == '(none)' else runner}), {reason}: {n}"
                   + (f"; e.g. {example[0]}" if example else ""))
    for warning in report.warnings:
        warnings.warn(warning, UserWarning, stacklevel=1)
    if report.failed_files:
        args.failure = (f"{len(report.failed_files)} file(s) could not be read as any runner's, e.g. "
                        f"{report.failed_files[0]} (see the quarantine)")
    elif report.read and not report.accepted:
        args.failure = "nothing was accepted: every record read was quarantined"
    elif not len(report.files):
        args.failure = f"no data files ({', '.join(loaders.DATA_SUFFIXES)}) under {', '.join(map(str, args.paths))}"
    return totals


def cmd_map(args) -> dict:
    from referee.io.mapping_draft import draft_mapping, sample_files

    out: Path = args.out
    drafted = None
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
        counts = store.query("SELECT (SELECT count(*) FROM matches) AS matches, (SELECT count(*) FROM results) AS results,"
                             " (SELECT count(DISTINCT agent) FROM results) AS agents, (SELECT count(*) FROM events) AS "
                             "events, (SELECT count(*) FROM measures) AS measures").iloc[0].to_dict()
        agents = store.query("SELECT agent, count(*) AS n FROM results GROUP BY agent ORDER BY n DESC, agent LIMIT 8")
    counts = {k: int(v) for k, v in counts.items()}
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
    if not counts["results"]:
        args.failure = f"{mapping} stores no results from the sample: ratings would have nothing to compare"
    return {**counts, "read": report.read, "accepted": report.accepted, "quarantined": report.quarantined,
            "set_aside": {reason: n for (_, reason), n in report.by_reason.items()}}


def cmd_formats(args) -> dict:
    from referee.io import loaders
    from referee.io.loaders import table
    from referee.io.loaders.base import suggest
    from referee.io.resources import shipped

    docs = {name: shipped("formats", f"{name}.md") for name in list(loaders.RUNNERS) + ["mapped"]}
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
    from referee.io.store import Store

    if not args.store.exists():
        raise FileNotFoundError(f"{args.store}: no store here; run `referee ingest` first")
    from referee.io.loaders import comparison_unit

    with Store(args.store, read_only=True) as store:
        info = store.info()
        units = {runner: comparison_unit(runner) for runner in store.runners()}
    for key, value in info.items():
        _say(args, f"{key:>12}  {value}")
    for runner, unit in units.items():
        _say(args, f"{runner}: one comparison is {unit}")
    return info | {"comparison_units": units}


def cmd_export(args) -> dict:
    from referee.io.export import export_parquet

    with _open_store(args) as store:
        written = export_parquet(store, args.parquet)
    for table, info in written.items():
        _say(args, f"{table:>14}  {info['rows']:>10,} rows  {info['path']}")
    return {"tables": written}


def add_parsers(sub) -> None:
    """Add the parsers of ingest, map, formats, info, export to the subparsers `sub`."""
    p = sub.add_parser(
        "ingest", help="read match logs into the store",
        description="Read match logs into the store in one transaction. Each file's runner is detected (the "
                    "most likely first, the next when its first records do not fit) unless --runner is given. "
                    "Records that cannot be used are quarantined with their reason; read = accepted + "
                    "quarantined. `referee formats` lists the runners and what each reads.",
        epilog="Exit codes: 0 records were accepted and every file was read; 1 nothing was accepted, a file "
               "could not be read as any runner's (unreadable, empty, or another format: quarantined whole), "
               "no data files were found, or --strict refused (the store is left as it was, and a store the "
               "command created is removed); 2 usage error; 3 internal error. Files already ingested are "
               "skipped and do not make the exit code non-zero.")
    p.add_argument("paths", nargs="+", help="files or directories (read recursively)")
    p.add_argument("--runner", metavar="NAME|FILE.toml",
                   help=f"force a loader instead of detecting per file: one of {', '.join(sorted(RUNNER_NAMES))}, "
                        "or a runner mapping file describing another runner's JSON logs (lines, or one document "
                        "per file)")
    _store_arg(p)
    p.add_argument("--catalogue", type=Path, help="scenario catalogue TOML (Concordia default: the 2024 contest's)")
    p.add_argument("--map", action="append", default=[], metavar="CANONICAL=COLUMN",
                   help="table runner: take a canonical column from another column name (repeatable; "
                        "`referee formats table` lists the canonical columns)")
    p.add_argument("--measure", action="append", default=[], metavar="COLUMN=KIND",
                   help=f"table runner: read an extra column as a measure of KIND ({', '.join(MEASURE_KINDS)}); "
                        "repeatable; outcomes reach `referee audit`")
    p.add_argument("--mapping", type=Path, help="table runner: TOML file with [columns] and [measures] tables")
    p.add_argument("--phase", help="the contest phase of every match read (e.g. development, evaluation, cross-play); "
                   "default: the catalogue's phase of the scenario, if any")
    p.add_argument("--score", help="sotopia: the SOTOPIA-EVAL dimension that is the score (default goal; e.g. "
                                   "overall_score); the other dimensions stay measures")
    p.add_argument("--strict", action="store_true", help="fail, writing nothing, if any record is quarantined")
    p.add_argument("--replace", action="store_true",
                   help="remove each file's earlier contribution (rows, quarantine, source; by path or content) "
                        "and ingest it again, in one transaction")
    p.add_argument("--verbose", dest="per_file", action="store_true",
                   help="one line per file (runner, how it was detected, counts) besides the summary")
    _common(p)
    p.set_defaults(func=cmd_ingest)

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
    p.add_argument("--out", type=Path, required=True, metavar="FILE.toml", help="the mapping file to write (or check)")
    p.add_argument("--check", action="store_true",
                   help="ingest the sampled files with the mapping and print what would be stored; an existing "
                        "FILE.toml is checked as it is (your edits kept) unless --force")
    p.add_argument("--force", action="store_true", help="draft again over an existing FILE.toml")
    p.add_argument("--name", help="the runner's name in the draft (default: the logs' folder name)")
    p.add_argument("--files", type=_positive_int, default=300, metavar="N", help="files sampled (default 300)")
    _common(p)
    p.set_defaults(func=cmd_map, out_is_folder=False)  # --out is the mapping file

    p = sub.add_parser("formats", help="list the runners referee reads, or print one runner's format document")
    p.add_argument("runner", nargs="?", help="a runner (e.g. table, records, mapped)")
    _common(p)
    p.set_defaults(func=cmd_formats)

    p = sub.add_parser("info", help="count what the store holds")
    _store_arg(p)
    _common(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("export", help="write the store as Parquet (data tables partitioned by runner and game) for "
                       "DuckDB, pandas, Dask or a cluster's workers")
    _store_arg(p)
    p.add_argument("--parquet", type=Path, required=True, metavar="DIR", help="a new or empty folder")
    _common(p)
    p.set_defaults(func=cmd_export)
