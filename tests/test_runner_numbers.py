"""Each runner's own headline numbers beside referee's ratings, comparisons where the runner's design makes them,
and no "established" without information (issue 46).

Checked against independent references: a generated clemcore run with known skills (and clem's own aggregation
of it), clem's own results.csv, each Inspect log's header (what Inspect itself computed), closed forms for the
information rule and Inspect's clustered standard error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

import referee
from referee.cli import main
from referee.io.loaders import RUNNERS, comparison_unit
from referee.io.resources import shipped
from referee.io.loaders.clem_table import clem_episodes, clem_results
from referee.io.loaders.inspect_table import clustered_stderr
from referee.run.ratings.game_theory import game_ranking
from referee.run.ratings.rating_labels import NO_INFORMATION, without_information
from referee.run.ratings.ratings import rate
from referee.run.ratings.runner_numbers import HEADLINES, Tables, runner_numbers
from referee.simulators.clem import CLEM_SKILL, clem_run
from conftest import shared_file


@pytest.fixture(scope="module")
def clem_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("clemrun")
    truth = clem_run(root / "results", instances=6, experiments=2, seed=3)
    return referee.open([root / "results"], store=root / "s.duckdb"), truth


def test_generated_clemcore_run_rates_models_in_clems_order_and_not_its_scripted_partner(clem_store):
    store, truth = clem_store
    found = referee.ratings(store, method="bt")
    table = found.table().set_index("agent")
    assert "programmatic" not in table.index and "programmatic-t0.0" not in table.index
    assert len(table) == 8 and table["rating"].nunique() == 8  # distinct ratings, every model rated
    clem = clem_results(clem_episodes(store.table("matches"), store.table("measures")))
    clemscore = clem["-, clemscore"].rename(lambda folder: folder.split("--")[0])
    assert spearmanr(table["rating"], clemscore.reindex(table.index)).statistic >= 0.9
    skill = pd.Series(truth).rename(lambda m: f"{m}-t0.0")
    assert spearmanr(table["rating"], skill.reindex(table.index)).statistic >= 0.9
    # clem's own clemscore, % played and quality are numeric columns, equal to clem's aggregation of the self-play
    # pair (the model) to its printed precision
    assert (table["clemscore"] - clemscore.reindex(table.index)).abs().max() < 0.005
    selfplay = clem.rename(lambda folder: folder.split("--")[0])
    for mine, theirs in (("pct_played", "all, Average % Played"), ("quality", "all, Average Quality Score")):
        assert table[mine].dtype == float and (table[mine] - selfplay[theirs].reindex(table.index)).abs().max() < 0.005
    assert any("clemscore" in n and "instance by instance" in n for n in found.notes)


def test_scripted_partner_is_rated_only_when_asked(clem_store):
    store, _ = clem_store
    asked = referee.ratings(store, method="bt", rate_scripted=True).table()
    assert set(asked["agent"]) == {f"{m}-t0.0" for m in CLEM_SKILL} | {"programmatic"}
    assert set(store.table("results").query("agent == 'programmatic'")["group"]) == {"background"}


def test_real_clembench_run_orders_its_comparable_models_as_clem_and_says_what_it_cannot_rate(tmp_path):
    root = shared_file("real", "clembench-ludo")
    store = referee.open([root], store=tmp_path / "s.duckdb")
    table = referee.ratings(store, method="bt").table().set_index("agent")
    assert "programmatic" not in table.index
    clem = pd.read_csv(root / "results.csv", index_col=0)["-, clemscore"]
    # Llama-3-70B and gpt-3.5 play the same multiplayer instances: clem's order (14.36 > 2.11) is referee's
    assert clem["Llama-3-70B-chat-hf-t0.0--programmatic-t0.0"] > clem["gpt-3.5-turbo-1106-t0.0--programmatic-t0.0"]
    assert table.loc["Llama-3-70B-chat-hf", "rating"] > table.loc["gpt-3.5-turbo-1106", "rating"]
    # gpt-4o played only single-player instances no other model here played: no information, no rank
    assert table.loc["gpt-4o", "status"].startswith(NO_INFORMATION) and pd.isna(table.loc["gpt-4o", "rank"])
    assert (table["status"] == "established").sum() == 0


def test_clems_percent_played_and_quality_equal_its_results_table(tmp_path):
    root = shared_file("real", "clembench-ludo")
    raw = pd.read_csv(root / "raw.csv", index_col=0)
    printed = pd.read_csv(root / "results.csv", index_col=0)
    mine = clem_results(raw)
    for column in ("all, Average % Played", "all, Average Quality Score", "ludo, % Played", "ludo, Quality Score",
                   "-, clemscore"):
        assert (mine[column] - printed[column].reindex(mine.index)).abs().max() < 0.005, column


def test_an_agent_with_only_ties_has_no_information_and_no_rank():
    # a beats b and b beats a (information); c only ever ties a; d only ever beats scripted s
    rows = [("a", "b", 1.0), ("a", "b", 0.0), ("a", "b", 1.0), ("a", "c", 0.5), ("c", "b", 0.5),
            ("d", "s", 1.0), ("d", "s", 1.0)]
    comparisons = pd.DataFrame(rows, columns=["a", "b", "outcome"]).assign(
        cluster=[f"m{i}" for i in range(len(rows))], game="g", kind="match", communication=None, time=None)
    comparisons.attrs["scripted"] = ["s"]
    kept, blind = without_information(comparisons, ["s"])
    assert set(blind) == {"c", "d"} and "ties" in blind["c"] and "scripted partner s" in blind["d"]
    assert len(kept) == 3  # d's comparisons with s are gone too: s meets no one else
    table = rate(comparisons, "bt").table().set_index("agent")
    assert table.loc["c", "status"].startswith(NO_INFORMATION) and pd.isna(table.loc["c", "rating"])
    assert pd.isna(table.loc["c", "rank"]) and table.loc[["a", "b"], "rating"].notna().all()
    game = game_ranking(comparisons, "nash", min_games=1)
    assert set(game.table["agent"]) == {"a", "b"}  # no mass for c or d
    assert any("carried information" in n for n in game.notes)


def test_all_ties_is_said_not_rated():
    comparisons = pd.DataFrame({"a": ["x", "x"], "b": ["y", "z"], "outcome": [0.5, 0.5], "cluster": ["1", "2"],
                                "game": "g", "kind": "match", "communication": None, "time": None})
    with pytest.raises(ValueError, match="no comparison carries information: 0 of 2"):
        rate(comparisons, "elo")


def test_inspect_accuracy_and_stderr_equal_each_logs_header(tmp_path):
    store = referee.open([shared_file("real", "inspect")], store=tmp_path / "s.duckdb")
    numbers = runner_numbers(Tables(store.table("matches"), store.table("results"), store.table("measures")))
    computed = numbers[numbers["value"].notna() & ~numbers["unit"].str.endswith("(all its logs)")]  # each log's row
    assert len(computed) >= 15  # every log with scored samples and a stated metric
    assert np.allclose(computed["value"], computed["stated"], atol=1e-12)
    assert np.allclose(computed["stderr"], computed["stated_stderr"], atol=1e-12)
    # the 2-epoch log: epochs reduced by their mean first, as Inspect does (0.75 +- 0.25 over 2 samples)
    streamed = computed[computed["agent"].str.startswith("azureai/")].iloc[0]
    assert (streamed["value"], streamed["stderr"]) == pytest.approx((0.75, 0.25))
    table = referee.ratings(store, method="bt").table()
    assert {"accuracy", "stderr"} <= set(table.columns) and table["accuracy"].dtype == float
    # each model's accuracy and stderr are its log's header where the model has one log
    one = computed.groupby("agent").filter(lambda g: g["unit"].nunique() == 1).set_index("agent")
    shown = table.set_index("agent").loc[one.index.intersection(table["agent"])]
    assert len(shown) and np.allclose(shown["accuracy"], one.loc[shown.index, "stated"], atol=1e-12)
    assert np.allclose(shown["stderr"], one.loc[shown.index, "stated_stderr"], atol=1e-12)
    # issue 103: a header value referee could not recompute (a log with no scored sample) is marked in the table
    from referee.run.ratings.runner_numbers import STATED_ONLY, per_unit

    found = referee.runner_numbers(store)
    wide = found.tables["numbers"].set_index(["agent", "unit"])
    unrecomputed = numbers[numbers["value"].isna() & numbers["stated"].notna()].set_index(["agent", "unit"])
    assert len(unrecomputed) >= 1 and (wide.loc[unrecomputed.index, "source"] == STATED_ONLY).all()
    assert (wide.drop(unrecomputed.index)["source"] == "recomputed").all()
    assert any(f"{len(unrecomputed)} inspect row(s) show the runner's stated number" in line
               and "no scored sample" in line for line in found.lines), found.lines
    assert per_unit(numbers)["source"].tolist() == found.tables["numbers"]["source"].tolist()


def test_clustered_stderr_is_the_cluster_robust_se_of_a_mean():
    import statsmodels.api as sm

    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(12), 5)
    values = rng.normal(size=60) + np.repeat(rng.normal(size=12), 5)
    fit = sm.OLS(values, np.ones((60, 1))).fit(cov_type="cluster", cov_kwds={"groups": clusters,
                                                                              "use_correction": False})
    # statsmodels' uncorrected cluster SE times sqrt(C/(C-1)) is Inspect's finite-cluster-corrected one
    assert clustered_stderr(values, clusters) == pytest.approx(float(fit.bse[0]) * np.sqrt(12 / 11), rel=1e-9)


def test_every_runner_declares_its_comparison_unit_in_its_format_document_and_info(tmp_path, capsys):
    for name in RUNNERS:
        text = shipped("formats", f"{name}.md").read_text(encoding="utf-8")
        assert "## Comparison unit" in text, name
    assert "instance" in comparison_unit("clembench") and "sample" in comparison_unit("inspect")
    assert "match" in comparison_unit("kaggle")
    clem_run(tmp_path / "results", instances=2, experiments=1)
    assert main(["ingest", "--store", str(tmp_path / "s.duckdb"), str(tmp_path / "results")]) == 0
    assert main(["info", "--store", str(tmp_path / "s.duckdb")]) == 0
    assert "clembench: one comparison is the instance" in capsys.readouterr().out
    assert set(HEADLINES) <= set(RUNNERS)


def test_concordias_own_number_is_the_contests_elo_and_melting_pots_its_normalised_return(sample_store, tmp_path):
    from referee.io.store import Store
    from referee.prepare.comparisons import comparisons_from_tables
    from referee.simulators.frameworks import meltingpot_results

    with Store(sample_store, read_only=True) as store:
        matches, results = store.table("matches"), store.table("results")
    concordia = matches[matches["runner"] == "concordia"]
    numbers = runner_numbers(Tables(concordia, results, pd.DataFrame()))
    elo = rate(comparisons_from_tables(concordia, results), "elo").table().set_index("agent")["rating"]
    mine = numbers.set_index("agent")["value"]
    assert (numbers["metric"] == "contest Elo").all() and np.allclose(mine.reindex(elo.index), elo)
    # Melting Pot: per scenario, (population mean - lowest) / (highest - lowest), then the mean over scenarios
    meltingpot_results(tmp_path / "mp", episodes=4, seed=1)
    store = referee.open([tmp_path / "mp"], store=tmp_path / "mp.duckdb")
    m, r = store.table("matches"), store.table("results")
    got = runner_numbers(Tables(m, r, pd.DataFrame())).set_index("agent")["value"]
    means = r.merge(m[["match_id", "scenario"]]).groupby(["scenario", "agent"])["score"].mean().unstack()
    expected = ((means - means.min(axis=1).to_numpy()[:, None])
                / (means.max(axis=1) - means.min(axis=1)).to_numpy()[:, None]).mean()
    assert np.allclose(got.reindex(expected.index), expected)
    assert got.idxmax() == "acb" and got.idxmin() == "random"  # the generating skills' order ends


def test_ratings_on_a_clemcore_run_print_clems_numbers_as_numeric_columns(tmp_path, capsys):
    """Issue 67's bar: `referee ratings` on a clemcore run prints clem's own clemscore, % played and quality per
    model, as numbers beside referee's rating, equal to clem's aggregation of the model's self-play pair."""
    clem_run(tmp_path / "results", instances=4, experiments=2, seed=5)
    store = tmp_path / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(tmp_path / "results")]) == 0
    capsys.readouterr()
    assert main(["ratings", "--store", str(store), "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert {"rating", "clemscore", "pct_played", "quality"} <= set(printed[0].split())
    written = pd.read_csv(tmp_path / "r" / "ratings.csv").set_index("agent")
    assert all(written[c].dtype == float for c in ("clemscore", "pct_played", "quality"))
    with referee.open(store) as opened:
        clem = clem_results(clem_episodes(opened.table("matches"), opened.table("measures")))
    own = clem.rename(lambda folder: folder.split("--")[0])
    for mine, theirs in (("clemscore", "-, clemscore"), ("pct_played", "all, Average % Played"),
                         ("quality", "all, Average Quality Score")):
        assert np.allclose(written[mine], own[theirs].reindex(written.index), atol=0.005), mine
    from referee.present.cells import cell_text

    for line in printed[1:len(written) + 1]:  # each row prints the model's numbers as cell_text writes them
        agent = line.split()[0]
        assert all(f" {cell_text(written.loc[agent, c])}" in line for c in ("clemscore", "pct_played", "quality"))


def test_runner_numbers_prints_clems_results_table_for_every_model_pair(tmp_path, capsys):
    """The job's per-pair table against clem's own raw.csv: clem's aggregation of clem's rows for the episodes
    the trimmed folder holds (an independent path from the logs referee parsed to the numbers it prints)."""
    root = shared_file("real", "clembench-ludo")
    store = referee.open([root], store=tmp_path / "s.duckdb")
    found = referee.runner_numbers(store)
    table = found.table().set_index("unit")
    assert len(table) == 3 and table.index.isin(pd.read_csv(root / "results.csv", index_col=0).index).all()
    raw = pd.read_csv(root / "raw.csv", index_col=0)
    held = {(f.parents[3].name, f.parents[1].name, f.parent.name) for f in root.rglob("scores.json")}
    kept = raw[[key in held for key in zip(raw["model"], raw["experiment"], raw["episode"])]]
    clems = clem_results(kept)  # clem's bencheval aggregation (itself checked against results.csv)
    assert len(clems) == 3
    for column, theirs in (("clemscore", "-, clemscore"), ("pct_played", "all, Average % Played"),
                           ("quality", "all, Average Quality Score"), ("ludo, Quality Score (std)",
                                                                       "ludo, Quality Score (std)")):
        assert np.allclose(table[column], clems[theirs].reindex(table.index), atol=1e-9, equal_nan=True), column
    by_agent = found.table("by_agent").set_index("agent")
    assert by_agent.loc["gpt-4o", "clemscore"] == table.loc["gpt-4o-t0.0--gpt-4o-t0.0", "clemscore"]  # self-play


def test_a_store_referee_cannot_rate_still_shows_the_runners_numbers(tmp_path, capsys):
    """One Inspect log of one model: nothing comparable, yet Inspect's accuracy and stderr are printed by
    `runner-numbers`, named by the ratings' error, and in the report."""
    one = shared_file("real", "inspect") / "tests_analysis_test_logs" / "2025-05-12T20-28-13-04-00_popularity.json"
    store = tmp_path / "s.duckdb"
    assert main(["ingest", "--store", str(store), str(one)]) == 0
    capsys.readouterr()
    assert main(["ratings", "--store", str(store), "--out", str(tmp_path / "r")]) == 1
    assert "`referee runner-numbers` prints inspect's own numbers" in capsys.readouterr().err
    assert main(["runner-numbers", "--store", str(store), "--out", str(tmp_path / "n")]) == 0
    table = pd.read_csv(tmp_path / "n" / "numbers.csv")
    assert {"accuracy", "stderr"} <= set(table.columns) and table["accuracy"].dtype == float
    header = pd.read_json(one, typ="series")["results"]["scores"][0]["metrics"]  # what Inspect itself printed
    assert table["accuracy"].iloc[0] == pytest.approx(header["accuracy"]["value"], abs=1e-12)
    assert table["stderr"].iloc[0] == pytest.approx(header["stderr"]["value"], abs=1e-12)
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "rep"), "--no-models"]) == 0
    assert "## The runners' own numbers (inspect)" in (tmp_path / "rep" / "report.md").read_text()


