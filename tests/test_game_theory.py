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
from referee.models.alpha_rank import alpha_rank, alpha_rank_populations
from referee.models.game_theory import agent_task_nash, cyclic_share, nash_average, payoff_table
from referee.run.ratings.game_theory import game_ranking, task_ranking
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


def test_the_cyclic_share_against_what_noise_makes_of_one_axis():
    """A Bradley-Terry tournament's cyclic share is inside the range that one-axis games with the same
    comparisons reach by chance; rock-paper-scissors-lizard-Spock at 80 % is far outside it."""
    skill = np.linspace(1.0, -1.0, 6)
    names = [f"a{k}" for k in range(6)]
    ranked = game_ranking(_tournament(lambda a, b: 1 / (1 + np.exp(-(skill[int(a[1])] - skill[int(b[1])]))), names,
                                      15, seed=4), "nash").cyclic.iloc[0]
    assert ranked.chance_lower <= ranked.cyclic_share <= ranked.chance_upper and ranked.chance_p > 0.05
    five = ["rock", "paper", "scissors", "lizard", "spock"]
    beats = BEATS | {("rock", "lizard"), ("lizard", "spock"), ("spock", "scissors"), ("scissors", "lizard"),
                     ("lizard", "paper"), ("paper", "spock"), ("spock", "rock")}
    cyclic = game_ranking(_tournament(lambda a, b: 0.8 if (a, b) in beats else 0.2, five, 20, seed=5), "nash")
    row = cyclic.cyclic.iloc[0]
    assert row.cyclic_share > 0.8 and row.chance_p < 0.01 and row.cyclic_triads == len(cyclic.cycles) > 0
    first = cyclic.cycles.iloc[0]
    assert ((first["first"], first["second"]) in beats and (first["second"], first["third"]) in beats
            and (first["third"], first["first"]) in beats)
    assert cyclic.cycles["strength"].is_monotonic_decreasing


def test_the_one_axis_report_section_names_the_disagreement_and_draws_the_cycles():
    from referee.present.report import one_axis_section

    comparisons = _tournament(_rps, ["rock", "paper", "scissors", "dud"], 30)
    nash = game_ranking(comparisons, "nash", bootstrap=40)
    alpha = game_ranking(comparisons, "alpha-rank")
    elo = pd.DataFrame({"agent": ["rock", "paper", "scissors", "dud"], "rank": [1, 2, 3, 4]})
    section = one_axis_section("rps", elo, nash, alpha)
    text = " ".join(section.text)
    assert "more than noise" in text and "paper > rock > scissors" in text
    assert ("They disagree on the first place: Elo puts rock first; Nash averaging puts paper, rock, scissors "
            "first") in text
    # a method that ranks nobody first is left out of the sentence, never printed empty ("Elo ;")
    nobody = one_axis_section("rps", elo.assign(rank=elo["rank"] + 1), nash, alpha)
    said = " ".join(nobody.text)
    assert "Elo puts" not in said and "Elo ;" not in said and "Nash averaging puts paper, rock, scissors first" in said
    table = section.tables[0][1].set_index("agent")
    assert table.loc["scissors", "spread"] == 2 and table.loc["dud", "nash_rank"] == 4
    assert len(section.figures) == 1


def test_pairs_that_never_met_are_filled_from_bradley_terry_and_flagged():
    skill = {"a": 1.0, "b": 0.3, "c": -0.3, "d": -1.0}
    comparisons = _tournament(lambda x, y: 1 / (1 + np.exp(-(skill[x] - skill[y]))), list(skill), 40, seed=2)
    comparisons = comparisons[~((comparisons["a"] == "a") & (comparisons["b"] == "d"))]
    game = payoff_table(comparisons)
    frame = game.frame().set_index(["agent", "opponent"])
    assert frame.loc[("a", "d"), "filled"] and frame.loc[("d", "a"), "filled"] and frame["filled"].sum() == 2
    assert frame.loc[("a", "d"), "comparisons"] == 0 and frame.loc[("a", "d"), "win_rate"] > 0.7  # not 0.5
    assert game.notes and "never met" in game.notes[0]


