"""Hostile input, round six (issue 104): closed and full standard streams. With standard error closed every command
exited 1 saying nothing (`sys.stderr.isatty()` on None); with standard output closed or full, a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from referee.cli import main

REFEREE = [sys.executable, "-m", "referee.cli"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("streams")
    table = pd.DataFrame({"match": ["m1", "m1", "m2", "m2"], "agent": ["a", "b", "a", "b"], "score": [1, 0, 0, 1]})
    table.to_csv(tmp / "t.csv", index=False)
    assert main(["ingest", str(tmp / "t.csv"), "--store", str(tmp / "s.duckdb"), "-q"]) == 0
    return tmp / "s.duckdb"


def _run(command: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`command` (a shell line; REFEREE expands to the referee command) through a shell, so that its redirections
    close or fill the streams as a user's would."""
    line = command.replace("REFEREE", " ".join(f"'{part}'" for part in REFEREE))
    return subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_a_closed_standard_error_runs_the_command(store, tmp_path):
    found = _run(f"REFEREE info --store {store} 2>&-", tmp_path)
    assert found.returncode == 0 and "matches" in found.stdout


def test_a_closed_standard_output_runs_the_command(store, tmp_path):
    found = _run(f"REFEREE ratings --store {store} --out {tmp_path / 'r'} >&-", tmp_path)
    assert found.returncode == 0 and "Traceback" not in found.stderr
    assert (tmp_path / "r" / "ratings.csv").is_file()


def test_a_full_standard_output_exits_1_saying_so(store, tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this machine")
    found = _run(f"REFEREE info --store {store} > /dev/full", tmp_path)
    assert found.returncode == 1 and "Traceback" not in found.stderr
    assert "cannot write the output (No space left on device)" in found.stderr


def test_an_out_that_cannot_be_what_the_command_writes_is_refused_in_words(tmp_path, capsys):
    """`simulate --out <a file>` ended in a NotADirectoryError and `map --out <a folder>` in an IsADirectoryError
    (exit 3); each is refused, naming the --out, before any work."""
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder").mkdir()
    assert main(["simulate", "ranked", "--out", str(tmp_path / "a-file"), "-q"]) == 1
    assert "--out" in capsys.readouterr().err
    assert main(["map", str(tmp_path), "--out", str(tmp_path / "a-folder"), "--force"]) == 1
    assert "a folder; name the mapping file" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["contest", "--top", str(10**30)], ["ratings", "--jobs", "100000"],
                                  ["judge-agreement", "--seed", str(2**40)], ["calibrate", "pass-fail", "--size",
                                                                              str(10**30)]])
def test_an_absurd_whole_number_is_refused_in_words_naming_the_option(argv, store, capsys):
    """Issue 104: whole-number options had no upper bound (10**30 accepted; `--jobs` any count): every whole number
    is at most 2**32 - 1, local workers at most 256, refused before any work with the option named (exit 2)."""
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--store", str(store)])
    assert exit_.value.code == 2
    flag = argv[-2]
    assert f"argument {flag}: must be " in capsys.readouterr().err  # its own bound, or the global one


def _listener(reply: bytes):
    """A TCP listener on a free loopback port that answers every connection with `reply` (not Dask's protocol);
    (port, stop)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    done = threading.Event()

    def serve():
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(reply)
    threading.Thread(target=serve, daemon=True).start()

    def stop():
        done.set()
        server.close()
    return server.getsockname()[1], stop


def test_a_scheduler_address_nothing_listens_on_is_refused_before_any_work(store, tmp_path, capsys):
    """Issue 104: `--scheduler tcp://127.0.0.1:<closed port>` ended in exit 3 after 41 s; it is refused while the
    arguments are parsed (a 3 s TCP probe), naming the option."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SystemExit) as exit_:
        main(["ratings", "--store", str(store), "--bootstrap", "20", "--scheduler", f"tcp://127.0.0.1:{port}",
              "--out", str(tmp_path / "r")])
    assert exit_.value.code == 2
    said = capsys.readouterr().err
    assert "argument --scheduler" in said and "no Dask scheduler can be reached there" in said
    assert not (tmp_path / "r").exists()