def test_a_run_whose_folders_were_renamed_keeps_one_model_and_clems_own_table(tmp_path):
    """Issue 68: run folders renamed after the run (`X-t0.0--X-t0.0` to `X-t0.0`, meta.results_folder still the
    pair) and scores.json files without meta (clem's older scorer): every scores.json finds its episode through its
    interactions.json, each model stays one model, and clem's table equals the unrenamed run's."""
    import json
    import shutil

    clem_run(tmp_path / "as_run", instances=3, experiments=1, seed=2)
    shutil.copytree(tmp_path / "as_run", tmp_path / "renamed")
    for folder in sorted((tmp_path / "renamed").iterdir()):
        for scores in folder.rglob("scores.json"):
            doc = json.loads(scores.read_text())
            doc.pop("meta")
            scores.write_text(json.dumps(doc))
        folder.rename(folder.with_name(folder.name.split("--")[0]))
    tables = {}
    for name in ("as_run", "renamed"):
        store = referee.open([tmp_path / name], store=tmp_path / f"{name}.duckdb")
        assert store.last_ingest.quarantined == 0, name
        tables[name] = (clem_results(clem_episodes(store.table("matches"), store.table("measures"))),
                        store.table("results").query("group == 'focal'").groupby("agent").size())
    pd.testing.assert_frame_equal(tables["renamed"][0], tables["as_run"][0])
    pd.testing.assert_series_equal(tables["renamed"][1], tables["as_run"][1])


