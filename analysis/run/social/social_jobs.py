"""The jobs on what players said and how a score is made (`referee socio, judge, judge-agreement, audit`;
`referee.socio(...)` and so on): each one function from a store and typed options
(`referee.run.job_table.JOBS`) to a `Result`."""

from __future__ import annotations

from referee.run.options import sampling
from referee.result import AgreementJobResult, AuditJobResult, JudgeJobResult, SocioJobResult
from referee.run.stored import one_runner


def runner_tables(store, runner: str | None) -> tuple:
    """(matches, results, events, measures) of one runner (`referee.run.stored.one_runner`), each cut to its
    matches."""
    matches = one_runner(store.matches(), runner)
    ids = set(matches["match_id"])
    return (matches,) + tuple(t[t["match_id"].isin(ids)] for t in (store.results(), store.events(), store.measures()))


def socio(store, runner: str | None = None, bootstrap: int = 200, judges: list[str] | None = None,
          seed: int = 0) -> SocioJobResult:
    """Socio-cognitive metrics (`referee socio`; COMPACT section 4): the metrics, their consistency (intra- against
    inter-agent correlations), what predicts winning (`auc`: cross-validated ROC-AUC per condition), the judges'
    agreement; `runner` defaults to the store's runner whose logs carry them (its entry's `socio_cognitive`: COMPACT's)."""
    from referee.io.loaders import entry
    from referee.run.social.socio import socio_analysis

    if runner is None:
        runner = next((r for r in store.runners() if entry(r).socio_cognitive), None)
    matches, results, events, measures = runner_tables(store, runner)
    found = socio_analysis(matches, results, events, measures, n_boot=bootstrap, seed=seed,
                           judges=tuple(judges) if judges else None)
    aucs = found.auc_table()
    return SocioJobResult("socio", {"consistency": found.consistency, "metrics": found.metrics, "auc": aucs}, found.notes,
                  found.diagnostics, fields={"agreement": found.agreement},
                  lines=[aucs.to_string(index=False)] + (
                      [f"judge agreement: {found.agreement}"] if found.agreement else []), value=found,
                  documents={"determinants.json": {
                      "auc": aucs.to_dict("records"), "agreement": found.agreement, "notes": found.notes,
                      "weights": {c: d.weights.to_dict("records") for c, d in found.determinants.items()}}})


def audit(store, formula=None, outcome: list[str] | None = None, group_by: list[str] | None = None,
          telemetry: str | None = None, score: str | None = None, top_k: int = 3, runner: str | None = None,
          match: str | None = None, no_bayes: bool = False, assume: str | None = None, seed: int = 0,
          **options) -> AuditJobResult:
    """The construct-validity audit of a score against ground-truth outcomes (`referee audit`; the Age of
    Agents' three proofs and more): `outcome` 'NAME' or 'NAME:higher'/'NAME:lower' (which way is better);
    `score` what is audited: the recorded score (None), 'formula' (the formula's own score, recomputed from
    the counters) or a column of the data; `assume` the direction of an outcome nothing declares (stated in the
    result), else such an outcome is refused. Fields: `verdict`, `outcomes`, `directions`; the main table is one
    row per check; `players` the per-player table audited."""
    from referee.models.validity.checks import reproduce
    from referee.readings import audit_markdown
    from referee.run.social.audit import audit_frame, default_outcomes, formula_from, outcome_arg, run_audit

    given = dict(outcome_arg(o) for o in outcome or [])
    frame, events = audit_frame(store, runner=runner, match=match)
    outcomes = list(given) or default_outcomes(frame)
    undeclared = [o for o in outcomes if o not in frame.columns and store.has_attribute("results", o)]
    if undeclared:
        name = undeclared[0]
        raise ValueError(f"outcome {name!r} was a column of the ingested file but was not declared as a measure, so "
                         f"it is kept only in results.attrs; ingest again declaring it: referee ingest FILE --measure "
                         f"{name}=outcome, then audit with --outcome {name}:higher or {name}:lower")
    rule = formula_from(formula, frame) if formula else None
    if score == "formula":
        if rule is None:
            raise ValueError("score 'formula' audits the formula's own score: give a formula file")
        frame = frame.assign(score=reproduce(frame, rule)["expected"].to_numpy())
    elif score is not None:
        if score not in frame.columns:
            raise ValueError(f"score {score!r} is not a column of the audited data ({sorted(frame.columns)})")
        frame = frame.assign(score=frame[score])
    # a telemetry measure declared at ingest counts without being named again (outcome directions declared at
    # ingest are in frame.attrs, which run_audit reads)
    declared = sorted(n for n, kind in frame.attrs.get("kinds", {}).items() if kind == "telemetry" and n in frame)
    telemetry = telemetry or ("universal" if "universal" in frame.columns else declared[0] if declared else None)
    found = run_audit(frame, events, rule, outcomes, list(group_by or []), telemetry, top_k=top_k, seed=seed,
                      bayes=not no_bayes, directions={o: d for o, d in given.items() if d},
                      sampling=sampling(options), assume=assume)
    found.frame = frame
    markdown = audit_markdown(found)
    return AuditJobResult("audit", {"checks": found.table(), "players": frame}, found.notes, found.diagnostics,
                  fields={"verdict": found.verdict, "outcomes": found.outcomes}, lines=[markdown], value=found,
                  documents={"audit.json": found.checks, "audit.md": markdown}, drawn={"outcome": found.judged})


