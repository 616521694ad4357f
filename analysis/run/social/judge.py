"""`referee judge`: a rubric's items from the store, asked of an LLM endpoint, cached, checked and stored.

For each item of the rubric's unit (`referee.prepare.judge_items`) the prompt is filled and keyed
(`Rubric.cache_key`: rubric, version, model, system message, prompt). An answer already in the store's
`judgments` table under that key with status ok is reused: re-running costs nothing, and a changed rubric or
item re-asks only what changed. New prompts go to the endpoint (`referee.io.endpoint`); an answer that does
not fit the rubric's schema is asked again up to `answer_retries` times, then recorded as malformed and set
aside in the quarantine with its raw text, never guessed. Checked answers become `judge` measures (rater =
the model; each [store] field its measure), replacing that model's earlier ratings of the same items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from referee.io.endpoint import CallFailed
from referee.io.rubric import AnswerError, Rubric, parse_answer
from referee.io.schema import columns
from referee.prepare.judge_items import judge_items
from referee.models.fit import FitResult

CHARS_PER_TOKEN = 4  # the dry run's token estimate
ANSWER_TOKENS = 150  # the dry run's estimate of an answer's length


@dataclass
class JudgeResult(FitResult):
    """One `referee judge` run: `ratings` (the judge measures written), `texts` (each answer's string fields),
    `quarantined` (malformed or failed items with their raw answers), and counts: items, cached, asked,
    calls, tokens_in, tokens_out, cost (None without prices). `table()` is the ratings."""

    rubric: str = ""
    ratings: pd.DataFrame = field(default_factory=pd.DataFrame)
    texts: pd.DataFrame = field(default_factory=pd.DataFrame)
    quarantined: pd.DataFrame = field(default_factory=pd.DataFrame)
    counts: dict = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """The ratings written: match_id, player, other, round, name, value, rater."""
        return self.ratings


def plan(store, rubric: Rubric, model: str, match_ids: list[str] | None = None,
         context: dict[str, dict[str, str] | str] | None = None, limit: int | None = None) -> pd.DataFrame:
    """The items to judge with their prompts: match_id, player, other, round, prompt, key, cached (an ok
    answer is in the store). context : extra template values, NAME -> text for every player or {player: text}.
    Raises ValueError naming the missing context when the template needs one that is not given."""
    missing = sorted(rubric.context - set(context or {}))
    if missing:
        raise ValueError(f"rubric {rubric.name} needs --context {missing[0]}=FILE (its template uses {{{missing[0]}}})")
    matches = store.matches()
    if match_ids:
        matches = matches[matches["match_id"].isin(match_ids)]
    items = judge_items(rubric.unit, matches, store.events())
    if limit is not None:
        items = items.head(limit)
    prompts = []
    for row in items.itertuples():
        values = dict(row.variables)
        for name, text in (context or {}).items():
            values[name] = text.get(row.player, "(none given)") if isinstance(text, dict) else text
        prompts.append(rubric.prompt(values))
    items = items.drop(columns="variables").assign(prompt=prompts)
    items["key"] = [rubric.cache_key(model, p) for p in items["prompt"]]
    done = store.judged_keys()
    items["cached"] = items["key"].isin(done)
    return items.reset_index(drop=True)


def estimate(rubric: Rubric, items: pd.DataFrame) -> dict:
    """What a run would cost before it runs: items, cached, calls to make, estimated tokens in and out."""
    todo = items[~items["cached"]]
    tokens_in = int(((todo["prompt"].str.len() + len(rubric.system)) / CHARS_PER_TOKEN).sum())
    return {"items": len(items), "cached": int(items["cached"].sum()), "calls": len(todo),
            "tokens_in_estimate": tokens_in, "tokens_out_estimate": len(todo) * ANSWER_TOKENS}


def _ask(endpoint, rubric: Rubric, prompts: list[str], concurrency: int, answer_retries: int) -> list[dict]:
    """Ask every prompt; re-ask those whose answers do not parse, up to `answer_retries` times. Returns one
    dict per prompt: status, answer, parsed, reason, tokens_in, tokens_out, calls."""
    outcome = [{"status": None, "answer": None, "parsed": None, "reason": None, "tokens_in": 0, "tokens_out": 0,
                "calls": 0} for _ in prompts]
    todo = list(range(len(prompts)))
    for _ in range(answer_retries + 1):
        if not todo:
            break
        replies = endpoint.complete_many([(rubric.system, prompts[i]) for i in todo], concurrency)
        again = []
        for i, reply in zip(todo, replies):
            out = outcome[i]
            out["calls"] += reply.attempts
            if isinstance(reply, CallFailed):
                out.update(status="failed", reason=reply.reason)
                continue
            out["tokens_in"] += reply.tokens_in
            out["tokens_out"] += reply.tokens_out
            try:
                out.update(status="ok", answer=reply.text, parsed=parse_answer(rubric, reply.text), reason=None)
            except AnswerError as exc:
                out.update(status="malformed", answer=reply.text, reason=f"{exc.reason}: {exc}")
                again.append(i)
        todo = again
    return outcome


def run_judge(store, rubric: Rubric, endpoint, items: pd.DataFrame, concurrency: int = 4, answer_retries: int = 2,
              prices: tuple[float, float] | None = None) -> JudgeResult:
    """Judge `items` (from `plan`) with `endpoint` (an `referee.io.endpoint.ChatEndpoint`) and write the
    store: the judgments (cache and ledger), the ratings as judge measures, the malformed and failed items in
    the quarantine. prices : USD per million tokens (in, out) for the cost in the counts. Returns a JudgeResult."""
    model = endpoint.model
    todo = items[~items["cached"]].reset_index(drop=True)
    asked = _ask(endpoint, rubric, list(todo["prompt"]), concurrency, answer_retries)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    new = pd.DataFrame([{"key": r.key, "rubric": rubric.name, "version": rubric.version, "model": model,
                         "match_id": r.match_id, "player": r.player, "other": r.other,
                         "round": None if pd.isna(r.round) else int(r.round), "status": a["status"],
                         "answer": a["answer"], "parsed": json.dumps(a["parsed"]) if a["parsed"] else None,
                         "reason": a["reason"], "tokens_in": a["tokens_in"], "tokens_out": a["tokens_out"],
                         "calls": a["calls"], "asked_at": now} for r, a in zip(todo.itertuples(), asked)],
                       columns=columns("judgments"))
    bad = new[new["status"] != "ok"]
    quarantine = pd.DataFrame({"source_file": f"judge:{rubric.name}", "content_hash": None, "runner": "judge",
                               "record": bad["match_id"].astype(str) + "/" + bad["player"].astype(str)
                               + ("/" + bad["other"].fillna("") if rubric.unit == "dyad-round" else "")
                               + "/round " + bad["round"].astype(str),
                               "field": "answer", "reason": bad["status"] + " answer",
                               "message": f"{rubric.name} by {model}: " + bad["reason"].fillna(""),
                               "raw": bad["answer"]}, columns=columns("quarantine"))
    cached = store.cached_judgments(list(items.loc[items["cached"], "key"]))
    parsed = dict(zip(cached["key"], cached["parsed"].map(json.loads)))
    parsed.update({k: json.loads(p) for k, p in zip(new["key"], new["parsed"]) if p})
    ratings, texts = [], []
    for row in items.itertuples():
        answer = parsed.get(row.key)
        if answer is None:
            continue
        ident = {"match_id": row.match_id, "player": row.player, "other": row.other,
                 "round": None if pd.isna(row.round) else int(row.round)}
        ratings += [{**ident, "name": measure, "value": float(answer[name]), "kind": "judge", "rater": model}
                    for name, measure in rubric.store.items()]
        strings = {f.name: answer[f.name] for f in rubric.answer if f.type == "string"}
        if strings:
            texts.append({**ident, **strings})
    ratings = pd.DataFrame(ratings, columns=["match_id", "player", "other", "round", "name", "value", "kind", "rater"])
    store.record_judgments(model, list(rubric.store.values()), items, new, quarantine, ratings)
    calls = int(new["calls"].sum())
    tokens_in, tokens_out = int(new["tokens_in"].sum()), int(new["tokens_out"].sum())
    counts = {"items": len(items), "cached": int(items["cached"].sum()), "asked": len(todo), "calls": calls,
              "ok": int((new["status"] == "ok").sum()), "malformed": int((new["status"] == "malformed").sum()),
              "failed": int((new["status"] == "failed").sum()), "tokens_in": tokens_in, "tokens_out": tokens_out,
              "cost_usd": None if prices is None else (tokens_in * prices[0] + tokens_out * prices[1]) / 1e6}
    notes = []
    if len(bad):
        notes.append(f"{len(bad)} of {len(todo)} item(s) asked were set aside ({counts['malformed']} malformed after "
                     f"{answer_retries} re-ask(s), {counts['failed']} failed calls); they are in the quarantine with "
                     "their raw answers and are asked again on the next run")
    return JudgeResult(model=f"judge:{rubric.name}", rubric=rubric.name, ratings=ratings,
                       texts=pd.DataFrame(texts), quarantined=bad.reset_index(drop=True), counts=counts, notes=notes,
                       diagnostics={"converged": True, **{k: v for k, v in counts.items() if v is not None}})


def return_correlations(ratings: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """How each rated measure goes with the player's return in that match (the contest paper: "Likert
    evaluations correlated with higher returns"): per measure, n, Spearman's rho and its p-value, over the
    (match, player) pairs with a finite score, ratings averaged per pair. Empty when there is nothing to pair."""
    from scipy.stats import spearmanr

    if ratings.empty:
        return pd.DataFrame(columns=["measure", "n", "spearman_rho", "p_value"])
    per_player = ratings.groupby(["match_id", "player", "name"], as_index=False)["value"].mean()
    scores = results[["match_id", "player", "score"]].dropna()
    scores = scores[np.isfinite(scores["score"].astype(float))]
    joined = per_player.merge(scores, on=["match_id", "player"])
    rows = []
    for name, part in joined.groupby("name"):
        if len(part) >= 3 and part["value"].nunique() > 1 and part["score"].nunique() > 1:
            found = spearmanr(part["value"], part["score"])
            rows.append({"measure": name, "n": len(part), "spearman_rho": float(found.statistic),
                         "p_value": float(found.pvalue)})
    return pd.DataFrame(rows, columns=["measure", "n", "spearman_rho", "p_value"])


def read_context(pairs: list[str]) -> dict[str, dict[str, str] | str]:
    """`--context NAME=PATH` values: a file's text for every player, or a folder of PLAYER.txt files."""
    out: dict[str, dict[str, str] | str] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep:
            raise ValueError(f"--context takes NAME=PATH, got {pair!r}")
        where = Path(path)
        if where.is_dir():
            out[name.strip()] = {p.stem: p.read_text(encoding="utf-8") for p in sorted(where.glob("*.txt"))}
        elif where.is_file():
            out[name.strip()] = where.read_text(encoding="utf-8")
        else:
            raise FileNotFoundError(f"--context {name}: {path} is neither a file nor a folder")
    return out