def _openspiel(cases: list[dict], tmp_path) -> list:
    """OpenSpiel's alpharank.compute (open_spiel 2.0.1, in the kaggle runner venv) on each case (tables: the
    payoff tables, one per population; m, alpha, local), its stationary distribution over profiles, or the
    message of its ValueError when the chain has several."""
    script = tmp_path / "openspiel_alpharank.py"
    script.write_text(
        "import json, sys, types\n"
        "import numpy as np\n"
        "sys.modules['open_spiel.python.egt.alpharank_visualizer'] = types.ModuleType('v')  # needs networkx\n"
        "from open_spiel.python.egt import alpharank\n"
        "def pi(c):\n"
        "    try:\n"
        "        return list(map(float, alpharank.compute([np.array(t) for t in c['tables']], m=c['m'],\n"
        "                    alpha=c['alpha'], use_local_selection_model=c['local'])[2]))\n"
        "    except ValueError as e:  # several stationary distributions\n"
        "        return str(e)\n"
        "print(json.dumps([pi(c) for c in json.loads(sys.stdin.read())]))\n")
    done = subprocess.run([str(runner_python("kaggle")), str(script)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.runners
def test_alpha_rank_reproduces_openspiels(tmp_path):
    """Single population: OpenSpiel's rock-paper-scissors, a biased rock-paper-scissors and random tables, with
    and without its local selection model. Several populations: its battle of the sexes and random two- and
    three-population games (OpenSpiel's profiles in row-major order)."""
    rng = np.random.default_rng(0)
    tables = [[[0, -1, 1], [1, 0, -1], [-1, 1, 0]], [[0, -0.5, 1], [0.5, 0, -0.1], [-1, 0.1, 0]],
              rng.random((5, 5)).tolist(), rng.random((4, 4)).tolist()]
    cases = [{"tables": [t], "m": 50, "alpha": a, "local": local} for t in tables for local in (True, False)
             for a in (0.5, 10, 100)]
    for case, pi in zip(cases, _openspiel(cases, tmp_path)):
        assert alpha_rank(np.array(case["tables"][0]), case["alpha"], case["m"], case["local"]) == pytest.approx(
            pi, abs=1e-9)
    sexes = [[[3, 0], [0, 2]], [[2, 0], [0, 3]]]
    games = [sexes, [rng.random((3, 4)).tolist() for _ in range(2)], [rng.random((2, 3, 2)).tolist() for _ in range(3)]]
    cases = [{"tables": g, "m": m, "alpha": a, "local": True} for g in games for a in (0.1, 0.5, 5, 100)
             for m in (5, 50)]
    theirs = _openspiel(cases, tmp_path)
    assert 0 < sum(isinstance(pi, str) for pi in theirs) < len(cases) / 2
    for case, pi in zip(cases, theirs):
        if isinstance(pi, str):  # OpenSpiel refuses a chain with two absorbing profiles: so do we
            with pytest.raises(ValueError, match="absorbing sets"):
                alpha_rank_populations(case["tables"], case["alpha"], case["m"])
            continue
        ours, marginals = alpha_rank_populations(case["tables"], case["alpha"], case["m"])
        assert ours.ravel() == pytest.approx(pi, abs=1e-9)
        assert [float(s.sum()) for s in marginals] == pytest.approx([1.0] * len(case["tables"]))


def test_multi_population_alpha_rank_finds_a_dominant_profile():
    """Population 1's first strategy dominates, and population 2's best reply to it is its second: the
    stationary mass gathers on that profile (closed form: the only sink of the response graph)."""
    first = np.array([[1.0, 0.9, 0.8], [0.2, 0.1, 0.3]])
    second = np.array([[0.0, 1.0, 0.5], [0.5, 0.0, 1.0]])
    pi, (rows, columns) = alpha_rank_populations([first, second], alpha=100, m=50)
    assert pi[0, 1] > 0.99 and rows[0] > 0.99 and columns[1] > 0.99
    with pytest.raises(ValueError, match="one table per population"):
        alpha_rank_populations([first], alpha=1)


def test_agent_vs_task_nash_closed_form_and_copies_of_a_task():
    """Two specialists on two tasks play matching pennies (unique equilibrium: one half each, skill 1/2); a
    generalist scoring 0.2 everywhere is dominated (mass 0, skill 0.2); a task everyone solves gets no mass.
    Copying a task leaves every agent's Nash skill unchanged while its plain mean score moves."""
    s = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.2, 0.2, 1.0]])
    found = agent_task_nash(s, ["x_expert", "y_expert", "generalist"], ["x", "y", "easy"])
    assert found.agent_mass == pytest.approx([0.5, 0.5, 0.0], abs=1e-6)
    assert found.task_mass == pytest.approx([0.5, 0.5, 0.0], abs=1e-6)
    assert found.skill == pytest.approx([0.5, 0.5, 0.2], abs=1e-6) and found.value == pytest.approx(0.5)
    copied = agent_task_nash(s[:, [0, 0, 0, 1, 2]], found.agents, ["x", "x2", "x3", "y", "easy"])
    assert np.abs(copied.skill - found.skill).max() < 0.02
    assert copied.task_mass[:3].sum() == pytest.approx(0.5, abs=1e-4)
    assert abs(s[:, [0, 0, 0, 1, 2]].mean(axis=1)[0] - s.mean(axis=1)[0]) > 0.1  # the mean is not invariant
    with pytest.raises(ValueError, match="missing cells"):
        agent_task_nash(np.array([[1.0, np.nan], [0.0, 1.0]]), ["a", "b"], ["x", "y"])


