"""The job table is the one definition of every analysis: each command's parser has exactly its job's options with
the same defaults, each job has a notebook call with the same options and defaults, and the command and the call
give the same output on the bundled samples (the same table, or the same error)."""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import referee
from referee.cli import build_parser, main
from referee.present.outputs import write_csv
from referee.composing import JOBS
from referee.io.store import Store

FRONT_DOOR = {"store", "out", "json", "quiet", "no_figures", "func", "job", "out_is_folder", "command"}  # the command line's own
QUICK = ["--draws", "60", "--tune", "60", "--chains", "1", "--sampler", "pymc"]


def _subparser(name: str):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[name]


def _actions(parser) -> dict:
    return {a.dest: a for a in parser._actions if a.dest != "help"}


@pytest.mark.parametrize("name", list(JOBS))
def test_every_command_parses_its_jobs_options_with_the_same_defaults(name):
    job = JOBS[name]
    parser = _subparser(name)
    if job.variants:  # one sub-command per variant, each with the variant's own options and defaults
        sub = next(a for a in parser._actions if a.dest == job.options[0].name)
        assert set(sub.choices) == set(job.variants)
        for variant, options in job.variants.items():
            actions = _actions(sub.choices[variant])
            for option in options:
                assert actions[option.name].default == option.default, (variant, option.name)
            assert set(actions) - FRONT_DOOR <= {o.name for o in job.options}
        return
    actions = _actions(parser)
    assert set(actions) - FRONT_DOOR == {o.name for o in job.options} - FRONT_DOOR
    for option in job.options:
        assert actions[option.name].default == option.default, option.name
        if option.choices is not None:
            assert list(actions[option.name].choices) == list(option.choices), option.name


@pytest.mark.parametrize("name", list(JOBS))
def test_every_job_has_a_notebook_call_with_the_same_options_and_defaults(name):
    job = JOBS[name]
    call = getattr(referee, job.api)
    params = inspect.signature(call).parameters
    assert [p for p in params if p not in ("data", "progress")] == [o.name for o in job.options]
    assert params["progress"].kind is inspect.Parameter.KEYWORD_ONLY and params["progress"].default is None
    for option in job.options:
        expected = inspect.Parameter.empty if option.required else option.default
        assert params[option.name].default == expected, option.name
    assert job.api in referee.__all__


def _cli(argv: list[str], capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(argv + ["--json"])
    return code, json.loads(capsys.readouterr().out)


def _as_written(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """A table as the command line writes it and reads back (injection-safe, rank-sorted, through CSV)."""
    return pd.read_csv(write_csv(frame, path))


# (command line after the job's name, the notebook call's options): one case per job, on the bundled samples
CASES = {
    "ratings": (["--method", "bt", "--runner", "concordia"], {"method": "bt", "runner": "concordia"}),
    "leaderboard": (["--runner", "arena", "--bootstrap", "50"], {"runner": "arena", "bootstrap": 50}),
    "compare": (["agent_01", "rational_agent", "--runner", "concordia", "--bootstrap", "50"],
                {"a": "agent_01", "b": "rational_agent", "runner": "concordia", "bootstrap": 50}),
    "ratings-cv": (["--runner", "compact", "--folds", "2", "--dims", "1"],
                   {"runner": "compact", "folds": 2, "dims": "1"}),
    "rank": (["--method", "copeland", "--method", "iml", "--runner", "concordia"],
             {"method": ["copeland", "iml"], "runner": "concordia"}),
    "contest": (["--runner", "concordia"], {"runner": "concordia"}),
    "plan": (["--runner", "concordia", "--budget", "5"], {"runner": "concordia", "budget": 5}),
    # the fit by the default sampler (nutpie): the same model twice in one process compiles once (PyMC's C
    # backend compiles it cold in about 26 s)
    "fit": (["baseline-contrast"] + QUICK[:-2], {"model": "baseline-contrast", "draws": 60, "tune": 60, "chains": 1}),
    "compare-predictors": (["--folds", "2"] + QUICK, {"folds": 2, "draws": 60, "tune": 60, "chains": 1,
                                                      "sampler": "pymc"}),
    "describe": ([], {}),
    "socio": (["--bootstrap", "20"], {"bootstrap": 20}),
    "judge-agreement": (["--raters", "judge-a", "judge-b", "--bootstrap", "20"],
                        {"raters": ["judge-a", "judge-b"], "bootstrap": 20}),
    "audit": (["--match", "aoa:eval01", "--no-bayes"], {"match": "aoa:eval01", "no_bayes": True}),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.heavy) if n == "compare-predictors" else n
                                  for n in CASES])  # compare-predictors' cross-validated fits: make test-all
