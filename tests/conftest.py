"""Shared fixtures: paths to ../shared/data, a valid Concordia record factory, temporary stores."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from referee.io.catalogue import CONTEST_2024, load_catalogue
from referee.io.store import Store

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={REPO / '.cache' / 'pytensor'}")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / ".cache" / "numba"))
SHARED = Path(os.environ.get("REFEREE_SHARED", REPO.parent / "shared"))


def _share_cores_among_workers() -> None:
    """`pytest -n N` runs N worker processes on the machine's cores: each one's BLAS and OpenMP pools get its
    share of them (one thread each on two cores), here and in the processes its tests start, instead of a
    pool per core in every worker (two 2-thread pools on 2 cores slow batched small solves 10-20x)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= 1:
        return
    from threadpoolctl import threadpool_limits

    threads = max(1, (os.cpu_count() or 1) // workers)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))
    # a report's sweeps in the worker itself: the other workers have the other cores
    os.environ.setdefault("REFEREE_REPORT_JOBS", "1")
    threadpool_limits(limits=threads)


_share_cores_among_workers()


def shared_file(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test when the shared folder is absent."""
    path = SHARED.joinpath("data", *parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set REFEREE_SHARED)")
    return path


VALID = {
    "scenario": "haggling_0",
    "repetition_idx": "0",
    "focal_agent": "alpha_agent",
    "background_agent": "rational_agent",
    "focal_per_capita_score": 2.0,
    "background_per_capita_score": 5.0,
    "ungrouped_per_capita_score": 2.75,
    "simulation_outcome": {"resident_scores": {"Ann": 1.0, "Ben": 3.0, "Cat": 2.0},
                           "visitor_scores": {"Dov": 5.0}, "metadata": {}},
    "focal_is_resident": True,
    "api_type": "test",
    "model": "m",
    "embedder": "e",
    "disable_language_model": False,
    "exclude_from_elo_calculation": False,
}


@pytest.fixture
def record():
    """A factory of valid Concordia ScenarioResult dicts, with keyword overrides."""

    def make(**overrides):
        rec = copy.deepcopy(VALID)
        rec.update(overrides)
        return rec

    return make


def write_json(path: Path, doc, raw: str | None = None) -> Path:
    """Write `doc` as JSON (or `raw` text verbatim) to `path`, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw if raw is not None else json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path):
    """An empty store in a temporary folder."""
    with Store(tmp_path / "test.duckdb") as s:
        yield s


@pytest.fixture(scope="session")
def contest():
    """The shipped 2024 contest catalogue."""
    return load_catalogue(CONTEST_2024)


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory):
    """Path of a store holding every bundled sample (read-only use)."""
    from referee.reporting import SAMPLES

    path = tmp_path_factory.mktemp("samples") / "samples.duckdb"
    with Store(path) as s:
        for logs, catalogue in SAMPLES:
            s.ingest([logs], catalogue=catalogue)
    return path


@pytest.fixture
def checked_figures(monkeypatch):
    """Every figure a results folder saves, checked as it is saved (`tests.figure_checks.figure_problems`):
    returns the dict it fills, figure name -> problems (an empty list when the figure reads well)."""
    from referee.present.outputs import ResultsFolder
    from tests.figure_checks import figure_problems

    problems: dict[str, list[str]] = {}
    save = ResultsFolder.figure

    def figure(self, name, fig, *args, **kwargs):
        problems[name] = figure_problems(fig)
        return save(self, name, fig, *args, **kwargs)

    monkeypatch.setattr(ResultsFolder, "figure", figure)
    return problems



def runner_python(name: str) -> Path:
    """The Python of a runner played in a venv of its own (Makefile RUNNER_ENVS: `make runners` builds them from
    requirements/runners/NAME.txt; `make test` does so first). Missing, the test fails and says how to build it:
    these tests are not optional."""
    python = REPO / ".cache" / "runners" / name / "bin" / "python"
    if not (python.parent.parent / ".installed").exists():
        pytest.fail(f"the {name} runner's venv is missing at {python.parent.parent}: run `make runners`")
    return python