def judge(store, rubric: str, model: str, endpoint: str | None = None, match: list[str] | None = None,
          key_env: str = "OPENAI_API_KEY", concurrency: int = 4, retries: int = 4, answer_retries: int = 2,
          timeout: float = 60.0, price_in: float | None = None, price_out: float = 0.0,
          context: list[str] | None = None, limit: int | None = None, dry_run: bool = False) -> JudgeJobResult:
    """Rate stored events with an LLM judge (`referee judge`): `rubric` (a shipped rubric's name or a .toml file)
    asked of `model` at the OpenAI-compatible `endpoint`; answers are cached in the store (so the store must be
    writable). `dry_run` counts the items, calls and tokens and calls nothing. Fields: the ledger's counts."""
    from referee.io.endpoint import ChatEndpoint
    from referee.io.rubric import load_rubric
    from referee.run.social.judge import estimate, plan, read_context, return_correlations, run_judge

    found_rubric = load_rubric(rubric)
    given = read_context(context or [])
    if endpoint is None and not dry_run:
        raise ValueError("--endpoint URL is needed (or --dry-run to count the calls first)")
    items = plan(store, found_rubric, model, match_ids=match, context=given, limit=limit)
    cost = estimate(found_rubric, items)
    said = (f"{found_rubric.name} (v{found_rubric.version}, {found_rubric.source}): {cost['items']} item(s), "
            f"{cost['cached']} cached, {cost['calls']} to ask; about {cost['tokens_in_estimate']:,} tokens in and "
            f"{cost['tokens_out_estimate']:,} out")
    if dry_run:
        return JudgeJobResult("judge", {}, fields={"rubric": found_rubric.name, "dry_run": True, **cost}, lines=[said])
    if not len(items):
        raise ValueError(f"the store holds no events to fill rubric {found_rubric.name}'s {found_rubric.unit} items")
    chat = ChatEndpoint(endpoint, model, key_env=key_env, timeout=timeout, retries=retries)
    try:
        result = run_judge(store, found_rubric, chat, items, concurrency=concurrency, answer_retries=answer_retries,
                           prices=(price_in, price_out) if price_in is not None else None)
    finally:
        chat.close()
    correlations = return_correlations(result.ratings, store.results())
    tables = {"ratings": result.ratings}
    lines = [said]
    if len(correlations):
        tables["return_correlations"] = correlations
        lines.append("ratings against the players' returns (Spearman):\n" + correlations.to_string(index=False))
    if len(result.texts):
        tables["texts"] = result.texts
    if len(result.quarantined):
        tables["set_aside"] = result.quarantined.drop(columns=["parsed"])
    c = result.counts
    lines.append(f"asked {c['asked']} ({c['calls']} calls; {c['ok']} ok, {c['malformed']} malformed, {c['failed']} "
                 f"failed), reused {c['cached']} cached; tokens {c['tokens_in']:,} in, {c['tokens_out']:,} out"
                 + (f"; cost ${c['cost_usd']:.4f}" if c["cost_usd"] is not None else ""))
    return JudgeJobResult("judge", tables, result.notes, fields={"rubric": found_rubric.name, **c}, lines=lines, value=result,
                  documents={"ledger.json": c})


def judge_agreement(store, raters: list[str], human=None, metric: str | None = None, bootstrap: int = 1000,
                    seed: int = 0) -> AgreementJobResult:
    """Agreement of two raters on the same items (`referee judge-agreement`): MAD, exact, within one and
    Krippendorff's alpha with bootstrap intervals over items; `human` a CSV of human ratings (match_id, player,
    other, round, name, value) rated as 'human'."""
    import pandas as pd
    from referee.models.social.agreement import agreement_intervals, paired_ratings

    if len(raters or []) != 2:
        raise ValueError(f"judge-agreement compares two raters, got {raters}")
    measures = store.measures()
    if human is not None:
        rated = pd.read_csv(human)
        need = {"match_id", "player", "name", "value"}
        if not need <= set(rated.columns):
            raise ValueError(f"{human}: needs columns {sorted(need)} (and optionally other, round)")
        rated = rated.reindex(columns=["match_id", "player", "other", "round", "name", "value"]).assign(
            kind="judge", rater="human")
        measures = pd.concat([measures, rated], ignore_index=True)
    first, second = raters
    pairs = paired_ratings(measures, first, second)
    if metric:
        pairs = pairs[pairs["name"] == metric]
    table = agreement_intervals(pairs[first].to_numpy(), pairs[second].to_numpy(), n_boot=bootstrap, seed=seed)
    return AgreementJobResult("judge-agreement", {"agreement": table, "pairs": pairs}, fields={"items": len(pairs)},
                  lines=[f"{len(pairs)} items rated by both {first} and {second}"])