def test_a_scheduler_address_where_something_else_answers_is_refused_in_words(store, tmp_path, capsys):
    """Issue 104: a listener that does not speak Dask's protocol ran until killed (or failed with a MemoryError
    of 3 EiB, its reply read as a message length); the client's handshake has a timeout and the command exits 1
    in words, no traceback."""
    port, stop = _listener(b"HTTP/1.0 200 OK\r\n\r\nnot a scheduler")
    try:
        assert main(["ratings", "--store", str(store), "--bootstrap", "20", "--scheduler", f"tcp://127.0.0.1:{port}",
                     "--out", str(tmp_path / "r")]) == 1
    finally:
        stop()
    said = capsys.readouterr().err
    assert "no Dask scheduler answered there" in said and "Traceback" not in said


@pytest.mark.parametrize("option", ["--catalogue", "--mapping"])
@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_a_file_option_that_is_no_regular_file_is_refused_before_it_is_read(store, tmp_path, capsys, option, kind):
    """Issue 104: `/dev/zero` as `--mapping` or `--catalogue` was read whole (MemoryError after 30-60 s); a device,
    a FIFO or a folder is refused at once naming it, and a file larger than a TOML file can be is refused by size."""
    import os

    target = {"device": Path("/dev/zero"), "fifo": tmp_path / "fifo", "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    if kind == "device" and not target.exists():
        pytest.skip("no /dev/zero on this machine")
    csv = tmp_path / "t.csv"
    pd.DataFrame({"match": ["m1", "m1"], "agent": ["a", "b"], "score": [1, 0]}).to_csv(csv, index=False)
    with pytest.raises(SystemExit) as exit_:  # refused by the option's type, before the store is opened
        main(["ingest", str(csv), option, str(target), "--store", str(tmp_path / "s.duckdb")])
    assert exit_.value.code == 2
    said = capsys.readouterr().err
    assert f"argument {option}: {target}: a {'FIFO' if kind == 'fifo' else kind}, not a TOML file" in said, said
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_the_toml_reader_refuses_what_is_no_regular_file_for_callers_past_the_command_line(tmp_path, kind):
    """The notebook API and any caller of `read_toml` meet the same refusal before a read (no option type there)."""
    import os

    from referee.io.toml_file import read_toml

    target = {"device": Path("/dev/zero"), "fifo": tmp_path / "fifo", "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    if kind == "device" and not target.exists():
        pytest.skip("no /dev/zero on this machine")
    with pytest.raises(ValueError, match=f"a {'FIFO' if kind == 'fifo' else kind}, not a column mapping file"):
        read_toml(target, "column mapping")


def test_a_toml_file_larger_than_any_is_refused_by_its_size(tmp_path):
    from referee.io.toml_file import TOML_CAP, read_toml

    big = tmp_path / "big.toml"
    with open(big, "wb") as fh:
        fh.truncate(TOML_CAP + 1)  # sparse: no disk spent
    with pytest.raises(ValueError, match=r"more than a catalogue can be \(16 MiB at most\)"):
        read_toml(big, "catalogue")


def test_a_path_too_long_for_the_file_system_is_said_in_words(store, capsys):
    """Issue 104: `check --results` with a 5,000-character path ended in exit 3 (an OSError, 'File name too
    long'); an OSError about a path the user gave is exit 1 naming it."""
    assert main(["check", "--store", str(store), "--results", "../" + "x" * 5000]) == 1
    said = capsys.readouterr().err
    assert "File name too long" in said and "bug in referee" not in said


def _inspect_log() -> dict:
    import json

    from conftest import shared_file

    return json.loads((shared_file("real", "inspect") / "tests_log_test_eval_log" / "log_formats.json").read_text())


@pytest.mark.parametrize("change", ["status past 64 bits", "metric NaN", "byte order mark", "scorers a number",
                                    "first sample's id a list"])
def test_one_odd_value_of_an_inspect_log_costs_no_sample_but_its_own(tmp_path, capsys, change):
    """Issue 104: a header value the streamed parse cannot read (a status past 64 bits, a metric's NaN) or a UTF-8
    byte order mark cost every sample of the log; `eval.scorers` a number was a raw TypeError ('loader error');
    a fault in the one sample of a log made the file 'not this runner'. The samples are read (the header's odd
    value said as a header fault), or the one faulty sample is set aside naming its field, as Inspect's."""
    import json

    log = _inspect_log()
    text = None
    if change == "status past 64 bits":
        log["status"] = 10**30
    elif change == "metric NaN":
        log["results"]["scores"][0]["metrics"]["accuracy"]["value"] = float("nan")
    elif change == "scorers a number":
        log["eval"]["scorers"] = 5
    elif change == "first sample's id a list":
        log["samples"][0]["id"] = [1]
    folder = tmp_path / "logs"
    folder.mkdir()
    text = json.dumps(log)
    (folder / "log.json").write_bytes((b"\xef\xbb\xbf" if change == "byte order mark" else b"") + text.encode())
    code = main(["ingest", str(folder), "--store", str(tmp_path / "s.duckdb"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["read"] == len(log["samples"]) == 1, out
    if change == "first sample's id a list":
        assert code == 1 and out["by_reason"] == {"missing field": 1}, out
        return
    assert code == 0 and out["accepted"] == 1, out
    if change == "status past 64 bits":
        assert any("status: 1000000000000000000000000000000" in w for w in out["warnings"]), out["warnings"]


def test_an_inspect_log_naming_no_model_is_set_aside_naming_the_field(tmp_path, capsys):
    import json

    log = _inspect_log()
    log["eval"]["model"] = ""
    (tmp_path / "log.json").write_text(json.dumps(log))
    assert main(["ingest", str(tmp_path / "log.json"), "--store", str(tmp_path / "s.duckdb")]) == 1
    assert "field 'eval.model': an Inspect log names its model (eval.model), got ''" in capsys.readouterr().err


def test_a_clem_meta_of_the_wrong_type_is_said_naming_the_field(tmp_path, capsys):
    """Issue 104: a wrong-typed `meta.results_folder` was a raw AttributeError ('split')."""
    import json
    import shutil

    from conftest import shared_file

    run = tmp_path / "run"
    shutil.copytree(shared_file("real", "clembench-ludo") / "gpt-4o-t0.0--gpt-4o-t0.0", run)
    path = sorted(run.rglob("interactions.json"))[0]
    doc = json.loads(path.read_text())
    doc["meta"] = {"results_folder": 5, "game_name": "ludo", "experiment_name": "x", "game_id": 0}
    path.write_text(json.dumps(doc))
    main(["ingest", str(run), "--store", str(tmp_path / "s.duckdb")])
    said = capsys.readouterr().err
    assert "field 'meta.results_folder': expected the results folder as text" in said and "AttributeError" not in said


def test_a_folder_named_by_spaces_drafts_a_name_its_own_check_accepts(tmp_path, capsys):
    import json

    logs = tmp_path / "bench" / " "
    logs.mkdir(parents=True)
    for g in range(4):
        lines = [{"type": "move", "game": g, "player": p, "turn": 0} for p in ("a", "b")]
        lines.append({"type": "end", "game": g, "scores": {"a": g % 2, "b": 1 - g % 2}})
        (logs / f"g{g}.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    draft = tmp_path / "d.toml"
    assert main(["map", str(logs), "--out", str(draft)]) == 0
    assert "name = 'bench'" in draft.read_text()
    assert main(["map", str(logs), "--out", str(draft), "--check"]) == 0


CHEAP = ("ingest", "compare", "check", "show", "runner-numbers", "info", "export", "map", "formats")


def test_every_documented_option_given_absurd_values_is_refused_in_words_or_run_without_a_fault(tmp_path, capsys,
                                                                                                    monkeypatch):
    """Issue 104: every option of every command (the parser the generated CLI reference is written from), given
    absurd values by its type (numbers nan, -inf, -1, 0, 1e400, 0x10, empty; paths empty, a folder, a FIFO,
    /dev/zero; text empty, '../x', 'x=y=z', 300 characters), is refused before any work naming the option (exit 2)
    or by the job's own check in words, never with another exception; the values accepted by the cheap commands
    run here and end with exit 0, 1 or 2 and no traceback. `python -m benchmarks.hostile_options` runs every
    accepted case of every command as its own process."""
    from benchmarks.hostile_options import cases, workspace

    workspace(tmp_path)
    monkeypatch.chdir(tmp_path)  # what a case writes where it is run stays in the test's folder
    capsys.readouterr()
    found = cases(tmp_path)
    odd = [(argv, said) for argv, said in found if said not in ("accepted", "refused")]
    assert not odd, odd[:5]
    assert len(found) > 1000 and sum(said == "refused" for _, said in found) > 600
    ran = 0
    for argv, said in found:
        if said != "accepted" or argv[0] not in CHEAP or "fifo" in " ".join(argv):
            continue  # a FIFO is refused by type; the benchmark runs those cases as processes, with a timeout
        try:
            code = main(argv + ["-q"] if argv[0] not in ("formats", "map", "show", "info") else argv)
        except SystemExit as exc:
            code = exc.code
        said_err = capsys.readouterr().err
        assert code in (0, 1, 2) and "Traceback" not in said_err and "bug in referee" not in said_err, (argv, said_err)
        ran += 1
    assert ran > 50
