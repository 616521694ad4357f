"""The contest's phases (paper section 9.2, tables 3 and 8-12) and Concordia's test runs, on `referee simulate
concordia --phases`, whose truth is known, checked against Elo computed straight from the simulated records
(no loader, no store) and against the simulation's true strengths."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from referee.cli import main
from referee.io.catalogue import load_catalogue
from referee.io.store import Store
from referee.present.plan_figures import plot_contest_stages
from referee.prepare.comparisons import ballots_from_tables, comparisons_from_tables
from referee.prepare.selection import exclusion_counts, exclusions, select_phases
from referee.run.ratings.contest import run_contest
from referee.simulators.concordia import PHASES, records_elo
from tests.conftest import write_json
from tests.figure_checks import figure_problems

@pytest.fixture(scope="module")
def phased(tmp_path_factory):
    """A simulated 12-agent contest in three phases, ingested phase by phase, and `referee contest` on it."""
    root = tmp_path_factory.mktemp("phases")
    sim = root / "sim"
    assert main(["simulate", "concordia", "--agents", "12", "--phases", "--seed", "3", "--out", str(sim)]) == 0
    store = root / "store.duckdb"
    for phase in PHASES:
        assert main(["ingest", "--store", str(store), "--phase", phase, "--catalogue", str(sim / "catalogue.toml"),
                     str(sim / "logs" / phase)]) == 0
    out = root / "contest"
    truth = json.loads((sim / "truth.json").read_text())
    # the finalists the (simulated) organisers took: the paper's top five and the baseline
    assert main(["contest", "--store", str(store), "--out", str(out), "--json",
                 "--finalists", ",".join(truth["finalists"])]) == 0
    records = {p: {f.name.split("__")[0]: json.loads(f.read_text()) for f in (sim / "logs" / p).glob("*.json")}
               for p in PHASES}
    return {"root": root, "store": store, "out": out, "records": records, "truth": truth}


def _elo_table(path) -> dict[str, float]:
    table = pd.read_csv(path)
    return dict(zip(table["agent"], table["rating"]))


def _in_phase(records: dict, phase: str, agents=None) -> dict:
    """Records with the phase in the repetition (so phases never share a comparison unit), for `agents`."""
    return {a: [dict(r, repetition_idx=f"{phase}/{r['repetition_idx']}") for r in rs]
            for a, rs in records.items() if agents is None or a in agents}


def test_every_match_carries_its_phase_and_ids_do_not_collide(phased):
    with Store(phased["store"], read_only=True) as store:
        matches = store.table("matches")
    counts = matches["phase"].value_counts().to_dict()
    assert counts == phased["truth"]["phases"]  # 144 + 444 + 720: nothing lost to a match-id collision
    assert matches["match_id"].str.startswith(tuple(f"concordia:{p}:" for p in PHASES)).all()


def test_selection_is_the_contest_elo_of_the_evaluation_records_without_test_runs(phased):
    got = _elo_table(phased["out"] / "selection_elo.csv")
    evaluation = phased["records"]["evaluation"]
    assert got == records_elo(evaluation)  # straight from the JSON records, test runs left out
    marked = {a: [dict(r, exclude_from_elo_calculation=False) for r in rs] for a, rs in evaluation.items()}
    assert got != records_elo(marked)  # the test runs reverse the truth: counting them would change the table
    table = pd.read_csv(phased["out"] / "selection_elo.csv")
    assert table.loc[table["finalist"], "agent"].tolist() == phased["truth"]["finalists"]


def test_final_and_combined_elo_rate_the_finalists_among_themselves(phased):
    finalists = phased["truth"]["finalists"]
    finals = _elo_table(phased["out"] / "finals_elo.csv")
    assert finals == records_elo(phased["records"]["cross-play"])  # table 8
    both = {a: _in_phase(phased["records"]["evaluation"], "evaluation", finalists)[a]
            + _in_phase(phased["records"]["cross-play"], "cross-play", finalists)[a] for a in finalists}
    combined = _elo_table(phased["out"] / "combined_elo.csv")
    assert combined == records_elo(both)  # table 12: both phases, finalists only
    for table in (finals, combined):  # as the paper's tables 8 and 12: centred at 1500 over the six
        assert set(table) == set(finalists)
        assert abs(np.mean(list(table.values())) - 1500) <= 0.5


def test_final_ranking_recovers_the_true_order_of_the_finalists(phased):
    truth = phased["truth"]["expected_score"]
    finals = _elo_table(phased["out"] / "finals_elo.csv")
    agents = list(finals)
    rho = spearmanr([finals[a] for a in agents], [truth[a] for a in agents]).statistic
    assert rho >= 0.8, rho
    best = max(agents, key=truth.get)
    assert finals[best] == max(finals.values())


def test_final_votes_match_pairwise_majorities_counted_by_hand(phased):
    votes = pd.read_csv(phased["out"] / "finals_voting.csv")
    assert set(votes["method"]) == {"iml", "copeland", "ranked-pairs"}
    cross = phased["records"]["cross-play"]
    units: dict[tuple, dict[str, float]] = {}
    for agent, rs in cross.items():
        for r in rs:
            units.setdefault((r["scenario"], r["repetition_idx"]), {})[agent] = r["focal_per_capita_score"]
    agents = sorted(cross)
    copeland = dict.fromkeys(agents, 0.0)
    for i, a in enumerate(agents):
        for b in agents[i + 1:]:
            margin = sum((u[a] > u[b]) - (u[a] < u[b]) for u in units.values())  # -inf safe
            copeland[a] += 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0
            copeland[b] += 1.0 if margin < 0 else 0.5 if margin == 0 else 0.0
    got = votes[votes["method"] == "copeland"].set_index("agent")["score"].to_dict()
    assert got == copeland
    assert (votes.groupby("method")["ballots"].max() == len(units)).all()


def test_excluded_test_runs_are_counted_and_stay_in_the_store(phased):
    payload_notes = (phased["out"] / "notes.txt").read_text()
    n = phased["truth"]["test_runs"]
    assert f"left out {n} test run(s)" in payload_notes
    with Store(phased["store"], read_only=True) as store:
        matches = store.table("matches")
    assert exclusion_counts(matches) == {"exclude_from_elo_calculation": n}
    assert exclusions(matches).notna().sum() == n  # kept in the store, marked


def test_ratings_rank_and_fits_select_phases(phased, tmp_path, capsys):
    store = str(phased["store"])
    assert main(["ratings", "--store", store, "--method", "elo", "--phase", "evaluation", "--out",
                 str(tmp_path / "r")]) == 0
    assert "test runs" in capsys.readouterr().out
    assert _elo_table(tmp_path / "r" / "ratings.csv") == _elo_table(phased["out"] / "selection_elo.csv")
    assert "test runs" in (tmp_path / "r" / "notes.txt").read_text()
    assert main(["rank", "--store", store, "--method", "copeland", "--phase", "cross-play", "--out",
                 str(tmp_path / "v")]) == 0
    votes = pd.read_csv(phased["out"] / "finals_voting.csv")
    ranks = pd.read_csv(tmp_path / "v" / "rankings.csv").set_index("agent")["score"].to_dict()
    assert ranks == votes[votes["method"] == "copeland"].set_index("agent")["score"].to_dict()
    means = {}
    for phase in ("development", "evaluation"):
        assert main(["describe", "--store", store, "--phase", phase, "--out", str(tmp_path / phase)]) == 0
        means[phase] = pd.read_csv(tmp_path / phase / "mean_by_agent.csv")["mean"].mean()
    assert means["development"] > means["evaluation"]  # simulated with a +0.5 logit development shift
    assert main(["ratings", "--store", store, "--method", "elo", "--phase", "finals", "--out", str(tmp_path / "x")]) == 1
    assert "no match is in phase 'finals'; phases held: ['cross-play', 'development', 'evaluation']" in \
        capsys.readouterr().err


@pytest.mark.parametrize("top", [3, 12])
def test_stages_figure_reads_well(phased, top):
    assert (phased["out"] / "stages.png").stat().st_size > 5000
    with Store(phased["store"], read_only=True) as store:
        matches, results = store.table("matches"), store.table("results")
    result = run_contest(matches, results, top=top)
    assert figure_problems(plot_contest_stages(result.table(), result.finalists)) == []


def test_without_a_final_phase_only_the_selection_is_computed(phased):
    with Store(phased["store"], read_only=True) as store:
        matches, results = store.table("matches"), store.table("results")
    evaluation = select_phases(matches, ["evaluation"])
    result = run_contest(evaluation, results[results["match_id"].isin(evaluation["match_id"])], top=4)
    assert result.finals.empty and result.combined.empty and len(result.finalists) == 4
    assert any("no match is in phase 'cross-play'" in n for n in result.notes)


def test_given_finalists_and_ties_at_the_cut_are_said(phased):
    with Store(phased["store"], read_only=True) as store:
        matches, results = store.table("matches"), store.table("results")
    truth = phased["truth"]
    assert truth["finalists"][-1] == "rational_agent" and len(truth["finalists"]) == 6  # top five and the baseline
    elo = truth["selection_elo"]
    top = [a for a in sorted(elo, key=lambda a: (-elo[a], a)) if a != "rational_agent"][:5]
    assert truth["finalists"][:5] == top
    never = next(a for a in sorted(elo, key=lambda a: elo[a]) if a not in truth["finalists"])  # played no final
    chosen = [never] + truth["finalists"][:3]
    result = run_contest(matches, results, finalists=chosen)
    assert result.finalists == chosen
    assert any("differ from the top 6" in n for n in result.notes)
    assert any("outside the finalists" in n for n in result.notes)  # cross-play holds the real finalists
    assert any(f"without a rated match in phase 'cross-play': {never}" in n for n in result.notes)


def test_phase_from_the_catalogue_and_the_flag_overrides_it(tmp_path, record):
    cat = tmp_path / "cat.toml"
    cat.write_text('[scenarios.haggling_0]\ngame = "haggling"\nmode = "resident"\nphase = "development"\n'
                   'tags = ["negotiation"]\n')
    assert load_catalogue(cat).phases == {"haggling_0": "development"}
    write_json(tmp_path / "a" / "alpha__m__e.json", [record()])
    write_json(tmp_path / "b" / "alpha__m__e.json", [record(api_type="second file")])
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([tmp_path / "a"], catalogue=cat)
        report = store.ingest([tmp_path / "b"], catalogue=cat, phase="evaluation")
        assert report.accepted == 1  # same scenario and repetition, another phase: not a duplicate
        matches = store.table("matches").set_index("match_id")["phase"].to_dict()
        assert store.table("scenarios").set_index("scenario").loc["haggling_0", "phase"] == "development"
    assert matches == {"concordia:development:haggling_0:0:alpha_agent": "development",
                       "concordia:evaluation:haggling_0:0:alpha_agent": "evaluation"}


def test_phase_flag_reaches_every_runner(tmp_path):
    path = tmp_path / "games.csv"
    path.write_text("match,agent,score\nm1,a,1\nm1,b,0\nm2,a,0\nm2,b,1\n")
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([path], runner="table", phase="finals")
        assert store.table("matches")["phase"].tolist() == ["finals", "finals"]
        with pytest.raises(ValueError, match="non-empty name"):
            store.ingest([path], phase=" ")


def test_test_runs_leave_every_comparison_and_ballot(tmp_path, record):
    runs = [record(focal_agent="alpha"), record(focal_agent="beta", focal_per_capita_score=3.0,
                                                ungrouped_per_capita_score=3.5,
                                                simulation_outcome={"resident_scores": {"Ann": 3.0, "Ben": 3.0, "Cat": 3.0},
                                                                    "visitor_scores": {"Dov": 5.0}}),
            record(focal_agent="gamma", exclude_from_elo_calculation=True),
            record(focal_agent="delta", disable_language_model=True)]
    write_json(tmp_path / "logs" / "all.json", runs)
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([tmp_path / "logs"])
        matches, results = store.table("matches"), store.table("results")
    assert exclusion_counts(matches) == {"exclude_from_elo_calculation": 1, "disable_language_model": 1}
    comparisons = comparisons_from_tables(matches, results)
    assert comparisons[["a", "b", "outcome"]].values.tolist() == [["alpha", "beta", 0.0]]
    assert sorted(ballots_from_tables(matches, results)["agent"]) == ["alpha", "beta"]


def test_a_store_from_before_scenario_phases_is_migrated(tmp_path, contest):
    path = tmp_path / "old.duckdb"
    with Store(path):
        pass
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE scenarios DROP COLUMN phase")
    con.close()
    with Store(path) as store:  # adds the column at the end; inserts go by name
        store._put_catalogue(contest, [])
        scenarios = store.table("scenarios")
    assert len(scenarios) == len(contest.scenarios) and scenarios["phase"].isna().all()
    assert scenarios["game"].notna().all() and scenarios["mode"].isin(["resident", "visitor"]).all()


def test_in_phase_sets_every_kind_of_matches_piece():
    import pyarrow as pa

    from referee.io.reading import in_phase

    assert in_phase([{"match_id": "m", "phase": None}], "x") == [{"match_id": "m", "phase": "x"}]
    assert in_phase(pd.DataFrame({"match_id": ["m"]}), "x")["phase"].tolist() == ["x"]
    assert in_phase(pa.table({"match_id": ["m"], "phase": [None]}), "x").column("phase").to_pylist() == ["x"]
    assert in_phase(pa.table({"match_id": ["m", "n"]}), "x").column("phase").to_pylist() == ["x", "x"]


def test_report_on_a_phased_store_ranks_the_evaluation_and_adds_the_contest(phased, tmp_path):
    from referee.reporting import build_report

    with Store(phased["store"], read_only=True) as store:
        index = build_report(store, tmp_path / "report", fit_models=False)
    text = (tmp_path / "report" / "report.md").read_text()
    assert "could not be built" not in text
    assert "## Appendix: Contest phases (concordia)" in text and "Table 12 layout" in text
    assert text.index("## Leaderboard (concordia)") < text.index("## Store")
    assert "these rankings are on phase evaluation" in text
    assert "12 test runs marked exclude_from_elo_calculation, which the contest's Elo script skips" in text
    assert index.exists()


def test_concordias_flag_in_another_runners_data_excludes_nothing():
    """A flag is read only from the runner whose format defines it (issue 71): a GTBench match whose `notes`
    (kept in attrs) hold `"exclude_from_elo_calculation": true`, and a table match with that column, stay in
    the ratings; the same attrs on a Concordia match leave it out."""
    flagged = json.dumps({"notes": {"exclude_from_elo_calculation": True}, "exclude_from_elo_calculation": True})
    matches = pd.DataFrame({"match_id": ["g1", "t1", "c1", "c2"], "runner": ["gtbench", "table", "concordia", "concordia"],
                            "attrs": [flagged, flagged, flagged, json.dumps({"exclude_from_elo_calculation": False})]})
    assert exclusions(matches).tolist() == [None, None, "exclude_from_elo_calculation", None]
    assert exclusion_counts(matches) == {"exclude_from_elo_calculation": 1}


def test_a_concordia_flag_that_is_not_a_bool_sets_its_record_aside(tmp_path, record):
    write_json(tmp_path / "logs" / "all.json", [record(focal_agent="alpha"),
                                                record(focal_agent="beta", exclude_from_elo_calculation="yes")])
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([tmp_path / "logs"])
        aside, results = store.table("quarantine"), store.table("results")
    assert aside[["field", "reason"]].values.tolist() == [["exclude_from_elo_calculation", "wrong type"]]
    assert "beta" not in set(results["agent"]) and "alpha" in set(results["agent"])


def test_an_empty_focal_agent_sets_its_record_aside(tmp_path, record):
    write_json(tmp_path / "logs" / "all.json", [record(focal_agent="alpha"), record(focal_agent="  ")])
    with Store(tmp_path / "s.duckdb") as store:
        store.ingest([tmp_path / "logs"])
        aside = store.table("quarantine")
    assert aside[["field", "reason"]].values.tolist() == [["focal_agent", "missing value"]]