def _task_scores(seed: int = 3, repeats: int = 6) -> pd.DataFrame:
    """Normalised scores of three agents on four scenarios with known means, `repeats` matches per scenario."""
    means = {"x_expert": [0.9, 0.1, 0.6, 0.9], "y_expert": [0.1, 0.9, 0.6, 0.9], "weak": [0.3, 0.3, 0.5, 0.9]}
    rng = np.random.default_rng(seed)
    rows = [{"match_id": f"{t}-{r}", "scenario": t, "agent": a, "score_norm": float(np.clip(mu[k] + rng.normal(0, 0.03), 0, 1))}
            for k, t in enumerate(["x", "y", "both", "easy"]) for r in range(repeats) for a, mu in means.items()]
    return pd.DataFrame(rows)


def test_task_ranking_of_normalised_scores():
    found = task_ranking(_task_scores(), "nash", bootstrap=40)
    table = found.table.set_index("agent")
    assert table.loc["weak", "rank"] == 3 and table.loc["weak", "mass"] < 1e-3
    tasks = found.tasks.set_index("scenario")
    assert tasks.loc[["x", "y"], "mass"].sum() > 0.99  # the scenarios hardest for the strongest carry the game
    assert table.loc[["x_expert", "y_expert"], "score"].to_numpy() == pytest.approx([0.5, 0.5], abs=0.05)
    assert (table["lower"] <= table["score"]).all() and (table["score"] <= table["upper"]).all()
    # the skill is the score against the scenario equilibrium, recomputed from the payoffs written
    payoffs = found.payoffs.pivot(index="agent", columns="scenario", values="score")
    expected = payoffs[tasks.index].to_numpy() @ tasks["mass"].to_numpy()
    assert table.loc[payoffs.index, "score"].to_numpy() == pytest.approx(expected, abs=1e-9)
    sparse = _task_scores()
    sparse = sparse[~((sparse["agent"] == "weak") & (sparse["scenario"] == "x"))]
    held = task_ranking(sparse, "alpha-rank")
    assert held.payoffs["filled"].sum() == 1 and any("never played" in n for n in held.notes)
    cell = held.payoffs.set_index(["agent", "scenario"])
    assert cell.loc[("weak", "x"), "matches"] == 0 and cell.loc[("weak", "y"), "matches"] == 6
    assert held.table["mass"].sum() == pytest.approx(1.0) and held.tasks["mass"].sum() == pytest.approx(1.0)


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
    lonely = pd.DataFrame([{"a": "x", "b": "y", "outcome": float(k % 3 == 0), "cluster": f"xy{k}"} for k in range(12)])
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


