"""`referee audit`: the construct-validity audit of a scoring metric. Each command's parser and what it runs; heavy
modules are imported inside the commands, so that `referee --help` starts at once."""

from __future__ import annotations

from pathlib import Path

from referee.cli.common import (
    _common,
    _folder,
    _open_store,
    _out_arg,
    _positive_int,
    _sampling,
    _sampling_args,
    _say,
    _seed_arg,
    _store_arg,
    _written,
)
from referee.models.registry import DIRECTIONS


def _outcome_arg(text: str) -> tuple[str, str | None]:
    """'NAME' or 'NAME:higher' / 'NAME:lower' -> (name, direction or None)."""
    name, sep, way = text.partition(":")
    if sep and way not in DIRECTIONS:
        raise ValueError(f"--outcome takes NAME, NAME:higher or NAME:lower (which is better), got {text!r}")
    return name, way or None


def cmd_audit(args) -> dict:
    from referee.present.audit_report import write_audit
    from referee.run.audit import audit_frame, default_outcomes, formula_from, run_audit

    given = dict(_outcome_arg(o) for o in args.outcome or [])
    with _open_store(args) as store:
        frame, events = audit_frame(store, runner=args.runner, match=args.match)
        outcomes = list(given) or default_outcomes(frame, store.table("measures"))
        undeclared = [o for o in outcomes if o not in frame.columns and store.query(
            "SELECT count(*) FROM results WHERE json_extract(attrs, ?) IS NOT NULL", ["$." + o]).iloc[0, 0]]
        if undeclared:
            name = undeclared[0]
            raise ValueError(f"outcome {name!r} was a column of the ingested file but was not declared as a measure, "
                             f"so it is kept only in results.attrs; ingest again declaring it: referee ingest FILE "
                             f"--measure {name}=outcome, then audit with --outcome {name}:higher or {name}:lower")
        folder = _folder(args, store)
    formula = formula_from(args.formula, frame) if args.formula else None
    telemetry = args.telemetry or ("universal" if "universal" in frame.columns else None)
    result = run_audit(frame, events, formula, outcomes, args.group_by or [], telemetry, top_k=args.top_k,
                       seed=args.seed, bayes=not args.no_bayes, directions={o: d for o, d in given.items() if d},
                       sampling=_sampling(args))
    _say(args, "outcomes: " + ", ".join(result["outcomes"]))
    paths = write_audit(result, frame, folder, outcomes[0])
    folder.close()
    _say(args, paths["markdown"].read_text())
    _say(args, "wrote " + ", ".join(str(p) for p in folder.files))
    return {"verdict": result["summary"]["verdict"], "checks": result.table().to_dict("records"),
            "notes": result.notes, "diagnostics": result.diagnostics, "written": _written(folder)}


def add_parsers(sub) -> None:
    """Add the parsers of audit to the subparsers `sub`."""
    p = sub.add_parser("audit", help="construct-validity audit of a score against ground-truth outcomes")
    _store_arg(p)
    p.add_argument("--formula", type=Path, help="scoring formula TOML (e.g. data/formulas/aoa_eval01.toml)")
    p.add_argument("--outcome", action="append", metavar="NAME[:higher|:lower]",
                   help="outcome measure and which way is better (repeatable; default direction: the formula's "
                        "[outcomes], else lower for rank/place/position, else higher; default outcomes: the data's "
                        "outcome measures, else the derived 'win', refused when it only restates the score)")
    p.add_argument("--group-by", action="append", metavar="NAME",
                   help="column that, with the outcomes, defines an identical outcome (e.g. team)")
    p.add_argument("--telemetry", help="process-telemetry column to report beside the outcome (default: universal)")
    p.add_argument("--top-k", type=_positive_int, default=3, help="how many top-ranked players to inspect (default 3)")
    p.add_argument("--runner", help="audit this runner's matches")
    p.add_argument("--match", help="audit one match (e.g. aoa:eval01)")
    p.add_argument("--no-bayes", action="store_true", help="skip the Bayesian regression in the assignment-luck check")
    _sampling_args(p)
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_audit)
