"""Hostile input, round 4 (issue 71), each case on held-out input: a deeply nested value given to `referee map`,
nonsense `fit` options, `fit pass-fail --compare` on the bundled Inspect sample, a corrupt member of an `.eval`
log, a byte that is not UTF-8 in a `.json` log, and a GTBench run whose one match holds a number past 64 bits
or a move nested 5,000 deep. Each bad record costs itself alone, and every refusal names what is wrong."""

from __future__ import annotations

import copy
import json
import shutil
import struct
import zipfile
from pathlib import Path

import pytest

from referee.cli import main
from referee.io.resources import shipped
from referee.io.store import Store

SAMPLE = shipped("sample")


def _ingest(tmp_path: Path, folder: Path, **options):
    store = Store(tmp_path / f"{folder.name}.duckdb")
    report = store.ingest([str(folder)], **options)
    assert report.read == report.accepted + report.quarantined
    return store, report


def test_map_on_a_value_nested_900_and_5000_deep_drafts_or_refuses_in_words(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    for g, depth in enumerate((900, 5000, 3)):
        deep = "[" * depth + "1" + "]" * depth
        (logs / f"g{g}.jsonl").write_text(
            f'{{"type": "move", "game_id": "g{g}", "player": "p1", "deep": {deep}}}\n'
            f'{{"type": "move", "game_id": "g{g}", "player": "p2"}}\n'
            f'{{"type": "final", "game_id": "g{g}", "scores": {{"p1": 1, "p2": 2}}}}\n')
    code = main(["map", str(logs), "--out", str(tmp_path / "m.toml")])
    said = capsys.readouterr()
    assert code in (0, 1) and "bug in referee" not in said.err and "Traceback" not in said.err


@pytest.mark.parametrize("option, value, words", [
    ("--seed", str(2**64), "numpy's seeds"), ("--draws", str(10**12), "at most 100,000"),
    ("--tune", str(10**12), "at most 100,000"), ("--chains", "0", "at least 1"), ("--measure", "", "expected a name"),
    ("--measure", "   ", "expected a name")])
def test_nonsense_fit_options_are_refused_before_any_work(tmp_path, capsys, option, value, words):
    with pytest.raises(SystemExit) as exit_:  # a usage error: argparse's exit 2, with the reason
        main(["fit", "pass-fail", "--store", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "f"), option, value])
    assert exit_.value.code == 2 and words in capsys.readouterr().err
    from referee.run.job_table import JOBS

    with pytest.raises(ValueError, match=words):  # the notebook API checks the same table
        JOBS["fit"].bind({"model": "pass-fail", option[2:].replace("-", "_"): value})


def test_pass_fail_compare_on_the_bundled_inspect_sample(tmp_path, capsys):
    """One task in the sample: the ladder's task effect is 0 by construction, and the comparison still runs."""
    store = tmp_path / "i.duckdb"
    assert main(["ingest", str(SAMPLE / "inspect"), "--store", str(store)]) == 0
    assert main(["fit", "pass-fail", "--store", str(store), "--out", str(tmp_path / "f"), "--compare",
                 "--draws", "300", "--tune", "500"]) == 0
    compared = (tmp_path / "f" / "compare.csv").read_text()
    assert "crossed" in compared and "agent" in compared
    # the same model, data and seed give the same draws in every command that fits it (issue 85): the plain fit,
    # the fit --compare reports, and the notebook API, whichever structure the process compiled first
    assert main(["fit", "pass-fail", "--store", str(store), "--out", str(tmp_path / "p"),
                 "--draws", "300", "--tune", "500"]) == 0
    import pandas as pd

    import referee

    plain = pd.read_csv(tmp_path / "p" / "table.csv")
    pd.testing.assert_frame_equal(plain, pd.read_csv(tmp_path / "f" / "table.csv"))
    api = referee.fit(str(store), "pass-fail", draws=300, tune=500).table()
    assert api["effect"].tolist() == plain["effect"].tolist() and api["hdi_low"].tolist() == plain["hdi_low"].tolist()
    capsys.readouterr()


