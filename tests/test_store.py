"""The store: atomic, idempotent ingest; duplicates across files; strict mode; info; table access."""

import json

import pandas as pd
import pytest

from referee.io.staging import Staging
from referee.io.store import INFO_KEYS, IngestError, Store
from tests.conftest import write_json


def _logs(tmp_path, record, n=3, name="alpha"):
    return write_json(tmp_path / "logs" / f"{name}__m__e.json",
                      [record(focal_agent=name, repetition_idx=str(i)) for i in range(n)])


def test_ingest_counts_and_info(store, tmp_path, record):
    _logs(tmp_path, record)
    write_json(tmp_path / "logs" / "sub" / "beta__m__e.json", [record(focal_agent="beta")])
    report = store.ingest([tmp_path / "logs"])
    totals = report.as_dict()
    assert {k: totals[k] for k in ("read", "accepted", "quarantined", "by_reason", "failed_files")} == \
        {"read": 4, "accepted": 4, "quarantined": 0, "by_reason": {}, "failed_files": []}
    assert totals["by_runner"] == [{"runner": "concordia", "status": "ingested", "files": 2, "read": 4,
                                    "accepted": 4, "quarantined": 0}]
    info = store.info()
    assert tuple(info) == INFO_KEYS
    assert info == {"agents": 3, "games": 1, "scenarios": 1, "matches": 4, "results": 16, "events": 0,
                    "quarantined": 0}
    # the default contest catalogue came along
    assert len(store.table("scenarios")) == 12


def test_ingest_is_idempotent(store, tmp_path, record):
    path = _logs(tmp_path, record)
    store.ingest([path])
    before = store.info()
    report = store.ingest([path])
    assert report.files.iloc[0].status == "already ingested" and report.read == 0
    assert store.info() == before


def test_duplicate_match_in_another_file_is_quarantined(store, tmp_path, record):
    store.ingest([_logs(tmp_path, record)])
    copy = write_json(tmp_path / "other.json", [record(focal_agent="alpha", repetition_idx="0"),
                                                record(focal_agent="alpha", repetition_idx="9")])
    report = store.ingest([copy])
    assert report.as_dict()["by_reason"] == {"duplicate match id": 1}
    assert (report.read, report.accepted, report.quarantined) == (2, 1, 1)
    q = store.table("quarantine")
    assert q.iloc[0].field == "match_id" and "concordia:haggling_0:0:alpha" in q.iloc[0].message
    assert json.loads(q.iloc[0].raw)["match"]["match_id"] == "concordia:haggling_0:0:alpha"
    assert store.info()["matches"] == 4


def test_unrecognised_file_is_quarantined_not_dropped(store, tmp_path):
    path = write_json(tmp_path / "notes.json", {"hello": "world"})
    report = store.ingest([path])
    assert (report.read, report.quarantined) == (1, 1)
    assert report.quarantine.iloc[0].reason == "unknown format"


def test_strict_writes_nothing(store, tmp_path, record):
    path = write_json(tmp_path / "x.json", [record(), record(scenario="moon_base")])
    with pytest.raises(IngestError, match="record 1, field 'scenario'"):
        store.ingest([path], strict=True)
    assert store.info()["matches"] == 0 and store.info()["quarantined"] == 0
    assert len(store.table("sources")) == 0


