"""The ratings, ratings-cv and rank commands on the bundled samples."""

import arviz as az
import numpy as np
import pandas as pd
import pytest

from referee.cli import main


def test_ratings_bt_with_bootstrap(sample_store, tmp_path):
    out = tmp_path / "bt"
    assert main(["ratings", "--store", str(sample_store), "--runner", "concordia", "--method", "bt",
                 "--bootstrap", "40", "--out", str(out)]) == 0
    table = pd.read_csv(out / "ratings.csv")
    assert list(table.columns)[:12] == ["agent", "rating", "lower", "upper", "rank", "tier", "rank_set",
                                        "joint_rank_set", "could_be_first", "matches", "status", "interval"]
    assert "contest_elo" in table.columns and "group" not in table.columns  # one rank truth: the board's
    assert len(table) == 8 and sorted(table["rank"]) == list(range(1, 9))
    assert (table["lower"] <= table["rating"]).all() and (table["rating"] <= table["upper"]).all()
    assert (out / "bootstrap.png").stat().st_size > 5000


def test_ratings_by_game_and_kendall_tau(sample_store, tmp_path):
    out = tmp_path / "pg"
    assert main(["ratings", "--store", str(sample_store), "--runner", "compact", "--method", "bt-per-game",
                 "--by", "game", "--parallel", "--out", str(out)]) == 0
    table = pd.read_csv(out / "ratings.csv")
    assert list(table.columns)[:2] == ["game", "agent"] and table["game"].nunique() == 5
    tau = pd.read_csv(out / "kendall_tau.csv")
    assert set(tau.columns) == {"game", "kendall_tau", "agents"} and tau["kendall_tau"].between(-1, 1).all()


def test_ratings_need_a_runner_when_the_store_has_several(sample_store, tmp_path, capsys):
    assert main(["ratings", "--store", str(sample_store), "--method", "elo", "--out", str(tmp_path / "x.csv")]) == 1
    assert "choose one with --runner" in capsys.readouterr().err


def test_rank_all(sample_store, tmp_path):
    out = tmp_path / "rank"
    assert main(["rank", "--store", str(sample_store), "--runner", "concordia", "--method", "all", "--out", str(out)]) == 0
    table = pd.read_csv(out / "rankings.csv")
    assert set(table["method"]) == {"copeland", "ranked-pairs", "maximal-lotteries", "iml", "ewa"}
    assert (table.groupby("method")["agent"].count() == 8).all()


def test_ratings_cv(sample_store, tmp_path):
    assert main(["ratings-cv", "--store", str(sample_store), "--runner", "arena", "--dims", "1-2",
                 "--out", str(tmp_path / "cv")]) == 0
    auc = pd.read_csv(tmp_path / "cv" / "cv_auc.csv")
    assert set(auc["model"]) == {"bt", "bt-per-game", "bt-md"} and auc["auc"].between(0, 1).all()
    assert (tmp_path / "cv" / "win_probability.png").exists()


@pytest.mark.filterwarnings("ignore::referee.models.fit.ConvergenceWarning")  # 200 draws: a smoke test of the files
def test_fit_and_describe_commands(sample_store, tmp_path):
    out = tmp_path / "contrast"
    assert main(["fit", "baseline-contrast", "--store", str(sample_store), "--draws", "200", "--tune", "200",
                 "--out", str(out)]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns) == ["parameter", "mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail"]
    assert summary["parameter"].str.startswith("gamma[").sum() == 7 and (out / "baseline-contrast.png").exists()
    assert (out / "idata.nc").exists()
    assert main(["describe", "--store", str(sample_store), "--out", str(tmp_path / "d")]) == 0
    corr = pd.read_csv(tmp_path / "d" / "correlations.csv", index_col=0)
    assert corr.index[0] == "score" and "resident" in corr.index and any(c.startswith("substrate: ") for c in corr.columns)
    assert (tmp_path / "d" / "correlations.png").exists() and (tmp_path / "d" / "mean_by_agent.png").exists()


