"""`referee paper concordia|compact|aoa`: a seed paper's numbered figures and tables by its own protocol."""

from __future__ import annotations

from referee.cli.common import _common, _folder, _open_store, _out_arg, _positive_int, _say, _seed_arg, _store_arg, _written

PAPERS = ("concordia", "compact", "aoa")


def cmd_paper(args) -> dict:
    from referee.paper.items import PaperWriter

    with _open_store(args) as store:
        writer = PaperWriter(_folder(args, store))
        if args.paper == "concordia":
            from referee.paper.concordia import concordia_paper

            sampling = {k: v for k, v in (("draws", args.draws), ("tune", args.tune), ("chains", args.chains)) if v}
            protocol, notes = concordia_paper(store, writer, finalists=args.finalists, models=not args.no_models,
                                              sampling=sampling, seed=args.seed)
        elif args.paper == "compact":
            from referee.paper.compact import compact_paper

            protocol, notes = compact_paper(store, writer, runner=args.runner, seed=args.seed)
        else:
            from referee.paper.aoa import aoa_paper

            protocol, notes = aoa_paper(store, writer, match=args.match, seed=args.seed)
    manifest = writer.close(args.paper, protocol, notes)
    for item in manifest["items"]:
        _say(args, f"{item['number']:<32} " + (", ".join(item["files"]) if item["files"] else f"not made: {item['reason']}"))
    for note in notes:
        _say(args, f"note: {note}")
    _say(args, f"wrote {args.out}/manifest.json: {manifest['made']} item(s) made, {manifest['not_made']} not made "
               "(each with its reason)")
    return {"made": manifest["made"], "not_made": manifest["not_made"], "written": _written(writer.folder)}


def add_parsers(sub) -> None:
    p = sub.add_parser("paper", help="a seed paper's numbered figures and tables, made by the paper's own protocol, "
                                     "with manifest.json listing every number and how it was made")
    p.add_argument("paper", choices=PAPERS, help="concordia (the 2024 contest), compact (communicate-predict-act) or "
                                                 "aoa (Age of Agents EVAL 01)")
    _store_arg(p)
    p.add_argument("--finalists", type=lambda t: [a.strip() for a in t.split(",") if a.strip()], metavar="A,B,...",
                   help="concordia: Tables 8-12's finalists (default the paper's: top five by evaluation Elo plus "
                        "rational_agent)")
    p.add_argument("--no-models", action="store_true", help="concordia: skip the Bayesian fits (Figures 2, 3 right, "
                                                            "6, 7), listed in the manifest as not made")
    p.add_argument("--draws", type=_positive_int, help="concordia: posterior draws per chain (default the fits' own)")
    p.add_argument("--tune", type=_positive_int, help="concordia: tuning steps per chain")
    p.add_argument("--chains", type=_positive_int, help="concordia: chains")
    p.add_argument("--runner", help="compact: whose matches (default every match)")
    p.add_argument("--match", help="aoa: the season's match id (default the first aoa season)")
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_paper)
