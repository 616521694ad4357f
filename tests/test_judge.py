"""`referee judge` against a real HTTP server on loopback that answers like an OpenAI-compatible endpoint, with
slow answers, 429s, 500s, timeouts and malformed JSON; the cache, the retry and quarantine paths, that no API
key reaches any written file, agreement statistics against hand computations, and the COMPACT sample's judge
metrics produced by the command and read by the socio-cognitive analysis."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.io.endpoint import CallFailed, ChatEndpoint, Reply
from referee.io.rubric import AnswerError, RubricError, load_rubric, parse_answer, shipped_rubrics
from referee.io.store import Store
from referee.reporting import SAMPLE
from referee.run.social.judge import plan, run_judge
from referee.models.social.agreement import agreement_intervals, judge_agreement

KEY = "sk-test-VERY-SECRET-0123456789"


class Endpoint:
    """A chat-completions server on 127.0.0.1. `script` is a list of behaviours used by the next calls, in
    order ('429', '500', 'slow', 'malformed', 'out-of-range', 'garbage'), then `default`; an answer's
    rating comes from `rate(prompt)`. Records every request body and Authorization header."""

    def __init__(self, rate=lambda prompt: len(prompt) % 4, default: str = "ok"):
        self.script, self.default, self.rate = [], default, rate
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append(body)
                    outer.auth.append(self.headers.get("Authorization"))
                    mode = outer.script.pop(0) if outer.script else outer.default
                prompt = body["messages"][-1]["content"]
                if mode in ("429", "500"):
                    self.send_response(int(mode))
                    if mode == "429":
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                if mode == "slow":
                    time.sleep(1.5)
                content = {"ok": json.dumps({"rating": outer.rate(prompt), "rationale": "because"}),
                           "slow": json.dumps({"rating": outer.rate(prompt), "rationale": "late"}),
                           "malformed": "I would rate this a two, roughly.",
                           "out-of-range": json.dumps({"rating": 9, "rationale": "too high"})}.get(mode)
                if mode == "garbage":
                    payload = b"<html>not json</html>"
                else:
                    payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}],
                                          "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 12}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    server = Endpoint()
    yield server
    server.close()


@pytest.fixture
def compact_store(tmp_path):
    path = tmp_path / "compact.duckdb"
    with Store(path) as store:
        store.ingest([SAMPLE / "compact" / "logs"])
    return path


def test_shipped_rubrics_load_and_answers_are_checked():
    assert {"compact-influence", "compact-planning", "compact-learning", "concordia-traits", "concordia-summary",
            "concordia-policy-adherence"} <= set(shipped_rubrics())
    rubric = load_rubric("compact-influence")
    assert rubric.unit == "dyad-round" and rubric.store == {"rating": "influence"} and not rubric.context
    assert parse_answer(rubric, 'Sure: {"rating": 2, "rationale": "x"}') == {"rating": 2, "rationale": "x"}
    for text, reason in (("two", "not json"), ('{"rating": 2}', "missing field"),
                         ('{"rating": 2.5, "rationale": ""}', "wrong type"), ('{"rating": 4, "rationale": ""}',
                                                                             "out of range"), ("[1]", "not an object")):
        with pytest.raises(AnswerError) as caught:
            parse_answer(rubric, text)
        assert caught.value.reason == reason
    assert load_rubric("concordia-policy-adherence").context == {"policy"}


def test_a_bad_rubric_is_named_by_file_and_key(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('name = "x"\nversion = 1\nunit = "team-week"\nsystem = "s"\ntemplate = "t"\n[answer]\n')
    with pytest.raises(RubricError, match=r"r.toml: key 'unit': 'team-week'"):
        load_rubric(path)
    path.write_text('name = "x"\nversion = 1\nunit = "player-match"\nsystem = "s"\ntemplate = "t"\n'
                    '[answer]\nrating = { type = "integer" }\n[store]\nrationale = "r"\n')
    with pytest.raises(RubricError, match="not a numeric answer field"):
        load_rubric(path)


def test_retries_429_500_and_timeouts_then_gives_up_by_name(endpoint):
    client = ChatEndpoint(endpoint.url, "judge-a", key_env=None, timeout=1.0, retries=3, backoff=0.01)
    endpoint.script = ["429", "500", "slow"]
    reply = client.complete("system", "prompt")
    assert isinstance(reply, Reply) and reply.attempts == 4 and reply.tokens_out == 12
    endpoint.script = ["500"] * 4
    failed = client.complete("system", "prompt")
    assert isinstance(failed, CallFailed) and (failed.reason, failed.attempts) == ("HTTP 500", 4)
    endpoint.script = ["garbage"]
    assert client.complete("system", "prompt").reason == "the endpoint's response is not a chat completion"
    client.close()


def test_cache_makes_a_second_run_free_and_a_new_rubric_version_asks_again(endpoint, compact_store, tmp_path):
    rubric = load_rubric("compact-influence")
    client = ChatEndpoint(endpoint.url, "judge-a", key_env=None, backoff=0.01)
    with Store(compact_store) as store:
        items = plan(store, rubric, "judge-a", limit=20)
        first = run_judge(store, rubric, client, items, concurrency=4)
        assert (first.counts["asked"], first.counts["ok"], len(endpoint.requests)) == (20, 20, 20)
        again = run_judge(store, rubric, client, plan(store, rubric, "judge-a", limit=20))
        assert (again.counts["cached"], again.counts["asked"], len(endpoint.requests)) == (20, 0, 20)
        pd.testing.assert_frame_equal(first.ratings, again.ratings)
        stored = store.query("SELECT * FROM measures WHERE rater = 'judge-a'")
        assert len(stored) == 20 and set(stored["name"]) == {"influence"}  # replaced, not duplicated
        changed = tmp_path / "influence_v2.toml"
        changed.write_text(Path(rubric.path).read_text().replace("version = 1", "version = 2"))
        newer = load_rubric(changed)
        third = run_judge(store, newer, client, plan(store, newer, "judge-a", limit=20))
        assert third.counts["asked"] == 20 and len(endpoint.requests) == 40
    client.close()


def test_malformed_answers_are_reasked_then_quarantined_with_their_text(endpoint, compact_store):
    rubric = load_rubric("compact-planning")
    client = ChatEndpoint(endpoint.url, "judge-a", key_env=None, backoff=0.01)
    endpoint.default = "malformed"
    with Store(compact_store) as store:
        items = plan(store, rubric, "judge-a", limit=3)
        result = run_judge(store, rubric, client, items, answer_retries=2)
        assert len(endpoint.requests) == 9  # asked, then re-asked twice each
        assert (result.counts["malformed"], len(result.ratings)) == (3, 0)
        quarantine = store.query("SELECT * FROM quarantine WHERE runner = 'judge'")
        assert len(quarantine) == 3 and (quarantine["raw"] == "I would rate this a two, roughly.").all()
        assert quarantine["message"].str.contains("not json").all()
        endpoint.default = "ok"  # a later run asks the set-aside items again, and only them
        fixed = run_judge(store, rubric, client, plan(store, rubric, "judge-a", limit=3))
        assert fixed.counts["asked"] == 3 and len(fixed.ratings) == 3
    client.close()


def test_no_key_is_written_anywhere_and_dry_run_calls_nothing(endpoint, compact_store, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    out = tmp_path / "judged"
    assert main(["judge", "--rubric", "compact-learning", "--model", "judge-a", "--store", str(compact_store),
                 "--dry-run", "--limit", "5", "--out", str(out)]) == 0
    assert len(endpoint.requests) == 0 and "5 to ask" in capsys.readouterr().out
    assert main(["judge", "--rubric", "compact-learning", "--endpoint", endpoint.url, "--model", "judge-a",
                 "--key-env", "JUDGE_KEY", "--store", str(compact_store), "--limit", "5", "--price-in", "2.0",
                 "--price-out", "8.0", "--out", str(out)]) == 0
    assert endpoint.auth == [f"Bearer {KEY}"] * 5  # sent to the endpoint ...
    ledger = json.loads((out / "ledger.json").read_text())
    assert ledger["tokens_out"] == 60 and ledger["cost_usd"] == pytest.approx((ledger["tokens_in"] * 2 + 60 * 8) / 1e6)
    from referee.reporting import build_report

    with Store(compact_store, read_only=True) as store:
        build_report(store, tmp_path / "report", fit_models=False)
    for path in tmp_path.rglob("*"):  # ... and never written: store, results folder, report
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_compact_judge_metrics_come_from_the_command_and_feed_the_socio_analysis(compact_store, tmp_path):
    with Store(compact_store, read_only=True) as store:
        measures = store.table("measures")
    truth = measures[measures["kind"] == "judge"]
    lookup = {(r.match_id, int(r.round), r.player, r.other if isinstance(r.other, str) else "", r.name): r.value
              for r in truth.itertuples()}

    def rate(prompt: str) -> int:
        key = json.loads(re.search(r"<<(.*?)>>", prompt, flags=re.DOTALL).group(1))
        return int(lookup.get(tuple(key), 0))

    server = Endpoint(rate=rate)
    try:
        for name in ("influence", "planning", "learning"):
            rubric_path = tmp_path / f"{name}.toml"
            shipped = load_rubric(f"compact-{name}")
            other = "{other}" if shipped.unit == "dyad-round" else ""
            tag = f'<<["{{match}}", {{round}}, "{{player}}", "{other}", "{name}"]>>\n'
            rubric_path.write_text(Path(shipped.path).read_text().replace('template = """', 'template = """' + tag, 1))
            assert main(["judge", "--rubric", str(rubric_path), "--endpoint", server.url, "--model", "loopback-judge",
                         "--store", str(compact_store), "--concurrency", "8", "--out", str(tmp_path / name)]) == 0
    finally:
        server.close()
    with Store(compact_store, read_only=True) as store:
        measures = store.table("measures")
    judged = measures[measures["kind"] == "judge"]
    ours = judged[judged["rater"] == "loopback-judge"]
    theirs = judged[judged["rater"] != "loopback-judge"]
    assert set(ours["name"]) == {"influence", "planning", "learning"} and len(ours) >= 0.9 * len(theirs)
    from referee.models.social.agreement import paired_ratings

    pairs = paired_ratings(judged, "loopback-judge", theirs["rater"].iloc[0])
    assert len(pairs) >= 0.9 * len(theirs) and (pairs["loopback-judge"] == pairs[theirs["rater"].iloc[0]]).all()
    from referee.run.social.socio import socio_analysis

    with Store(compact_store, read_only=True) as store:
        matches, results, events = (store.table(t) for t in ("matches", "results", "events"))
    from referee.prepare.socio import socio_metrics

    only_ours = measures[(measures["kind"] != "judge") | (measures["rater"] == "loopback-judge")]
    only_theirs = measures[(measures["kind"] != "judge") | (measures["rater"] != "loopback-judge")]
    judged_metrics = ["influence", "amenability", "planning", "learning"]
    ours_m, theirs_m = (socio_metrics(matches, results, events, m) for m in (only_ours, only_theirs))
    keys = ["match_id", "player", "other", "metric"]
    both = ours_m[ours_m["metric"].isin(judged_metrics)].merge(
        theirs_m[theirs_m["metric"].isin(judged_metrics)], on=keys, suffixes=("_ours", "_theirs"))
    assert set(both["metric"]) == {"influence", "amenability", "planning"} and len(both) > 100  # the sample has
    # no learning ratings of its own; the command's are there and read below
    np.testing.assert_allclose(both["value_ours"], both["value_theirs"])  # the analysis reads the command's ratings
    result = socio_analysis(matches, results, events, only_ours, n_boot=20, seed=0)
    assert set(judged_metrics) <= set(result.metrics["metric"])


def test_agreement_statistics_match_hand_computations():
    a = np.array([0, 1, 2, 3, 3, 1, 0, 2])
    b = np.array([0, 2, 2, 1, 3, 1, 1, 2])
    found = judge_agreement(a, b, level="nominal")
    assert found["mean_abs_diff"] == pytest.approx(4 / 8)  # |a - b| = 0 1 0 2 0 0 1 0
    assert (found["exact"], found["within_one"]) == (5, 7)
    # nominal alpha by hand: coincidence matrix over the 16 pairable values, D_o and D_e
    values = np.r_[a, b]
    observed = np.mean(a != b)  # each unit contributes its disagreement once per ordered pair
    counts = np.bincount(values)
    n = len(values)
    expected = (n * n - (counts ** 2).sum()) / (n * (n - 1))
    assert found["krippendorff_alpha"] == pytest.approx(1 - observed / expected)
    table = agreement_intervals(a, b, n_boot=300, seed=1, level="nominal").set_index("statistic")
    assert table.loc["exact_share", "value"] == pytest.approx(5 / 8)
    assert table.loc["exact_share", "lower"] <= 5 / 8 <= table.loc["exact_share", "upper"]


def test_judge_agreement_command_with_a_human_rater(compact_store, tmp_path):
    with Store(compact_store, read_only=True) as store:
        judged = store.query("SELECT * FROM measures WHERE kind = 'judge' AND name = 'planning' LIMIT 40")
    human = judged[["match_id", "player", "other", "round", "name", "value"]].copy()
    human["value"] = np.where(np.arange(len(human)) % 4 == 0, np.clip(human["value"] + 1, 0, 3), human["value"])
    path = tmp_path / "human.csv"
    human.to_csv(path, index=False)
    rater = judged["rater"].iloc[0]
    assert main(["judge-agreement", "--store", str(compact_store), "--raters", rater, "human", "--human", str(path),
                 "--bootstrap", "200", "--out", str(tmp_path / "agree")]) == 0
    table = pd.read_csv(tmp_path / "agree" / "agreement.csv").set_index("statistic")
    expected = judge_agreement(judged["value"].to_numpy(), human["value"].to_numpy())
    assert table.loc["exact_share", "value"] == pytest.approx(expected["exact_share"])
    assert table.loc["mean_abs_diff", "value"] == pytest.approx(np.abs(judged["value"] - human["value"]).mean())
    assert table.loc["mean_abs_diff", "lower"] <= table.loc["mean_abs_diff", "value"] <= table.loc["mean_abs_diff", "upper"]


def test_trait_ratings_are_correlated_with_returns():
    from referee.run.social.judge import return_correlations

    ratings = pd.DataFrame({"match_id": ["m"] * 5, "player": list("abcde"), "name": "trait: fairness",
                            "value": [1, 2, 3, 4, 5]})
    results = pd.DataFrame({"match_id": ["m"] * 5, "player": list("abcde"), "score": [0.1, 0.3, 0.2, 0.8, 0.9]})
    table = return_correlations(ratings, results).set_index("measure")
    assert table.loc["trait: fairness", "n"] == 5
    assert table.loc["trait: fairness", "spearman_rho"] == pytest.approx(0.9)  # ranks 1 3 2 4 5: 1 - 6*2/120
