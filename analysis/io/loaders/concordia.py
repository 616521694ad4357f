"""Concordia contest results: `ScenarioResult` JSON from Concordia 1.8's evaluation launcher.

A file holds either one ScenarioResult object (per-scenario files) or a list of them (per-agent files
named `{agent}__{model}__{embedder}.json`). One ScenarioResult is one match: a simulation of
`scenario`, repetition `repetition_idx` (a string), with the focal agent's copies as residents when
`focal_is_resident` and as visitors otherwise; `simulation_outcome.resident_scores` and
`visitor_scores` map player names to raw scores (-Infinity allowed).

Canonical output per record: one `matches` row (match_id `concordia:{scenario}:{repetition}:{focal}`, or
`concordia:{phase}:{scenario}:{repetition}:{focal}` when the match has a phase: `ingest --phase`, else the
catalogue's `phase` of the scenario),
one `results` row per player (group focal/background), and the recorded per-capita scores, model
fields and outcome metadata kept in `matches.attrs`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from referee.io.catalogue import contest_catalogue, earlier_catalogue
from referee.io.loaders.runner import Headline, Runner
from referee.io.loaders.appended import read_json_documents
from referee.io.loaders.files import Faulty, canonical_json
from referee.io.loaders.base import (
    LoadOptions,
    LoadResult,
    NotThisRunner,
    RecordError,
    ResultBuilder,
    ranks_from_scores,
    require,
    score_value,
)

NAME = "concordia"
COMPARISON_UNIT = ("the (phase, scenario, repetition): each focal agent's per-capita score against every other focal "
                   "agent's in the same scenario and repetition (the contest's own Elo comparisons); the background "
                   "population is scripted and not rated")

REQUIRED = ("scenario", "repetition_idx", "focal_agent", "focal_is_resident", "simulation_outcome",
            "focal_per_capita_score")
EARLIER = "simulation_outcomes"  # v1.8.0-v1.8.9: a list of outcomes, one per repetition, and no repetition_idx
PER_CAPITA = "mean"  # the repetition of a v1.8.0-v1.8.9 result kept without its outcomes (per-capita scores only)
OPTIONAL = ("background_agent", "background_per_capita_score", "ungrouped_per_capita_score", "api_type",
            "model", "embedder", "disable_language_model", "exclude_from_elo_calculation")
OUTCOME_KEYS = {"resident_scores", "visitor_scores", "metadata"}
# a record's flags that make it a test run: Concordia's Elo script skips a record with either set true (the
# launcher sets exclude_from_elo_calculation when the language model is disabled); `referee.prepare.selection`
# reads them from this runner's matches only
EXCLUDED_WHEN = {"exclude_from_elo_calculation": "test runs marked exclude_from_elo_calculation, which the "
                                                 "contest's Elo script skips",
                 "disable_language_model": "test runs marked disable_language_model, which the contest's Elo "
                                           "script skips"}
_TOLERANCE = 1e-6


def sniff(path: Path, head: str, sample: list) -> float:
    """1 when the file is JSON whose head carries Concordia's ScenarioResult keys, else 0."""
    return float(path.suffix.lower() == ".json" and '"focal_agent"' in head and '"scenario"' in head)


def _scores(outcome: dict, key: str) -> dict[str, float]:
    value = outcome.get(key)
    field = f"simulation_outcome.{key}"
    if value is None:
        raise RecordError("missing field", field, f"required field '{field}' is missing")
    if not isinstance(value, dict):
        raise RecordError("wrong type", field, f"expected an object of player -> score, got {value!r}")
    return {player: score_value(s, f"{field}.{player}") for player, s in value.items()}


def _per_capita(record: dict, name: str) -> float | None:
    if name not in record or record[name] is None:
        return None
    return score_value(record[name], name)


def _agrees(recorded: float, scores: list[float]) -> bool:
    if not scores:
        return True
    mean = sum(scores) / len(scores)
    if math.isinf(recorded) or math.isinf(mean):
        return recorded == mean
    return abs(recorded - mean) <= _TOLERANCE * (1 + abs(recorded))


