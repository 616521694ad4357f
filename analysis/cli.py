"""The `referee` command line: parse, check every argument, call one function, print or write its result.

Every command accepts `--json` (one JSON object on stdout instead of text) and writes its files through one
writer (`analysis.present.outputs.ResultsFolder`: tables, figures, notes, diagnostics, manifest and
provenance). Warnings raised while a command works are printed once each as `warning: ...` on stderr (and
listed under "warnings" with `--json`); a fit's notes are printed as `note: ...`.

Exit codes: 0 success; 1 a handled error (bad input, bad arguments found while working, a refused strict
ingest); 2 a usage error found by argument parsing; 3 an unexpected internal error (a one-line message with
a hint to report it; `--debug` shows the traceback).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import warnings
from pathlib import Path

from analysis.io import loaders
from analysis.io.catalogue import CONTEST_2024, CatalogueError, load_catalogue
from analysis.io.loaders.base import suggest
from analysis.io.loaders.mapped import MappingError
from analysis.io.loaders.table import read_mapping
from analysis.io.schema import MEASURE_KINDS
from analysis.io.store import DEFAULT_STORE, IngestError, Store, StoreError
from analysis.present.outputs import ResultsFolder, check_writable, referee_version
from models.fit import CHAINS, DRAWS, LAYOUT_DRAWS, LAYOUT_TUNE, TUNE
from models.ratings.bt_per_game import DEFAULT_TAU_ELO

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def _say(args, text: str = "") -> None:
    """Print human-readable output unless --json was given."""
    if not args.json:
        print(text)


def _notes(args, fit) -> None:
    for note in getattr(fit, "notes", []):
        _say(args, f"note: {note}")


def _folder(args, store: Store | None = None, extra: dict | None = None) -> ResultsFolder:
    return ResultsFolder(args.out, command=["referee"] + list(args.argv), seed=getattr(args, "seed", None),
                         store=store, extra=extra)


def _written(folder: ResultsFolder) -> list[str]:
    return [str(p) for p in folder.files]


# ---------------------------------------------------------------------------------------------- argument types
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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    return value


def _dims_range(text: str) -> range:
    lo, sep, hi = text.partition("-")
    try:
        start, stop = int(lo), int(hi if sep else lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected D or LOW-HIGH (e.g. 1-7), got {text!r}") from None
    if not 1 <= start <= stop <= 7:
        raise argparse.ArgumentTypeError(f"dimensions must satisfy 1 <= LOW <= HIGH <= 7, got {text!r}")
    return range(start, stop + 1)


# ---------------------------------------------------------------------------------------------- commands
def _pairs(pairs: list[str], option: str, form: str) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option} takes {form}, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def cmd_ingest(args) -> dict:
    mapping, measures = read_mapping(args.mapping) if args.mapping else ({}, {})
    mapping.update(_pairs(args.map, "--map", "CANONICAL=COLUMN"))
    measures.update(_pairs(args.measure, "--measure", "COLUMN=KIND"))
    existed = args.store.exists()
    try:
        with Store(args.store) as store:
            report = store.ingest(args.paths, runner=args.runner, catalogue=args.catalogue, mapping=mapping,
                                  measures=measures, strict=args.strict, replace=args.replace,
                                  progress=os.environ.get("REFEREE_PROGRESS") == "1", phase=args.phase)
    except BaseException:
        if not existed:  # a refused or failed ingest into a new store leaves no file behind
            for leftover in (args.store, Path(f"{args.store}.wal")):
                leftover.unlink(missing_ok=True)
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


def cmd_formats(args) -> dict:
    from analysis.io.loaders import table
    from analysis.io.resources import shipped

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
    if not args.store.exists():
        raise FileNotFoundError(f"{args.store}: no store here; run `referee ingest` first")
    with Store(args.store, read_only=True) as store:
        info = store.info()
    for key, value in info.items():
        _say(args, f"{key:>12}  {value}")
    return info


def cmd_simulate(args) -> dict:
    from analysis import simulate

    if args.runner == "concordia":
        catalogue = load_catalogue(args.catalogue or CONTEST_2024)
        if args.phases:
            sim = simulate.simulate_contest_phases(catalogue, n_agents=args.agents, repetitions=args.repetitions,
                                                   finalists=args.finalists, final_repetitions=args.final_repetitions,
                                                   test_runs=args.test_runs, seed=args.seed, model=args.model)
        else:
            sim = simulate.simulate_concordia(catalogue, n_agents=args.agents, repetitions=args.repetitions,
                                              seed=args.seed, model=args.model)
        paths = simulate.write_concordia(sim, args.out)
    elif args.runner == "aoa":
        sim = simulate.simulate_aoa(n_agents=args.agents, n_nations=args.nations, seed=args.seed,
                                    validity=args.validity, event_scale=args.event_scale)
        paths = simulate.write_aoa(sim, args.out)
    elif args.runner == "compact":
        sim = simulate.simulate_compact(n_agents=args.agents, n_games=args.games, seed=args.seed)
        paths = simulate.write_compact(sim, args.out)
    elif args.runner == "arena":
        sim = simulate.simulate_arena(n_agents=args.agents, n_judgments=args.judgments, seed=args.seed)
        paths = simulate.write_arena(sim, args.out)
    elif args.runner == "tavern":
        sim = simulate.simulate_tavern(n_agents=args.agents, n_matches=args.games, seed=args.seed,
                                       rare_agents=args.rare_agents)
        paths = simulate.write_tavern(sim, args.out)
    else:
        sim = simulate.simulate_ranked(n_agents=args.agents, n_games=args.games, seed=args.seed)
        paths = simulate.write_ranked(sim, args.out)
    folder = _folder(args)
    folder.files += sorted(f for f in args.out.rglob("*")  # the simulator's own files
                           if f.is_file() and f.name not in ("manifest.json", "provenance.json"))
    folder.close()
    _say(args, "wrote " + ", ".join(str(p) for p in paths.values()))
    return {"written": [str(p) for p in paths.values()] + [str(args.out / "provenance.json")]}


def cmd_export(args) -> dict:
    from analysis.io.export import export_parquet

    with _open_store(args) as store:
        written = export_parquet(store, args.parquet)
    for table, info in written.items():
        _say(args, f"{table:>14}  {info['rows']:>10,} rows  {info['path']}")
    return {"tables": written}


def _one_runner(matches, runner):
    runners = sorted(matches["runner"].unique())
    if runner is None and len(runners) > 1:
        raise ValueError(f"the store holds matches of runners {runners}; choose one with --runner")
    if runner is not None:
        if runner not in runners:
            raise ValueError(f"no matches of runner {runner!r} in the store (runners: {runners})")
        matches = matches[matches["runner"] == runner]
    if matches.empty:
        raise ValueError("the store holds no matches; run `referee ingest` first")
    return matches


def _open_store(args) -> Store:
    if not args.store.exists():
        raise FileNotFoundError(f"{args.store}: no store here; run `referee ingest` first")
    return Store(args.store, read_only=True)


def _stored_tables(args):
    """(the chosen runner's matches in the chosen phases, their results, the results folder with the store's
    provenance)."""
    from analysis.prepare.comparisons import select_matches
    from analysis.prepare.selection import select_phases

    with _open_store(args) as store:
        matches = select_phases(_one_runner(store.table("matches"), args.runner), getattr(args, "phase", None))
        matches = select_matches(matches, getattr(args, "where", []))
        results = store.table("results")
        return matches, results[results["match_id"].isin(matches["match_id"])], _folder(args, store)


def _excluded(args, matches, results) -> list[str]:
    """Say how many of `matches` are test runs, and how many forfeits and aborted matches `results` hold, that
    ratings treat apart; returns those notes (empty when there are none)."""
    from analysis.prepare.selection import exclusion_note, outcome_note

    notes = [n for n in (exclusion_note(matches), outcome_note(results)) if n]
    for note in notes:
        _say(args, f"note: {note}")
    return notes


def _stored_comparisons(args):
    """(comparisons of the chosen runner's matches, the results folder with the store's provenance)."""
    from analysis.prepare.comparisons import comparisons_from_tables

    matches, results, folder = _stored_tables(args)
    folder.notes(_excluded(args, matches, results))
    return comparisons_from_tables(matches, results, parallel=args.parallel), folder


def cmd_ratings(args) -> dict:
    import pandas as pd

    from analysis.present.figures import plot_bootstrap_violins
    from analysis.run.ratings import rate

    from analysis.prepare.comparisons import (
        ComparisonBudgetError,
        comparable_agents,
        comparisons_from_tables,
        win_counts,
    )
    from analysis.run.ratings import STREAMABLE, rate_counts

    from analysis.prepare.comparisons import with_resample
    from analysis.run.rating_labels import parse_anchor

    method = args.method
    if args.ties == "davidson":
        if method not in ("bt", "bt-davidson"):
            raise ValueError(f"--ties davidson models ties in Bradley-Terry (--method bt), not in {method}")
        method = "bt-davidson"
    anchor = parse_anchor(args.anchor) if args.anchor else None
    matches, results, folder = _stored_tables(args)
    excluded = _excluded(args, matches, results)
    if args.covariate:
        return _covariate_ratings(args, method, matches, results, folder, excluded)
    if args.by not in (None, "game"):
        return _sliced_ratings(args, method, matches, results, folder, excluded, anchor)
    agents = comparable_agents(matches, results)
    streamed = method in STREAMABLE and not (args.bootstrap or args.by or args.parallel or anchor)
    try:
        comparisons = comparisons_from_tables(matches, results, parallel=args.parallel)
    except ComparisonBudgetError:
        if not streamed:
            raise
        comparisons = None  # too many to list: bt and elo need only the win counts, streamed
    if comparisons is None:
        names, wins, ties = win_counts(matches, results)
        result = rate_counts(wins, ties, names, method, prior=args.prior, agents=agents)
    else:
        comparisons, resampled = with_resample(comparisons, matches, args.resample)
        if resampled and not args.bootstrap:
            resampled = f"--resample {args.resample} has no effect without --bootstrap"
        with _executor(args) as executor:
            result = rate(comparisons, method, bootstrap=args.bootstrap, by=args.by, prior=args.prior,
                          dims=args.dims, k=args.k, tau_elo=args.per_game_prior_sd, seed=args.seed, agents=agents,
                          executor=executor, anchor=anchor, **_sampling(args))
        if resampled:
            result.notes.append(resampled)
    ratings = result.table()
    folder.table("ratings", ratings)
    _say(args, ratings.to_string(index=False))
    if "ties" in result.extra:
        ties = result.extra["ties"]
        folder.table("ties", pd.DataFrame([ties]))
        _say(args, f"\nDavidson's tie parameter nu = {ties['nu']:.3f} (se {ties['nu_se']:.3f}): two equal agents tie "
                   f"with probability {ties['tie_probability_equal']:.3f}; observed tie rate "
                   f"{ties['observed_tie_rate']:.3f}")
    if "kendall_tau" in result.extra:
        tau = result.extra["kendall_tau"]
        folder.table("kendall_tau", tau)
        _say(args, f"\nKendall tau of each game's ranking against the global one (mean {tau['kendall_tau'].mean():.2f}; "
                   "the COMPACT paper reports 0.68):")
        _say(args, tau.to_string(index=False))
    if result.bootstrap is not None and args.by is None:
        folder.figure("bootstrap", plot_bootstrap_violins(result.bootstrap.long()))
    if result.idata is not None:
        folder.idata(result.idata)
    notes = result.notes + excluded
    folder.notes(notes)
    folder.diagnostics(result.diagnostics)
    folder.close()
    _notes(args, result)
    _say(args, f"wrote {args.out}/ratings.csv and {len(folder.files) - 1} more files")
    return {"method": method, "diagnostics": result.diagnostics, "notes": notes, "ties": result.extra.get("ties"),
            "ratings": ratings.to_dict("records"), "written": _written(folder)}


def _sliced_ratings(args, method: str, matches, results, folder, excluded: list[str], anchor) -> dict:
    """`referee ratings --by tag|role|scenario|phase`: one leaderboard per slice, each rated on its own slice's
    matches, in one table with the slice sizes."""
    import pandas as pd

    from analysis.prepare.comparisons import comparable_agents, comparisons_from_tables, with_resample
    from analysis.prepare.slices import slices
    from analysis.run.ratings import rate

    with _open_store(args) as store:
        tags = store.table("scenario_tags")
    tables, sizes, notes = [], [], list(excluded)
    with _executor(args) as executor:
        for name, m, r in slices(matches, results, tags, args.by):
            comparisons = comparisons_from_tables(m, r, parallel=args.parallel)
            row = {"slice": name, "matches": len(m), "comparisons": len(comparisons),
                   "agents": len(set(comparisons["a"]) | set(comparisons["b"])) if len(comparisons) else 0}
            sizes.append(row)
            if row["agents"] < 2:
                notes.append(f"slice {name}: fewer than two agents compared, no leaderboard")
                continue
            comparisons, _ = with_resample(comparisons, m, args.resample)
            held = anchor if anchor and anchor[0] in set(comparisons["a"]) | set(comparisons["b"]) else None
            if anchor and held is None:
                notes.append(f"slice {name}: {anchor[0]} did not play in it, so its scale is not anchored")
            try:
                result = rate(comparisons, method, bootstrap=args.bootstrap, prior=args.prior, k=args.k,
                              dims=args.dims, tau_elo=args.per_game_prior_sd, seed=args.seed,
                              agents=comparable_agents(m, r), executor=executor, anchor=held, **_sampling(args))
            except ValueError as exc:
                notes.append(f"slice {name}: not rated ({exc})")
                continue
            tables.append(result.table().assign(slice=name))
            notes += [f"slice {name}: {n}" for n in result.notes]
    if not tables:
        raise ValueError(f"no slice by {args.by} has two agents to rate")
    ratings = pd.concat(tables, ignore_index=True)
    ratings = ratings[["slice"] + [c for c in ratings.columns if c != "slice"]]
    size_table = pd.DataFrame(sizes)
    folder.table("ratings", ratings)
    folder.table("slices", size_table)
    _say(args, size_table.to_string(index=False))
    _say(args, ratings.to_string(index=False))
    folder.notes(notes)
    folder.close()
    return {"method": method, "by": args.by, "slices": sizes, "notes": notes, "ratings": ratings.to_dict("records"),
            "written": _written(folder)}


def _covariate_ratings(args, method: str, matches, results, folder, excluded: list[str]) -> dict:
    """`referee ratings --covariate ...`: the contextual Bradley-Terry (ratings controlled for the covariates,
    their effects with cluster-robust intervals, and each agent's rank change)."""
    from analysis.prepare.covariates import covariate_pairs
    from models.ratings.contextual import fit_contextual_bt

    if method != "bt" or args.bootstrap or args.by or args.anchor:
        raise ValueError("--covariate fits the contextual Bradley-Terry (--method bt), with cluster-robust Wald "
                         "intervals: not with --bootstrap, --by, --anchor or another method")
    with _open_store(args) as store:
        measures = store.table("measures")
    pairs, names, notes = covariate_pairs(matches, results, measures, args.covariate)
    fit = fit_contextual_bt(pairs, names)
    folder.table("ratings", fit.ratings)
    folder.table("covariates", fit.effects)
    _say(args, fit.ratings.to_string(index=False))
    _say(args, "\nCovariate effects (log-odds; Elo points; 95 % intervals clustered by match):")
    _say(args, fit.effects.to_string(index=False))
    moved = int((fit.ratings["rank_change"] != 0).sum())
    notes = excluded + notes + fit.notes + [
        f"ratings controlled for {', '.join(names)} over {fit.comparisons} within-match comparisons; {moved} agent(s) "
        "change rank against the same model without covariates (`rank_change`, positive = up)"]
    folder.notes(notes)
    folder.diagnostics(fit.diagnostics)
    folder.close()
    for note in notes:
        _say(args, f"note: {note}")
    return {"method": "contextual-bt", "diagnostics": fit.diagnostics, "notes": notes,
            "effects": fit.effects.to_dict("records"), "ratings": fit.ratings.to_dict("records"),
            "written": _written(folder)}


def cmd_compare(args) -> dict:
    """`referee compare A B` (or `--all`): paired comparison from the chosen method's cluster bootstrap."""
    from analysis.prepare.comparisons import comparisons_from_tables, with_resample
    from analysis.run.compare import compare, compare_all

    if args.all == bool(args.agents):
        raise ValueError("name two agents (referee compare A B) or give --all, not both")
    if not args.all and len(args.agents) != 2:
        raise ValueError(f"compare takes two agents, got {len(args.agents)}: {args.agents}")
    matches, results, folder = _stored_tables(args)
    folder.notes(_excluded(args, matches, results))
    comparisons, note = with_resample(comparisons_from_tables(matches, results, parallel=args.parallel), matches,
                                      args.resample)
    if args.all:
        table = compare_all(comparisons, args.method, args.bootstrap, args.seed, args.resample)
        folder.table("pairs", table)
        folder.close()
        adjacent = table[table["adjacent"]]
        _say(args, adjacent[["agent_a", "agent_b", "p_better", "difference", "lower", "upper", "matches", "p_holm",
                             "separable"]].to_string(index=False))
        _say(args, f"{int(adjacent['separable'].sum())} of {len(adjacent)} adjacent pairs separable at 5 % (Holm); "
                   f"every pair in {args.out}/pairs.csv")
        return {"pairs": table.to_dict("records"), "notes": [note] if note else [], "written": _written(folder)}
    found = compare(comparisons, args.agents[0], args.agents[1], args.method, args.bootstrap, args.seed,
                    args.resample)
    folder.json("compare", found)
    folder.close()
    a, b = found["agent_a"], found["agent_b"]
    interval = (f"95 % interval {found['lower']:+.0f} to {found['upper']:+.0f}" if math.isfinite(found["lower"])
                else found["interval"])
    _say(args, f"P({a} stronger than {b}) = {found['p_better']:.3f} ({args.method}, {found['replicates']} bootstrap "
               f"replicates resampling by {args.resample})\ndifference {found['difference']:+.0f} Elo points, "
               f"{interval}\nhead to head: {found['wins']} win(s), {found['losses']} loss(es), {found['ties']} tie(s) "
               f"in {found['matches']} match(es)")
    return dict(found, notes=[note] if note else [], written=_written(folder))


def cmd_plan(args) -> dict:
    from analysis.present.figures import plot_power_curve
    from analysis.prepare.comparisons import comparable_agents, comparisons_from_tables
    from analysis.run.plan import plan, power_curve

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
    now least known (`models.scores.scenario_design`), or with `--model measurement-layout` the capabilities
    now least known (`analysis.run.scenario_plan`)."""
    from models.scores.scenario_design import next_scenarios

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

    from analysis.run.scenario_plan import layout_scenario_plan
    from analysis.run.score_models import fit_store_layout
    from models.fit import diagnose
    from models.scores.layout_design import layout_draws
    from models.scores.measurement_layout import DIAGNOSED

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


def cmd_ratings_cv(args) -> dict:
    from analysis.present.figures import plot_win_matrices
    from analysis.run.ratings_cv import cross_validate, fitted_and_empirical, summarise_cv

    comparisons, folder = _stored_comparisons(args)
    if args.split and args.split not in comparisons.columns:
        raise ValueError(f"--split takes a match attribute among {['communication', 'game', 'kind']}")
    clusters = comparisons["cluster"].nunique()
    if args.folds > clusters:
        raise ValueError(f"--folds {args.folds} is more than the {clusters} matches there are to split")
    with _executor(args) as executor:
        cv = cross_validate(comparisons, folds=args.folds, dims=args.dims, seed=args.seed, executor=executor)
    folder.table("cv_folds", cv)
    summary = summarise_cv(cv)
    folder.table("cv_auc", summary)
    _say(args, summary.to_string(index=False))
    folder.figure("win_probability", plot_win_matrices(fitted_and_empirical(comparisons, args.split)))
    folder.close()
    _say(args, f"wrote {args.out}/cv_auc.csv, cv_folds.csv, win_probability.png (fitted beside empirical)")
    return {"auc": summary.to_dict("records"), "written": _written(folder)}


def cmd_rank(args) -> dict:
    import pandas as pd

    from analysis.prepare.comparisons import ballots_from_tables, comparisons_from_tables
    from analysis.run.rating_labels import label_status
    from models.voting import METHODS, PreferenceProfile, vote

    matches, results, folder = _stored_tables(args)
    ballots = ballots_from_tables(matches, results)
    folder.notes(_excluded(args, matches, results))
    profile = PreferenceProfile.from_ballots(ballots)
    methods = list(METHODS) if args.method == "all" else [args.method]
    # each method warns of the agents it sets apart in the same words: the top level prints the warning once
    tables = [vote(profile, m, min_ballots=args.min_games, seed=args.seed,
                   **({"reading": args.ewa_reading} if m == "ewa" else {})).assign(method=m) for m in methods]
    table = pd.concat(tables, ignore_index=True)
    # the one status rule of every table that ranks agents (analysis.run.rating_labels), on the same matches
    table = label_status(table, comparisons_from_tables(matches, results))
    columns = ["agent", "score", "rank", "ballots"] + (["support"] if "support" in table.columns else []) + [
        "matches", "status"]
    columns = (["method"] if args.method == "all" else []) + columns
    ranked, apart = table[table["ranked"]], table[~table["ranked"] & (table["method"] == methods[0])]
    folder.table("rankings", ranked[columns])
    if len(apart):
        folder.table("not_ranked", apart[["agent", "ballots"]])
    folder.close()
    _say(args, ranked[columns].to_string(index=False))
    if len(apart):
        _say(args, f"\nnot ranked (fewer than {args.min_games:g} ballots): " +
             ", ".join(f"{a} ({b:g})" for a, b in zip(apart["agent"], apart["ballots"])))
    if "maximal-lotteries" in methods:
        lottery = ranked[ranked["method"] == "maximal-lotteries"]
        support = lottery["support"].fillna(False).astype(bool)
        _say(args, f"maximal lottery support: {', '.join(lottery.loc[support, 'agent'])}; the other "
                   f"{int((~support).sum())} ranked agent(s) have probability 0 and share the next rank")
    _say(args, f"wrote {args.out}/rankings.csv")
    return {"rankings": ranked[columns].to_dict("records"), "not_ranked": apart[["agent", "ballots"]].to_dict("records"),
            "written": _written(folder)}


def cmd_contest(args) -> dict:
    from analysis.present.figures import plot_contest_stages
    from analysis.run.contest import run_contest

    matches, results, folder = _stored_tables(args)
    result = run_contest(matches, results, selection_phase=args.selection_phase, final_phase=args.final_phase,
                         top=args.top, finalists=args.finalists, combine=args.combine, seed=args.seed)
    tables = {"selection_elo": (result.selection, f"Elo on phase {args.selection_phase!r} (contest table 3); "
                                                  "finalists marked"),
              "finals_elo": (result.finals, f"Elo of the finalists on phase {args.final_phase!r} (table 8)"),
              "finals_voting": (result.votes, "IML, Copeland and ranked pairs on the final phase (tables 9-11)"),
              "combined_elo": (result.combined, "Elo of the finalists over the phases combined (table 12)")}
    for name, (table, title) in tables.items():
        if len(table):
            folder.table(name, table)
            _say(args, f"\n{title}\n{table.to_string(index=False)}")
    folder.figure("stages", plot_contest_stages(result.table(), result.finalists))
    folder.notes(result.notes)
    folder.diagnostics(result.diagnostics)
    folder.close()
    _notes(args, result)
    _say(args, f"\nfinalists: {', '.join(result.finalists)}; wrote {args.out}/")
    return {"finalists": result.finalists, "notes": result.notes, "diagnostics": result.diagnostics,
            **{name: table.to_dict("records") for name, (table, _) in tables.items()}, "written": _written(folder)}


def cmd_calibrate(args) -> dict:
    from analysis.present.figures import plot_rank_histograms
    from analysis.run.calibrate import calibrate

    with _executor(args) as executor:
        result = calibrate(args.model, args.sims, seed=args.seed, size=args.size, executor=executor, **_sampling(args))
    folder = _folder(args)
    folder.table("summary", result.summary)
    folder.table("ranks", result.ranks)
    folder.table("fits", result.fits)
    folder.figure("rank_histograms", plot_rank_histograms(
        result.ranks, result.summary, f"{args.model}: rank histograms over {args.sims} simulations "
        "(grey: 99% band of a uniform histogram)"))
    folder.notes(result.notes)
    folder.diagnostics(result.diagnostics)
    folder.close()
    if args.store is not None:
        with Store(args.store) as store:
            store.record_calibration(args.model, args.sims, result.passed, result.diagnostics["groups_failed"],
                                     args.out, result.summary)
    _say(args, result.summary.to_string(index=False))
    _notes(args, result)
    _say(args, f"{args.model}: {'PASSED' if result.passed else 'FAILED'}; wrote {args.out}/")
    if not result.passed:
        args.failure = f"calibration of {args.model} failed for: {', '.join(result.diagnostics['groups_failed'])}"
    return {"model": args.model, "passed": result.passed, "summary": result.summary.to_dict("records"),
            "notes": result.notes, "diagnostics": result.diagnostics, "written": _written(folder)}


def cmd_judge(args) -> dict:
    from analysis.io.endpoint import ChatEndpoint
    from analysis.io.rubric import load_rubric
    from analysis.run.judge import estimate, plan, read_context, return_correlations, run_judge

    rubric = load_rubric(args.rubric)
    context = read_context(args.context)
    if not args.store.exists():
        raise FileNotFoundError(f"{args.store}: no store here; run `referee ingest` first")
    if args.endpoint is None and not args.dry_run:
        raise ValueError("--endpoint URL is needed (or --dry-run to count the calls first)")
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

    from models.social.agreement import agreement_intervals, paired_ratings

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


def _model_data(args):
    from analysis.run.score_models import model_scores

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


def cmd_fit(args) -> dict:
    from analysis.present.figures import plot_intervals
    from models.scores import beta_regression as br

    (scores, scenarios, tags), folder = _model_data(args)
    if args.model == "measurement-layout":
        return _fit_layout(args, scores, scenarios, tags, folder)
    common = dict(seed=args.seed, likelihood=args.likelihood, **_sampling(args))
    if args.model == "tag-effects":
        fit = br.fit_tag_effects(scores, tags, scenario_intercepts=args.scenario_intercepts,
                                 agent_intercepts=not args.no_agent_intercepts, structure=args.structure, **common)
        table = fit.table()
        figure = plot_intervals(table, "tag", "Tag coefficients (posterior mean, 94% HDI)", "log-odds effect on score")
    else:
        fit = br.fit_baseline_contrast(scores, args.baseline, **common)
        table = fit.table()
        figure = plot_intervals(table, "agent", f"Log-odds difference from {args.baseline} (mean, 95% HDI)",
                                "log-odds difference")
    folder.fit(fit, figure, args.model, table=table)
    folder.close()
    return _fit_payload(args, fit, table, folder)


def _fit_layout(args, scores, scenarios, tags, folder) -> dict:
    from analysis.present.figures import plot_capability_profiles
    from analysis.run.score_models import fit_store_layout

    if args.likelihood != "ordered":
        raise ValueError("the Measurement Layout uses the ordered-beta likelihood only; drop --likelihood squeeze")
    fit, demands = fit_store_layout(scores, scenarios, tags, seed=args.seed, **_sampling(args))
    caps = fit.table()  # the capabilities
    figure = plot_capability_profiles(caps, {n: fit.parameters(n) for n in ("base_chance", "sample_size")})
    folder.fit(fit, figure, "measurement-layout", table=caps)
    folder.table("capabilities", caps)
    folder.table("demands", demands, index=True)
    folder.close()
    _say(args, f"demands: {list(demands.columns)}")
    return _fit_payload(args, fit, caps, folder)


def cmd_compare_predictors(args) -> dict:
    from analysis.present.figures import plot_capability_profiles, plot_predictor_comparison
    from analysis.run.predictive import compare_predictors, training_demands

    (scores, scenarios, tags), folder = _model_data(args)
    with _executor(args) as executor:
        comp = compare_predictors(scores, training_demands(scores, scenarios, tags), folds=args.folds, seed=args.seed,
                                  executor=executor, **_sampling(args))
    folder.table("per_agent", comp.per_agent)
    folder.table("pooled", comp.pooled)
    folder.table("predictions", comp.predictions)
    folder.table("fold_diagnostics", comp.fold_diagnostics)
    folder.table("fold_demands", comp.demands)
    folder.figure("comparison", plot_predictor_comparison(comp.per_agent))
    included = comp.included_agents()
    caps = comp.layout.capabilities()
    if included:
        extras = {n: comp.layout.parameters(n).loc[lambda t: t["agent"].isin(included)]
                  for n in ("base_chance", "sample_size")}
        folder.figure("profiles", plot_capability_profiles(caps[caps["agent"].isin(included)], extras))
    folder.notes(comp.layout.notes)
    folder.diagnostics(comp.layout.diagnostics)
    folder.close()
    _say(args, comp.pooled.to_string(index=False))
    _say(args, comp.per_agent.pivot(index="agent", columns="predictor", values="r2").to_string())
    _say(args, f"agents reaching test R^2 >= 0.35 with the Measurement Layout: {included or 'none'}")
    _notes(args, comp.layout)
    _say(args, f"layout diagnostics: {json.dumps(comp.layout.diagnostics)}")
    return {"pooled": comp.pooled.to_dict("records"), "included": included, "diagnostics": comp.layout.diagnostics,
            "notes": comp.layout.notes, "written": _written(folder)}


def _outcome_arg(text: str) -> tuple[str, str | None]:
    """'NAME' or 'NAME:higher' / 'NAME:lower' -> (name, direction or None)."""
    name, sep, way = text.partition(":")
    if sep and way not in ("higher", "lower"):
        raise ValueError(f"--outcome takes NAME, NAME:higher or NAME:lower (which is better), got {text!r}")
    return name, way or None


def cmd_audit(args) -> dict:
    from analysis.run.audit import audit_frame, default_outcomes, formula_from, run_audit, write_audit

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


def cmd_describe(args) -> dict:
    from analysis.present.figures import plot_correlation_heatmap, plot_means
    from analysis.run.describe import feature_correlations, mean_se, scenario_features

    (scores, scenarios, tags), folder = _model_data(args)
    by_agent, by_scenario = mean_se(scores, "agent"), mean_se(scores, "scenario")
    corr = feature_correlations(scores, scenario_features(scenarios, tags))
    folder.table("mean_by_agent", by_agent)
    folder.table("mean_by_scenario", by_scenario)
    folder.table("correlations", corr, index=True)
    folder.figure("mean_by_agent", plot_means(by_agent, "agent"))
    folder.figure("mean_by_scenario", plot_means(by_scenario, "scenario"))
    folder.figure("correlations", plot_correlation_heatmap(corr, "Score, tags, substrates and resident status"))
    folder.close()
    _say(args, by_agent.to_string(index=False))
    _say(args, f"wrote {args.out}/mean_by_agent.*, mean_by_scenario.*, correlations.*")
    return {"mean_by_agent": by_agent.to_dict("records"), "written": _written(folder)}


def cmd_socio(args) -> dict:
    from analysis.present.report import socio_figures
    from analysis.run.socio import socio_analysis

    with _open_store(args) as store:
        matches = store.table("matches")
        runner = args.runner or ("compact" if "compact" in set(matches["runner"]) else None)
        matches = _one_runner(matches, runner)
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


def cmd_report(args) -> dict:
    from analysis.present.pipeline import build_report

    with _open_store(args) as store:
        index = build_report(store, args.out, fit_models=not args.no_models, seed=args.seed,
                             sampling=_sampling(args), command=["referee"] + list(args.argv))
    _say(args, f"wrote {index}")
    return {"index": str(index)}


def cmd_demo(args) -> dict:
    from analysis.present.pipeline import run_demo

    index = run_demo(args.out, store=args.store, fit_models=not args.no_models, sampling=_sampling(args),
                     seed=args.seed, command=["referee"] + list(args.argv))
    _say(args, f"wrote {index}")
    return {"index": str(index)}


# ---------------------------------------------------------------------------------------------- option groups
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


def _executor_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where the sweep runs (bootstrap blocks, folds, simulations; same results anywhere)")
    g.add_argument("--jobs", type=_positive_int, default=1, help="local worker processes (default 1: this process)")
    g.add_argument("--scheduler", metavar="tcp://HOST:PORT|local:N",
                   help="an existing Dask scheduler, or local:N for a Dask LocalCluster of N processes")
    g.add_argument("--exchange", type=Path, metavar="DIR",
                   help="folder the sweep's inputs are written to as Parquet; every worker must reach it "
                        "(default: a temporary folder; give a shared path for a remote cluster)")


def _executor(args):
    """The executor the sweep options ask for (a context manager), or a null context for an in-process run."""
    import contextlib

    from analysis.run.executor import executor_from

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
                   help=f"force a loader instead of detecting per file: one of {', '.join(sorted(loaders.RUNNERS))}, "
                        "or a runner mapping file describing another runner's JSON-lines logs")
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
    p.add_argument("--strict", action="store_true", help="fail, writing nothing, if any record is quarantined")
    p.add_argument("--replace", action="store_true",
                   help="remove each file's earlier contribution (rows, quarantine, source; by path or content) "
                        "and ingest it again, in one transaction")
    p.add_argument("--verbose", dest="per_file", action="store_true",
                   help="one line per file (runner, how it was detected, counts) besides the summary")
    _common(p)
    p.set_defaults(func=cmd_ingest)

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

    p = sub.add_parser("simulate", help="write simulated logs from known parameters (plus truth.json)")
    sim = p.add_subparsers(dest="runner", required=True)
    runners = {
        "concordia": ("Concordia contest results", 8),
        "aoa": ("an Age-of-Agents season: season.json and events.jsonl", 12),
        "compact": ("communicate-predict-act games (JSON lines)", 6),
        "arena": ("pairwise arena judgments (CSV)", 10),
        "ranked": ("ranked multiplayer games (JSON lines) with per-turn logs", 8),
        "tavern": ("event logs of a runner with no built-in loader, one file per match, plus its mapping", 60),
    }
    for name, (text, agents) in runners.items():
        c = sim.add_parser(name, help=text)
        c.add_argument("--agents", type=_positive_int, default=agents, help=f"number of agents (default {agents})")
        _seed_arg(c)
        c.add_argument("--out", type=Path, required=True, help="folder: logs/ and truth.json are written there")
        _common(c)
        c.set_defaults(func=cmd_simulate)
        if name == "concordia":
            c.add_argument("--repetitions", type=_positive_int, default=3,
                           help="repetitions per agent and scenario (default 3)")
            c.add_argument("--catalogue", type=Path, help="scenarios to simulate (default: the 2024 contest's)")
            c.add_argument("--model", choices=["additive", "layout"], default="additive",
                           help="generative model: additive logit effects (default) or a Measurement Layout")
            c.add_argument("--phases", action="store_true",
                           help="the contest's three phases: logs/development, logs/evaluation (with test runs) and "
                                "logs/cross-play (the top --finalists by evaluation Elo); ingest each with --phase")
            c.add_argument("--finalists", type=_positive_int, default=6, help="with --phases: finalists (default 6)")
            c.add_argument("--final-repetitions", type=_positive_int, default=10,
                           help="with --phases: cross-play repetitions per finalist and scenario (default 10)")
            c.add_argument("--test-runs", type=_count, default=1,
                           help="with --phases: test runs per agent marked exclude_from_elo_calculation (default 1)")
        if name == "aoa":
            c.add_argument("--nations", type=_positive_int, default=8, help="governed nations (default 8)")
            c.add_argument("--validity", type=float, default=0.0,
                           help="0..1: how strongly activity (and so the score) tracks the nation outcome")
            c.add_argument("--event-scale", type=_positive_float, default=1.0,
                           help="multiply every counter (grow the event log)")
        if name in ("compact", "ranked", "tavern"):
            default = 200 if name == "tavern" else 60
            c.add_argument("--games", type=_positive_int, default=default, help=f"number of games (default {default})")
        if name == "tavern":
            c.add_argument("--rare-agents", type=_count, default=0, help="agents that play one game each (default 0)")
        if name == "arena":
            c.add_argument("--judgments", type=_positive_int, default=2000, help="number of judgments (default 2000)")

    from analysis.run.ratings import METHODS as RATING_METHODS
    from models.voting import METHODS as VOTING_METHODS
    from models.voting import MIN_BALLOTS as VOTING_MIN

    p = sub.add_parser("ratings", help="rate agents: Elo, Bradley-Terry (scalar, Davidson ties, per-game, "
                       "multidimensional, Bayesian), Plackett-Luce, TrueSkill, OpenSkill")
    _data_args(p)
    p.add_argument("--method", choices=RATING_METHODS, required=True, help="rating model")
    p.add_argument("--bootstrap", type=_count, default=0, metavar="N",
                   help="resample matches N times (COMPACT used 200) for percentile and rank intervals")
    p.add_argument("--by", choices=["game", "tag", "role", "scenario", "phase"],
                   help="game: ratings per game (bt-per-game and bt-md model the games jointly); tag, role, "
                   "scenario, phase: one leaderboard per slice, each rated on its own, with the slice sizes")
    p.add_argument("--prior", action="store_true", help="Bradley-Terry MAP with Normal(0, (400 Elo)^2) priors")
    p.add_argument("--ties", choices=["half", "davidson"], default="half",
                   help="Bradley-Terry: a tie as half a win each way (default) or Davidson's tie parameter "
                   "(reports the tie rate it estimates)")
    p.add_argument("--anchor", metavar="AGENT=RATING",
                   help="fix the scale: AGENT gets exactly RATING in the point fit and in every bootstrap replicate "
                   "(elo, bt, bt-davidson, online-elo, plackett-luce)")
    p.add_argument("--covariate", action="append", default=[], metavar="seat|role|measure:NAME",
                   help="control Bradley-Terry for a player-level covariate (repeatable): its effect with an "
                   "interval, ratings controlled for it and each agent's rank change")
    p.add_argument("--resample", choices=["match", "scenario", "prompt", "seed"], default="match",
                   help="the cluster the bootstrap draws (default match: a match for every runner, Concordia's "
                   "(scenario, repetition), an arena judgment); scenario, seed (repetition) or prompt (an arena's "
                   "prompt or category, kept as the match's game)")
    p.add_argument("--dims", type=_positive_int, default=2, help="dimensions for bt-md (1-7; default 2)")
    p.add_argument("--k", type=_positive_float, default=32.0, help="K factor for online-elo (default 32)")
    p.add_argument("--per-game-prior-sd", type=_prior_sd, default=DEFAULT_TAU_ELO, metavar="ELO|none",
                   help=f"bt-per-game: prior sd of the per-game deviations in Elo points (default {DEFAULT_TAU_ELO:g}); "
                   "'none' for the paper's plain maximum likelihood")
    _sampling_args(p)
    _executor_args(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_ratings)

    p = sub.add_parser("compare", help="paired comparison of two agents (or every pair with --all): P(A stronger "
                       "than B), the difference with its interval, their head-to-head record")
    _data_args(p)
    p.add_argument("agents", nargs="*", metavar="AGENT", help="the two agents to compare (A B)")
    p.add_argument("--all", action="store_true", help="every pair, with Holm's control over adjacent pairs")
    p.add_argument("--method", choices=[m for m in RATING_METHODS if m not in ("trueskill", "openskill", "bayes-bt")],
                   default="bt", help="the rating model (default bt)")
    p.add_argument("--bootstrap", type=_positive_int, default=1000, metavar="N",
                   help="bootstrap replicates (default 1000)")
    p.add_argument("--resample", choices=["match", "scenario", "prompt", "seed"], default="match",
                   help="the cluster the bootstrap draws (default match)")
    _out_arg(p, required=False, default=Path("reports/compare"))
    _common(p)
    p.set_defaults(func=cmd_compare)

    from models.ratings.design import RULES as PLAN_RULES

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

    p = sub.add_parser("ratings-cv", help="cross-validated ROC-AUC of rating models; win-probability heatmap")
    _data_args(p)
    p.add_argument("--folds", type=_positive_int, default=5, help="cross-validation folds (at least 2; default 5)")
    p.add_argument("--dims", type=_dims_range, default=range(1, 8), help="dimension range for bt-md, e.g. 1-7 or 2")
    p.add_argument("--split", help="a match attribute to split the heatmap by (e.g. communication)")
    _executor_args(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_ratings_cv)

    p = sub.add_parser("rank", help="voting-as-evaluation: one ballot per (scenario, repetition) or match")
    _data_args(p)
    p.add_argument("--method", choices=list(VOTING_METHODS) + ["all"], required=True, help="voting method")
    p.add_argument("--ewa-reading", choices=["runs", "flat", "run-points"], default="runs",
                   help="how evaluation without aggregation combines runs (the paper under-specifies it; see "
                        "models/voting/ewa.py): runs (default: an IML election per run, then one over the runs' "
                        "orders), flat (one IML election over every task-run ballot), run-points (points per "
                        "agent beaten in each run's order, summed)")
    p.add_argument("--min-games", type=_positive_float, default=VOTING_MIN, metavar="N",
                   help=f"agents on fewer than N ballots (games) are listed apart, not ranked (default {VOTING_MIN})")
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_rank)

    p = sub.add_parser("contest", help="the contest's phases: top-k selection by Elo, final cross-play "
                       "(Elo and voting) and combined-phase Elo (paper tables 3, 8-12)")
    _store_arg(p)
    p.add_argument("--runner", help="use this runner's matches (required when the store holds several)")
    p.add_argument("--selection-phase", default="evaluation", help="phase that selects the finalists (default evaluation)")
    p.add_argument("--final-phase", default="cross-play", help="the finalists' phase (default cross-play)")
    p.add_argument("--top", type=_positive_int, default=6, help="finalists kept by the selection (default 6)")
    p.add_argument("--finalists", type=lambda t: [a.strip() for a in t.split(",") if a.strip()], metavar="A,B,...",
                   help="use these finalists instead of the top by selection Elo")
    p.add_argument("--combine", action="append", metavar="PHASE",
                   help="phases of the combined Elo (repeatable; default the selection and final phases)")
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_contest)

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

    from models.calibration import FAMILIES

    p = sub.add_parser("calibrate", help="simulation-based calibration of a Bayesian model (Talts et al. 2018): "
                       "rank histograms and HDI coverage per parameter group")
    p.add_argument("model", choices=list(FAMILIES))
    p.add_argument("--sims", type=_positive_int, default=100, help="simulations (default 100)")
    p.add_argument("--size", type=_count, default=0, help="design size: 0 the smallest, each step adds agents")
    p.add_argument("--store", type=Path, help="record the run in this store; its report links each model's latest")
    _sampling_args(p)
    _executor_args(p)
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("fit", help="Bayesian beta regressions and Measurement Layouts of normalised scores")
    p.add_argument("model", choices=["tag-effects", "baseline-contrast", "measurement-layout"])
    _store_arg(p)
    _phase_arg(p)
    p.add_argument("--baseline", default="rational_agent", help="baseline agent for baseline-contrast")
    _sampling_args(p)
    p.add_argument("--likelihood", choices=["ordered", "squeeze"], default="ordered",
                   help="ordered beta (default) or the Smithson-Verkuilen squeeze (beta regressions only)")
    p.add_argument("--scenario-intercepts", action="store_true", help="tag-effects: add scenario intercepts")
    p.add_argument("--no-agent-intercepts", action="store_true", help="tag-effects: leave out agent intercepts")
    p.add_argument("--structure", choices=["identified", "paper"], default="identified",
                   help="tag-effects: 'identified' (default) gives agent slopes only to tags present in and absent "
                   "from at least 3 scenarios; 'paper' gives every tag agent slopes, as the contest paper")
    _seed_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("compare-predictors", help="Measurement Layout vs linear regression, XGBoost and a constant")
    _store_arg(p)
    _phase_arg(p)
    p.add_argument("--folds", type=_positive_int, default=4,
                   help="folds over each agent's scenarios (default 4: every cell held out once, a quarter at a "
                        "time); R^2 and RMSE are averaged over folds")
    _sampling_args(p)
    _seed_arg(p)
    _executor_args(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_compare_predictors)

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

    p = sub.add_parser("describe", help="descriptive figures: means by agent and scenario, correlation heatmap")
    _store_arg(p)
    _phase_arg(p)
    _out_arg(p)
    _common(p)
    p.set_defaults(func=cmd_describe)

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
    return parser


def _check(args) -> None:
    """Argument checks that need more than one argument or the file system, before any work starts."""
    if getattr(args, "command", None) in ("ratings-cv", "compare-predictors") and args.folds < 2:
        raise ValueError("--folds must be at least 2 (one fold to test, the others to train)")
    if getattr(args, "command", None) == "plan" and args.model != "measurement-layout" and (
            args.posterior or args.repeats != 1 or args.demand):
        raise ValueError("--posterior, --repeats and --demand are for --scenarios N --model measurement-layout")
    out = getattr(args, "out", None)
    if out is not None and args.command not in ("simulate",):
        check_writable(out)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `referee` command; returns the exit code (module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s: %(message)s")
    json_mode = getattr(args, "json", False)
    os.environ["REFEREE_PROGRESS"] = "1" if (not json_mode and sys.stderr.isatty()) else "0"
    code, payload, error = EXIT_OK, {}, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _check(args)
            payload = args.func(args) or {}
            if getattr(args, "failure", None):  # the command finished, and its result says it did not succeed
                code, error = EXIT_ERROR, args.failure
        except (IngestError, StoreError, CatalogueError, MappingError, FileNotFoundError, FileExistsError, ValueError,
                KeyError) as exc:
            code, error = EXIT_ERROR, str(exc).strip("'\"")
        except Exception as exc:  # noqa: BLE001 - the top level never shows a raw traceback unless asked
            if args.debug:
                raise
            code = EXIT_INTERNAL
            error = (f"unexpected {type(exc).__name__}: {exc} (this is a bug in referee: rerun with --debug and "
                     "report the traceback)")
    shown = []
    for w in caught:
        text = f"{w.category.__name__}: {w.message}" if w.category is not UserWarning else str(w.message)
        if text not in shown:
            shown.append(text)
    if json_mode:
        payload = dict(payload, warnings=shown)
        if error:
            payload["error"] = error
        print(json.dumps(payload, default=str))
    for text in shown:
        print(f"warning: {text}", file=sys.stderr)
    if error:
        print(f"referee {args.command}: error: {error}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