def test_rank_against_scenarios_and_the_alpha_sweep_from_the_command_line(tmp_path, capsys):
    sample = REPO / "data" / "sample" / "concordia"
    store = tmp_path / "c.duckdb"
    assert main(["ingest", str(sample / "logs"), "--catalogue", str(sample / "catalogue.toml"), "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["rank", "--store", str(store), "--method", "nash", "--against", "scenarios", "--bootstrap", "30",
                 "--out", str(tmp_path / "t")]) == 0
    said = capsys.readouterr().out
    ranked = pd.read_csv(tmp_path / "t" / "rankings.csv").set_index("agent")
    tasks = pd.read_csv(tmp_path / "t" / "scenarios.csv").set_index("scenario")
    payoffs = pd.read_csv(tmp_path / "t" / "payoffs.csv").pivot(index="agent", columns="scenario", values="score")
    assert ranked["mass"].sum() == pytest.approx(1) and tasks["mass"].sum() == pytest.approx(1)
    assert ranked.loc[payoffs.index, "score"].to_numpy() == pytest.approx(
        payoffs[tasks.index].to_numpy() @ tasks["mass"].to_numpy(), abs=1e-6)
    assert "scenarios (score: expected normalised score" in said
    assert main(["rank", "--store", str(store), "--method", "alpha-rank", "--out", str(tmp_path / "s")]) == 0
    said = capsys.readouterr().out
    sweep = pd.read_csv(tmp_path / "s" / "alpha_sweep.csv")
    assert sorted(sweep["alpha"].unique()) == [0.1, 1.0, 10.0, 100.0] and "by ranking intensity alpha" in said
    assert sweep.groupby(["component", "alpha"])["mass"].sum().to_numpy() == pytest.approx(1.0)
    at_100 = sweep[sweep["alpha"] == 100].set_index("agent")["mass"]
    ranking = pd.read_csv(tmp_path / "s" / "rankings.csv").set_index("agent")["mass"]
    assert at_100[ranking.index].to_numpy() == pytest.approx(ranking.to_numpy())


def test_entropy_over_best_replies_equals_entropy_over_every_strategy():
    """The maximum-entropy equilibrium is sought among the best replies to the dual's equilibrium only (the
    fast path); on random antisymmetric games with many equilibria it matches SLSQP over every strategy."""
    from scipy.optimize import linprog

    from referee.models.game_theory import _max_entropy, _minimiser

    rng = np.random.default_rng(7)
    for _ in range(12):
        n = int(rng.integers(4, 9))
        base = np.sign(rng.normal(size=(n, n))) * rng.integers(0, 2, size=(n, n))  # ties make equilibria many
        a = np.triu(base, 1) - np.triu(base, 1).T
        fast, value = _minimiser(a)
        # the second method: SLSQP over every strategy, started from the plain LP's equilibrium (not from `fast`)
        lp = linprog(np.r_[np.zeros(n), 1.0], A_ub=np.c_[a, -np.ones(n)], b_ub=np.zeros(n),
                     A_eq=np.r_[np.ones(n), 0.0][None, :], b_eq=[1.0], bounds=[(0, 1)] * n + [(None, None)])
        slow = _max_entropy(a, lp.x[:n], 1e-9)
        entropy = lambda p: -np.sum(p[p > 0] * np.log(p[p > 0]))  # noqa: E731
        assert value == pytest.approx(0, abs=1e-9) and np.max(a @ fast) <= 1e-6
        assert entropy(fast) == pytest.approx(entropy(slow), abs=1e-5) and np.abs(fast - slow).max() < 1e-3


def test_agents_below_the_minimum_are_set_apart_and_every_ranked_mass_carries_its_status():
    """A newcomer that won its 3 matches would take Nash mass from the established agents: it is set apart
    with its status unless asked (min_games 1), and then gets no bootstrap interval."""
    skill = {"a": 1.0, "b": 0.3, "c": -0.3, "d": -1.0}
    comparisons = _tournament(lambda x, y: 1 / (1 + np.exp(-(skill[x] - skill[y]))), list(skill), 30, seed=7)
    rare = pd.DataFrame({"a": "new", "b": ["a", "b", "c"], "outcome": 1.0, "cluster": ["n1", "n2", "n3"]})
    both = pd.concat([comparisons, rare], ignore_index=True)
    without = game_ranking(comparisons, "nash")
    found = game_ranking(both, "nash", bootstrap=40)
    assert "new" not in set(found.table["agent"])
    apart = found.not_ranked.set_index("agent")
    assert apart.loc["new", "matches"] == 3 and apart.loc["new", "status"].startswith("provisional")
    from referee.run.ratings.ratings import rate

    rated = rate(both.assign(game="g", kind="match", communication=None, time=None), "bt").table().set_index("agent")["status"]  # the same status as every rating table
    assert found.table.set_index("agent")["status"].equals(rated.drop("new").reindex(found.table["agent"]))
    assert (found.table["matches"] >= 10).all()
    # set apart, the newcomer leaves the others' masses as they were without it
    assert np.allclose(found.table.set_index("agent")["mass"], without.table.set_index("agent")["mass"])
    asked = game_ranking(both, "nash", bootstrap=40, min_games=1).table.set_index("agent")
    assert asked.loc["new", "status"].startswith("provisional") and np.isnan(asked.loc["new", "lower"])
    assert asked["lower"].drop("new").notna().all()
