"""`referee socio, judge and judge-agreement`: socio-cognitive metrics and LLM-judge ratings. Each command's parser and
what it runs; heavy modules are imported inside the commands, so that `referee --help` starts at once."""

from __future__ import annotations

import json
from pathlib import Path

from referee.cli.common import (
    _common,
    _count,
    _folder,
    _notes,
    _open_store,
    _out_arg,
    _positive_float,
    _positive_int,
    _say,
    _seed_arg,
    _store_arg,
    _written,
)


def cmd_judge(args) -> dict:
    from referee.io.endpoint import ChatEndpoint
    from referee.io.rubric import load_rubric
    from referee.run.judge import (
        estimate,
        plan,
        read_context,
        return_correlations,
        run_judge,
    )

    rubric = load_rubric(args.rubric)
    context = read_context(args.context)
    if not args.store.exists():
        raise FileNotFoundError(f"{args.store}: no store here; run `referee ingest` first")
    if args.endpoint is None and not args.dry_run:
        raise ValueError("--endpoint URL is needed (or --dry-run to count the calls first)")
    from referee.io.store import Store

    with Store(args.store) as store:
        items = plan(store, rubric, args.model, match_ids=args.match, context=context, limit=args.limit)
        cost = estimate(rubric, items)
        _say(args, f"{rubric.name} (v{rubric.version}, {rubric.source}): {cost['items']} item(s), {cost['cached']} "
                   f"cached, {cost['calls']} to ask; about {cost['tokens_in_estimate']:,} tokens in and "
                   f"{cost['tokens_out_estimate']:,} out")
        if args.dry_run:
            return {"rubric": rubric.name, "dry_run": True, **cost}
        if not len(items):
            raise ValueError(f"the store holds no events to fill rubric {rubric.name}'s {rubric.unit} items")
        endpoint = ChatEndpoint(args.endpoint, args.model, key_env=args.key_env, timeout=args.timeout,
                                retries=args.retries)
        try:
            result = run_judge(store, rubric, endpoint, items, concurrency=args.concurrency,
                               answer_retries=args.answer_retries,
                               prices=(args.price_in, args.price_out) if args.price_in is not None else None)
        finally:
            endpoint.close()
        correlations = return_correlations(result.ratings, store.table("results"))
        folder = _folder(args, store)
    folder.table("ratings", result.ratings)
    if len(correlations):
        folder.table("return_correlations", correlations)
        _say(args, "ratings against the players' returns (Spearman):\n" + correlations.to_string(index=False))
    if len(result.texts):
        folder.table("texts", result.texts)
    if len(result.quarantined):
        folder.table("set_aside", result.quarantined.drop(columns=["parsed"]))
    folder.json("ledger", result.counts)
    folder.notes(result.notes)
    folder.close()
    _notes(args, result)
    c = result.counts
    _say(args, f"asked {c['asked']} ({c['calls']} calls; {c['ok']} ok, {c['malformed']} malformed, {c['failed']} "
               f"failed), reused {c['cached']} cached; tokens {c['tokens_in']:,} in, {c['tokens_out']:,} out"
               + (f"; cost ${c['cost_usd']:.4f}" if c["cost_usd"] is not None else "") + f"; wrote {args.out}/")
    return {"rubric": rubric.name, **c, "notes": result.notes, "written": _written(folder)}


def cmd_judge_agreement(args) -> dict:
    import pandas as pd
    from referee.models.social.agreement import agreement_intervals, paired_ratings

    with _open_store(args) as store:
        measures = store.table("measures")
        folder = _folder(args, store)
    if args.human is not None:
        human = pd.read_csv(args.human)
        need = {"match_id", "player", "name", "value"}
        if not need <= set(human.columns):
            raise ValueError(f"{args.human}: needs columns {sorted(need)} (and optionally other, round)")
        human = human.reindex(columns=["match_id", "player", "other", "round", "name", "value"]).assign(
            kind="judge", rater="human")
        measures = pd.concat([measures, human], ignore_index=True)
    first, second = args.raters
    pairs = paired_ratings(measures, first, second)
    if args.metric:
        pairs = pairs[pairs["name"] == args.metric]
    table = agreement_intervals(pairs[first].to_numpy(), pairs[second].to_numpy(), n_boot=args.bootstrap,
                                seed=args.seed)
    folder.table("agreement", table)
    folder.table("pairs", pairs)
    folder.close()
    _say(args, f"{len(pairs)} items rated by both {first} and {second}")
    _say(args, table.to_string(index=False))
    return {"items": len(pairs), "agreement": table.to_dict("records"), "written": _written(folder)}


