"""The one fit contract (`referee.models.fit`): every estimator returns a FitResult; warnings raised inside a fit
reach its notes, the command line and the report; non-convergence of every iterative fitter is reported;
every command accepts --json."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from referee.cli import build_parser, main
from referee.io.store import Store
from referee.reporting import build_report
from referee.run.ratings.ratings import encode, rate
from referee.models.fit import ConvergenceWarning, FitResult, collect_notes
from referee.models.ratings.bradley_terry import RatingWarning, fit_bt
from referee.models.ratings.bt_multidim import fit_bt_multidim
from referee.models.ratings.bt_per_game import fit_bt_per_game
from referee.models.ratings.elo import fit_contest_elo, fit_online_elo
from tests.helpers import simulate


def _comparisons():
    rng = np.random.default_rng(0)
    return simulate(rng.normal(0, 1, (3, 6)), ["g0", "g1", "g2"], 3000, seed=1)


def test_every_point_estimator_returns_the_one_result_type():
    data = _comparisons()
    coded = encode(data)
    fits = [fit_bt(coded.counts(), coded.agents), fit_bt_per_game(coded.game_counts(), coded.agents, coded.games),
            fit_bt_multidim(coded.game_counts(), coded.agents, coded.games, dims=2),
            fit_contest_elo(coded.counts(ties="ignore"), coded.agents),
            fit_online_elo(coded.a, coded.b, coded.outcome, coded.agents)]
    fits += [rate(data, m) for m in ("elo", "bt", "bt-per-game", "bt-md", "online-elo")]
    for fit in fits:
        assert isinstance(fit, FitResult), type(fit)
        table = fit.table()
        assert {"agent", "rating", "rank"} <= set(table.columns) and len(table) == 6
        assert fit.diagnostics["converged"] is True and isinstance(fit.notes, list)


def test_collect_notes_records_and_still_warns():
    notes: list[str] = []
    with pytest.warns(RatingWarning, match="shown"):
        with collect_notes(notes):
            warnings.warn("shown to the caller", RatingWarning)
    assert notes == ["RatingWarning: shown to the caller"]


def test_warnings_of_many_fits_are_counted_once_per_kind_whatever_their_numbers():
    from referee.models.fit import summarised_warnings

    notes: list[str] = []
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        with summarised_warnings("the 3 folds' fits", notes):
            for n in (5, 7, 5):
                warnings.warn(f"{n} of 30 cells have no finite rating (the agent won every comparison)", RatingWarning)
            warnings.warn("a Normal(0, (400 Elo)^2) prior was added", RatingWarning)
    assert notes == ["RatingWarning: 3 time(s) during the 3 folds' fits: 5 of 30 cells have no finite rating "
                     "(first of them; the numbers vary)",
                     "RatingWarning: 1 time(s) during the 3 folds' fits: a Normal(0, (400 Elo)^2) prior was added"]
    assert [str(w.message) for w in heard] == [n.split(": ", 1)[1] for n in notes]


@pytest.mark.parametrize("fitter", ["bt", "bt-per-game", "bt-md"])
def test_non_convergence_is_reported_for_each_iterative_fitter(fitter):
    coded = encode(_comparisons())
    with pytest.warns(ConvergenceWarning, match="NOT CONVERGED"):
        if fitter == "bt":
            fit = fit_bt(coded.counts(), coded.agents, max_iter=1)
        elif fitter == "bt-per-game":
            fit = fit_bt_per_game(coded.game_counts(), coded.agents, coded.games, max_iter=2)
        else:
            fit = fit_bt_multidim(coded.game_counts(), coded.agents, coded.games, dims=2, max_iter=2)
    assert fit.diagnostics["converged"] is False and fit.diagnostics["iterations"] <= 2
    assert any("NOT CONVERGED" in n for n in fit.notes)


def _never_winning_store(path):
    """A table store with a scenario column in which agent 'zed' loses every match (no BT MLE)."""
    rng = np.random.default_rng(2)
    rows = []
    for m in range(40):
        a, b = rng.choice(["ann", "bob", "cat"], 2, replace=False)
        players = [(a, float(rng.integers(1, 10))), (b, float(rng.integers(1, 10)))]
        if m % 4 == 0:
            players = [(a, 5.0), ("zed", 0.0)]
        for agent, score in players:
            rows.append({"match": f"m{m}", "agent": agent, "score": score, "scenario": "s1", "repetition": str(m)})
    csv = path.parent / "never.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    with Store(path) as store:
        store.ingest([csv], runner="table")
    return path


def test_a_ratings_warning_reaches_the_cli_the_files_and_the_report(tmp_path, capsys):
    store = _never_winning_store(tmp_path / "s.duckdb")
    assert main(["ratings", "--store", str(store), "--method", "bt", "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "warning: RatingWarning: Bradley-Terry MLE does not exist (never won: zed" in err
    assert "never won: zed" in (tmp_path / "r" / "notes.txt").read_text()
    assert main(["ratings", "--store", str(store), "--method", "bt", "--json", "--out", str(tmp_path / "j")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert any("never won: zed" in w for w in payload["warnings"]) and any("never won: zed" in n for n in payload["notes"])
    with Store(store, read_only=True) as s:
        index = build_report(s, tmp_path / "report", fit_models=False)
    assert "never won: zed" in index.read_text()


@pytest.mark.heavy  # make test-all (issue 65: make test under 20 minutes on 2 cores)
def test_a_score_model_warning_reaches_the_cli_and_the_report(sample_store, tmp_path, capsys):
    # 20 draws after 20 tuning steps cannot converge: the ConvergenceWarning must be seen everywhere
    assert main(["fit", "baseline-contrast", "--store", str(sample_store), "--draws", "20", "--tune", "20",
                 "--chains", "2", "--out", str(tmp_path / "f")]) == 0
    err = capsys.readouterr().err
    assert "warning: ConvergenceWarning: NOT CONVERGED" in err
    assert "NOT CONVERGED" in (tmp_path / "f" / "notes.txt").read_text()
    assert json.loads((tmp_path / "f" / "diagnostics.json").read_text())["converged"] is False
    with Store(sample_store, read_only=True) as s:
        from referee.reporting import _guarded, beta_regression_sections
        sections = _guarded("Beta regressions", beta_regression_sections, s, "concordia",
                            sampling={"draws": 20, "tune": 20, "chains": 2})
    assert any("NOT CONVERGED" in w for section in sections for w in section.warnings)


def test_an_audit_warning_reaches_the_cli_and_its_notes(sample_store, tmp_path, capsys):
    assert main(["audit", "--store", str(sample_store), "--match", "aoa:eval01", "--group-by", "team",
                 "--draws", "20", "--tune", "20", "--chains", "2", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "NOT CONVERGED" in err
    assert "NOT CONVERGED" in (tmp_path / "a" / "notes.txt").read_text()
    assert "## Notes" in (tmp_path / "a" / "audit.md").read_text()
    with Store(sample_store, read_only=True) as s:
        from referee.reporting import _guarded, audit_sections
        sections = _guarded("audits", audit_sections, s, sampling={"draws": 20, "tune": 20, "chains": 2})
    assert any("NOT CONVERGED" in w for section in sections for w in section.warnings)


def _subcommands(parser):
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices


def test_every_command_accepts_json_and_version(capsys):
    parser = build_parser()
    commands = _subcommands(parser)
    for name, sub in commands.items():
        variants = any(a.__class__.__name__ == "_SubParsersAction" for a in sub._actions)  # simulate RUNNER, fit MODEL
        leaves = _subcommands(sub).items() if variants else [(None, sub)]
        for leaf, p in leaves:
            assert any("--json" in a.option_strings for a in p._actions), (name, leaf)
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("referee ")


def test_json_error_and_exit_codes(tmp_path, capsys):
    assert main(["info", "--store", str(tmp_path / "none.duckdb"), "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert "no store here" in payload["error"]
    with pytest.raises(SystemExit) as exit_:
        main(["ratings", "--method", "bt", "--bootstrap", "-5", "--out", str(tmp_path / "x")])
    assert exit_.value.code == 2 and "must be 0 or more" in capsys.readouterr().err
