"""`referee simulate`: logs written from known parameters. Each command's parser and what it runs; heavy modules are
imported inside the commands, so that `referee --help` starts at once."""

from __future__ import annotations

from pathlib import Path

from referee.cli.common import (
    _common,
    _count,
    _finite_float,
    _folder,
    _positive_float,
    _positive_int,
    _probability,
    _say,
    _seed_arg,
)


def cmd_simulate(args) -> dict:
    from referee import simulate
    from referee.io.catalogue import CONTEST_2024, load_catalogue

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
        sim = simulate.simulate_arena(n_agents=args.agents, n_judgments=args.judgments, seed=args.seed,
                                      tie_rate=args.tie_rate, style_effect=args.style_effect)
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


def add_parsers(sub) -> None:
    """Add the parsers of simulate to the subparsers `sub`."""
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
        c.set_defaults(func=cmd_simulate, out_is_folder=False)  # the simulator writes and checks its own folder
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
            c.add_argument("--tie-rate", type=_probability, default=0.1,
                           help="probability that a judgment is a tie (default 0.1)")
            c.add_argument("--style-effect", type=_finite_float, default=None, metavar="LOG_ODDS",
                           help="give each answer a length (length_a, length_b) whose standardised style feature "
                                "(Chatbot Arena's) moves the odds of winning by this much (default: no lengths)")
