"""The jobs that write files of their own kind (`referee ingest, simulate`; the report and the paper are in
`referee.composing`; `referee.ingest(...)` and
so on): each one function from typed options (`referee.run.job_table.JOBS`) to a `Result` whose fields name what
was written."""

from __future__ import annotations

import warnings
from pathlib import Path

from referee.names import DEFAULT_STORE
from referee.run.options import pairs
from referee.result import IngestJobResult, WrittenJobResult


def ingest(paths: list, store=DEFAULT_STORE, runner: str | None = None, catalogue=None, mapping=None,
           map: list[str] | None = None, measure: list[str] | None = None, phase: str | None = None,
           score: str | None = None, strict: bool = False, replace: bool = False, per_file: bool = False) -> IngestJobResult:
    """Read log files or folders into the store file `store` (created when new; a refused or failed ingest into
    a new store leaves no file): every record accepted or set aside with its reason. The main table counts by
    runner; `files` one row per file with `per_file`; `failure` says why an ingest that finished accepted
    nothing worth keeping. Fields: read, accepted, quarantined and the rest of the ingest's totals, and `reasons`
    (runner, reason, count and one example's file, record, field and message per reason)."""
    from referee.io import loaders
    from referee.io.loaders.table import check_mapping, read_mapping
    from referee.io.store import Store

    target = Path(store)
    columns, measures, values = read_mapping(mapping) if mapping else ({}, {}, {})
    if mapping:  # the file's columns against the runner that reads them, the error naming the file
        _, known, name = loaders.mapping_columns(runner, columns)
        check_mapping(columns, measures, str(mapping), known, name)
    columns.update(pairs(map, "--map", "CANONICAL=COLUMN"))
    measures.update(pairs(measure, "--measure", "COLUMN=KIND"))
    existed = target.exists()
    import logging

    store_log = logging.getLogger("referee.io.store")  # its warnings are this job's, said once below (warnings.warn)
    level = store_log.level
    store_log.setLevel(logging.ERROR)
    try:
        with Store(target) as opened:
            report = opened.ingest(paths, runner=runner, catalogue=catalogue, mapping=columns, measures=measures,
                                   strict=strict, replace=replace, phase=phase, score=score, values=values)
    except BaseException:
        store_log.setLevel(level)
        if not existed:  # a refused or failed ingest into a new store leaves no file behind
            for leftover in (target, Path(f"{target}.wal")):
                try:
                    leftover.unlink(missing_ok=True)
                except OSError:  # nothing was made there (a file stands where its folder would be)
                    pass
        raise
    store_log.setLevel(level)
    totals = report.as_dict()
    lines = [f"{row.runner}: {row.files} file(s) {row.status}, read {row.read} = accepted {row.accepted} "
             f"+ quarantined {row.quarantined}" for row in report.by_runner().itertuples()]
    lines.append(f"total: read {totals['read']} = accepted {totals['accepted']} + quarantined {totals['quarantined']}")
    reasons = []  # one example per reason, with its file, record and field (`--json` carries them)
    for (who, reason), n in sorted(report.by_reason.items()):
        found = report.quarantine[report.quarantine["reason"] == reason].head(1)
        example = found[["source_file", "record", "field", "message"]].to_dict("records")[0] if len(found) else None
        reasons.append({"runner": None if who == "(none)" else who, "reason": reason, "count": n, "example": example})
        lines.append(f"  quarantined ({'no runner' if who == '(none)' else who}), {reason}: {n}"
                     + (f"; e.g. {example['message']}" if example else ""))
    for warning in report.warnings:
        warnings.warn(warning, UserWarning, stacklevel=1)
    failure = None
    if report.failed_files:
        first = report.quarantine[report.quarantine["record"] == "-"].head(1)
        n = len(report.failed_files)
        if not len(first):
            failure = f"{n} file(s) could not be read, e.g. {report.failed_files[0]} (see the quarantine)"
        elif first["runner"].notna().iloc[0]:  # read as a runner's (named or detected), every record at fault
            failure = f"{n} file(s) set aside whole, e.g. {first['message'].iloc[0][:300]}"
        else:
            failure = f"{n} file(s) could not be read as any runner's, e.g. {first['message'].iloc[0][:300]}"
    elif report.read and not report.accepted:
        failure = "nothing was accepted: every record read was quarantined"
    elif not len(report.files):
        failure = f"no data files ({', '.join(loaders.DATA_SUFFIXES)}) under {', '.join(str(p) for p in paths)}"
    tables = {}
    if per_file:
        tables["files"] = report.files.drop(columns=["whole"]).assign(runner=report.files["runner"].fillna("(none)"))
    return IngestJobResult("ingest", tables, fields=dict(totals, store=str(target), reasons=reasons), lines=lines, value=report,
                  failure=failure)


def simulate(runner: str, out, agents: int | None = None, seed: int = 0, **options) -> WrittenJobResult:
    """Write simulated logs of `runner` (`referee.run.simulators.SIMULATORS`) from known parameters into folder
    `out` (logs/ and truth.json); `agents` defaults to the simulator's own. Fields: `written`, the files."""
    from referee.present.outputs import ResultsFolder
    from referee.run.simulators import SIMULATORS

    spec = SIMULATORS[runner]
    own = {o.name for o in spec.options}
    foreign = sorted(k for k, v in options.items() if k not in own and v not in (None, False))
    if foreign:
        raise ValueError(f"simulate {runner} has no option {foreign[0]!r}; its options: {', '.join(sorted(own))}")
    given = {k: v for k, v in options.items() if k in own and v is not None}
    from referee.present.outputs import check_writable

    out = check_writable(out)  # a file where the folder would be is refused in words, before any work
    paths = spec.run(out, agents or spec.agents, seed, **given)
    folder = ResultsFolder(out, seed=seed)
    folder.files += sorted(f for f in out.rglob("*")  # the simulator's own files
                           if f.is_file() and f.name not in ("manifest.json", "provenance.json"))
    folder.close()
    written = [str(p) for p in paths.values()] + [str(out / "provenance.json")]
    return WrittenJobResult("simulate", {}, fields={"written": written}, lines=["wrote " + ", ".join(written[:-1])])
