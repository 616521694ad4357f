"""Game-theoretic evaluation (referee.models.game_theory): Nash averaging, alpha-Rank and the cyclic share,
checked against closed forms (rock-paper-scissors' uniform equilibrium, a dominated agent's zero mass), their
defining invariance (copies of an agent leave Nash-averaged skills unchanged while Elo moves), OpenSpiel's own
alpha-Rank (run in the kaggle runner venv, which carries open_spiel), and the command line."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pandas as pd
import pytest

from referee.cli import main
from referee.io.store import Store
from referee.models.game_theory import alpha_rank, cyclic_share, nash_average, payoff_table
from referee.models.ratings.bradley_terry import fit_bt, pair_counts, to_elo
from conftest import REPO, runner_python

BEATS = {("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")}


def _rps(a: str, b: str) -> float:
    """P(a beats b): rock-paper-scissors by each name's base (copies 'rock#2' play as rock); 'dud' loses to all."""
    a, b = a.split("#")[0], b.split("#")[0]
    if a == b:
        return 0.5
    if "dud" in (a, b):
        return 0.0 if a == "dud" else 1.0
    return 1.0 if (a, b) in BEATS else 0.0


def _tournament(win, agents, per_pair=20, seed=0) -> pd.DataFrame:
    """`per_pair` comparisons of every pair; an even pair (0.5) is a tie, otherwise a draw from win(a, b)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, a in enumerate(agents):
        for b in agents[i + 1:]:
            p = win(a, b)
            for k in range(per_pair):
                outcome = 0.5 if p == 0.5 else float(rng.random() < p)
                rows.append({"a": a, "b": b, "outcome": outcome, "cluster": f"{a}|{b}|{k}"})
    return pd.DataFrame(rows)


def _nash(comparisons):
    game = payoff_table(comparisons)
    found = nash_average(game.log_odds, game.agents)
    return dict(zip(found.agents, found.mass)), dict(zip(found.agents, found.skill))


def _elo(comparisons) -> dict[str, float]:
    agents = sorted(set(comparisons["a"]) | set(comparisons["b"]))
    index = {a: k for k, a in enumerate(agents)}
    wins = pair_counts(comparisons["a"].map(index).to_numpy(), comparisons["b"].map(index).to_numpy(),
                       comparisons["outcome"].to_numpy(), len(agents))
    return dict(zip(agents, to_elo(fit_bt(wins, agents, prior_sd=2.0).theta)))


def test_rock_paper_scissors_and_a_dominated_agent():
    mass, skill = _nash(_tournament(_rps, ["rock", "paper", "scissors", "dud"]))
    for a in ("rock", "paper", "scissors"):
        assert mass[a] == pytest.approx(1 / 3, abs=1e-4)
    assert mass["dud"] < 1e-6 and min(skill, key=skill.get) == "dud"


def test_copies_of_an_agent_leave_the_others_nash_skills_unchanged_while_their_elo_moves():
    base = ["rock", "paper", "scissors", "dud"]
    _, before = _nash(_tournament(_rps, base))
    mass, after = _nash(_tournament(_rps, base + ["rock#2", "rock#3"]))
    for a in ("paper", "scissors", "dud"):
        assert abs(after[a] - before[a]) < 0.02
    assert sum(mass[a] for a in ("rock", "rock#2", "rock#3")) == pytest.approx(1 / 3, abs=1e-3)
    elo_before, elo_after = _elo(_tournament(_rps, base)), _elo(_tournament(_rps, base + ["rock#2", "rock#3"]))
    moved = {a: elo_after[a] - elo_after["dud"] - (elo_before[a] - elo_before["dud"]) for a in ("paper", "scissors")}
    assert max(abs(v) for v in moved.values()) > 20, moved  # paper gains by beating more rocks; Elo is not invariant


def test_alpha_rank_and_nash_on_a_cycle_and_on_a_ranking():
    assert alpha_rank(payoff_table(_tournament(_rps, ["rock", "paper", "scissors"])).wins) == pytest.approx(
        [1 / 3] * 3, abs=1e-9)
    skill = np.linspace(1.5, -1.5, 6)
    names = [f"a{k}" for k in range(6)]
    ranked = _tournament(lambda a, b: 1 / (1 + np.exp(-(skill[int(a[1])] - skill[int(b[1])]))), names, 60, seed=1)
    game = payoff_table(ranked)
    assert alpha_rank(game.wins)[0] > 0.5
    assert nash_average(game.log_odds, game.agents).mass[0] > 0.9
    assert cyclic_share(game.log_odds) < 0.1
    assert cyclic_share(payoff_table(_tournament(_rps, ["rock", "paper", "scissors"])).log_odds) > 0.99


def test_pairs_that_never_met_are_filled_from_bradley_terry_and_flagged():
    skill = {"a": 1.0, "b": 0.3, "c": -0.3, "d": -1.0}
    comparisons = _tournament(lambda x, y: 1 / (1 + np.exp(-(skill[x] - skill[y]))), list(skill), 40, seed=2)
    comparisons = comparisons[~((comparisons["a"] == "a") & (comparisons["b"] == "d"))]
    game = payoff_table(comparisons)
    frame = game.frame().set_index(["agent", "opponent"])
    assert frame.loc[("a", "d"), "filled"] and frame.loc[("d", "a"), "filled"] and frame["filled"].sum() == 2
    assert frame.loc[("a", "d"), "comparisons"] == 0 and frame.loc[("a", "d"), "win_rate"] > 0.7  # not 0.5
    assert game.notes and "never met" in game.notes[0]


@pytest.mark.runners
def test_alpha_rank_reproduces_openspiels(tmp_path):
    """OpenSpiel's alpharank.compute (open_spiel 2.0.1, in the kaggle runner venv) on its rock-paper-scissors,
    a biased rock-paper-scissors and random tables, with and without its local selection model."""
    rng = np.random.default_rng(0)
    tables = [[[0, -1, 1], [1, 0, -1], [-1, 1, 0]], [[0, -0.5, 1], [0.5, 0, -0.1], [-1, 0.1, 0]],
              rng.random((5, 5)).tolist(), rng.random((4, 4)).tolist()]
    cases = [{"M": t, "m": 50, "alpha": a, "local": local} for t in tables for local in (True, False)
             for a in (0.5, 10, 100)]
    script = tmp_path / "openspiel_alpharank.py"
    script.write_text(
        "import json, sys, types\n"
        "import numpy as np\n"
        "sys.modules['open_spiel.python.egt.alpharank_visualizer'] = types.ModuleType('v')  # needs networkx\n"
        "from open_spiel.python.egt import alpharank\n"
        "out = [list(map(float, alpharank.compute([np.array(c['M'])], m=c['m'], alpha=c['alpha'],\n"
        "        use_local_selection_model=c['local'])[2])) for c in json.loads(sys.stdin.read())]\n"
        "print(json.dumps(out))\n")
    done = subprocess.run([str(runner_python("kaggle")), str(script)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    for case, pi in zip(cases, theirs):
        assert alpha_rank(np.array(case["M"]), case["alpha"], case["m"], case["local"]) == pytest.approx(pi, abs=1e-9)


def _store_of(comparisons: pd.DataFrame, path) -> None:
    rows = []
    for k, c in enumerate(comparisons.itertuples()):
        score_a = {1.0: 1.0, 0.0: 0.0, 0.5: 0.5}[c.outcome]
        rows += [{"match": f"m{k}", "agent": c.a, "score": score_a}, {"match": f"m{k}", "agent": c.b, "score": 1 - score_a}]
    csv = path.parent / "results.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    assert main(["ingest", str(csv), "--store", str(path)]) == 0


def test_rank_by_nash_and_alpha_rank_from_the_command_line(tmp_path, capsys):
    comparisons = _tournament(_rps, ["rock", "paper", "scissors", "dud"])
    lonely = pd.DataFrame([{"a": "x", "b": "y", "outcome": float(k % 3 == 0), "cluster": f"xy{k}"} for k in range(9)])
    store = tmp_path / "s.duckdb"
    _store_of(pd.concat([comparisons, lonely], ignore_index=True), store)
    assert main(["rank", "--store", str(store), "--method", "nash", "--bootstrap", "50", "--out", str(tmp_path / "n")]) == 0
    said = capsys.readouterr().out
    table = pd.read_csv(tmp_path / "n" / "rankings.csv")
    assert list(table.columns[:4]) == ["agent", "rank", "score", "mass"]
    first = table[table["component"] == 1].set_index("agent")
    assert first.loc[["rock", "paper", "scissors"], "mass"].tolist() == pytest.approx([1 / 3] * 3, abs=1e-3)
    assert first.loc["dud", "rank"] == 4 and set(table.loc[table["component"] == 2, "agent"]) == {"x", "y"}
    assert "split into 2 groups" in said and "cyclic share 0.50" in said and "paper > rock > scissors" in said
    cyclic = pd.read_csv(tmp_path / "n" / "intransitivity.csv")
    assert cyclic.loc[0, "cyclic_triads"] == 1 and cyclic.loc[0, "lower"] <= 0.5 <= cyclic.loc[0, "upper"]
    assert main(["rank", "--store", str(store), "--method", "alpha-rank", "--out", str(tmp_path / "a")]) == 0
    alpha = pd.read_csv(tmp_path / "a" / "rankings.csv")
    assert alpha.groupby("component")["mass"].sum().tolist() == pytest.approx([1.0, 1.0])
    with Store(store, read_only=True) as s:
        assert s.info()["matches"] == len(comparisons) + len(lonely)