def test_the_command_and_the_notebook_call_give_the_same_output(name, sample_store, tmp_path, capsys):
    argv, options = CASES[name]
    code, payload = _cli([name, *argv, "--store", str(sample_store), "--out", str(tmp_path / "cli")], capsys)
    with Store(sample_store, read_only=True) as store:
        call = getattr(referee, JOBS[name].api)
        if code != 0:  # the same refusal, word for word
            with pytest.raises(Exception) as refused:
                call(store, **options)
            assert str(refused.value).strip("'\"") in payload["error"]
            return
        result = call(store, **options)
    main_table = next(iter(result.tables))
    written = pd.read_csv(tmp_path / "cli" / f"{main_table}.csv")
    pd.testing.assert_frame_equal(written, _as_written(result.table(), tmp_path / 'api.csv'), check_dtype=False)
    pd.testing.assert_frame_equal(pd.DataFrame(payload["tables"][main_table]), pd.DataFrame(
        json.loads(json.dumps(result.payload()["tables"][main_table], default=str))), check_dtype=False)
    machine = "PyTensor could not link to a BLAS"  # said once per process, by whichever fit imports PyTensor first
    assert [n for n in payload["notes"] if machine not in n] == [n for n in result.notes if machine not in n]


@pytest.mark.heavy  # make test-all (issue 65: make test under 20 minutes on 2 cores)
def test_ingest_simulate_judge_report_and_paper_give_the_same_files_by_either_door(tmp_path, capsys):
    # simulate: the same logs and truth from the same seed
    code, payload = _cli(["simulate", "arena", "--agents", "4", "--judgments", "60", "--out", str(tmp_path / "c")],
                         capsys)
    assert code == 0
    referee.simulate("arena", tmp_path / "a", agents=4, judgments=60)
    assert (tmp_path / "c" / "truth.json").read_text() == (tmp_path / "a" / "truth.json").read_text()
    logs = sorted(p.relative_to(tmp_path / "c") for p in (tmp_path / "c" / "logs").rglob("*") if p.is_file())
    assert logs and all((tmp_path / "c" / p).read_bytes() == (tmp_path / "a" / p).read_bytes() for p in logs)
    # ingest: the same counts into either store
    code, payload = _cli(["ingest", str(tmp_path / "c" / "logs"), "--store", str(tmp_path / "c.duckdb")], capsys)
    found = referee.ingest([tmp_path / "a" / "logs"], store=tmp_path / "a.duckdb")
    assert code == 0 and payload["accepted"] == found.accepted == 60 and payload["read"] == found.read
    # judge (a dry run counts the calls), on a store of its own (the judge writes its cache into it)
    compact = tmp_path / "compact.duckdb"
    referee.ingest([referee.sample("compact", "logs")], store=compact)
    code, payload = _cli(["judge", "--rubric", "compact-influence", "--model", "m", "--dry-run", "--store",
                          str(compact), "--out", str(tmp_path / "judge")], capsys)
    dry = referee.judge(str(compact), "compact-influence", "m", dry_run=True)
    assert code == 0 and payload["calls"] == dry.calls > 0 and payload["items"] == dry.items
    # paper: the same items made and not made
    code, payload = _cli(["paper", "compact", "--store", str(compact), "--out", str(tmp_path / "pc")], capsys)
    made = referee.paper(str(compact), "compact", tmp_path / "pa")
    assert code == 0 and payload["tables"]["items"] == made.payload()["tables"]["items"] and payload["made"] == made.made > 0
    # report: both write an index with the same sections
    code, payload = _cli(["report", "--store", str(tmp_path / "c.duckdb"), "--no-models", "--out",
                          str(tmp_path / "rc")], capsys)
    shown = referee.report(tmp_path / "c.duckdb", out=tmp_path / "ra", no_models=True)
    sections = lambda p: [line for line in Path(p).read_text().splitlines() if line.startswith("## ")]  # noqa: E731
    assert code == 0 and sections(tmp_path / "rc" / "report.md") == sections(Path(shown.index).parent / "report.md")
    shutil.rmtree(tmp_path / "rc")


def test_a_dataframe_of_results_is_read_as_the_table_runners_rows():
    # a beats b in 3 of 4 matches: Bradley-Terry's maximum likelihood puts them 400 log10(3) Elo apart (closed form)
    results = pd.DataFrame({"match": [f"m{i}" for i in range(4) for _ in (0, 1)], "agent": ["a", "b"] * 4,
                            "score": [1, 0, 1, 0, 1, 0, 0, 1]})
    found = referee.ratings(results, "bt")
    rating = found.table().set_index("agent")["rating"]
    assert rating["a"] - rating["b"] == pytest.approx(400 * np.log10(3), abs=0.01)
    assert found.method == "bt"