def cmd_socio(args) -> dict:
    from referee.present.report import socio_figures
    from referee.run.socio import socio_analysis
    from referee.run.stored import one_runner

    with _open_store(args) as store:
        matches = store.table("matches")
        runner = args.runner or ("compact" if "compact" in set(matches["runner"]) else None)
        matches = one_runner(matches, runner)
        ids = set(matches["match_id"])
        tables = [store.table(t) for t in ("results", "events", "measures")]
        results, events, measures = (t[t["match_id"].isin(ids)] for t in tables)
        folder = _folder(args, store)
    result = socio_analysis(matches, results, events, measures, n_boot=args.bootstrap, seed=args.seed,
                            judges=tuple(args.judges) if args.judges else None)
    folder.table("metrics", result.metrics)
    folder.table("consistency", result.consistency)
    aucs = result.auc_table()
    folder.json("determinants", {"auc": aucs.to_dict("records"), "agreement": result.agreement,
                                 "notes": result.notes,
                                 "weights": {c: d.weights.to_dict("records") for c, d in result.determinants.items()}})
    for name, _, figure in socio_figures(result):
        folder.figure(name, figure)
    folder.notes(result.notes)
    folder.close()
    _say(args, result.consistency.to_string(index=False))
    _say(args, aucs.to_string(index=False))
    if result.agreement:
        _say(args, "judge agreement: " + json.dumps(result.agreement))
    _say(args, "wrote " + ", ".join(str(p) for p in folder.files))
    return {"auc": aucs.to_dict("records"), "consistency": result.consistency.to_dict("records"),
            "agreement": result.agreement, "notes": result.notes, "written": _written(folder)}


def add_parsers(sub) -> None:
    """Add the parsers of judge, judge-agreement, socio to the subparsers `sub`."""
    p = sub.add_parser("judge", help="rate stored events with an LLM judge: a rubric against an OpenAI-compatible "
                       "endpoint, cached in the store")
    p.add_argument("--rubric", required=True, help="a shipped rubric (e.g. compact-influence) or a rubric .toml file")
    p.add_argument("--endpoint", help="the endpoint's base URL, e.g. http://localhost:8000/v1 (not needed with --dry-run)")
    p.add_argument("--model", required=True, help="the model name the endpoint serves; ratings' rater")
    _store_arg(p)
    p.add_argument("--match", action="append", help="judge only this match (repeatable)")
    p.add_argument("--key-env", default="OPENAI_API_KEY", help="environment variable holding the API key (never stored)")
    p.add_argument("--concurrency", type=_positive_int, default=4, help="calls at once (default 4)")
    p.add_argument("--retries", type=_count, default=4, help="retries of a 429, 5xx or timeout, with backoff (default 4)")
    p.add_argument("--answer-retries", type=_count, default=2,
                   help="re-asks of an answer that does not fit the rubric before it is set aside (default 2)")
    p.add_argument("--timeout", type=_positive_float, default=60.0, help="seconds per call (default 60)")
    p.add_argument("--price-in", type=float, help="USD per million input tokens (for the ledger's cost)")
    p.add_argument("--price-out", type=float, default=0.0, help="USD per million output tokens")
    p.add_argument("--context", action="append", default=[], metavar="NAME=PATH",
                   help="a template value the rubric needs: a file for every player, or a folder of PLAYER.txt")
    p.add_argument("--limit", type=_positive_int, help="judge only the first N items")
    p.add_argument("--dry-run", action="store_true", help="print the items, calls and estimated tokens; call nothing")
    _out_arg(p, required=False, default=Path("reports/judge"))
    _common(p)
    p.set_defaults(func=cmd_judge)

    p = sub.add_parser("judge-agreement", help="agreement of two raters on the same items (MAD, exact, within one, "
                       "Krippendorff's alpha) with bootstrap intervals")
    _store_arg(p)
    p.add_argument("--raters", nargs=2, required=True, metavar="RATER", help="two raters (a judge model, or 'human')")
    p.add_argument("--human", type=Path, help="CSV of human ratings (match_id, player, other, round, name, value): "
                   "rater 'human'")
    p.add_argument("--metric", help="compare this measure only (default: every measure both rated)")
    p.add_argument("--bootstrap", type=_count, default=1000, help="bootstrap replicates over items (default 1000)")
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_judge_agreement)

    p = sub.add_parser("socio", help="socio-cognitive metrics, their consistency and what predicts winning (COMPACT)")
    _store_arg(p)
    p.add_argument("--runner", help="the runner whose matches to use (default: compact when the store has it)")
    p.add_argument("--bootstrap", type=_count, default=200,
                   help="bootstrap replicates over matches for the intervals (default 200)")
    p.add_argument("--judges", nargs=2, metavar="RATER", help="the two judges to compare (default: the first two)")
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_socio)
