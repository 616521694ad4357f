"""The Concordia simulator: what it writes is what the loader reads, and its draws follow its stated model."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from referee.cli import main
from referee.prepare.scores import normalised_scores
from referee.simulators.concordia import cells_frame, simulate_concordia, write_concordia
from referee.io.store import Store


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_round_trip_through_loader_and_normalisation(tmp_path, contest):
    sim = simulate_concordia(contest, n_agents=4, repetitions=2, seed=7)
    paths = write_concordia(sim, tmp_path / "sim")
    with Store(tmp_path / "s.duckdb") as store:
        report = store.ingest([paths["logs"]], catalogue=paths["catalogue"], strict=True)
        assert (report.read, report.accepted) == (4 * 12 * 2, 4 * 12 * 2)
        scores = normalised_scores(store)
    assert (scores["bounds"] == "theoretical").all()
    truth = cells_frame(json.loads(paths["truth"].read_text()))
    both = scores.merge(truth, on=["agent", "scenario", "repetition"], validate="one_to_one")
    assert len(both) == len(truth)
    np.testing.assert_allclose(both["score_norm"], both["y"], atol=1e-9)
    assert (both["y"] == 0).any() and (both["y"] == 1).any()


def test_same_seed_same_files(tmp_path, contest):
    a = write_concordia(simulate_concordia(contest, n_agents=3, seed=3), tmp_path / "a")
    b = write_concordia(simulate_concordia(contest, n_agents=3, seed=3), tmp_path / "b")
    for f in sorted(a["logs"].iterdir()):
        assert f.read_bytes() == (b["logs"] / f.name).read_bytes()


def test_draws_follow_the_ordered_beta_model(contest):
    # closed form: E[y] = P(y=1) + P(0<y<1) * sigmoid(eta), P(y=0) = 1 - sigmoid(eta - k1)
    sim = simulate_concordia(contest, n_agents=10, repetitions=20, seed=11)
    t = sim.truth
    cells = cells_frame(t)
    eta = cells.apply(lambda r: t["eta"][r.agent][r.scenario], axis=1).to_numpy()
    k1, k2 = t["cutpoints"]
    p0, p1 = 1 - _sigmoid(eta - k1), _sigmoid(eta - k2)
    expected = p1 + (1 - p0 - p1) * _sigmoid(eta)
    n = len(cells)
    assert abs(cells["y"].mean() - expected.mean()) < 4 * cells["y"].std() / np.sqrt(n)
    assert abs((cells["y"] == 0).mean() - p0.mean()) < 4 * np.sqrt(p0.mean() * (1 - p0.mean()) / n)
    # agents' observed means rank like their expected means
    by_agent = cells.assign(expected=expected).groupby("agent")[["y", "expected"]].mean()
    assert spearmanr(by_agent["y"], by_agent["expected"]).statistic > 0.9
    # the baseline's intercept is fixed at zero, and eta is the stated sum of parts
    assert t["agent_intercepts"]["rational_agent"] == 0.0
    a, s = "agent_03", "state_formation_0"
    x = t["design"][s]
    parts = (t["alpha"] + t["agent_intercepts"][a] + t["scenario_intercepts"][s] + t["resident_effect"]
             + sum(x[k] * (t["beta"][k] + t["agent_tag_slopes"][a][k]) for k in t["tags"]))
    assert t["eta"][a][s] == pytest.approx(parts)


def test_cli_simulate_writes_truth(tmp_path):
    assert main(["simulate", "concordia", "--agents", "3", "--repetitions", "1", "--seed", "1",
                 "--out", str(tmp_path / "o")]) == 0
    truth = json.loads((tmp_path / "o" / "truth.json").read_text())
    assert truth["agents"][0] == "rational_agent" and len(truth["cells"]) == 3 * 12
    assert len(list((tmp_path / "o" / "logs").glob("*.json"))) == 3


def test_a_simulate_folder_ingests_whole_and_its_own_files_are_companions(tmp_path, capsys):
    """`referee ingest` of a folder `referee simulate` wrote (logs/ beside provenance.json, manifest.json and
    truth.json) exits 0: referee's own files are recognised by their content and left out as companions; a
    user's file that only shares a name (a truth.json of their own) is still read."""
    out = tmp_path / "o"
    assert main(["simulate", "concordia", "--agents", "3", "--repetitions", "1", "--seed", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["ingest", str(out), "--store", str(tmp_path / "s.duckdb"), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    by_runner = {(r["runner"], r["status"]): r["files"] for r in found["by_runner"]}
    assert by_runner == {("concordia", "ingested"): 3, ("referee", "companion"): 3} and not found["failed_files"]
    (out / "truth.json").write_text(json.dumps({"generator": "my own lab script", "x": 1}))
    from referee.io.loaders import data_files

    companions: list = []
    data_files([out], companions)
    assert {p.name for p, _ in companions} == {"provenance.json", "manifest.json"}


def _parsed(logs, catalogue=None) -> dict[str, pd.DataFrame]:
    """The canonical tables of a folder of logs, without file paths and hashes (which differ by folder)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s.duckdb") as store:
        store.ingest([logs], catalogue=catalogue, strict=True)
        tables = {t: store.table(t) for t in ("matches", "results", "measures", "events")}
    drop = ["source_file", "content_hash", "ingested_at"]
    keys = {"matches": ["match_id"], "results": ["match_id", "player"], "measures": ["match_id", "player", "name"],
            "events": ["match_id", "seq"]}
    out = {}
    for name, frame in tables.items():
        frame = frame.drop(columns=[c for c in drop if c in frame.columns])
        out[name] = frame.sort_values([k for k in keys[name] if k in frame.columns]).reset_index(drop=True)
    return out


def assert_same_parsed_values(a: dict, b: dict, rtol: float = 1e-9) -> None:
    """Same rows and text; numbers equal to a relative tolerance of 1e-9 (BLAS builds may differ in the last
    digits of a matrix product, never in more)."""
    for name in a:
        left, right = a[name], b[name]
        assert list(left.columns) == list(right.columns) and len(left) == len(right), name
        for column in left.columns:
            x, y = left[column], right[column]
            if pd.api.types.is_float_dtype(x) and pd.api.types.is_float_dtype(y):
                np.testing.assert_allclose(x.to_numpy(float), y.to_numpy(float), rtol=rtol, atol=1e-12,
                                           err_msg=f"{name}.{column}")
            else:
                for row, (u, v) in enumerate(zip(x.tolist(), y.tolist())):
                    assert_same_value(_as_json(u), _as_json(v), rtol, f"{name}.{column}[{row}]")


def _as_json(value):
    """A text cell that holds a JSON document (match attrs, payloads) parsed, so that the numbers inside it
    compare as numbers; any other cell as it is."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def assert_same_value(u, v, rtol: float, where: str) -> None:
    """Equal structure and text; floats (at any depth of a parsed document) equal to the relative tolerance,
    since a mean's last digit follows the CPU's reduction order (AVX-512 sums in another order than AVX2)."""
    if isinstance(u, dict) and isinstance(v, dict):
        assert list(u) == list(v), where
        for key in u:
            assert_same_value(u[key], v[key], rtol, f"{where}.{key}")
    elif isinstance(u, list) and isinstance(v, list):
        assert len(u) == len(v), where
        for i, (a, b) in enumerate(zip(u, v)):
            assert_same_value(a, b, rtol, f"{where}[{i}]")
    elif isinstance(u, float) or isinstance(v, float):
        assert isinstance(u, (int, float)) and isinstance(v, (int, float)), where
        np.testing.assert_allclose(u, v, rtol=rtol, atol=1e-12, err_msg=where)
    else:
        assert str(u) == str(v), where


def test_parsed_comparison_forgives_the_last_digit_inside_json_and_nothing_more():
    # issue 65: matches.attrs is a JSON string whose means differ in the last digit between CPUs
    shipped = pd.DataFrame({"attrs": ['{"focal": 12.084494919673679, "name": "a", "n": [1, 2.5]}']})
    here = pd.DataFrame({"attrs": ['{"focal": 12.08449491967368, "name": "a", "n": [1, 2.5]}']})
    assert_same_parsed_values({"matches": shipped}, {"matches": here})
    for other in ('{"focal": 12.0845, "name": "a", "n": [1, 2.5]}', '{"focal": 12.084494919673679, "name": "b", '
                  '"n": [1, 2.5]}', '{"focal": 12.084494919673679, "name": "a", "n": [1]}'):
        with pytest.raises(AssertionError):
            assert_same_parsed_values({"matches": shipped}, {"matches": pd.DataFrame({"attrs": [other]})})


def test_bundled_sample_is_what_the_simulator_makes(tmp_path, contest):
    # data/sample/concordia is regenerated by `referee simulate concordia --agents 8 --seed 2024` (its README);
    # compared as parsed values, so that another numpy's last-digit rounding does not fail it
    from referee.reporting import SAMPLE
    fresh = write_concordia(simulate_concordia(contest, n_agents=8, seed=2024), tmp_path / "s")
    sample = SAMPLE / "concordia"
    assert_same_parsed_values(_parsed(sample / "logs", sample / "catalogue.toml"),
                              _parsed(fresh["logs"], fresh["catalogue"]))
    assert pd.read_json(sample / "truth.json", typ="series")["seed"] == 2024


def test_bundled_sample_truth_recovers_from_its_logs():
    # the simulator's promise, read off the shipped files alone: every cell's normalised score in the logs is
    # the truth's y for that cell
    from referee.reporting import SAMPLE
    sample = SAMPLE / "concordia"
    with Store(":memory:") as store:
        store.ingest([sample / "logs"], catalogue=sample / "catalogue.toml", strict=True)
        scores = normalised_scores(store)
    truth = cells_frame(json.loads((sample / "truth.json").read_text()))
    both = scores.merge(truth, on=["agent", "scenario", "repetition"], validate="one_to_one")
    assert len(both) == len(truth) == 8 * 12 * 3
    np.testing.assert_allclose(both["score_norm"], both["y"], atol=1e-9)


@pytest.mark.parametrize("runner, args", [
    ("aoa", ["--agents", "12", "--seed", "7", "--event-scale", "0.2", "--validity", "0.3"]),
    ("compact", ["--agents", "6", "--games", "20", "--seed", "7"]),
    ("arena", ["--agents", "8", "--judgments", "400", "--seed", "7"]),
    ("ranked", ["--agents", "8", "--games", "30", "--seed", "7"]),
])
def test_bundled_samples_are_what_the_simulators_make(tmp_path, runner, args):
    # the commands in data/sample/README.md, compared as parsed values
    from referee.reporting import SAMPLE
    folder = {"aoa": "aoa_sim"}.get(runner, runner)
    assert main(["simulate", runner, *args, "--out", str(tmp_path)]) == 0
    assert_same_parsed_values(_parsed(SAMPLE / folder / "logs"), _parsed(tmp_path / "logs"))


def test_same_command_twice_gives_the_same_numbers(sample_store, tmp_path):
    # seeds reach every random path of a command: bootstrap resampling and tie-breaking here
    for name in ("a", "b"):
        assert main(["ratings", "--store", str(sample_store), "--runner", "ranked", "--method", "bt",
                     "--bootstrap", "30", "--seed", "4", "--out", str(tmp_path / name)]) == 0
        assert main(["rank", "--store", str(sample_store), "--runner", "ranked", "--method", "all", "--seed", "4",
                     "--out", str(tmp_path / f"rank_{name}")]) == 0
    assert (tmp_path / "a" / "ratings.csv").read_bytes() == (tmp_path / "b" / "ratings.csv").read_bytes()
    assert (tmp_path / "rank_a" / "rankings.csv").read_bytes() == (tmp_path / "rank_b" / "rankings.csv").read_bytes()
    provenance = json.loads((tmp_path / "a" / "provenance.json").read_text())
    assert provenance["seed"] == 4 and provenance["versions"]["numpy"] == np.__version__
    assert provenance["inputs"] and all(len(i["content_hash"]) == 64 for i in provenance["inputs"])