def earlier_records(record: object) -> list[tuple[str, object]]:
    """A v1.8.0-v1.8.9 ScenarioResult (`simulation_outcomes`, no `repetition_idx`) in the v1.8.10 shape: one
    record per repetition (label suffix `.simulation_outcomes[k]`, repetition k), each carrying that repetition's
    per-capita means (Concordia's evaluation script averaged them over the repetitions into the recorded
    ones, which must agree). A result whose outcomes were left out (an empty list) keeps its per-capita scores
    as one match of repetition 'mean': a focal and a background row. Any other record is returned as it is; a
    record found unusable here comes back `Faulty` (set aside with its error, its neighbours read on)."""
    if not isinstance(record, dict) or EARLIER not in record or "repetition_idx" in record:
        return [("", record)]
    base = {k: v for k, v in record.items() if k != EARLIER}
    outcomes = record[EARLIER]
    if not isinstance(outcomes, list):
        error = RecordError("wrong type", EARLIER, f"expected a list of outcomes, got {outcomes!r}")
        return [("", Faulty(record, error))]
    if not outcomes:
        return [("", {**base, "repetition_idx": PER_CAPITA})]
    out, means = [], {"focal_per_capita_score": [], "background_per_capita_score": [], "ungrouped_per_capita_score": []}
    resident = base.get("focal_is_resident")
    for k, outcome in enumerate(outcomes):
        rec = {**base, "repetition_idx": str(k), "simulation_outcome": outcome}
        try:
            residents = _scores(outcome, "resident_scores") if isinstance(outcome, dict) else None
            visitors = _scores(outcome, "visitor_scores") if isinstance(outcome, dict) else None
        except RecordError:
            residents = visitors = None  # the repetition is set aside on its own, naming the field
        if residents is not None and visitors is not None and isinstance(resident, bool):
            focal, background = (residents, visitors) if resident else (visitors, residents)
            groups = {"focal_per_capita_score": list(focal.values()),
                      "background_per_capita_score": list(background.values()),
                      "ungrouped_per_capita_score": list(focal.values()) + list(background.values())}
            for name, scores in groups.items():
                mean = sum(scores) / len(scores) if scores else None
                rec[name] = mean
                means[name].append(mean)
        out.append((f".{EARLIER}[{k}]", rec))
    for name, values in means.items():
        recorded = base.get(name)
        if len(values) == len(outcomes) and None not in values and isinstance(recorded, (int, float)) \
                and not isinstance(recorded, bool) and not _agrees(float(recorded), values):
            error = RecordError("inconsistent", name, f"recorded {recorded} differs from the mean over the repetitions")
            return [(label, Faulty(rec, error)) for label, rec in out]
    return out


def _per_capita_rows(record: dict, focal: str, background: str | None) -> list[dict]:
    """A v1.8.0-v1.8.9 result without outcomes: the focal and background per-capita scores as two rows."""
    rows = [("focal", focal, "focal", _per_capita(record, "focal_per_capita_score"))]
    score = _per_capita(record, "background_per_capita_score")
    if score is not None:
        rows.append(("background", background or "background", "background", score))
    ranks = ranks_from_scores([r[3] for r in rows])
    return [{"player": p, "agent": a, "group": g, "score": sc, "rank": r,
             "attrs": json.dumps({"per_capita": True})} for (p, a, g, sc), r in zip(rows, ranks)]


