"""`referee plan`: the next matches or scenarios to run. Each command's parser and what it runs; heavy modules are
imported inside the commands, so that `referee --help` starts at once."""

from __future__ import annotations

import json
from pathlib import Path

from referee.cli.common import (
    _common,
    _data_args,
    _excluded,
    _model_data,
    _notes,
    _out_arg,
    _positive_float,
    _positive_int,
    _sampling,
    _sampling_args,
    _say,
    _stored_tables,
    _written,
)
from referee.models.registry import PLAN_RULES


def cmd_plan(args) -> dict:
    from referee.prepare.comparisons import comparable_agents, comparisons_from_tables
    from referee.present.plan_figures import plot_power_curve
    from referee.run.plan import plan, power_curve

    if args.scenarios:
        return _scenario_plan(args)
    matches, results, folder = _stored_tables(args)
    excluded = _excluded(args, matches, results)
    comparisons = comparisons_from_tables(matches, results)
    if comparisons.empty:
        raise ValueError("no comparisons in the selected matches: ingest some first, or check --runner / --where")
    notes = list(excluded)
    out: dict = {"written": None}
    if args.power:
        pair = tuple(args.pair.split(",", 1)) if args.pair else None
        curve = power_curve(comparisons, args.delta, pair=pair, sims=args.sims, seed=args.seed)
        folder.table("power", curve)
        folder.figure("power", plot_power_curve(curve, args.delta))
        enough = curve[curve["power"] >= 0.8]
        found = (f"about {int(enough['matches'].iloc[0])} matches of the current design separate two agents "
                 f"{args.delta:g} Elo apart with 80 % power" if len(enough) else
                 f"80 % power is not reached within {int(curve['matches'].max())} matches")
        notes.append(found)
        _say(args, curve.to_string(index=False))
        _say(args, found)
        out["power"] = curve.to_dict("records")
    else:
        result = plan(comparisons, args.budget, target=args.target, rule=args.rule, players=args.players,
                      seed=args.seed, agents=comparable_agents(matches, results))
        folder.table("plan", result.matches)
        folder.table("ratings", result.ratings)
        _say(args, result.matches.to_string(index=False))
        counts = result.matches["rule"].value_counts().to_dict()
        notes.append(f"{len(result.matches)} matches proposed for target {args.target} by {args.rule}: "
                     + ", ".join(f"{n} {k}" for k, n in counts.items()))
        out["plan"] = result.matches.to_dict("records")
    folder.notes(notes)
    folder.close()
    for note in notes:
        _say(args, f"note: {note}")
    out.update(notes=notes, written=_written(folder))
    return out


def _scenario_plan(args) -> dict:
    """`referee plan --scenarios N`: the scenarios (tag profiles) that would most shrink the tag coefficients
    now least known (`referee.models.scores.scenario_design`), or with `--model measurement-layout` the capabilities
    now least known (`referee.run.scenario_plan`)."""
    from referee.models.scores.scenario_design import next_scenarios

    (scores, scenarios, tags), folder = _model_data(args)
    if args.model == "measurement-layout":
        return _layout_scenario_plan(args, scores, scenarios, tags, folder)
    played = set(scores["scenario"])
    candidates = sorted(set(scenarios["scenario"]) - played)
    table = next_scenarios(scores, tags, candidates, args.scenarios, profiles=args.profiles)
    if table.empty:
        raise ValueError("no candidate scenario: every catalogue scenario is played; add --profiles for "
                         "hypothetical tag profiles")
    folder.table("scenarios", table)
    note = (f"{len(table)} scenario(s) proposed from {len(candidates)} unplayed catalogue scenario(s)"
            + (" and hypothetical profiles" if args.profiles else "") + "; sd on the logit scale of the mean score, "
            "by a normal approximation of the tag-effects model (scenario-level information)")
    folder.notes([note])
    folder.close()
    _say(args, table.to_string(index=False))
    _say(args, f"note: {note}")
    return {"scenarios": table.to_dict("records"), "notes": [note], "written": _written(folder)}


