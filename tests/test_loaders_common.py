"""What every loader owes: an empty file, another runner's file and garbage are set aside, never dropped."""

import pytest

from referee.io.loaders import RUNNERS
from referee.io.loaders.base import LoadOptions, file_hash
from referee.io.store import Store
from referee.reporting import SAMPLE

SAMPLES = {
    "concordia": SAMPLE / "concordia" / "logs" / "rational_agent__gemma-2-9b-it__all-mpnet-base-v2.json",
    "aoa": SAMPLE / "aoa_eval01" / "season.json",
    "aoa+events": SAMPLE / "aoa_sim" / "logs" / "events.jsonl",
    "compact": SAMPLE / "compact" / "logs" / "games.jsonl",
    "arena": SAMPLE / "arena" / "logs" / "judgments.csv",
    "ranked": SAMPLE / "ranked" / "logs" / "games.jsonl",
    "ranked+turns": SAMPLE / "ranked" / "logs" / "turns.jsonl",
    "textarena": SAMPLE / "textarena" / "logs" / "arena.jsonl",
    "kaggle": SAMPLE / "kaggle" / "replays" / "connectx-random-vs-negamax.json",
    "clembench": SAMPLE / "clembench" / "results" / "mock--programmatic" / "guessnumber" / "easy" / "instance_00000"
    / "interactions.json",
    "clembench+scores": SAMPLE / "clembench" / "results" / "mock--programmatic" / "guessnumber" / "easy"
    / "instance_00000" / "scores.json",
    "concordia-log": SAMPLE / "concordia_log" / "simulation.json",
    "gtbench": SAMPLE / "gtbench" / "logs" / "matches.jsonl",
    "inspect": SAMPLE / "inspect" / "logs" / "addition_weak.eval",
    "sotopia": SAMPLE / "sotopia" / "logs" / "episodes.jsonl",
    "meltingpot": SAMPLE / "meltingpot" / "logs" / "results.csv",
}
SUFFIX = {"concordia": ".json", "records": ".json", "aoa": ".json", "compact": ".jsonl", "arena": ".csv",
          "ranked": ".jsonl", "table": ".csv", "textarena": ".jsonl", "kaggle": ".json", "clembench": ".json",
          "concordia-log": ".json", "gtbench": ".jsonl", "inspect": ".eval",
          "sotopia": ".jsonl", "meltingpot": ".csv"}


def _load(runner, path):
    return RUNNERS[runner].load(path, file_hash(path), LoadOptions())


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_empty_file(tmp_path, runner):
    path = tmp_path / f"empty{SUFFIX[runner]}"
    path.write_text("")
    result = _load(runner, path)
    assert (result.read, result.accepted, result.quarantined) == (1, 0, 1)
    assert result.quarantine.iloc[0].reason == "empty file" and str(path) in result.quarantine.iloc[0].message


@pytest.mark.parametrize("runner, sample", [(r, s) for r in sorted(RUNNERS) for s in sorted(SAMPLES)
                                             if s.split("+")[0] != r])
def test_another_runners_file_is_set_aside_whole_once(tmp_path, runner, sample):
    """Forced onto another runner's file, a loader gives up after its first records (NotThisRunner) or
    rejects the file outright: either way the file is one quarantined record, not one per line."""
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([SAMPLES[sample]], runner=runner)
        assert (report.read, report.accepted, report.quarantined) == (1, 0, 1)
        row = report.quarantine.iloc[0]
        assert row.record == "-" and row.message.startswith(str(SAMPLES[sample]))
        assert report.files.iloc[0].status == "rejected" and report.failed_files == [str(SAMPLES[sample])]
        assert store.info()["matches"] == 0


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_binary_garbage(tmp_path, runner):
    path = tmp_path / f"garbage{SUFFIX[runner]}"
    path.write_bytes(bytes(range(256)) * 4)
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([path], runner=runner)
    assert report.accepted == 0 and report.read == report.quarantined >= 1


def test_files_no_runner_reads_are_refused_whole_each_keeping_only_its_head(tmp_path):
    """Many unknown files: each one quarantine record (read = accepted + quarantined holds), one reason, and
    raw text capped at the head (4 KiB), so thousands of refusals stay in bounded memory."""
    import json

    from referee.io.loaders.errors import HEAD_RAW_CAP

    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(40):
        line = json.dumps({"tick": i, "who": "x", "blob": "y" * 500})
        (logs / f"{i}.jsonl").write_text((line + "\n") * 100)  # ~50 KB each
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([logs])
        raw = store.query("SELECT length(raw) AS n, message FROM quarantine")
    assert report.read == 40 and report.accepted == 0 and report.quarantined == 40
    assert len(report.failed_files) == 40 and list(report.by_reason.values()) == [40]
    assert raw["n"].max() < HEAD_RAW_CAP + 200 and raw["message"].str.contains("raw text kept: the first 4 KiB").all()


def test_the_format_probe_reads_only_the_first_lines(tmp_path):
    """Another runner's JSON lines are refused after PROBE lines: the probe never reaches a later line."""
    import pyarrow as pa

    from referee.io.loaders.errors import PROBE
    from referee.io.loaders.jsonl import probe

    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n' * PROBE + b"\xff\xfe not json at all\n" * 1000)
    found = probe(path, {"b": pa.int64()})
    assert found == [("unexpected field", "a")] * PROBE
    assert probe(path, {"a": pa.int64()}) == [None] * PROBE