def parse_record(record: object, options: LoadOptions) -> dict[str, list[dict]]:
    """Turn one ScenarioResult object into canonical rows (match_id and provenance filled by the caller).

    Raises RecordError for a missing or unexpected field, a wrong type, a NaN or +inf score, a player
    listed twice, per-capita scores that contradict the per-player scores, or a scenario absent from the
    catalogue.
    """
    if not isinstance(record, dict):
        raise RecordError("wrong type", None, f"expected a ScenarioResult object, got {type(record).__name__}")
    per_capita_only = record.get("repetition_idx") == PER_CAPITA and "simulation_outcome" not in record
    unexpected = set(record) - set(REQUIRED) - set(OPTIONAL)
    if unexpected:
        name = sorted(unexpected)[0]
        raise RecordError("unexpected field", name, f"field '{name}' is not part of a ScenarioResult")
    scenario = require(record, "scenario", (str,), "a scenario name")
    repetition = require(record, "repetition_idx", (str, int), "a repetition index (string)")
    if isinstance(repetition, str) and not per_capita_only and not repetition.strip().lstrip("-").isdigit():
        raise RecordError("wrong type", "repetition_idx", f"expected an integer string, got {repetition!r}")
    repetition = PER_CAPITA if per_capita_only else str(int(repetition))
    focal = require(record, "focal_agent", (str,), "an agent name")
    if not focal.strip():  # the agent a rating names: ScenarioResult's "name of the agent being tested"
        raise RecordError("missing value", "focal_agent", "the focal agent's name is empty: no agent to rate")
    focal_is_resident = require(record, "focal_is_resident", (bool,), "true or false")
    background = record.get("background_agent")
    if background is not None and not isinstance(background, str):
        raise RecordError("wrong type", "background_agent", f"expected an agent name, got {background!r}")
    if isinstance(background, str) and not background.strip():  # ScenarioResult: the population's name (a str)
        raise RecordError("missing value", "background_agent", "the background population's name is empty")
    outcome = {"resident_scores": {}, "visitor_scores": {}} if per_capita_only else \
        require(record, "simulation_outcome", (dict,), "an object")
    extra = set(outcome) - OUTCOME_KEYS
    if extra:
        name = f"simulation_outcome.{sorted(extra)[0]}"
        raise RecordError("unexpected field", name, f"field '{name}' is not part of a SimulationOutcome")
    residents = _scores(outcome, "resident_scores")
    visitors = _scores(outcome, "visitor_scores")
    twice = sorted(set(residents) & set(visitors))
    if twice:
        raise RecordError("player listed twice", "simulation_outcome.visitor_scores",
                          f"player {twice[0]!r} is both a resident and a visitor")
    earlier = earlier_catalogue()
    if options.catalogue is not None and scenario not in options.catalogue.names and not (
            options.catalogue.names == contest_catalogue().names and scenario in earlier.names):
        raise RecordError("unknown scenario", "scenario", f"scenario {scenario!r} is not in the catalogue")
    focal_scores, background_scores = (residents, visitors) if focal_is_resident else (visitors, residents)
    if not focal_scores and not per_capita_only:
        raise RecordError("missing field", "simulation_outcome", "no focal player has a score")
    per_capita = {name: _per_capita(record, name) for name in
                  ("focal_per_capita_score", "background_per_capita_score", "ungrouped_per_capita_score")}
    if per_capita["focal_per_capita_score"] is None:
        raise RecordError("missing field", "focal_per_capita_score", "required field is null")
    checks = {
        "focal_per_capita_score": list(focal_scores.values()),
        "background_per_capita_score": list(background_scores.values()),
        "ungrouped_per_capita_score": list(residents.values()) + list(visitors.values()),
    }
    for name, scores in checks.items():
        if per_capita[name] is not None and not _agrees(per_capita[name], scores):
            raise RecordError("inconsistent", name,
                              f"recorded {per_capita[name]} differs from the mean of the per-player scores")
    for flag in EXCLUDED_WHEN:  # Concordia's logging types: ScenarioResult declares both `bool` (never null)
        if flag in record and not isinstance(record[flag], bool):
            raise RecordError("wrong type", flag, f"expected true or false (Concordia's ScenarioResult declares it "
                              f"a bool), got {record[flag]!r}"[:300])
    attrs = {k: record[k] for k in OPTIONAL if k in record and k != "background_agent"}
    attrs.update({k: v for k, v in per_capita.items() if v is not None and not math.isinf(v)})
    attrs["background_agent"] = background
    attrs["focal_is_resident"] = focal_is_resident
    if outcome.get("metadata") is not None:
        attrs["outcome_metadata"] = outcome["metadata"]
    if per_capita_only:
        attrs["per_capita_only"] = True  # Concordia 1.8.0-1.8.9 result kept without its outcomes
        results = _per_capita_rows(record, focal, background)
    else:
        players = [(p, s, "focal", focal) for p, s in focal_scores.items()]
        players += [(p, s, "background", background or "background") for p, s in background_scores.items()]
        ranks = ranks_from_scores([p[1] for p in players])
        results = [{"player": p, "agent": agent, "group": group, "score": s, "rank": r}
                   for (p, s, group, agent), r in zip(players, ranks)]
    games = options.catalogue.games if options.catalogue else {}
    game = games.get(scenario) or earlier.games.get(scenario)
    phase = options.phase or (options.catalogue.phases.get(scenario) if options.catalogue else None)
    match = {
        "runner": NAME,
        "game": game,
        "scenario": scenario,
        "phase": phase,
        "repetition": repetition,
        "n_players": len(results),
        "attrs": json.dumps(attrs, default=str),
        "focal": focal,
    }
    return {"matches": [match], "results": results}


