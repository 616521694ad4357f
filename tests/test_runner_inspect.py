"""Inspect AI played for real, offline (tests/runner_play/inspect_eval.py in the runner venv: inspect-ai 0.3.285's
mockllm, two models, 6 samples, 2 epochs): its zstd `.eval` logs and their `.json` conversions ingest with one
result per model per sample epoch, each value as inspect itself read it, and the better model rated higher;
broken logs are set aside by member and field with the counts adding up."""

from __future__ import annotations

import io
import json
import shutil
import zipfile

import pandas as pd
import pytest

from referee.cli import main
from referee.io.store import Store
from referee.reporting import SAMPLE
from conftest import play_runner

VALUE = {"C": 1.0, "I": 0.0}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    return play_runner("inspect", "inspect_eval.py", root / "out")


@pytest.mark.runners
@pytest.mark.parametrize("form", ["eval", "json"])
def test_real_logs_ingest_one_result_per_model_and_sample_epoch_and_rate_the_better_model_higher(played, tmp_path, form):
    expected = pd.DataFrame(json.loads((played / "expected.json").read_text()))
    if form == "eval":  # the current version's members are zstd (method 93), which zipfile alone cannot read
        first = next((played / "eval").glob("*.eval"))
        assert {i.compress_type for i in zipfile.ZipFile(first).infolist()} == {93}
    store = tmp_path / "s.duckdb"
    assert main(["ingest", str(played / form), "--store", str(store)]) == 0  # detected, no options
    with Store(store, read_only=True) as s:
        results = s.query("SELECT r.agent, m.scenario, m.repetition, r.score FROM results r JOIN matches m USING "
                          "(match_id)")
        measures = s.query("SELECT name, kind, count(*) AS n FROM measures GROUP BY ALL ORDER BY name")
    assert len(results) == 24
    got = {(a, sc.split("/")[1], int(rep)): v for a, sc, rep, v in results.itertuples(index=False)}
    assert got == {(m, s, e): VALUE[v] for m, s, e, v in expected.itertuples(index=False)}
    assert measures.to_dict("records") == [{"name": "match", "kind": "outcome", "n": 24},
                                           {"name": "tokens", "kind": "telemetry", "n": 24},
                                           {"name": "working_time", "kind": "telemetry", "n": 24}]
    assert main(["ratings", "--store", str(store), "--method", "bt", "--out", str(tmp_path / "r")]) == 0
    table = pd.read_csv(tmp_path / "r" / "ratings.csv").set_index("agent")
    assert table.loc["mockllm/strong", "rating"] > table.loc["mockllm/weak", "rating"]
    # 12 sample epochs compared across the two logs: strong won 6 (q1, q2, q4 twice), tied 6 (q0, q3 right, q5 wrong)
    assert table.loc["mockllm/strong", "matches"] == 12


def test_the_bundled_sample_and_its_json_twin_name_the_same_matches_and_are_never_counted_twice(tmp_path):
    logs = SAMPLE / "inspect" / "logs"
    with Store(tmp_path / "s.duckdb") as store:
        first = store.ingest([logs])
        assert (first.read, first.accepted, first.quarantined) == (24, 24, 0)
        assert set(first.files["detected"]) == {"inspect, by file type and header"}
        twin = tmp_path / "twin.json"
        twin.write_text(json.dumps(_as_json(logs / "addition_strong.eval")))
        again = store.ingest([twin])
        assert (again.read, again.accepted, again.quarantined) == (12, 0, 12)
        assert set(again.quarantine["reason"]) == {"duplicate match id"}


def _as_json(path) -> dict:
    """An `.eval` log as the one-object `.json` form (what `inspect log convert --to json` writes), built here
    with zstandard, apart from the loader."""
    import zstandard

    archive = zipfile.ZipFile(path)
    members = {}
    with open(path, "rb") as raw:
        for info in archive.infolist():
            raw.seek(info.header_offset + 26)
            n, e = (int.from_bytes(raw.read(2), "little") for _ in range(2))
            raw.seek(info.header_offset + 30 + n + e)
            data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw.read(info.compress_size))).read()
            members[info.filename] = json.loads(data)
    log = dict(members["header.json"])
    log["samples"] = [v for k, v in sorted(members.items()) if k.startswith("samples/")]
    return log


