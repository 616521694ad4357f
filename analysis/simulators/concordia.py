"""Simulated Concordia contest results drawn from a known generative model, for parameter recovery.

For agent a in scenario s (tags x_st in {0, 1}, resident indicator r_s), the linear predictor is

    eta_as = alpha + gamma_a + u_s + delta * r_s + sum_t x_st * (beta_t + b_at)

with gamma of `rational_agent` fixed at 0 (the contest's baseline), b_a ~ MVN(0, Sigma) (tag sds
`tag_sd`, equal correlations `tag_rho`), and each repetition's normalised focal per-capita score drawn
from an ordered beta distribution (Kubinec 2022): y = 0 with probability 1 - sigmoid(eta - k1), y = 1
with probability sigmoid(eta - k2), otherwise y ~ Beta(sigmoid(eta) phi, (1 - sigmoid(eta)) phi).
Raw scores are score_min + y (score_max - score_min) with per-scenario theoretical bounds; a share of
the y = 0 outcomes is written as -Infinity (as Concordia does) to exercise the -inf mapping.
Focal players' individual scores scatter around the per-capita score with zero mean, inside the bounds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from referee.io.catalogue import Catalogue, write_catalogue
from referee.names import CONTEST_PHASES
from referee.models.scores.beta_regression import expected_score

BASELINE = "rational_agent"
MODEL, EMBEDDER = "gemma-2-9b-it", "all-mpnet-base-v2"
PLAYERS = 5
NAMES = ["Alice", "Bob", "Charlie", "Dana", "Eve", "Farid", "Gita", "Hiro"]


@dataclass
class SimulatedContest:
    """A simulated contest: ScenarioResult records per agent (and per phase when simulated in phases), the truth,
    and a catalogue with bounds."""

    records: dict[str, list[dict]]  # agent -> list of ScenarioResult dicts
    truth: dict
    catalogue: Catalogue
    draw: object = None  # draws more records from the same parameters (`_Draw`)
    eta: np.ndarray | None = None  # logit-means, (agents, scenarios)
    phases: dict[str, dict[str, list[dict]]] | None = None  # phase -> agent -> records (`simulate_contest_phases`)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def simulate_concordia(
    catalogue: Catalogue,
    n_agents: int = 8,
    repetitions: int = 3,
    seed: int = 0,
    phi: float = 8.0,
    cutpoints: tuple[float, float] = (-2.5, 2.5),
    tag_sd: float = 0.5,
    tag_rho: float = 0.3,
    neg_inf_share: float = 0.3,
    scenario_sd: float = 0.3,
    resident_effect: float = 0.3,
    model: str = "additive",
) -> SimulatedContest:
    """Draw a contest from the generative model in the module docstring.

    Parameters
    ----------
    catalogue : scenarios and tags to simulate (e.g. the 2024 contest catalogue); bounds are drawn anew.
    n_agents : number of focal agents including `rational_agent` (>= 2).
    repetitions : repetitions per (agent, scenario).
    seed : seed of the numpy Generator; the same seed gives the same files.
    phi : Beta precision; cutpoints : ordered-beta cutpoints (k1 < k2) on the logit scale.
    tag_sd, tag_rho : sd and pairwise correlation of the agents' tag slopes b_a.
    neg_inf_share : share of y = 0 outcomes written as -Infinity.
    scenario_sd, resident_effect : sd of the scenario intercepts u_s and the resident effect delta (set both
        to 0 to simulate exactly the tag-effects model).
    model : 'additive' (the logit model above) or 'layout': a Measurement Layout (see `layout_eta`) whose
        demands are every tag, one indicator per substrate and a visitor indicator; its capabilities, base
        chances and concentrations are saved in the truth under 'layout'.

    Returns
    -------
    SimulatedContest whose `truth` holds every parameter and every cell's normalised score `y`.
    """
    if n_agents < 2:
        raise ValueError("n_agents must be at least 2 (rational_agent and one more)")
    rng = np.random.default_rng(seed)
    scen = catalogue.scenarios.sort_values("scenario").reset_index(drop=True)
    tags = sorted(set(catalogue.tags["tag"]))
    X = np.zeros((len(scen), len(tags)))
    for row in catalogue.tags.itertuples():
        X[scen.index[scen["scenario"] == row.scenario][0], tags.index(row.tag)] = 1.0
    agents = [BASELINE] + [f"agent_{i:02d}" for i in range(1, n_agents)]
    T, A, S = len(tags), len(agents), len(scen)
    alpha = 0.0
    beta = rng.normal(-0.4, 0.3, size=T)
    corr = np.full((T, T), tag_rho) + (1 - tag_rho) * np.eye(T)
    # a Cholesky factor, not `multivariate_normal`'s SVD: an SVD's singular vectors (and their signs) vary
    # with the LAPACK build, so the same seed would give other slopes under another numpy wheel
    slopes = tag_sd * rng.standard_normal((A, T)) @ np.linalg.cholesky(corr).T  # covariance tag_sd^2 corr
    gamma = rng.normal(0.0, 0.5, size=A)
    gamma[0] = 0.0
    u = rng.normal(0.0, 1.0, size=S) * scenario_sd
    delta = resident_effect
    resident = (scen["mode"] == "resident").to_numpy(float)
    lo = np.zeros(S)
    hi = rng.integers(5, 40, size=S).astype(float)
    eta = alpha + gamma[:, None] + u[None, :] + delta * resident[None, :] + (slopes + beta) @ X.T  # (A, S)
    precision = np.full(A, phi)
    layout = None
    if model not in GENERATORS:
        raise ValueError(f"model must be one of {', '.join(GENERATORS)}")
    if GENERATORS[model] is not None:  # a model of its own in place of the additive logits
        eta, precision, layout = GENERATORS[model](rng, agents, scen, tags, X)
    draw = _Draw(rng, scen, precision, cutpoints, lo, hi, neg_inf_share)
    records, cells = draw(agents, eta, range(repetitions))
    bounds = scen[["scenario"]].assign(score_min=lo, score_max=hi)
    sim_catalogue = Catalogue(
        scenarios=scen.drop(columns=["score_min", "score_max"]).merge(bounds, on="scenario")[scen.columns],
        tags=catalogue.tags.copy(),
    )
    truth = {
        "generator": "referee simulate concordia",
        "seed": seed,
        "model": "ordered beta; eta = alpha + gamma_agent + u_scenario + delta*resident + sum_t x_st (beta_t + b_at)",
        "agents": agents,
        "baseline": BASELINE,
        "scenarios": list(scen["scenario"]),
        "tags": tags,
        "design": {s: dict(zip(tags, map(int, X[i]))) for i, s in enumerate(scen["scenario"])},
        "alpha": alpha,
        "beta": dict(zip(tags, beta.tolist())),
        "agent_intercepts": dict(zip(agents, gamma.tolist())),
        "agent_tag_slopes": {a: dict(zip(tags, slopes[i].tolist())) for i, a in enumerate(agents)},
        "scenario_intercepts": dict(zip(scen["scenario"], u.tolist())),
        "resident_effect": delta,
        "tag_sd": tag_sd,
        "tag_rho": tag_rho,
        "phi": phi,
        "cutpoints": list(cutpoints),
        "bounds": {s: [lo[i], hi[i]] for i, s in enumerate(scen["scenario"])},
        "eta": {a: dict(zip(scen["scenario"], eta[i].tolist())) for i, a in enumerate(agents)},
        "expected_score": dict(zip(agents, expected_score(eta, cutpoints).mean(axis=1).tolist())),  # ordered-beta mean
        "cells": cells,
    }
    if layout is not None:
        truth["model"] = "measurement layout: mu = b + (1 - b) prod_d c_ad^x_sd; ordered beta with logit(mu), precision nu_a"
        truth["layout"] = layout
    return SimulatedContest(records=records, truth=truth, catalogue=sim_catalogue, draw=draw, eta=eta)


class _Draw:
    """Draws the ScenarioResult records of (agent, scenario, repetition) cells from logit-means eta (A, S)."""

    def __init__(self, rng, scen, precision, cutpoints, lo, hi, neg_inf_share):
        self.rng, self.scen, self.precision, self.cutpoints = rng, scen, precision, cutpoints
        self.lo, self.hi, self.neg_inf_share = lo, hi, neg_inf_share

    def __call__(self, agents: list[str], eta: np.ndarray, repetitions, rows: list[int] | None = None):
        """Records (agent -> list) and cells (agent, scenario, repetition, y) for `agents`, whose logit-means
        are the rows `rows` of eta (default: 0, 1, ...), over every scenario and each repetition index."""
        rng, (k1, k2) = self.rng, self.cutpoints
        records: dict[str, list[dict]] = {a: [] for a in agents}
        cells = []
        for agent, ai in zip(agents, range(len(agents)) if rows is None else rows):
            for si, s in enumerate(self.scen.itertuples()):
                for rep in repetitions:
                    e = eta[ai, si]
                    draw = rng.uniform()
                    p0, p1 = 1 - _sigmoid(e - k1), _sigmoid(e - k2)
                    if draw < p0:
                        y = 0.0
                    elif draw < p0 + p1:
                        y = 1.0
                    else:
                        m = _sigmoid(e)
                        prec = self.precision[ai]
                        y = float(np.clip(rng.beta(m * prec, (1 - m) * prec), 1e-9, 1 - 1e-9))
                    cells.append({"agent": agent, "scenario": s.scenario, "repetition": str(rep), "y": y})
                    records[agent].append(_record(rng, agent, s, rep, y, self.lo[si], self.hi[si], self.neg_inf_share))
        return records, cells


PHASES = CONTEST_PHASES


def simulate_contest_phases(
    catalogue: Catalogue,
    n_agents: int = 12,
    repetitions: int = 3,
    finalists: int = 6,
    final_repetitions: int = 10,
    development_shift: float = 0.5,
    test_runs: int = 1,
    seed: int = 0,
    **options,
) -> SimulatedContest:
    """A contest in its three phases (paper section 9.2), from one draw of the generative model:

    - development: every agent on every scenario, one repetition, with logit-means raised by
      `development_shift` (the paper's participants scored higher there than in evaluation);
    - evaluation: every agent, `repetitions` repetitions (the `simulate_concordia` draw itself), plus
      `test_runs` test runs per agent (marked `exclude_from_elo_calculation` and `disable_language_model`,
      in repetitions after the real ones, with the order reversed: the truly weakest agent scores the
      maximum) that a correct Elo leaves out;
    - cross-play: `finalists` agents as the paper picks them: the top `finalists` - 1 by the contest Elo of the
      evaluation records other than the baseline (test runs left out, ties broken by name) and the baseline
      `rational_agent` (the paper's top five and the baseline), `final_repetitions` repetitions each.

    `options` go to `simulate_concordia`. Returns a SimulatedContest whose `phases` maps phase -> agent ->
    records, and whose truth adds 'phases' (records per phase), 'finalists' (in selection order),
    'selection_elo' (agent -> Elo) and 'test_runs' (how many records are marked).
    """
    if not 2 <= finalists <= n_agents:
        raise ValueError(f"finalists must be between 2 and the {n_agents} agents")
    sim = simulate_concordia(catalogue, n_agents=n_agents, repetitions=repetitions, seed=seed, **options)
    agents, draw, eta = sim.truth["agents"], sim.draw, sim.eta
    development, _ = draw(agents, eta + development_shift, range(1))
    evaluation = {a: list(r) for a, r in sim.records.items()}
    strength = sim.truth["expected_score"]
    order = sorted(agents, key=lambda a: strength[a])  # weakest first: the test runs reverse the truth
    for t in range(test_runs):
        rep = repetitions + t
        k = t % len(draw.scen)
        scenario = next(draw.scen.iloc[[k]].itertuples())
        for place, agent in enumerate(order):
            y = 1.0 - place / max(len(order) - 1, 1)
            record = _record(draw.rng, agent, scenario, rep, y, draw.lo[k], draw.hi[k], 0.0)
            record.update(exclude_from_elo_calculation=True, disable_language_model=True, api_type="test")
            evaluation[agent].append(record)
    elo = records_elo(evaluation)
    # the paper's finalists (Tables 8-12): the top by evaluation Elo other than the baseline, then the baseline
    ranked = [a for a in sorted(elo, key=lambda a: (-elo[a], a)) if a != BASELINE]
    chosen = ranked[:finalists - 1] + [BASELINE] if BASELINE in elo else ranked[:finalists]
    rows = [agents.index(a) for a in chosen]
    cross_play, _ = draw(chosen, eta, range(final_repetitions), rows=rows)
    sim.phases = dict(zip(PHASES, (development, evaluation, cross_play)))
    sim.truth.update(phases={p: sum(len(r) for r in recs.values()) for p, recs in sim.phases.items()},
                     finalists=chosen, selection_elo=elo, test_runs=test_runs * len(agents),
                     development_shift=development_shift)
    return sim


def records_elo(records: dict[str, list[dict]]) -> dict[str, float]:
    """The contest's Elo (`referee.models.ratings.elo.contest_elo`) computed straight from ScenarioResult records (agent ->
    list), without referee's loaders or store: strict wins of focal per-capita scores within each (scenario,
    repetition), records marked `exclude_from_elo_calculation` left out. Returns agent -> Elo."""
    from referee.models.ratings.elo import contest_elo

    agents = sorted(records)
    units: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for i, agent in enumerate(agents):
        for r in records[agent]:
            if not r.get("exclude_from_elo_calculation"):
                units.setdefault((r["scenario"], str(r["repetition_idx"])), []).append((i, r["focal_per_capita_score"]))
    W = np.zeros((len(agents), len(agents)))
    for unit in units.values():
        for i, si in unit:
            for j, sj in unit:
                if si > sj:
                    W[i, j] += 1
    return dict(zip(agents, contest_elo(W).tolist()))


def layout_eta(rng, agents: list[str], scen: pd.DataFrame, tags: list[str], X: np.ndarray):
    """A Measurement Layout's logit-mean per (agent, scenario) with known capabilities.

    Demands: every tag, `substrate: NAME` per substrate, and `visitor`. Capabilities c = sigmoid(N(1.5, 1)),
    base chance b ~ Beta(1, 4), concentration nu ~ Gamma(4, 1/4) (mean 16).
    Returns (eta (A, S), nu (A,), truth dict).
    """
    substrates = sorted(scen["game"].dropna().unique())
    demands = list(tags) + [f"substrate: {g}" for g in substrates] + ["visitor"]
    D = np.c_[X, (scen["game"].to_numpy()[:, None] == np.array(substrates)[None, :]).astype(float),
              (scen["mode"] == "visitor").to_numpy(float)]
    A = len(agents)
    capability = _sigmoid(rng.normal(1.5, 1.0, size=(A, len(demands))))
    base = rng.beta(1.0, 4.0, size=A)
    nu = rng.gamma(4.0, 4.0, size=A)
    mu = base[:, None] + (1 - base[:, None]) * np.exp(np.log(capability) @ D.T)
    mu = np.clip(mu, 1e-6, 1 - 1e-6)
    truth = {"demands": demands,
             "design": {s: dict(zip(demands, map(int, D[i]))) for i, s in enumerate(scen["scenario"])},
             "capability": {a: dict(zip(demands, capability[i].tolist())) for i, a in enumerate(agents)},
             "base_chance": dict(zip(agents, base.tolist())), "sample_size": dict(zip(agents, nu.tolist()))}
    return np.log(mu) - np.log1p(-mu), nu, truth


def _record(rng, agent, s, rep, y, lo, hi, neg_inf_share) -> dict:
    per_capita = lo + y * (hi - lo)
    n_focal = PLAYERS - 1 if s.mode == "resident" else 1
    names = list(rng.permutation(NAMES)[:PLAYERS])
    focal_names, background_names = names[:n_focal], names[n_focal:]
    room = min(per_capita - lo, hi - per_capita) * 0.5
    jitter = rng.uniform(-room, room, size=n_focal) if n_focal > 1 else np.zeros(1)
    jitter -= jitter.mean()
    if y == 0.0 and rng.uniform() < neg_inf_share:
        focal = {n: float("-inf") for n in focal_names}
    else:
        focal = {n: float(per_capita + j) for n, j in zip(focal_names, jitter)}
    background = {n: float(lo + rng.beta(2, 2) * (hi - lo)) for n in background_names}
    focal_mean = float(np.mean(list(focal.values())))
    everyone = list(focal.values()) + list(background.values())
    residents, visitors = (focal, background) if s.mode == "resident" else (background, focal)
    return {
        "scenario": s.scenario,
        "repetition_idx": str(rep),
        "focal_agent": agent,
        "background_agent": s.background,
        "focal_per_capita_score": focal_mean,
        "background_per_capita_score": float(np.mean(list(background.values()))),
        "ungrouped_per_capita_score": float(np.mean(everyone)),
        "simulation_outcome": {"resident_scores": residents, "visitor_scores": visitors, "metadata": {}},
        "focal_is_resident": s.mode == "resident",
        "api_type": "simulated",
        "model": MODEL,
        "embedder": EMBEDDER,
        "disable_language_model": False,
        "exclude_from_elo_calculation": False,
    }


def write_concordia(sim: SimulatedContest, out: str | Path) -> dict[str, Path]:
    """Write a simulated contest: `out/logs/{agent}__{model}__{embedder}.json` (one list per agent; with phases,
    `out/logs/{phase}/...`, to ingest each folder with `referee ingest --phase {phase}`),
    `out/catalogue.toml` (scenarios with the simulated bounds) and `out/truth.json`.

    Returns the paths written, keyed 'logs', 'catalogue', 'truth'.
    """
    out = Path(out)
    logs = out / "logs"
    folders = {logs / phase: records for phase, records in sim.phases.items()} if sim.phases else {logs: sim.records}
    for folder, by_agent in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        for agent, records in by_agent.items():
            text = json.dumps(records, indent=1, allow_nan=True)  # -Infinity, as Concordia's json writes it
            (folder / f"{agent}__{MODEL}__{EMBEDDER}.json").write_text(text + "\n", encoding="utf-8")
    catalogue = write_catalogue(sim.catalogue, out / "catalogue.toml",
                                header="Scenarios of a simulated contest (referee simulate concordia);\n"
                                       "the score bounds are the simulation's, not the real contest's.")
    truth = out / "truth.json"
    truth.write_text(json.dumps(sim.truth, indent=1) + "\n", encoding="utf-8")
    return {"logs": logs, "catalogue": catalogue, "truth": truth}


def cells_frame(truth: dict) -> pd.DataFrame:
    """The simulated cells (agent, scenario, repetition, y) of a truth dict as a DataFrame."""
    return pd.DataFrame(truth["cells"])


GENERATORS = {"additive": None, "layout": layout_eta}  # the generative models: None is the additive logit model