def load(path: Path, content_hash: str, options: LoadOptions) -> LoadResult:
    """Read one Concordia results file (a ScenarioResult object or a list of them) into canonical tables.

    Every object is one record; bad ones are quarantined with file, index and field. A file that is
    empty, malformed, or another runner's counts as one quarantined record.
    """
    out = ResultBuilder(path, content_hash, NAME)
    try:
        docs = read_json_documents(path)
        for doc in docs:
            if isinstance(doc, list) and doc and all(isinstance(r, dict) for r in doc) and \
                    not any("focal_agent" in r or "scenario" in r for r in doc):
                raise NotThisRunner("no record has 'focal_agent' or 'scenario'", runner=NAME, field="focal_agent")
    except RecordError as exc:
        return out.reject_file(exc)

    def match_id(match: dict, label: str) -> str:
        run = label.partition(":")[0] if ":" in label else ""  # the k of a rerun's 'k:i' label
        if run:  # a rerun appended to the file: its repetitions are new matches, not the first run's
            match["repetition"] = f"{match['repetition']} ({RERUN} {run})"
        phase = f"{match['phase']}:" if match["phase"] else ""  # one scenario's repetition 0 exists in each phase
        return f"concordia:{phase}{match['scenario']}:{match['repetition']}:{match.pop('focal')}"

    out.accept_records(_appended_runs(docs, out), lambda record: parse_record(record, options), match_id)
    return out.build()


RERUN = "rerun"  # the repetition label of a record from the k-th array appended to a results file: '0 (rerun 1)'


def _appended_runs(docs: list, out: ResultBuilder):
    """(label, record) of every record of a results file's documents: the first array's labelled by index, each
    later one's (a rerun the evaluation script appended to the same file) 'k:i', from which `load`'s match id
    labels its repetitions '(rerun k)', so that a rerun adds matches instead of colliding with the first run's;
    a record repeated identically in a later array is stored once, the repeat counted as read and set aside as a
    `repeated record` naming the first (and said); an array that could not be read (`appended.Unread`:
    truncated, text between arrays) is one record set aside with its fault, costing no other."""
    seen: dict[str, str] = {}
    for k, doc in enumerate(docs):
        for i, record in enumerate(doc if isinstance(doc, list) else [doc]):
            if len(docs) > 1 and not isinstance(record, Faulty):  # an unread array is set aside, never matched
                key = canonical_json(record)
                if k and key in seen:
                    out.note("Concordia record(s) repeated identically in a later array appended to the same "
                             "results file: stored once")
                    out.saw()
                    out.quarantine(f"{k}:{i}", RecordError(
                        "repeated record", None, f"the same record as {seen[key]} (array {k + 1} repeats it "
                        "unchanged: the evaluation script appends a rerun to the same file); stored once"), record)
                    continue
                seen.setdefault(key, f"record {i} of array {k + 1}")
            for suffix, part in earlier_records(record):
                yield (f"{k}:{i}{suffix}" if k else f"{i}{suffix}"), part


RUNNER = Runner(
    NAME, sniff, load,
    {"ScenarioResult (required)": list(REQUIRED), "ScenarioResult (optional)": list(OPTIONAL)},
    default_catalogue=contest_catalogue, excluded_when=EXCLUDED_WHEN, separate_episodes=True,
    comparison_unit=COMPARISON_UNIT,
    headline=Headline(
        "contest Elo",
        "the same Elo as the contest's (strict wins; ties left out); referee's default Bradley-Terry counts a "
        "tie as half a win, and its table uses a prior where the contest's Elo is undefined",
        {"contest Elo": "contest_elo"}, rating="elo", comparisons="scenario", unit="all scenarios",
        needs="two focal agents compared on one scenario"))
