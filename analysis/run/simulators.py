"""The simulators `referee simulate RUNNER` offers, in one registry: each writes a runner's logs from known
parameters (plus truth.json) into a folder. Light: names, options and defaults here, the implementation
(`referee.simulators`) imported when one runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from referee.run.options import (Option, agent_count, event_scale, finite_float, fraction, path,
                                 positive_int, probability, rare_agents, repeats, simulated, some_repeats)


@dataclass(frozen=True)
class Simulator:
    """One simulator: its help line, default number of agents, its own options, and `run(out, agents, seed,
    **options) -> {role: path}` (the files it wrote)."""

    name: str
    help: str
    agents: int
    options: tuple[Option, ...]
    run: object


def _concordia(out: Path, agents: int, seed: int, repetitions: int = 3, catalogue=None, model: str = "additive",
               phases: bool = False, finalists: int = 6, final_repetitions: int = 10, test_runs: int = 1) -> dict:
    import referee.simulators as simulators
    from referee.io.catalogue import CONTEST_2024, load_catalogue

    scenarios = load_catalogue(catalogue or CONTEST_2024)
    if phases:
        sim = simulators.simulate_contest_phases(scenarios, n_agents=agents, repetitions=repetitions,
                                                 finalists=finalists, final_repetitions=final_repetitions,
                                                 test_runs=test_runs, seed=seed, model=model)
    else:
        sim = simulators.simulate_concordia(scenarios, n_agents=agents, repetitions=repetitions, seed=seed,
                                            model=model)
    return simulators.write_concordia(sim, out)


def _aoa(out: Path, agents: int, seed: int, nations: int = 8, validity: float = 0.0, event_scale: float = 1.0) -> dict:
    import referee.simulators as simulators

    return simulators.write_aoa(simulators.simulate_aoa(n_agents=agents, n_nations=nations, seed=seed,
                                                        validity=validity, event_scale=event_scale), out)


def _compact(out: Path, agents: int, seed: int, games: int = 60) -> dict:
    import referee.simulators as simulators

    return simulators.write_compact(simulators.simulate_compact(n_agents=agents, n_games=games, seed=seed), out)


def _arena(out: Path, agents: int, seed: int, judgments: int = 2000, tie_rate: float = 0.1,
           style_effect: float | None = None) -> dict:
    import referee.simulators as simulators

    return simulators.write_arena(simulators.simulate_arena(n_agents=agents, n_judgments=judgments, seed=seed,
                                                            tie_rate=tie_rate, style_effect=style_effect), out)


def _ranked(out: Path, agents: int, seed: int, games: int = 60) -> dict:
    import referee.simulators as simulators

    return simulators.write_ranked(simulators.simulate_ranked(n_agents=agents, n_games=games, seed=seed), out)


def _tavern(out: Path, agents: int, seed: int, games: int = 200, rare_agents: int = 0) -> dict:
    import referee.simulators as simulators

    return simulators.write_tavern(simulators.simulate_tavern(n_agents=agents, n_matches=games, seed=seed,
                                                              rare_agents=rare_agents), out)


def _games(default: int) -> Option:
    return Option("games", default, f"number of games (default {default})", type=simulated)


SIMULATORS: dict[str, Simulator] = {s.name: s for s in (
    Simulator("concordia", "Concordia contest results", 8, (
        Option("repetitions", 3, "repetitions per agent and scenario (default 3)", type=repeats),
        Option("catalogue", None, "scenarios to simulate (default: the 2024 contest's)", type=path),
        Option("model", "additive", "generative model: additive logit effects (default) or a Measurement Layout",
               choices=("additive", "layout")),
        Option("phases", False, "the contest's three phases: logs/development, logs/evaluation (with test runs) and "
               "logs/cross-play (the paper's finalists: the top --finalists - 1 by evaluation Elo and the baseline "
               "rational_agent); ingest each with --phase", flag=True),
        Option("finalists", 6, "with --phases: finalists, the baseline included (default 6: the paper's top five and "
                               "the baseline)", type=agent_count),
        Option("final_repetitions", 10, "with --phases: cross-play repetitions per finalist and scenario (default 10)",
               type=repeats),
        Option("test_runs", 1, "with --phases: test runs per agent marked exclude_from_elo_calculation (default 1)",
               type=some_repeats)), _concordia),
    Simulator("aoa", "an Age-of-Agents season: season.json and events.jsonl", 12, (
        Option("nations", 8, "governed nations (default 8)", type=positive_int),
        Option("validity", 0.0, "0..1: how strongly activity (and so the score) tracks the nation outcome",
               type=fraction),
        Option("event_scale", 1.0, "multiply every counter (grow the event log; at most 1,000)",
               type=event_scale)), _aoa),
    Simulator("compact", "communicate-predict-act games (JSON lines)", 6, (_games(60),), _compact),
    Simulator("arena", "pairwise arena judgments (CSV)", 10, (
        Option("judgments", 2000, "number of judgments (default 2000)", type=simulated),
        Option("tie_rate", 0.1, "probability that a judgment is a tie (default 0.1)", type=probability),
        Option("style_effect", None, "give each answer a length (length_a, length_b) whose standardised style "
               "feature (Chatbot Arena's) moves the odds of winning by this much (default: no lengths)",
               type=finite_float, metavar="LOG_ODDS")), _arena),
    Simulator("ranked", "ranked multiplayer games (JSON lines) with per-turn logs", 8, (_games(60),), _ranked),
    Simulator("tavern", "event logs of a runner with no built-in loader, one file per match, plus its mapping", 60,
              (_games(200), Option("rare_agents", 0, "agents that play one game each (default 0)", type=rare_agents)),
              _tavern),
)}