@pytest.mark.parametrize("staged", [False, True])
def test_failure_midway_leaves_store_as_it_was(store, tmp_path, record, monkeypatch, staged):
    """A write that fails after some tables were written rolls everything back: one batch goes straight into
    the store, a folder of several batches is staged on disk and moved in table by table at the end."""
    store.ingest([_logs(tmp_path, record, name="alpha")])
    before = {t: len(store.table(t)) for t in ("matches", "results", "sources", "scenarios")}
    calls = {"n": 0}
    if staged:
        monkeypatch.setattr("referee.io.store.BATCH_FILES", 1)  # every file a batch of its own: staged
        real_insert = Staging._insert

        def failing(self, con, table):  # the staged rows go in table by table: the disk fills at the results
            calls["n"] += 1
            if table == "results":
                raise OSError("disk full")
            return real_insert(self, con, table)

        monkeypatch.setattr(Staging, "_insert", failing)
        paths = [_logs(tmp_path, record, name="gamma"), _logs(tmp_path, record, name="delta")]
    else:
        real_append = Store._append

        def failing(self, table, frame):
            calls["n"] += 1
            if table == "results":
                raise OSError("disk full")
            return real_append(self, table, frame)

        monkeypatch.setattr(Store, "_append", failing)
        paths = [_logs(tmp_path, record, name="gamma")]
    with pytest.raises(OSError):
        store.ingest(paths)
    monkeypatch.undo()
    assert calls["n"] > 1  # the matches were written before the failure, then rolled back
    assert {t: len(store.table(t)) for t in before} == before
    assert not list(store.path.parent.glob(".referee-ingest-*"))  # the staged rows are gone with them
    # and the same file ingests cleanly afterwards
    assert store.ingest([tmp_path / "logs" / "gamma__m__e.json"]).accepted == 3


def test_forced_runner_and_unknown_runner(store, tmp_path, record):
    path = write_json(tmp_path / "x.json", [record()])
    report = store.ingest([path], runner="records")
    assert report.quarantined == 1
    with pytest.raises(KeyError, match="known runners"):
        store.ingest([path], runner="nope")


def test_missing_path(store, tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        store.ingest([tmp_path / "nowhere"])


def test_table_runner_duplicate_match_counts_each_row(store, tmp_path):
    frame = pd.DataFrame({"match": ["m1", "m1"], "agent": ["a", "b"], "score": [1, 0]})
    frame.to_csv(tmp_path / "one.csv", index=False)
    frame.assign(score=[0, 1]).to_csv(tmp_path / "two.csv", index=False)
    store.ingest([tmp_path / "one.csv"])
    report = store.ingest([tmp_path / "two.csv"])
    assert (report.read, report.accepted, report.quarantined) == (2, 0, 2)
    assert store.info()["results"] == 2


def test_every_quarantine_reason_keeps_an_example_past_the_reports_sample(tmp_path):
    """Past the report's first QUARANTINE_SAMPLE rows, the first record of a new reason is still shown."""
    import json as _json

    from referee.io.store import QUARANTINE_SAMPLE

    lines = [{"game": "g", "agents": ["a", "b"], "winner": 5}] * (QUARANTINE_SAMPLE + 5)  # wrong value
    lines += [{"game": "g", "agents": ["a"]}]  # wrong type: one seat
    path = tmp_path / "m.jsonl"
    path.write_text("".join(_json.dumps(r) + "\n" for r in lines))
    report = Store(tmp_path / "s.duckdb").ingest([str(path)], runner="gtbench")
    reasons = set(report.quarantine["reason"])
    assert {reason for _, reason in report.by_reason} == reasons == {"wrong value", "wrong type"}


@pytest.mark.parametrize("batch_files", [1, 250])
def test_a_rejected_file_read_again_and_still_rejected_keeps_one_quarantine(tmp_path, monkeypatch, batch_files):
    """Files none of whose records were accepted are read again by the next ingest: their earlier quarantine and
    sources rows go (one delete per batch, before the batch is written) and the new ones stay, whether the files are
    written in one batch or staged a file at a time. Two rejected files, ingested three times, leave two rows each."""
    for k in range(2):
        write_json(tmp_path / "logs" / f"notes{k}.json", {"hello": k})
    monkeypatch.setattr("referee.io.store.BATCH_FILES", batch_files)
    with Store(tmp_path / "s.duckdb") as store:
        for attempt in range(3):
            report = store.ingest([tmp_path / "logs"])
            assert (report.read, report.quarantined) == (2, 2)
            assert store.info()["quarantined"] == 2, attempt
            assert store.query("SELECT count(*) AS n FROM sources")["n"].iloc[0] == 2, attempt