@pytest.mark.heavy  # make test-all (issue 65: make test under 20 minutes on 2 cores)
@pytest.mark.filterwarnings("ignore::referee.models.fit.ConvergenceWarning")  # short chains: a smoke test of the files
def test_measurement_layout_commands(sample_store, tmp_path, capsys):
    assert main(["compare-predictors", "--store", str(sample_store), "--draws", "150", "--tune", "150", "--folds", "2",
                 "--out", str(tmp_path / "cp")]) == 0
    assert len(pd.read_csv(tmp_path / "cp" / "fold_diagnostics.csv")) == 2
    per_agent = pd.read_csv(tmp_path / "cp" / "per_agent.csv")
    assert set(per_agent["predictor"]) == {"measurement layout", "linear regression", "xgboost", "constant"}
    assert per_agent["agent"].nunique() == 8 and (tmp_path / "cp" / "comparison.png").exists()
    assert main(["fit", "measurement-layout", "--store", str(sample_store), "--draws", "150", "--tune", "150",
                 "--out", str(tmp_path / "ml")]) == 0
    caps = pd.read_csv(tmp_path / "ml" / "capabilities.csv")
    assert caps["mean"].between(0, 1).all() and "visitor" in set(caps["demand"])
    # referee plan --scenarios for the layout, from the posterior just written
    assert main(["plan", "--store", str(sample_store), "--runner", "concordia", "--scenarios", "3", "--model",
                 "measurement-layout", "--posterior", str(tmp_path / "ml"), "--out", str(tmp_path / "sp")]) == 0
    plan = pd.read_csv(tmp_path / "sp" / "scenarios.csv")
    post = az.from_netcdf(str(tmp_path / "ml" / "idata.nc")).posterior["capability"]
    rms_sd = np.sqrt((post.std(("chain", "draw")) ** 2).mean("agent")).to_series()
    assert plan.loc[0, "target"] == rms_sd.idxmax()  # the least known demand, from the posterior directly
    assert plan.loc[0, "sd_before"] == pytest.approx(rms_sd.max(), rel=0.05)  # (the plan thins to 400 draws)
    assert (plan["sd_after"] < plan["sd_before"]).all() and plan["scores_so_far"].gt(0).all()  # catalogue = played
    catalogue = set(pd.read_csv(tmp_path / "ml" / "demands.csv", index_col=0).index)
    assert set(plan["scenario"]) <= catalogue
    # fitted now (short chains), served one named demand, with hypothetical profiles
    assert main(["plan", "--store", str(sample_store), "--runner", "concordia", "--scenarios", "2", "--model",
                 "measurement-layout", "--draws", "100", "--tune", "100", "--demand", "visitor", "--profiles",
                 "--out", str(tmp_path / "sp2")]) == 0
    plan = pd.read_csv(tmp_path / "sp2" / "scenarios.csv")
    assert (plan["target"] == "visitor").all() and plan["demands"].str.contains("visitor").all()
    assert main(["plan", "--store", str(sample_store), "--runner", "concordia", "--scenarios", "2", "--model",
                 "measurement-layout", "--posterior", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 1
    assert main(["plan", "--store", str(sample_store), "--runner", "concordia", "--scenarios", "2", "--repeats", "3",
                 "--out", str(tmp_path / "x")]) == 1
    contrast = tmp_path / "contrast.nc"  # a posterior that is not a layout's
    az.from_dict(posterior={"gamma": np.zeros((2, 10, 3))}).to_netcdf(str(contrast))
    assert main(["plan", "--store", str(sample_store), "--runner", "concordia", "--scenarios", "2", "--model",
                 "measurement-layout", "--posterior", str(contrast), "--out", str(tmp_path / "x")]) == 1
    assert "not a Measurement Layout posterior" in capsys.readouterr().err
    # the 150-draw posterior is not converged, and the plan says so
    assert main(["plan", "--store", str(sample_store), "--runner", "concordia", "--scenarios", "1", "--model",
                 "measurement-layout", "--posterior", str(tmp_path / "ml"), "--out", str(tmp_path / "sp3")]) == 0
    assert "warning: ConvergenceWarning: NOT CONVERGED" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["local:0", "local:two", "bad address", "tcp://host"])
def test_a_scheduler_that_cannot_be_is_refused_before_any_work(sample_store, tmp_path, capsys, value):
    """Issue 39: `--scheduler local:0` once ran past 300 s; every malformed value is now a usage error, raised while
    the arguments are parsed, before the store is opened."""
    with pytest.raises(SystemExit) as exit_:
        main(["ratings", "--store", str(sample_store), "--method", "bt", "--bootstrap", "50", "--scheduler", value,
              "--out", str(tmp_path / "r")])
    assert exit_.value.code == 2
    assert "--scheduler" in capsys.readouterr().err and not (tmp_path / "r").exists()
