"""The command line: ingest and info JSON outputs, errors, and the demo report."""

import json
import re
import os

import pytest

from referee.cli import main
from tests.conftest import shared_file, write_json

FULL = bool(os.environ.get("REFEREE_FULL"))  # make test-all: the demo with its Bayesian sections


def test_ingest_and_info_json(tmp_path, record, capsys):
    db = str(tmp_path / "s.duckdb")
    path = write_json(tmp_path / "a.json", [record(), record(scenario="nowhere")])
    assert main(["ingest", str(path), "--store", db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out.pop("warnings") == [] and out.pop("notes") == [] and out.pop("diagnostics") == {}
    assert out.pop("tables") == {}  # tables apart from the fields (ingest writes none without --per-file)
    assert out.pop("store") == db
    [reason] = out.pop("reasons")  # one example per reason, naming its file, record and field
    assert (reason["reason"], reason["count"], reason["example"]["field"]) == ("unknown scenario", 1, "scenario")
    assert reason["example"]["source_file"] == str(path) and reason["example"]["record"] == "1"
    assert out == {"read": 2, "accepted": 1, "quarantined": 1, "by_reason": {"unknown scenario": 1},
                   "failed_files": [],
                   "by_runner": [{"runner": "concordia", "status": "ingested", "files": 1, "read": 2, "accepted": 1,
                                  "quarantined": 1}]}
    assert main(["info", "--store", db, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info.pop("warnings") == []
    assert set(info) == {"agents", "games", "scenarios", "matches", "results", "events", "quarantined",
                         "comparison_units"}
    assert "(phase, scenario, repetition)" in info["comparison_units"]["concordia"]
    assert info["matches"] == 1 and info["quarantined"] == 1


def test_strict_exit_code_and_message(tmp_path, record, capsys):
    path = write_json(tmp_path / "a.json", [record(scenario="nowhere")])
    assert main(["ingest", str(path), "--store", str(tmp_path / "s.duckdb"), "--strict"]) == 1
    assert "record 0, field 'scenario'" in capsys.readouterr().err


def test_table_mapping_from_command_line(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("game_id,model,points\ng1,a,1\ng1,b,0\n")
    args = ["ingest", str(path), "--store", str(tmp_path / "s.duckdb"), "--json",
            "--map", "match=game_id", "--map", "agent=model", "--map", "score=points"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["accepted"] == 2
    assert main(["ingest", str(path), "--map", "nonsense", "--store", str(tmp_path / "t.duckdb")]) == 1


def test_gamebench_through_the_cli(tmp_path, capsys):
    path = shared_file("gamebench", "matches.json")
    db = str(tmp_path / "g.duckdb")
    assert main(["ingest", str(path), "--store", db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: out[k] for k in ("read", "accepted", "quarantined", "by_reason")} == {"read": 277, "accepted": 277, "quarantined": 0, "by_reason": {}}
    main(["info", "--store", db, "--json"])
    info = json.loads(capsys.readouterr().out)
    assert (info["matches"], info["games"], info["agents"]) == (277, 9, 7)


def test_info_without_store(tmp_path, capsys):
    assert main(["info", "--store", str(tmp_path / "none.duckdb")]) == 1
    assert "no store here" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_writes_report_with_figures(tmp_path, checked_figures, capsys):
    """The demo's report, every section and figure. The Bayesian sections (beta regressions, the layout) are
    validation (REFEREE_FULL=1, `make test-all`); bounded, the demo runs without them (`--no-models`) and
    tests/test_fit_contract.py builds those sections with a few draws. Its output is its log (issue 81): off a
    terminal, a first line before any work, then one line per stage with its time and what it wrote."""
    models = ["--draws", "300", "--tune", "300"] if FULL else ["--no-models"]
    assert main(["demo", "--out", str(tmp_path / "demo")] + models) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("referee demo: 6 bundled samples")
    stages = [line for line in lines if re.match(r"referee demo \[\d+/11\] ", line)]
    assert [int(re.match(r"referee demo \[(\d+)/", s).group(1)) for s in stages] == list(range(1, 12))
    took = r"(\d+\.\d s|\d+ min \d\d s)"  # a time in seconds or, past a minute, in minutes: each line's own and the total
    assert all(re.search(rf": {took}.*; {took} in all$", s) for s in stages), stages
    assert "ingest the bundled samples" in stages[0] and "records accepted" in stages[0]
    assert "files in" in stages[-1] and lines[-1] == f"wrote {tmp_path / 'demo' / 'index.html'}"
    assert checked_figures and all(p == [] for p in checked_figures.values()), {k: v for k, v in checked_figures.items() if v}
    html = (tmp_path / "demo" / "index.html").read_text()
    assert "Ingest summary" in html and "accepted, 0 quarantined" in html
    for runner in ("concordia", "aoa", "compact", "arena", "ranked"):  # one bundled sample of every runner
        assert f"<td>{runner}</td>" in html
    assert "Scenario catalogue" in html and "Mean normalised score per agent" in html
    assert "Table 3 layout: Elo" in html and "Table 7 layout: evaluation without aggregation" in html
    assert "Predicting held-out comparisons (compact)" in html and "Two-dimensional Bradley-Terry" in html
    # COMPACT's socio-cognitive section on the bundled compact sample, with its four figures
    assert "Socio-cognitive metrics and what predicts winning (compact)" in html
    assert "Cross-validated ROC-AUC of what predicts winning" in html
    figures = sorted((tmp_path / "demo" / "figures").glob("*.png"))
    names = {f.name for f in figures}
    if FULL:
        assert "Figure 2: contrast with the baseline" in html and "Diagnostics: tag effects" in html
        assert {"beta-regressions-of-normalised-scores-1.png", "beta-regressions-of-normalised-scores-2.png",
                "beta-regressions-of-normalised-scores-3.png"} <= names
    assert {"normalised-scores-1.png", "normalised-scores-2.png", "appendix-ratings-and-rankings-concordia-1.png",
            "appendix-predicting-held-out-comparisons-compact-1.png"} <= names
    assert sum(n.startswith("socio-cognitive-metrics") for n in names) == 4
    assert all(f.stat().st_size > 5000 for f in figures)
    for f in figures:  # embedded in the page, linked as PNG and SVG
        assert f'href="figures/{f.name}"' in html and f.with_suffix(".svg").exists()
    assert html.count('src="data:image/png;base64,') == len(figures)
    assert "could not be built" not in html
    # issue 67: the board opens the page and no machine path reaches a reader (the demo's store is in a build
    # folder, its samples in referee's data)
    from test_leaderboard import assert_prints_on_a_page

    assert_prints_on_a_page(tmp_path / "demo")
    markdown = (tmp_path / "demo" / "report.md").read_text()
    assert markdown.count("![") == len(figures) and "Submission" in markdown and "## Appendix: Ratings and rankings (concordia)" in markdown
    # provenance: the lock the run was installed from, the inputs, the versions; a manifest of every file
    import hashlib
    from pathlib import Path
    lock = Path(__file__).resolve().parent.parent / "requirements" / "lock.txt"
    provenance = json.loads((tmp_path / "demo" / "provenance.json").read_text())
    assert provenance["lock"]["sha256"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert provenance["command"][:2] == ["referee", "demo"] and provenance["versions"]["pymc"]
    assert len(provenance["inputs"]) >= 6 and provenance["seed"] == 0
    manifest = {f["name"] for f in json.loads((tmp_path / "demo" / "manifest.json").read_text())["files"]}
    assert "index.html" in manifest and {f"figures/{f.name}" for f in figures} <= manifest
    assert any(name.startswith("tables/") and name.endswith(".csv") for name in manifest)


def test_demo_never_overwrites_an_existing_store(tmp_path, capsys):
    existing = tmp_path / "mine.duckdb"
    existing.write_bytes(b"precious")
    assert main(["demo", "--out", str(tmp_path / "d"), "--store", str(existing)]) == 1
    assert existing.read_bytes() == b"precious" and "fresh store" in capsys.readouterr().err


def test_commands_on_a_store_that_lacks_what_they_need_exit_1_with_the_reason(tmp_path, capsys):
    """Issue 51's internal errors: each is a plain error (exit 1) naming what is missing, never exit 3 and never
    exit 0 with nothing made."""
    import pandas as pd

    store = tmp_path / "s.duckdb"
    rows = pd.DataFrame({"left": ["a", "b", "c"], "right": ["b", "c", "a"], "winner": ["left", "right", "tie"]})
    rows.to_csv(tmp_path / "arena.csv", index=False)
    assert main(["ingest", str(tmp_path / "arena.csv"), "--store", str(store)]) == 0
    capsys.readouterr()
    cases = [
        (["paper", "compact", "--store", str(store), "--out", str(tmp_path / "c1")], "no communicate-predict-act"),
        (["paper", "compact", "--store", str(store), "--out", str(tmp_path / "c2"), "--runner", "nope"],
         "no match of runner 'nope'"),
        (["paper", "concordia", "--store", str(store), "--out", str(tmp_path / "c3")], "no scenario-based match"),
        (["paper", "concordia", "--store", str(store), "--out", str(tmp_path / "c4"), "--finalists", ""],
         "one or more agent names"),
    ]
    (tmp_path / "taken.parquet").write_text("x")
    cases.append((["export", "--store", str(store), "--parquet", str(tmp_path / "taken.parquet")], "is a file"))
    for argv, words in cases:
        try:
            code = main(argv)
        except SystemExit as exc:  # an option argparse refuses: its usage error, exit 2
            code = exc.code
        err = capsys.readouterr().err
        assert code in (1, 2) and words in err, (argv, code, err)
    assert (tmp_path / "taken.parquet").read_text() == "x"  # nothing overwritten


def test_score_is_refused_empty_and_said_unused_outside_sotopia(tmp_path, capsys):
    from referee.io.resources import shipped

    gtbench, sotopia = shipped("sample") / "gtbench" / "logs", shipped("sample") / "sotopia" / "logs"
    assert main(["ingest", str(sotopia), "--score", "", "--store", str(tmp_path / "a.duckdb")]) != 0
    assert "--score is empty" in capsys.readouterr().err
    assert main(["ingest", str(gtbench), "--score", "goal", "--store", str(tmp_path / "b.duckdb")]) == 0
    assert "--score 'goal' was not used" in capsys.readouterr().err
    assert main(["ingest", str(sotopia), "--score", "goal", "--store", str(tmp_path / "c.duckdb")]) == 0
    assert "was not used" not in capsys.readouterr().err


def test_every_help_text_prints_as_written(capsys):
    """argparse %-formats help strings: a literal % in a job's or option's help (the leaderboard's "95 %") must
    print as itself, not as a formatted dict of the parser's internals."""
    from referee.composing import JOBS

    with pytest.raises(SystemExit):
        main(["--help"])
    assert "option_strings" not in capsys.readouterr().out
    for name in JOBS:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        assert "option_strings" not in capsys.readouterr().out, name
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "95 % rank sets" in " ".join(capsys.readouterr().out.split())