def test_every_job_function_defaults_to_the_job_tables_values():
    # the table is where a default lives: a job function's own default may not say something else
    from referee.models.registry import implementation

    for job in JOBS.values():
        params = inspect.signature(implementation(job.function)).parameters
        for option in job.options:
            if option.name in params and params[option.name].default is not inspect.Parameter.empty:
                assert params[option.name].default == option.default, (job.name, option.name)


def test_a_bad_option_is_refused_by_name_before_any_work(sample_store):
    with pytest.raises(ValueError, match="bootstrap: must be 0 or more"):
        referee.ratings(str(sample_store), "bt", bootstrap=-1)
    with pytest.raises(ValueError, match="is not one of"):
        referee.ratings(str(sample_store), "no-such-method")
    with pytest.raises(TypeError):
        referee.ratings(str(sample_store), "bt", no_such_option=1)


def test_calibrate_gives_the_same_ranks_by_either_door(tmp_path, capsys):
    quick = {"sims": 2, "draws": 60, "tune": 60, "chains": 1, "seed": 5}
    code, payload = _cli(["calibrate", "audit-regression", "--sims", "2", "--draws", "60", "--tune", "60",
                          "--chains", "1", "--seed", "5", "--out", str(tmp_path / "c")], capsys)
    found = referee.calibrate(model="audit-regression", **quick)
    assert code in (0, 1) and payload["passed"] == found.passed
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "c" / "ranks.csv"),
                                  _as_written(found.table("ranks"), tmp_path / "api.csv"), check_dtype=False)


def test_a_misspelt_method_or_option_gets_did_you_mean_on_both_doors(capsys):
    """Issue 73: `"btt"` listed the choices without "did you mean 'bt'", and the API's `bootstrapp=3` got Python's
    plain TypeError."""
    from referee.cli import main

    with pytest.raises(SystemExit):
        main(["ratings", "--method", "btt"])
    assert "did you mean 'bt'?" in capsys.readouterr().err
    with pytest.raises(ValueError, match="did you mean 'bt'"):
        JOBS["ratings"].bind({"method": "btt"})
    with pytest.raises(TypeError, match="no option 'bootstrapp' \\(did you mean 'bootstrap'\\?\\)"):
        referee.ratings(None, "bt", bootstrapp=3)


def test_results_are_typed_and_json_keeps_fields_and_tables_apart(sample_store, tmp_path, capsys):
    """Issue 73: fields were read through `__getattr__` over a dict, and in `--json` a field named like a table
    was overwritten by it. `check` reports a field `violations` (a count) and a table `violations` (the rows)."""
    from referee.result import CheckJobResult, Field, Result, declared_fields

    assert not hasattr(Result, "__getattr__")
    assert isinstance(CheckJobResult.violations, Field) and set(declared_fields(CheckJobResult)) == {
        "checked", "violations"}
    with pytest.raises(ValueError, match="lacks its field"):  # a declared field cannot be left out
        CheckJobResult("check", {}, fields={"checked": 3})
    code, payload = _cli(["check", "--store", str(sample_store), "--runner", "arena", "--out", str(tmp_path / "c")],
                         capsys)
    assert code == 0 and isinstance(payload["violations"], int)
    assert payload["violations"] == len(payload["tables"]["violations"])
    with Store(sample_store, read_only=True) as store:
        found = referee.check(store, runner="arena")
    assert type(found) is CheckJobResult and found.violations == payload["violations"]
    with pytest.raises(AttributeError):
        found.no_such_field


# the function each score model's defaults are taken from when --draws and --tune are not given
MODEL_FUNCTIONS = {"tag-effects": "referee.models.scores.beta_regression:fit_tag_effects",
                   "baseline-contrast": "referee.models.scores.beta_regression:fit_baseline_contrast",
                   "measurement-layout": "referee.models.scores.measurement_layout:fit_layout",
                   "pass-fail": "referee.models.scores.outcome_glm:fit_outcomes",
                   "graded": "referee.models.scores.outcome_glm:fit_outcomes"}