def play_runner(name: str, script: str, out: Path, timeout: float = 600) -> Path:
    """Run tests/runner_play/SCRIPT with runner `name`'s own Python, writing its output under `out`; fails the
    test with the script's output when it does not finish cleanly."""
    import subprocess

    done = subprocess.run([str(runner_python(name)), str(REPO / "tests" / "runner_play" / script), str(out)],
                          capture_output=True, text=True, timeout=timeout, cwd=out.parent,
                          env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")})
    if done.returncode != 0:
        pytest.fail(f"{script} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return out


def forfeit_written_over(replay: dict) -> dict:
    """A test-forfeit copy as Kaggle made its markov_soccer and oshi_zumo ones (visualizer/default/replays/
    test-forfeit-replay.json beside test-replay.json): the same steps, info and actionHistory, only the winner's
    last action replaced by the LLM harness's forfeit and the rewards swapped; its info.actionApplied still names
    the real move and its final observation still says the winner won."""
    import json

    copy = json.loads(json.dumps(replay))
    last = copy["steps"][-1]
    rewards = [seat["reward"] for seat in last]
    winner = rewards.index(max(rewards))
    last[winner]["action"] = {"submission": -1, "actionString": "<illegal>",
                              "thoughts": "I ran out of legal options and could not produce a valid move.",
                              "status": "Failed to parse a legal move after 5 attempts; forfeiting."}
    for seat, reward in zip(last, rewards):
        seat["reward"] = -reward
    if "rewards" in copy:
        copy["rewards"] = [-r for r in rewards]
    return copy


def ingest_beside(tmp_path: Path, copy: dict, replay: dict, capsys) -> tuple[Path, dict]:
    """A forfeit copy written as test-forfeit-replay.json beside its replay (test-replay.json, which sorts after
    it, as in Kaggle's visualizer folders), ingested with no options: (the store, the ingest's JSON summary)."""
    import json

    from referee.cli import main

    logs = tmp_path / "replays"
    logs.mkdir()
    (logs / "test-forfeit-replay.json").write_text(json.dumps(copy), encoding="utf-8")
    (logs / "test-replay.json").write_text(json.dumps(replay), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--store", str(db), "--json"]) == 0
    return db, json.loads(capsys.readouterr().out)


def pytest_configure(config):
    config.addinivalue_line("markers", "runners: plays real games with an installed runner (TextArena in referee's "
                                       "venv; Kaggle Environments and clemcore in their own, `make runners`)")
    config.addinivalue_line("markers", "bayes: fits a model by MCMC; `--seeds N` reruns it under N more sampler "
                                       "seeds and BLAS thread counts")
    config.addinivalue_line("markers", "seeds: a rerun of a Bayesian test under another sampler seed (`--seeds N`)")
    config.addinivalue_line("markers", "heavy: validation `make test` leaves to `make test-all`: the simulation-based "
                                       "calibration of every model but bayes-bt, the contest notebook, the layout "
                                       "recoveries, the outcome models' crossed ladder, the paper fits, the "
                                       "either-door file comparison and the non-editable install")


# --------------------------------------------------------------------------------------------- seed sweep (issue 53)
SEED_STEP = 7919  # a sampler seed shift: the k-th rerun draws with seed + k * SEED_STEP


def pytest_addoption(parser):
    parser.addoption("--seeds", type=int, default=0, metavar="N",
                     help="rerun every test marked bayes under N more sampler seeds (seed + k*7919, k = 1..N), with "
                          "1 or 2 BLAS threads in turn: a stand-in for other machines, whose last bits differ; select "
                          "the reruns alone with -m seeds")


def pytest_generate_tests(metafunc):
    n = metafunc.config.getoption("seeds")
    if n and metafunc.definition.get_closest_marker("bayes") is not None:
        metafunc.fixturenames.append("seed_k")
        metafunc.parametrize("seed_k", [pytest.param(0, id="own-seed")] + [
            pytest.param(k, id=f"seed+{k}", marks=pytest.mark.seeds) for k in range(1, n + 1)])


@pytest.fixture(autouse=True)
def seed_shift(request, monkeypatch):
    """Shift every sampler seed of the test by k * SEED_STEP and run its BLAS with k % 2 + 1 threads (k, the
    test's `seed_k` parameter under `--seeds`; 0, or no parameter: the test as written)."""
    callspec = getattr(request.node, "callspec", None)
    k = callspec.params.get("seed_k", 0) if callspec is not None else 0
    if not k:
        yield 0
        return
    from threadpoolctl import threadpool_limits

    from referee.models import compiled

    for name in ("sample_nutpie", "sample_pymc"):
        original = getattr(compiled, name)

        def shifted(model, draws, tune, chains, seed, *args, _original=original):
            return _original(model, draws, tune, chains, seed + k * SEED_STEP, *args)

        monkeypatch.setattr(compiled, name, shifted)
    with threadpool_limits(limits=k % 2 + 1):
        yield k
