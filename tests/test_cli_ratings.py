"""The ratings, ratings-cv and rank commands on the bundled samples."""

import pandas as pd
import pytest

from analysis.cli import main


def test_ratings_bt_with_bootstrap(sample_store, tmp_path):
    out = tmp_path / "bt.csv"
    assert main(["ratings", "--store", str(sample_store), "--runner", "concordia", "--method", "bt",
                 "--bootstrap", "40", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns) == ["agent", "rating", "lower", "upper", "rank", "rank_lower", "rank_upper"]
    assert len(table) == 8 and sorted(table["rank"]) == list(range(1, 9))
    assert (table["lower"] <= table["rating"]).all() and (table["rating"] <= table["upper"]).all()
    assert out.with_suffix(".png").stat().st_size > 5000


def test_ratings_by_game_and_kendall_tau(sample_store, tmp_path):
    out = tmp_path / "pg.csv"
    assert main(["ratings", "--store", str(sample_store), "--runner", "compact", "--method", "bt-per-game",
                 "--by", "game", "--parallel", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns)[:2] == ["game", "agent"] and table["game"].nunique() == 5
    tau = pd.read_csv(tmp_path / "pg_kendall_tau.csv")
    assert set(tau.columns) == {"game", "kendall_tau", "agents"} and tau["kendall_tau"].between(-1, 1).all()


def test_ratings_need_a_runner_when_the_store_has_several(sample_store, tmp_path, capsys):
    assert main(["ratings", "--store", str(sample_store), "--method", "elo", "--out", str(tmp_path / "x.csv")]) == 1
    assert "choose one with --runner" in capsys.readouterr().err


def test_rank_all(sample_store, tmp_path):
    out = tmp_path / "rank.csv"
    assert main(["rank", "--store", str(sample_store), "--runner", "concordia", "--method", "all", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["method"]) == {"copeland", "ranked-pairs", "maximal-lotteries", "iml", "ewa"}
    assert (table.groupby("method")["agent"].count() == 8).all()


def test_ratings_cv(sample_store, tmp_path):
    assert main(["ratings-cv", "--store", str(sample_store), "--runner", "arena", "--dims", "1-2",
                 "--out", str(tmp_path / "cv")]) == 0
    auc = pd.read_csv(tmp_path / "cv" / "cv_auc.csv")
    assert set(auc["model"]) == {"bt", "bt-per-game", "bt-md"} and auc["auc"].between(0, 1).all()
    assert (tmp_path / "cv" / "win_probability.png").exists()