@pytest.mark.parametrize("model", list(MODEL_FUNCTIONS))
def test_fit_help_prints_the_defaults_each_model_runs(model, capsys, monkeypatch):
    """`referee fit MODEL --help` states the draws and tuning steps the model's own fit function defaults to (read
    from its signature, not from the registry the help is generated from): pass-fail 2000 and 1000 (issue 81)."""
    from referee.models.registry import implementation

    params = inspect.signature(implementation(MODEL_FUNCTIONS[model])).parameters
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps at the terminal's width, hyphenated names too
    with pytest.raises(SystemExit):
        main(["fit", model, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"draws per chain after tuning (default {params['draws'].default} for {model};" in text
    assert f"tuning steps per chain (default {params['tune'].default} for {model};" in text
    if model == "pass-fail":
        assert (params["draws"].default, params["tune"].default) == (2000, 1000)


def test_the_manuals_sampling_defaults_are_the_ones_that_run():
    """The manual's table of sampling defaults (docs/journeys/contest.md) is the generated one (one source: the
    registry the fits default to)."""
    from referee.run.options import sampling_defaults_markdown

    readme = (Path(__file__).resolve().parent.parent / "docs" / "journeys" / "contest.md").read_text()
    block = readme.split("<!-- sampling-defaults:start -->\n", 1)[1].split("\n<!-- sampling-defaults:end -->", 1)[0]
    assert block == sampling_defaults_markdown()
    assert "| `referee fit pass-fail` | 2,000 | 1,000 | 4 |" in block


def test_a_result_field_of_the_wrong_type_is_refused_and_a_result_records_its_options(sample_store):
    """Types declared, not checked (issue 86): `RatingsJobResult(..., fields={"method": 5}).method` returned 5.
    A field is now checked against its declaration when the result is built, and a job's result records the
    options it ran with (defaults filled)."""
    import pytest

    import referee
    from referee.result import CompareJobResult, RatingsJobResult

    with pytest.raises(TypeError, match="'method' is declared str, got int 5"):
        RatingsJobResult("ratings", {}, fields={"method": 5})
    with pytest.raises(TypeError, match="'p_value' is declared float"):
        CompareJobResult("compare", {}, fields=dict(difference=1.0, lower=0.0, upper=2.0, interval="x", p_better=0.9,
                                                    p_value="small", wins=1, losses=0, ties=0, matches=1))
    assert RatingsJobResult("ratings", {}, fields={"method": "bt", "ties": None}).method == "bt"
    with pytest.raises(TypeError, match=r"'ties' is declared dict \| None, got str"):  # an optional field is checked too
        RatingsJobResult("ratings", {}, fields={"method": "bt", "ties": "half"})
    found = referee.ratings(str(sample_store), "elo", runner="concordia")
    assert found.options["method"] == "elo" and found.options["runner"] == "concordia" and "seed" in found.options


def test_a_started_job_without_a_starter_is_computed_at_once_and_a_bad_option_refused_first(sample_store):
    """`Job.start`: a job without a starter computes when it is begun (its result is there after the store has
    closed), with the options it ran with; a starter's bad option is refused before anything starts."""
    with Store(sample_store, read_only=True) as store:
        begun = JOBS["describe"].start(store, runner="concordia")
        with pytest.raises(ValueError, match="folds"):
            JOBS["compare-predictors"].start(store, runner="concordia", folds=1)
    found = begun.finish()  # the store is closed: nothing is read now
    assert found.options["runner"] == "concordia" and set(found.table("scores")["runner"]) == {"concordia"}


@pytest.mark.heavy  # five layout fits in two worker processes: make test-all
def test_compare_predictors_started_in_processes_gives_the_in_process_numbers(sample_store):
    """The report begins `compare-predictors` at its start (`Job.start`, the folds in worker processes) and reads it
    at its stage: the same tables as the job computed in this process."""
    quick = dict(runner="concordia", folds=2, draws=60, tune=60, chains=1)
    with Store(sample_store, read_only=True) as store:
        begun = JOBS["compare-predictors"].start(store, jobs=2, **quick)
        here = JOBS["compare-predictors"].compute(store, jobs=1, **quick)
        there = begun.finish()
    assert there.options["jobs"] == 2 and here.options["jobs"] == 1
    for name in ("pooled", "per_agent", "predictions"):
        pd.testing.assert_frame_equal(there.table(name), here.table(name))


def test_every_valued_options_default_is_in_its_help():
    """Issue 105: `--help` printed no default for some options (`fit baseline-contrast --baseline`, default
    rational_agent) although the README says it lists every default. Each valued option's help now carries its
    default, generated from the job table (`cli.jobs.with_default`), checked option by option on the parsers."""
    import argparse

    from referee.cli import build_parser
    from referee.cli.manual import _commands

    checked = 0
    for name, parser in _commands(build_parser()).items():
        parsers = [parser] + [p for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                              for p in action.choices.values()]
        for sub in parsers:
            for action in sub._actions:
                default = action.default
                if (not action.option_strings or isinstance(action, (argparse._StoreTrueAction, argparse._HelpAction))
                        or default in (None, (), [], "", False) or action.help in (None, argparse.SUPPRESS)
                        or action.dest in ("store", "out")):
                    continue
                assert "default" in action.help, (name, action.dest, action.help)
                checked += 1
    assert checked > 50
