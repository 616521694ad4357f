"""`referee report` on any store: sections that decide from the data and say why when they cannot run,
the files it writes (index.html, report.md, figures as PNG and SVG, tables as rank-sorted CSV, provenance),
and figures that pass the size and overlap checks at tournament scale."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
from PIL import Image
from scipy.stats import spearmanr

from referee.cli import main
from referee import reporting as pipeline
from referee.present.figures import MAX_HEIGHT, TWO_COLUMNS
from tests.helpers import tournament


def _csv(path, n_agents, n_matches, rare, seed, outcome=False):
    """A single-game tournament of 3-player matches as a user's CSV (`match,agent,player,score,rank,game`);
    with `outcome`, a `territory` column that follows strength, recorded apart from the score."""
    matches, results, strengths = tournament(n_agents=n_agents, n_matches=n_matches, rare=rare, sizes=(3,), seed=seed)
    table = results.merge(matches[["match_id", "game"]], on="match_id").rename(columns={"match_id": "match"})
    table = table[["match", "agent", "player", "score", "rank", "game"]]
    if outcome:
        rng = np.random.default_rng(seed)
        table["territory"] = np.round(table["agent"].map(strengths) * 3 + rng.normal(0, 1, len(table)) + 10)
    table.to_csv(path, index=False)
    return strengths


def _table(out, fragment) -> pd.DataFrame:
    [path] = [p for p in (out / "tables").glob("*.csv") if fragment in p.name]
    return pd.read_csv(path)


def test_a_single_game_tournament_of_80_agents_and_8000_matches(tmp_path, checked_figures):
    data, store, out = tmp_path / "ffa.csv", tmp_path / "ffa.duckdb", tmp_path / "report"
    strengths = _csv(data, n_agents=80, n_matches=8000, rare=20, seed=11)
    assert main(["ingest", str(data), "--store", str(store)]) == 0
    assert main(["report", "--store", str(store), "--out", str(out)]) == 0
    html, md = (out / "index.html").read_text(), (out / "report.md").read_text()

    # the board (Bradley-Terry: the one inference), ranked agents by rank, recovering the simulated strengths
    bt = _table(out, "leaderboard-table-1")
    assert len(bt) == 80 and bt["rank"].dropna().is_monotonic_increasing
    common = bt[~bt["agent"].isin([f"ag{i:03d}" for i in range(60, 80)])]
    assert (common["lower"] < common["rating"]).all() and (common["rating"] < common["upper"]).all()
    rho = spearmanr(common["rating"], common["agent"].map(strengths)).statistic
    assert rho > 0.95, rho
    # rankings: Elo and the four voting methods, each sorted by rank; the rare agents set apart, not ranked
    for fragment in ("layout-elo", "iterative-maximal", "copeland", "ranked-pairs", "evaluation-without"):
        table = _table(out, fragment)
        ranked = table["Rank"].dropna()
        assert ranked.is_monotonic_increasing and len(ranked) >= 60
    assert "listed apart, not ranked" in md

    # figures: the bootstrap violins, checked for size and overlapping labels as they were saved
    assert checked_figures and all(problems == [] for problems in checked_figures.values()), checked_figures
    pngs = sorted((out / "figures").glob("*.png"))
    assert any("ratings-and-rankings" in p.name for p in pngs)
    for png in pngs:
        assert png.with_suffix(".svg").exists()
        width, height = Image.open(png).size
        assert width <= (TWO_COLUMNS + 0.6) * 150 and height <= (MAX_HEIGHT + 0.6) * 150, (png.name, width, height)
    # one self-contained page: every figure embedded
    assert html.count('src="data:image/png;base64,') == len(pngs)
    # sections that cannot run say why
    assert "Not run: every match is one game (ffa)" in md
    assert "Not run: no outcome is recorded apart from the score" in md
    assert "Not run: no match has a scenario" in md
    # provenance: the command and the input file's hash
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["command"][:2] == ["referee", "report"]
    assert provenance["inputs"][0]["content_hash"].endswith(hashlib.sha256(data.read_bytes()).hexdigest())


def test_an_outcome_column_brings_the_audit(tmp_path, checked_figures):
    data, store, out = tmp_path / "ffa.csv", tmp_path / "ffa.duckdb", tmp_path / "report"
    _csv(data, n_agents=20, n_matches=300, rare=0, seed=3, outcome=True)
    assert main(["ingest", str(data), "--store", str(store), "--measure", "territory=outcome"]) == 0
    assert main(["report", "--store", str(store), "--out", str(out), "--no-models"]) == 0
    md = (out / "report.md").read_text()
    audit = md.split("## Construct-validity audit (table)")[1].split("\n## ")[0]
    assert "Verdict:" in audit and "Recorded score against territory" in audit
    assert all(problems == [] for problems in checked_figures.values()), checked_figures


def test_a_failing_section_shows_its_error_and_the_rest_builds(tmp_path, monkeypatch):
    data, store, out = tmp_path / "ffa.csv", tmp_path / "ffa.duckdb", tmp_path / "report"
    _csv(data, n_agents=8, n_matches=60, rare=0, seed=4)
    assert main(["ingest", str(data), "--store", str(store)]) == 0

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in one section")

    monkeypatch.setattr(pipeline, "_rankings", broken)
    assert main(["report", "--store", str(store), "--out", str(out), "--no-models"]) == 0
    md = (out / "report.md").read_text()
    assert "This section could not be built: RuntimeError: a bug in one section" in md
    assert "## Store" in md and "## Runners" in md and "Not run: every match is one game" in md


def test_the_ratings_section_states_one_count_and_every_table_has_status(tmp_path):
    """Issue: the section printed "0 agent(s) established" (Elo, no interval) beside "75 established" (BT) and
    opened with five warning boxes; now one rule gives one count, stated once, and every ranking table of the
    section carries the same Status column (rare agents provisional)."""
    data, store, out = tmp_path / "ffa.csv", tmp_path / "ffa.duckdb", tmp_path / "report"
    _csv(data, n_agents=30, n_matches=900, rare=5, seed=5)
    assert main(["ingest", str(data), "--store", str(store)]) == 0
    assert main(["report", "--store", str(store), "--out", str(out), "--no-models"]) == 0
    md = (out / "report.md").read_text()
    section = md.split("## Appendix: Ratings and rankings (table)")[1].split("\n## ")[0]
    assert section.count("agent(s) established") == 1
    elo = _table(out, "table-3-layout-elo")
    bt = _table(out, "leaderboard-table-1")  # the Bradley-Terry table is the board's: one rank truth
    assert "Status" in elo.columns and "status" in bt.columns and "rank_set" in bt.columns
    by_agent = bt.set_index("agent")["status"]
    assert (elo.set_index("Submission")["Status"] == by_agent.reindex(elo["Submission"]).to_numpy()).all()
    assert by_agent.str.startswith("provisional").sum() >= 5 and (by_agent == "established").sum() >= 20


def test_the_contest_models_read_only_the_runner_whose_scenarios_are_tagged(tmp_path, monkeypatch):
    """A store of Concordia (catalogue tags) and Inspect (scenarios, no tags): the beta regressions and Measurement
    Layouts once took every scenario-based match, so Inspect's untagged tasks entered the baseline contrast (2
    divergences) and broke the layout (SVD); each job the contest sections run now names concordia."""
    from referee.io.store import Store

    calls = []
    real = pipeline.job

    def recorded(name, store, **options):  # describe runs (the fits read its scores); a fit stops at its call
        calls.append((name, options.get("runner")))
        if name == "describe":
            found = real(name, store, **options)
            assert set(found.table("scores")["runner"]) == {options["runner"]}
            return found
        raise RuntimeError("recorded")

    monkeypatch.setattr(pipeline, "job", recorded)
    with Store(tmp_path / "mixed.duckdb") as store:
        store.ingest([pipeline.SAMPLE / "concordia" / "logs"], catalogue=pipeline.SAMPLE / "concordia" / "catalogue.toml")
        store.ingest([pipeline.SAMPLE / "inspect"])
        assert set(store.table("matches").dropna(subset=["scenario"])["runner"]) == {"concordia", "inspect"}
        assert pipeline.tagged_runners(store) == ["concordia"]
        sections = pipeline.contest_sections(store)
    assert [s.title for s in sections] == ["Beta regressions (concordia)", "Measurement Layouts (concordia)"]
    assert calls == [("describe", "concordia"), ("fit", "concordia"), ("compare-predictors", "concordia")]
    with Store(tmp_path / "inspect.duckdb") as store:
        store.ingest([pipeline.SAMPLE / "inspect"])
        [alone] = pipeline.contest_sections(store)
    assert alone.skipped and "no scored scenario has tags" in alone.skipped