def _layout_scenario_plan(args, scores, scenarios, tags, folder) -> dict:
    """`referee plan --scenarios N --model measurement-layout`: from the posterior of `--posterior` (an idata.nc
    that `referee fit measurement-layout` wrote, or its folder), or a layout fitted now."""
    import arviz as az
    from referee.models.fit import diagnose
    from referee.models.scores.layout_design import layout_draws
    from referee.models.scores.measurement_layout import DIAGNOSED
    from referee.run.scenario_plan import layout_scenario_plan
    from referee.run.score_models import fit_store_layout

    notes = []
    if args.posterior:
        path = args.posterior / "idata.nc" if args.posterior.is_dir() else args.posterior
        if not path.is_file():
            raise ValueError(f"--posterior {args.posterior}: no such file (give the idata.nc that `referee fit "
                             "measurement-layout` wrote, or its folder)")
        idata = az.from_netcdf(str(path))
        draws = layout_draws(idata)  # a clear error for a posterior that is not a layout's, before diagnosing it
        diagnostics = diagnose(idata, DIAGNOSED)  # warns when not converged
        notes.append(f"Capabilities' posterior read from {path} (diagnostics {json.dumps(diagnostics)}).")
    else:
        fit, _ = fit_store_layout(scores, scenarios, tags, seed=args.seed, **_sampling(args))
        _notes(args, fit)
        draws = layout_draws(fit.idata)
        notes += fit.notes + [f"Measurement Layout fitted now (diagnostics {json.dumps(fit.diagnostics)})."]
    table, planned = layout_scenario_plan(scores, scenarios, tags, draws, args.scenarios,
                                          repeats=args.repeats, profiles=args.profiles, target=args.demand,
                                          seed=args.seed)
    notes += planned
    folder.table("scenarios", table)
    folder.notes(notes)
    folder.close()
    _say(args, table.to_string(index=False))
    for note in planned:
        _say(args, f"note: {note}")
    return {"scenarios": table.to_dict("records"), "notes": notes, "written": _written(folder)}


def add_parsers(sub) -> None:
    """Add the parsers of plan to the subparsers `sub`."""
    p = sub.add_parser("plan", help="which matches to run next, and how many (a plan as CSV, or a power curve)")
    _data_args(p)
    p.add_argument("--budget", type=_positive_int, default=20, help="matches to propose (default 20)")
    p.add_argument("--target", default="adjacent:0.95",
                   help="adjacent:CONF (separate adjacent ranks), width:ELO (every interval at most ELO wide) or "
                   "top:K (find the top K); default adjacent:0.95")
    p.add_argument("--rule", choices=PLAN_RULES, default="c-optimal",
                   help="selection rule (models/ratings/design.py documents each with its source; default c-optimal)")
    p.add_argument("--players", type=_positive_int, default=2, help="agents per proposed match (default 2)")
    p.add_argument("--power", action="store_true", help="a power curve instead of a plan (with --delta)")
    p.add_argument("--delta", type=_positive_float, default=50.0, help="--power: Elo points apart (default 50)")
    p.add_argument("--pair", metavar="A,B", help="--power: the two agents (default: the two most compared)")
    p.add_argument("--sims", type=_positive_int, default=200, help="--power: simulations per point (default 200)")
    p.add_argument("--scenarios", type=_positive_int, metavar="N",
                   help="instead: the N scenarios (tag profiles) that would most shrink the tag coefficients now "
                   "least known")
    p.add_argument("--profiles", action="store_true",
                   help="--scenarios: also propose hypothetical profiles (combinations of up to three tags, or "
                   "demands with at most one substrate)")
    p.add_argument("--model", choices=["tag-effects", "measurement-layout"], default="tag-effects",
                   help="--scenarios: the model whose least known parameters to serve: the tag coefficients "
                   "(default) or the Measurement Layout's capabilities")
    p.add_argument("--posterior", type=Path, metavar="PATH",
                   help="--model measurement-layout: the idata.nc `referee fit measurement-layout` wrote (or its "
                   "folder); default: fit the layout now")
    p.add_argument("--repeats", type=_positive_int, default=1,
                   help="--model measurement-layout: episodes per agent each picked scenario will be run (default 1)")
    p.add_argument("--demand", help="--model measurement-layout: serve this demand's capabilities in every pick "
                   "(default: the demand least known at each pick)")
    _sampling_args(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_plan)