def _rewrite(source, target, change) -> None:
    """Copy an .eval log, passing each sample member through `change(name, sample) -> sample | bytes | None`
    (None drops it), written deflated."""
    log = _as_json(source)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        header = {k: v for k, v in log.items() if k != "samples"}
        out.writestr("header.json", json.dumps(header))
        for sample in log["samples"]:
            name = f"samples/{sample['id']}_epoch_{sample['epoch']}.json"
            new = change(name, sample)
            if new is not None:
                out.writestr(name, new if isinstance(new, bytes) else json.dumps(new))


def test_broken_samples_are_set_aside_by_member_and_field_and_the_counts_add_up(tmp_path):
    source = SAMPLE / "inspect" / "logs" / "addition_weak.eval"

    def change(name, sample):
        if name == "samples/q0_epoch_1.json":
            sample["scores"]["match"]["value"] = "maybe"
        elif name == "samples/q1_epoch_1.json":
            return b'{"id": "q1", "epoch": 1, "scores": '  # a member cut short
        elif name == "samples/q2_epoch_1.json":
            sample["epoch"] = 0
        elif name == "samples/q3_epoch_1.json":
            sample["error"] = {"message": "RuntimeError: the sandbox died"}
        elif name == "samples/q4_epoch_1.json":
            sample["limit"] = {"type": "token", "limit": 10}
        return sample

    path = tmp_path / "weak.eval"  # deflated members: the format before zstd is read too
    _rewrite(source, path, change)
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([path])
        quarantine = report.quarantine.set_index("record")
        results = store.query("SELECT m.scenario, r.score, r.outcome FROM results r JOIN matches m USING (match_id) "
                              "WHERE m.repetition = '1'").set_index("scenario")
    assert (report.read, report.accepted, report.quarantined) == (12, 9, 3)
    assert quarantine.loc["samples/q0_epoch_1.json", "field"] == "scores.match.value"
    assert quarantine.loc["samples/q1_epoch_1.json", "reason"] == "malformed JSON"
    assert quarantine.loc["samples/q2_epoch_1.json", "field"] == "epoch"
    assert results.loc["addition/q3", "outcome"] == "aborted" and pd.isna(results.loc["addition/q3", "score"])
    assert results.loc["addition/q4", "outcome"] == "forfeit"


@pytest.mark.parametrize("content, reason", [
    (b"PK\x03\x04 not a zip at all", "malformed file"),
    (None, "missing field"),  # a ZIP without header.json
    (b"", "empty file"),
])
def test_a_log_that_cannot_be_read_is_set_aside_whole(tmp_path, content, reason):
    path = tmp_path / "x.eval"
    if content is None:
        with zipfile.ZipFile(path, "w") as out:
            out.writestr("samples/a_epoch_1.json", "{}")
    else:
        path.write_bytes(content)
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([path], runner="inspect")
    assert (report.read, report.accepted, report.quarantined) == (1, 0, 1)
    assert report.quarantine.iloc[0]["reason"] == reason and report.quarantine.iloc[0]["record"] == "-"


def test_a_multi_agent_log_makes_each_model_role_a_player_of_one_match(tmp_path):
    """Model roles (inspect's `model_roles`) are the players of one match; a score keyed by role scores each."""
    log = _as_json(SAMPLE / "inspect" / "logs" / "addition_strong.eval")
    log["eval"]["model_roles"] = {"buyer": {"model": "openai/gpt-4o"}, "seller": {"model": "anthropic/claude"}}
    for k, sample in enumerate(log["samples"]):
        sample["scores"]["match"]["value"] = {"buyer": k % 3, "seller": 1}
        sample["role_usage"] = {"buyer": {"total_tokens": 10}, "seller": {"total_tokens": 20}}
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(log))
    shutil.copy(path, tmp_path / "copy.txt")  # (not a data file: never read)
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([tmp_path])
        results = store.table("results")
        tokens = store.query("SELECT player, value FROM measures WHERE name = 'tokens'")
    assert report.accepted == 12 and len(results) == 24
    assert set(results["agent"]) == {"openai/gpt-4o", "anthropic/claude"} and set(results["player"]) == {"buyer", "seller"}
    assert results.loc[results["player"] == "seller", "score"].eq(1.0).all()
    assert sorted(results.loc[results["player"] == "buyer", "score"].unique()) == [0.0, 1.0, 2.0]
    assert tokens.groupby("player")["value"].first().to_dict() == {"buyer": 10.0, "seller": 20.0}