def _corrupt(path: Path, member: str, at_middle: bool) -> None:
    """Overwrite 16 bytes of `member`'s compressed data (at its start or its middle) in place."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    with open(path, "r+b") as fh:
        fh.seek(info.header_offset + 26)
        name, extra = struct.unpack("<HH", fh.read(4))
        start = info.header_offset + 30 + name + extra
        fh.seek(start + (info.compress_size // 2 if at_middle else 0))
        fh.write(b"\x00\xff" * 8)


def test_a_corrupt_member_of_an_eval_log_costs_only_its_sample(tmp_path):
    """A zstd member (the bundled sample, current Inspect) and a deflated one (a real log of Inspect's own tests)
    that do not inflate: each loses its one sample, the log's others are stored."""
    logs = tmp_path / "logs"
    logs.mkdir()
    zstd_log = logs / "zstd.eval"
    shutil.copy(SAMPLE / "inspect" / "logs" / "addition_strong.eval", zstd_log)
    _corrupt(zstd_log, "samples/q3_epoch_1.json", at_middle=False)
    from conftest import shared_file

    try:
        real = shared_file("real", "inspect")
    except pytest.skip.Exception:
        real = None
    logs_with_deflate = [p for p in sorted(real.rglob("*.eval")) if _samples(p) >= 5] if real else []
    expected = {"zstd.eval": _samples(zstd_log)}
    if logs_with_deflate:
        deflated = logs / "deflate.eval"
        shutil.copy(logs_with_deflate[0], deflated)
        with zipfile.ZipFile(deflated) as z:
            member = next(i.filename for i in z.infolist() if i.filename.startswith("samples/"))
            assert z.getinfo(member).compress_type == zipfile.ZIP_DEFLATED
        _corrupt(deflated, member, at_middle=True)
        expected["deflate.eval"] = _samples(deflated)
    store, report = _ingest(tmp_path, logs)
    with store:
        aside = store.table("quarantine")
        matches = store.table("matches")
    assert sorted(aside["reason"]) == ["corrupt member"] * len(expected)
    for name, total in expected.items():
        assert (matches["source_file"].str.endswith(name)).sum() == total - 1, name


def _samples(path: Path) -> int:
    with zipfile.ZipFile(path) as z:
        return sum(1 for n in z.namelist() if n.startswith("samples/") and n.endswith(".json"))


def test_a_byte_that_is_not_utf8_in_a_json_log_costs_only_its_sample(tmp_path):
    """Inspect's `.json` log with one sample's input holding byte 0xff: that sample is set aside as not UTF-8,
    the others stored (before: every sample after it was lost, and the warning said they were missing)."""
    source = next(p for p in sorted((SAMPLE / "inspect").rglob("*")) if p.suffix == ".eval")
    from referee.io.loaders.inspect_log import _eval_members

    header, samples = _eval_members(source)
    doc = {**header, "samples": [s for _, s in samples]}
    text = json.dumps(doc, indent=2)
    assert len(doc["samples"]) == 12
    marker = json.dumps(doc["samples"][4]["input"])
    at = text.index(marker) + 1
    data = text[:at].encode() + b"\xff" + text[at:].encode()
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "one.json").write_bytes(data)
    store, report = _ingest(tmp_path, logs, runner="inspect")
    with store:
        aside = store.table("quarantine")
    assert report.accepted == 11 and aside["reason"].tolist() == ["not UTF-8"]
    assert aside["record"].tolist() == ["samples[4]"]


def test_one_gtbench_match_past_64_bits_or_nested_too_deep_costs_that_match_alone(tmp_path):
    from conftest import shared_file

    doc = json.loads((shared_file("real", "gtbench") / "json_example.jsonl").read_text())
    while len(doc["matches"]) < 4:
        doc["matches"].append(copy.deepcopy(doc["matches"][0]))
    logs = tmp_path / "logs"
    logs.mkdir()
    big = copy.deepcopy(doc)
    big["matches"][1]["token_size"] = 10**30
    (logs / "big.jsonl").write_text(json.dumps(big, indent=2))
    deep = copy.deepcopy(doc)
    deep["matches"][2]["steps"][0]["move"] = "DEEP"
    (logs / "deep.jsonl").write_text(json.dumps(deep).replace('"DEEP"', "[" * 5000 + "1" + "]" * 5000) + "\n")
    store, report = _ingest(tmp_path, logs, runner="gtbench")
    with store:
        aside = store.table("quarantine")
        matches = store.table("matches")
    # the 5,000-deep move is its match's alone: set aside as too deeply nested, or (where a library imported
    # earlier in the process raised Python's recursion limit) read, its text cut, like any move
    deep_kept = "too deeply nested" not in set(aside["reason"])
    assert report.accepted == 6 + deep_kept
    assert sorted(aside["reason"]) == ["out of range"] + ([] if deep_kept else ["too deeply nested"])
    tokens = [json.loads(a).get("token_size") for a in matches["attrs"]]
    assert tokens.count(doc["matches"][0]["token_size"]) == 6 + deep_kept  # GTBench's token_size is stored


def test_silent_accepts_closed_an_empty_concordia_agent_an_object_kaggle_id_and_head_to_head_outcomes(tmp_path):
    """A Concordia record whose focal agent is '' (no agent to rate) and a Kaggle replay whose id is an object are
    set aside naming the field; pass-fail outcomes of a head-to-head store carry the count that says so."""
    import pandas as pd

    from referee.prepare.outcomes import sample_outcomes

    logs = tmp_path / "logs"
    logs.mkdir()
    [kaggle] = sorted((SAMPLE / "kaggle").rglob("*.json"))[:1]
    replay = json.loads(kaggle.read_text())
    replay["id"] = {"a": 1}
    (logs / "replay.json").write_text(json.dumps(replay))
    store, report = _ingest(tmp_path, logs, runner="kaggle")  # one replay: detection would call it no replay
    with store:
        aside = store.table("quarantine")
    assert aside[["field", "reason"]].values.tolist() == [["id", "wrong type"]]
    matches = pd.DataFrame({"match_id": ["m1", "m2"], "runner": "table", "game": "g", "scenario": None,
                            "repetition": None, "phase": None})
    results = pd.DataFrame({"match_id": ["m1", "m1", "m2"], "player": ["p1", "p2", "p1"], "agent": ["a", "b", "a"],
                            "score": [1.0, 0.0, 1.0]})
    assert sample_outcomes(matches, results).attrs["shared"] == (1, 2)