def test_a_blank_runner_headline_in_a_rating_table_says_why():
    """Issue 87: where a rating table's runner column is blank, a line says why: a clem model scored in two pairs,
    neither its self-play pair, has no clemscore of its own; an Inspect model whose logs hold no scored sample
    carries the note of its pooled row. A model with its own number gets no line."""
    from referee.run.ratings.runner_numbers import COLUMNS, blanks

    rows = [
        {"runner": "clembench", "agent": "m", "unit": "m-t0.0--x-t0.0", "metric": "clemscore", "value": 10.0},
        {"runner": "clembench", "agent": "m", "unit": "m-t0.0--y-t0.0", "metric": "clemscore", "value": 20.0},
        {"runner": "clembench", "agent": "s", "unit": "s-t0.0--s-t0.0", "metric": "clemscore", "value": 30.0},
        {"runner": "inspect", "agent": "a", "unit": "t (all its logs)", "metric": "accuracy", "value": np.nan,
         "note": "none of its 2 logs holds a scored sample referee can reduce"},
        {"runner": "inspect", "agent": "a", "unit": "t (log1)", "metric": "accuracy", "value": np.nan},
    ]
    numbers = pd.DataFrame(rows).reindex(columns=COLUMNS).assign(headline=True)
    lines = blanks(numbers, ["m", "s", "a"])
    assert len(lines) == 2, lines
    assert lines[0].startswith("m: no clemscore of its own") and "2 units" in lines[0]
    assert lines[1] == "a: `accuracy` blank: none of its 2 logs holds a scored sample referee can reduce"
