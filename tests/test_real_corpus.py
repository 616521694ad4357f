"""Real runner output, as the runners wrote it (issue 45): every folder of ../shared/data/real/ ingests with exit 0,
and what referee stored equals the files' own numbers, checked here against the files themselves (parsed with
the standard library, not referee's readers) and, for clembench, against clem's own results table.

Records set aside must be set aside for a reason the source would agree with; each one allowed is named in
ALLOWED below. Skipped, with the reason, where ../shared is absent (a fresh clone has none)."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import referee
from referee.cli import main
from referee.io.store import Store
from referee.io.loaders.clem_table import clem_episodes, clem_results
from referee.prepare.comparisons import comparisons_and_agents

from conftest import shared_file

# (folder, reason) -> why the source agrees that the record cannot be stored as a match of its own
ALLOWED = {
    ("concordia-results-appended", "repeated record"): "a rerun appended to test5 and test6 repeats records of the "
                                                       "first array unchanged: each is stored once",
    ("inspect", "duplicate match id"): "log_formats.json and log_formats.eval are one eval written in both of "
                                       "Inspect's formats: the same eval_id and samples",
}


def _ingest(folder: str, tmp_path: Path, capsys) -> tuple[Store, dict]:
    root = shared_file("real", folder)
    db = tmp_path / f"{folder}.duckdb"
    code = main(["ingest", str(root), "--store", str(db), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    for reason in out["by_reason"]:
        assert (folder, reason) in ALLOWED, f"{folder}: records set aside as {reason!r}"
    return Store(db, read_only=True), out


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_concordia_1_8_0_results_are_read_with_their_per_capita_scores(tmp_path, capsys):
    store, out = _ingest("concordia-1.8.0", tmp_path, capsys)
    files = sorted(shared_file("real", "concordia-1.8.0").glob("*.json"))
    assert out["read"] == out["accepted"] == len(files) == 11
    with store:
        matches, results = store.table("matches"), store.table("results")
    assert set(results.loc[results["group"] == "focal", "agent"]) == {"observe_recall_prompt_agent"}
    for f in files:
        doc = _json(f)
        match = matches[matches["scenario"] == doc["scenario"]]
        assert len(match) == 1 and match["repetition"].iloc[0] == "mean"
        rows = results[results["match_id"] == match["match_id"].iloc[0]].set_index("group")
        assert rows.loc["focal", "score"] == doc["focal_per_capita_score"]
        assert rows.loc["background", "score"] == doc["background_per_capita_score"]
        assert rows.loc["background", "agent"] == doc["background_agent"]
    games = dict(zip(matches["scenario"], matches["game"]))
    assert games["labor_collective_action__rational_boss_0"] == "labor_collective_action"  # Concordia 1.8.0's list
    assert games["pub_coordination_friendships_0"] == "pub_coordination"
    # alone, the files name one focal agent: nothing to compare it with, and both front doors say so
    agents = {_json(f)["focal_agent"] for f in files}
    with Store(tmp_path / "concordia-1.8.0.duckdb", read_only=True) as again:
        with pytest.raises(ValueError, match=rf"one such agent \({agents.pop()}\)"):
            referee.ratings(again)


def test_concordia_1_8_0_files_rate_their_agent_as_concordias_own_elo_compares_them(tmp_path, capsys):
    """Beside a second agent's results of the same shape (made here from the real ones), the real agent is
    rated, and each comparison is Concordia's own rule (calculate_ratings.py): the two focal per-capita scores
    of one scenario, the higher wins."""
    real = shared_file("real", "concordia-1.8.0")
    other = tmp_path / "other"
    other.mkdir()
    truth = {}
    for i, f in enumerate(sorted(real.glob("*.json"))):
        doc = _json(f)
        doc["focal_agent"] = "made_up_agent"
        doc["focal_per_capita_score"] = doc["focal_per_capita_score"] + (1.0 if i % 3 == 0 else -0.5)
        doc["ungrouped_per_capita_score"] = None
        truth[doc["scenario"]] = (_json(f)["focal_per_capita_score"], doc["focal_per_capita_score"])
        (other / f.name).write_text(json.dumps(doc))
    db = tmp_path / "both.duckdb"
    assert main(["ingest", str(real), str(other), "--store", str(db)]) == 0
    capsys.readouterr()
    with Store(db, read_only=True) as store:
        comparisons, agents = comparisons_and_agents(store.table("matches"), store.table("results"))
    assert {"observe_recall_prompt_agent", "made_up_agent"} <= set(agents)
    pairs = comparisons[comparisons[["a", "b"]].isin(["observe_recall_prompt_agent", "made_up_agent"]).all(axis=1)]
    assert len(pairs) == len(truth)
    wins = sum((p["outcome"] == 1.0) == (p["a"] == "observe_recall_prompt_agent") for _, p in pairs.iterrows())
    expected = sum(real_score > made for real_score, made in truth.values())
    assert wins == expected
    code = main(["ratings", "--store", str(db), "--method", "bt", "--out", str(tmp_path / "r"), "--json"])
    capsys.readouterr()
    assert code == 0
    table = pd.read_csv(tmp_path / "r" / "ratings.csv").set_index("agent")
    assert math.isfinite(table.loc["observe_recall_prompt_agent", "rating"])


def test_gtbench_runs_are_read_as_gtbench_writes_them(tmp_path, capsys):
    store, out = _ingest("gtbench", tmp_path, capsys)
    doc = _json(shared_file("real", "gtbench", "json_example.jsonl"))
    with store:
        matches, results, events = store.table("matches"), store.table("results"), store.table("events")
    assert len(matches) == len(doc["matches"]) == out["accepted"]
    match = doc["matches"][0]
    assert matches["game"].iloc[0] == doc["game_config"]["game_name"]
    keys = [f"{a['agent_name']}_{m['nick_name']}" for a, m in zip(doc["agents_config"], doc["models_config"])]
    assert results["agent"].tolist() == keys
    won = results.set_index("agent")
    assert won.loc[match["winner"], "outcome"] == "win" and won.loc[match["winner"], "score"] == match["winner_score"]
    loser = next(k for k in keys if k != match["winner"])
    assert won.loc[loser, "score"] == match["loser_score"] and won.loc[loser, "outcome"] == "loss"
    assert len(events) == len(match["steps"])
    assert doc["win_rate"] == {match["winner"]: 1.0}  # the run's own win rate agrees with the stored winner


def test_kaggle_replays_self_play_and_a_large_pretty_printed_replay_are_read(tmp_path, capsys):
    store, out = _ingest("kaggle", tmp_path, capsys)
    files = sorted(shared_file("real", "kaggle").glob("*.json"))
    assert out["read"] == out["accepted"] == len(files) == 6
    with store:
        matches, results, events = store.table("matches"), store.table("results"), store.table("events")
    for f in files:
        doc = _json(f)
        mid = f"kaggle:{doc.get('id') or doc['info']['EpisodeId']}"
        rows = results[results["match_id"] == mid].sort_values("player")
        assert rows["agent"].tolist() == [n.strip() for n in doc["info"]["TeamNames"]], f.name
        assert rows["score"].tolist() == [float(r) if r is not None else None for r in doc["rewards"]], f.name
        attrs = json.loads(matches.set_index("match_id").loc[mid, "attrs"])
        self_play = len(set(doc["info"]["TeamNames"])) < len(doc["info"]["TeamNames"])
        assert bool(attrs.get("self_play")) == self_play, f.name
        if self_play:  # its moves are kept, and it gives no comparison
            assert (events["match_id"] == mid).sum() > 0
    comparisons, _ = comparisons_and_agents(matches, results)
    selfplay = [json.loads(a).get("self_play") for a in matches["attrs"]]
    assert sum(bool(s) for s in selfplay) == 2  # connect_four and go: one model in both seats
    assert not comparisons["a"].eq(comparisons["b"]).any()


def _unscored_samples(root: Path) -> int:
    """Samples of the folder's logs (each log's bytes once) with no scores, no error and no limit, read with the
    standard library: .eval members are deflated here, .json logs one document."""
    import hashlib
    import zipfile

    seen, unscored = set(), set()
    for f in sorted(root.rglob("*")):
        if f.suffix == ".eval":
            with zipfile.ZipFile(f) as z:
                samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
        elif f.suffix == ".json" and f.name not in ("eval-set.json", "logs.json"):
            samples = _json(f).get("samples") or []
        else:
            continue
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            unscored |= {(digest, str(x["id"]), x.get("epoch", 1)) for x in samples
                         if not x.get("scores") and not x.get("error") and not x.get("limit")}
    return len(unscored)


def test_inspect_logs_and_an_eval_set_folder_with_unscored_samples_counted(tmp_path, capsys):
    store, out = _ingest("inspect", tmp_path, capsys)
    root = shared_file("real", "inspect")
    with store:
        matches = store.table("matches")
        sources = store.table("sources")
    assert not any(s.endswith(("eval-set.json", "logs.json")) for s in sources["source_file"])  # companions
    unscored = _unscored_samples(root)  # counted from the logs themselves (zipfile and json)
    assert unscored == 11 == matches["attrs"].str.contains("no scorer ran").sum()
    assert any(f"{unscored:,} Inspect sample(s) stored without a score" in w for w in out["warnings"])
    assert any("Inspect log(s) with no samples" in w for w in out["warnings"])
    header = _json(root / "tests_analysis_test_logs" / "2025-05-12T20-28-13-04-00_popularity.json")
    ids = {str(s["id"]) for s in header["samples"]}
    stored = matches[matches["match_id"].str.startswith(header["eval"]["eval_id"])]
    assert {json.loads(a)["sample_id"] for a in stored["attrs"]} == ids


def test_an_inspect_store_prints_accuracy_for_every_model_with_several_logs_pooled(tmp_path, capsys):
    """Issue 87: on the Inspect store (an eval-set folder beside Inspect's test logs) every model has its own
    accuracy and stderr in the rating tables, a model with several logs pooled over them: the pooled accuracy
    equals the logs' own header accuracies weighted by the samples each scored (Inspect's printed numbers, read
    here from the logs' headers), and no headline is blank."""
    from referee.run.ratings.runner_numbers import Tables, runner_columns, runner_numbers

    store, _ = _ingest("inspect", tmp_path, capsys)
    with store:
        matches, results = store.table("matches"), store.table("results")
    numbers = runner_numbers(Tables(matches, results, pd.DataFrame()))
    by_agent = runner_columns(numbers)
    scored = results.merge(matches[["match_id", "runner"]])
    models = set(scored.loc[scored["score"].notna(), "agent"])
    logs = numbers[~numbers["unit"].str.endswith("(all its logs)") & (numbers["metric"] == "accuracy")]
    logs = logs.assign(task=logs["unit"].str.rsplit(" (", n=1).str[0])
    tasks = logs.groupby("agent")["task"].nunique()
    # a model of one task has its number beside its rating; one scored on several tasks none (Inspect pools no
    # samples across tasks, issue 103), and no row of the runner's numbers pools them
    one = sorted(a for a in models if tasks.get(a, 0) == 1)
    assert one and by_agent.loc[one, "accuracy"].notna().all(), by_agent
    several_tasks = [a for a in models if tasks.get(a, 0) > 1]
    assert several_tasks and by_agent.reindex(several_tasks)["accuracy"].isna().all()
    pooled_rows = numbers[numbers["unit"].str.endswith("(all its logs)")]
    assert all("," not in u for u in pooled_rows["unit"])  # each pooled row is one task's
    several = logs.groupby(["agent", "task"]).filter(lambda b: len(b) > 1)
    checked = 0
    for (agent, task), per_log in several.groupby(["agent", "task"]):
        pooled = numbers[(numbers["agent"] == agent) & (numbers["unit"] == f"{task} (all its logs)")
                         & (numbers["metric"] == "accuracy")]
        assert len(pooled) == 1 and np.isfinite(pooled["value"].iloc[0])
        stated = per_log["stated"].astype(float)
        if stated.isna().any():  # a log whose header states no accuracy (Inspect printed none)
            continue
        counts = per_log["unit"].map(lambda u: _samples_scored(matches, results, agent, u))
        expected = float((stated * counts).sum() / counts.sum())
        assert pooled["value"].iloc[0] == pytest.approx(expected, abs=1e-9), (agent, expected)
        checked += 1
    assert checked >= 1 or several.empty


def _samples_scored(matches: pd.DataFrame, results: pd.DataFrame, agent: str, unit: str) -> int:
    """How many distinct samples of the log named in `unit` ('task (log id)') the model has a score for."""
    log = unit.rsplit("(", 1)[1].rstrip(")")
    mine = matches[matches["attrs"].str.contains(f'"log": "{log}"', regex=False)]
    scored = results[results["match_id"].isin(mine["match_id"]) & (results["agent"] == agent) & results["score"].notna()]
    return scored["match_id"].map(mine.set_index("match_id")["attrs"]).map(lambda a: json.loads(a)["sample_id"]).nunique()


def test_clembench_before_clemcore_is_read_and_reproduces_clems_own_table(tmp_path, capsys):
    store, out = _ingest("clembench-ludo", tmp_path, capsys)
    root = shared_file("real", "clembench-ludo")
    episodes = sorted(root.glob("*/*/*/episode_*/interactions.json"))
    scored = [e for e in episodes if (e.parent / "scores.json").exists()]
    assert out["accepted"] == len(episodes) + len(scored) and out["quarantined"] == 0
    with store:
        stored = clem_episodes(store.table("matches"), store.table("measures"))
        results = store.table("results")
    # every episode score equals clem's own raw.csv for the same episode
    raw = pd.read_csv(root / "raw.csv", index_col=0)
    keys = ["game", "model", "experiment", "episode", "metric"]
    both = stored.merge(raw, on=keys, suffixes=("", "_clem"))
    assert len(both) == len(stored) and (both["value"] - both["value_clem"]).abs().max() == 0
    # clem's aggregation, done by referee, equals results.csv on clem's whole run ...
    published = pd.read_csv(root / "results.csv", index_col=0)
    mine = clem_results(raw)
    assert (mine[published.columns] - published).abs().max().max() == 0
    # ... and on the episodes in this (trimmed) folder, referee's numbers from its own store equal clem's
    episode = ["model", "experiment", "episode"]
    here = raw.merge(stored[episode].drop_duplicates(), on=episode)
    pd.testing.assert_frame_equal(clem_results(stored), clem_results(here))
    assert "programmatic" in set(results["agent"])  # clem's scripted partner, listed as its player


def _clemcore_shaped(root: Path, out: Path, renamed: str, new_name: str) -> Path:
    """A copy of a clem run as clemcore writes it, one model's folder renamed after the run: every
    interactions.json opens with `meta` (game_name, experiment_name, game_id, results_folder: the folder's name
    when clem ran), every scores.json with an empty `meta`, as clemcore's scorer leaves it; two episodes of the
    renamed folder were written by an older clem without `meta`."""
    import shutil

    shutil.copytree(root, out)
    (out / renamed).rename(out / new_name)
    older = sorted((out / new_name).glob("*/*/episode_*/interactions.json"))[:2]
    for path in sorted(out.glob("*/*/*/episode_*/interactions.json")):
        doc = _json(path)
        pair, game, experiment, episode = path.parent.parts[-4:]
        if path not in older:
            meta = {"game_name": game, "experiment_name": experiment, "game_id": int(episode.split("_")[1]),
                    "results_folder": renamed if pair == new_name else pair}
            doc = {"meta": meta, **doc}
        path.write_text(json.dumps(doc), encoding="utf-8")
        scores = path.parent / "scores.json"
        if scores.exists():
            scores.write_text(json.dumps({"meta": {}, **_json(scores)}), encoding="utf-8")
    return out


def test_a_renamed_clem_folder_keeps_its_model_and_every_score(tmp_path, capsys):
    """Issue 87: a clemcore run whose model folder was renamed after the run, its scores.json carrying an empty
    `meta`: every scores.json joins its episode (none set aside as an unknown match) and clem's numbers have one
    row per model over all its games, equal to clem's own numbers of the run as written (`clem_results` of the
    unrenamed folder, which equals clem's results.csv on these episodes)."""
    root = shared_file("real", "clembench-ludo")
    run = _clemcore_shaped(root, tmp_path / "run", "gpt-4o-t0.0--gpt-4o-t0.0", "gpt-4o-rerun")
    db = tmp_path / "renamed.duckdb"
    assert main(["ingest", str(run), "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["quarantined"] == 0, out["by_reason"]
    original, _ = _ingest("clembench-ludo", tmp_path, capsys)
    with original:
        expected = clem_results(clem_episodes(original.table("matches"), original.table("measures")))
    with Store(db, read_only=True) as store:
        found = clem_results(clem_episodes(store.table("matches"), store.table("measures")))
    assert sorted(found.index) == sorted(expected.index)  # one row per model, named as clem ran it
    pd.testing.assert_frame_equal(found.loc[expected.index], expected)
    # issue 103: the row named as clem ran it (`X--X`) says where its episodes are on disk now
    with Store(db, read_only=True) as store:
        lines = referee.runner_numbers(store).lines
    assert ("clem's model gpt-4o-t0.0--gpt-4o-t0.0 (its episodes' meta) read from 1 results folder(s) on disk: "
            "gpt-4o-rerun") in lines, lines


def test_sotopia_tournament_episode_logs_are_read(tmp_path, capsys):
    store, out = _ingest("sotopia-werewolves", tmp_path, capsys)
    files = sorted(shared_file("real", "sotopia-werewolves").glob("*.json"))
    assert out["read"] == out["accepted"] == len(files)
    with store:
        results = store.table("results")
    for f in files:
        doc = _json(f)
        rows = results[results["match_id"] == f"sotopia:{doc['pk']}"]
        mapping, rewards = (v if not isinstance(v, str) else ast.literal_eval(v)
                            for v in (doc["model_mapping"], doc["rewards"]))
        assert rows["player"].tolist() == list(mapping) and rows["agent"].tolist() == list(mapping.values())
        assert rows["score"].tolist() == [float(r) for r in rewards]
    store.close()
    db = tmp_path / "sotopia-werewolves.duckdb"
    assert main(["runner-numbers", "--store", str(db)]) == 1  # the tournament's episodes carry no SOTOPIA-EVAL
    said = capsys.readouterr().err
    assert f"sotopia's goal and overall score is computed from SOTOPIA-EVAL's judged dimensions" in said, said
    assert f"none of its {len(files)} match(es) here carries" in said and "(sotopia)" not in said, said


def _documents(path: Path) -> list:
    """Every JSON document of a file written one after another (the independent reading: the standard library's
    raw_decode, document by document)."""
    text, decoder, at, docs = path.read_text(encoding="utf-8"), json.JSONDecoder(), 0, []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return docs
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)


def test_concordias_appended_reruns_are_read_run_by_run_and_identical_records_stored_once(tmp_path, capsys):
    """Concordia's evaluation script opens its results file in mode 'a': a rerun writes a second array after the
    first (test5, test6). Each array's records are stored, the rerun's as '(rerun 1)' repetitions, a record
    repeated identically stored once, its repeat counted as read and set aside naming the first (read 84 =
    77 + 7, not 'read 77'), and said; every focal score is the file's own."""
    root = shared_file("real", "concordia-results-appended")
    store, out = _ingest("concordia-results-appended", tmp_path, capsys)
    expected, repeated = [], 0
    for path in sorted(root.glob("*.json")):
        docs = _documents(path)
        seen = set()
        for k, doc in enumerate(docs):
            for record in doc:
                key = json.dumps(record, sort_keys=True)
                if k and key in seen:
                    repeated += 1
                    continue
                seen.add(key)
                expected.append((record["focal_agent"], record["scenario"], "mean" + (f" (rerun {k})" if k else ""),
                                 record["focal_per_capita_score"]))
    assert len(_documents(root / "test5__google_gemma-2-9b-it__all-mpnet-base-v2.json")) == 2 and repeated > 0
    assert out["accepted"] == len(expected) and out["read"] == len(expected) + repeated  # 77 + 7 = 84 records
    assert out["quarantined"] == repeated and out["by_reason"] == {"repeated record": repeated}, out
    with store:
        matches, results, quarantine = store.table("matches"), store.table("results"), store.table("quarantine")
    assert quarantine["message"].str.contains(r"the same record as record \d+ of array 1").all()
    focal = results[results["group"] == "focal"].merge(matches[["match_id", "scenario", "repetition"]])
    got = sorted(zip(focal["agent"], focal["scenario"], focal["repetition"], focal["score"]))
    assert got == sorted(expected)
    assert any("repeated identically" in n and str(repeated) in n for n in out["warnings"] + out.get("notes", [])), out


@pytest.mark.parametrize("fault", ["truncated", "text between", "text on the line", "nul"])
def test_a_fault_in_a_concordia_files_second_array_costs_that_array_and_never_the_first(fault, tmp_path, capsys):
    """Issue 87: a Concordia results file whose appended second array is truncated, preceded by text, or holds a
    NUL keeps every record of its first array (what the first array alone stores, read by the standard library's
    raw_decode here), and sets aside one record naming the fault and its line, not the array boundary's "Extra
    data". With text between the arrays the second array is still read whole."""
    src = shared_file("real", "concordia-results-appended") / "test5__google_gemma-2-9b-it__all-mpnet-base-v2.json"
    text = src.read_text(encoding="utf-8")
    cut = text.index("][") + 1
    first, second = text[:cut], text[cut:]
    broken = {"truncated": first + second[: len(second) // 2],
              "text between": first + "\nrerun started\n" + second,
              "text on the line": first + "rerun started" + second,  # issue 103: no line break around the text
              "nul": first + second[:200] + "\x00" + second[200:]}[fault]
    counts = {}
    for name, body in (("alone", first), ("broken", broken), ("whole", text)):
        logs = tmp_path / name
        logs.mkdir()
        (logs / src.name).write_text(body, encoding="utf-8")
        assert main(["ingest", str(logs), "--store", str(tmp_path / f"{name}.duckdb"), "--json"]) in (0, 1)
        counts[name] = json.loads(capsys.readouterr().out)
    assert len(json.JSONDecoder().raw_decode(first)[0]) == 12
    alone, broken_out, whole = counts["alone"], counts["broken"], counts["whole"]
    between = fault.startswith("text")  # the text costs itself; the array after it is read whole
    expected = whole["accepted"] if between else alone["accepted"]
    assert alone["accepted"] > 0 and broken_out["accepted"] == expected, (alone, broken_out)
    repeats = whole["quarantined"]  # the rerun's unchanged records, set aside as repeats when its array is read
    assert repeats > 0 and whole["by_reason"] == {"repeated record": repeats}, whole
    assert broken_out["quarantined"] == 1 + (repeats if between else 0), (broken_out, whole)
    with Store(tmp_path / "broken.duckdb", read_only=True) as store:
        faults = store.table("quarantine")
        [(why, raw)] = faults[faults["reason"] != "repeated record"][["message", "raw"]].itertuples(index=False)
    assert "Extra data" not in why and "appended array 2" in why, why
    assert {"truncated": "Expecting", "text between": "line 183", "text on the line": "line 182",
            "nul": "Invalid control character"}[fault] in why
    unread = broken[len(first):].strip()  # what was set aside is kept as it was read: nothing is lost
    assert raw.strip() == (unread if not between else "rerun started"), raw[:200]


def _forfeit_edit(doc: dict, cut: int = 8) -> dict:
    """A test-forfeit replay made from a real one as Kaggle's visualizer guide makes it: the steps cut at `cut`,
    the acting seat's action replaced by the LLM harness's forfeit, rewards and statuses set (id and info kept)."""
    edit = json.loads(json.dumps(doc))
    edit["steps"] = edit["steps"][:cut]
    step = edit["steps"][-1]
    acting = next(i for i, s in enumerate(step) if isinstance(s.get("action"), dict)
                  and s["action"].get("submission") not in (None, -1))
    step[acting]["action"] = {"submission": -1, "actionString": "<last illegal attempt>",
                              "thoughts": "I could not find a legal move.",
                              "status": "Failed to parse a legal move after 5 attempts; forfeiting."}
    edit["rewards"] = [1.0, -1.0] if acting == 1 else [-1.0, 1.0]
    edit["statuses"] = ["DONE", "DONE"]
    step[0]["reward"], step[1]["reward"] = edit["rewards"]
    step[0]["status"] = step[1]["status"] = "DONE"
    return edit


def test_a_kaggle_test_forfeit_edit_beside_the_real_game_leaves_the_real_game_stored(tmp_path, capsys):
    """Issue 87: Kaggle's test-forfeit replays are real episodes edited (steps cut, a forfeit injected, the id and
    info kept), so they share the real replay's match id and sort first ('test-forfeit-replay' < 'test-replay').
    The chess game where o3 mates GPT 4.1 is stored as o3's win, whichever file comes first; the edit is set aside
    as an edited replay naming why (its final state holds 6 of the 77 actions its own history records)."""
    [chess] = sorted(shared_file("real", "kaggle").glob("*chess*"))
    doc = _json(chess)
    assert doc["rewards"] == [-1.0, 1.0] and doc["info"]["TeamNames"] == ["GPT 4.1", "o3"]
    from conftest import ingest_beside

    db, out = ingest_beside(tmp_path, _forfeit_edit(doc), doc, capsys)
    assert out["accepted"] == 1 and out["quarantined"] == 1 and set(out["by_reason"]) == {"edited replay"}, out
    with Store(db, read_only=True) as store:
        results, quarantine = store.table("results"), store.table("quarantine")
    assert dict(zip(results["agent"], results["outcome"])) == {"GPT 4.1": "loss", "o3": "win"}
    [row] = quarantine.itertuples()
    assert row.source_file.endswith("test-forfeit-replay.json") and "6 action(s) applied" in row.message, row.message[-400:]
    assert "77" in row.message


def test_every_real_kaggle_game_beside_its_forfeit_copy_keeps_the_game_played(tmp_path, capsys):
    """Issue 103: Kaggle's forfeit copies of its simultaneous-move games keep every step and only replace the
    winner's last move by the harness forfeit (so no step count shows them). Made so from every real replay of
    the snapshot whose winner's last move the environment recorded (its step info names the move submitted), the
    copy is set aside as an edited replay naming the replaced move, and the stored result equals the real
    replay's, seat by seat."""
    from conftest import forfeit_written_over, ingest_beside

    replays = sorted(shared_file("real", "kaggle").glob("*.json")) + sorted(
        shared_file("real", "kaggle-official").glob("*.json"))
    tried = 0
    for path in replays:
        doc = _json(path)
        last = doc["steps"][-1]
        rewards = [seat["reward"] for seat in last]
        winner = rewards.index(max(rewards))
        if len(set(rewards)) == 1 or (last[winner].get("info") or {}).get("actionSubmitted") is None:
            continue
        tried += 1
        (tmp_path / path.stem).mkdir()
        db, out = ingest_beside(tmp_path / path.stem, forfeit_written_over(doc), doc, capsys)
        assert out["accepted"] == 1 and set(out["by_reason"]) == {"edited replay"}, (path.name, out)
        with Store(db, read_only=True) as store:
            results, quarantine = store.table("results").sort_values("player"), store.table("quarantine")
        assert results["score"].tolist() == [float(r) for r in rewards], path.name
        assert results["player"].iloc[winner] == f"seat {winner}" and results["rank"].iloc[winner] == 1
        assert f"seat {winner}'s last action is submission -1" in quarantine["message"].iloc[0], path.name
    assert tried >= 2  # chess (o3 mates) and connect four (self-play)


def test_kaggles_repeated_game_replay_with_rewards_only_in_its_steps_is_read(tmp_path, capsys):
    """Kaggle's OpenSpiel repeated-game test replay has no top-level rewards or statuses: Environment.toJSON
    computes them from the last step, and so does referee."""
    root = shared_file("real", "kaggle-official")
    [path] = sorted(root.glob("*.json"))
    doc = _json(path)
    assert "rewards" not in doc and "statuses" not in doc
    store, out = _ingest("kaggle-official", tmp_path, capsys)
    assert out["read"] == out["accepted"] == 1
    with store:
        results = store.table("results").sort_values("player")
    last = doc["steps"][-1]
    assert results["agent"].tolist() == doc["info"]["TeamNames"]
    assert results["score"].tolist() == [float(s["reward"]) for s in last]
    best = max(s["reward"] for s in last)
    assert results["outcome"].tolist() == ["win" if s["reward"] == best else "loss" for s in last]


def test_a_replay_naming_no_agents_is_stored_by_seat_and_rated_only_once_named(tmp_path, capsys):
    """Most of Kaggle's own test replays carry no info.TeamNames (issue 68): the real chess replay with its names
    taken out is stored whole (every move, each seat's reward and outcome) under placeholder agents, said at
    ingest, and left out of every comparison; the same replay with its names is rated."""
    from referee.prepare.selection import exclusion_note

    [chess] = sorted(shared_file("real", "kaggle").glob("*chess*"))
    doc = _json(chess)
    named = dict(doc["info"])
    doc["info"] = {k: v for k, v in doc["info"].items() if k not in ("TeamNames", "Agents")}
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "unnamed.json").write_text(json.dumps(doc), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--store", str(db)]) == 0
    said = capsys.readouterr()
    assert "naming no agents" in said.out + said.err
    with Store(db, read_only=True) as store:
        matches, results, events = store.table("matches"), store.table("results"), store.table("events")
    assert results.sort_values("player")["agent"].tolist() == ["seat 0 (unnamed)", "seat 1 (unnamed)"]
    assert results.sort_values("player")["score"].tolist() == [float(r) for r in doc["rewards"]]
    assert len(events) > 0 and json.loads(matches["attrs"].iloc[0])["unnamed_agents"] is True
    comparisons, agents = comparisons_and_agents(matches, results)
    assert comparisons.empty and agents == []
    assert "1 Kaggle replays naming no agents" in exclusion_note(matches)
    doc["info"] = named  # named: the same replay gives its one comparison
    (logs / "unnamed.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["ingest", str(logs), "--store", str(tmp_path / "t.duckdb")]) == 0
    with Store(tmp_path / "t.duckdb", read_only=True) as store:
        comparisons, agents = comparisons_and_agents(store.table("matches"), store.table("results"))
    assert len(comparisons) == 1 and agents == sorted(named["TeamNames"])


def test_the_llm_harness_forfeit_is_read_from_the_action_where_the_step_info_does_not_say_it(tmp_path, capsys):
    """A Game Arena game its LLM harness forfeited (submission -1, 'Failed to parse a legal move after 5 attempts;
    forfeiting.') written without the env's per-step actionSubmitted / actionApplied: the forfeiting seat is
    `forfeit` (a loss to every other player), the other the winner, never a tie; the replay's history agrees
    with its steps, so it is no edit."""
    [chess] = sorted(shared_file("real", "kaggle").glob("*chess*"))
    doc = _json(chess)
    game = _forfeit_edit(doc)
    game["info"]["actionHistory"] = game["info"]["actionHistory"][:6]  # as many as its final state holds
    for seat in game["steps"][-1]:
        seat["info"] = {}
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "forfeited.json").write_text(json.dumps(game), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accepted"] == 1 and out["quarantined"] == 0, out
    with Store(db, read_only=True) as store:
        results = store.table("results")
    acting = 0 if game["rewards"] == [-1.0, 1.0] else 1
    outcome = dict(zip(results["player"], results["outcome"]))
    assert outcome == {f"seat {acting}": "forfeit", f"seat {1 - acting}": "win"}, outcome


def test_the_clem_audit_judges_against_outcomes_that_vary_never_the_score_itself_nor_clems_own_roles(tmp_path,
                                                                                                       capsys):
    """Issue 87, on the held-out clemcore-shaped run (a renamed folder; no scored episode was aborted, so Aborted
    is 0 wherever a Main Score is): the audit refuses Aborted (constant over the players it audits) and Main
    Score (the audited score itself) with the reason, judges against Lose and Success, never holds the score
    constant by grouping on it, and counts no event of clem's game master or of the players as a spectator's."""
    root = shared_file("real", "clembench-ludo")
    run = _clemcore_shaped(root, tmp_path / "run", "gpt-4o-t0.0--gpt-4o-t0.0", "gpt-4o-rerun")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(run), "--store", str(db), "--quiet"]) == 0
    capsys.readouterr()
    from referee.run.social.audit import audit_frame

    found = referee.audit(referee.open(db), no_bayes=True)
    with Store(db, read_only=True) as store:
        frame, _ = audit_frame(store)
    scored = frame[frame["score"].notna()]
    assert len(scored) and (scored["Aborted"] == 0).all() and (frame["Aborted"] == 1).any()  # varies unscored only
    notes = " ".join(found.notes)
    assert "Aborted is 0 for every player with a score" in notes and "Main Score is the audited score itself" in notes
    assert [o.split(" (")[0] for o in found.outcomes] == ["Lose", "Success"]
    assert found.value.checks["hold_outcome_constant"]["keys"] == ["Lose", "Success"]
    assert found.value.checks["spectators"]["passed"] is True


def test_ewa_on_clem_takes_each_experiment_as_one_run_never_the_instance_number(tmp_path, capsys):
    """Issue 87: clem plays each experiment's instances once per model pair, so the instance number names
    unrelated instances of different experiments; evaluation without aggregation takes each experiment (the
    folder <game>/<experiment>) as one run, its ballots the experiment's instances, and no run mixes two."""
    from referee.models.voting import PreferenceProfile
    from referee.models.voting.ewa import run_orders
    from referee.prepare.comparisons import ballots_from_tables

    store, _ = _ingest("clembench-ludo", tmp_path, capsys)
    with store:
        matches, results = store.table("matches"), store.table("results")
    ballots = ballots_from_tables(matches, results)
    root = shared_file("real", "clembench-ludo")
    experiments = {f"{p.parent.parent.parent.name}/{p.parent.parent.name}"
                   for p in root.glob("*/*/*/episode_*/interactions.json")}
    assert set(ballots["repetition"]) == experiments  # the folders' own experiments, one run each
    per_ballot = ballots.merge(matches[["scenario"]].drop_duplicates(), left_on="repetition", right_on="scenario")
    assert len(per_ballot) == len(ballots)
    orders = run_orders(PreferenceProfile.from_ballots(ballots), seed=0)
    assert orders["ballot"].nunique() == len(experiments)


@pytest.mark.parametrize("change, field", [
    (lambda m: m.update(status="Abnormal", agents_at_fault=["Nobody"]), "matches[0].agents_at_fault"),
    (lambda m: m.update(token_size=-5), "matches[0].token_size"),
])
def test_gtbench_values_its_writer_never_writes_are_set_aside_naming_the_field(change, field, tmp_path, capsys):
    """Issue 89: GTBench's GameMatch appends the faulting agent's own name to agents_at_fault and sums its agents'
    token counts into token_size; a run naming an agent that is not in the match, or a negative count, has that
    match set aside naming the field (its other matches stored), never stored without a word."""
    [src] = sorted(shared_file("real", "gtbench").glob("*.jsonl"))
    run = json.loads(src.read_text(encoding="utf-8"))  # one run, pretty-printed as GTBench writes it
    n = len(run["matches"])
    change(run["matches"][0])
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / src.name).write_text(json.dumps(run, indent=3), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--store", str(db), "--json", "--runner", "gtbench"]) in (0, 1)
    out = json.loads(capsys.readouterr().out)
    with Store(db, read_only=True) as store:
        quarantine = store.table("quarantine")
    assert out["quarantined"] == 1 and quarantine["field"].tolist()[0].endswith(field), quarantine.to_dict("records")
    assert out["accepted"] >= n - 1


@pytest.mark.parametrize("change, field", [
    (lambda r: r.update(exclude_from_elo_calculation=None), "exclude_from_elo_calculation"),
    (lambda r: r.update(background_agent=""), "background_agent"),
])
def test_concordia_values_its_scenario_result_never_holds_are_set_aside(change, field, tmp_path, capsys):
    """Issue 89: Concordia's ScenarioResult declares exclude_from_elo_calculation a bool and names its background
    population (a str): null, or an empty name, sets that record aside naming the field; the file's other
    records are stored."""
    path = shared_file("real", "concordia-results-appended") / "test5__google_gemma-2-9b-it__all-mpnet-base-v2.json"
    text = path.read_text(encoding="utf-8")
    records = json.loads(text[: text.index("][") + 1])  # the first array: 12 records
    change(records[0])
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / path.name).write_text(json.dumps(records), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(logs), "--store", str(db), "--json"]) in (0, 1)
    out = json.loads(capsys.readouterr().out)
    with Store(db, read_only=True) as store:
        quarantine = store.table("quarantine")
    assert quarantine["field"].str.startswith(field).any(), quarantine.to_dict("records")
    assert out["accepted"] > 0


def test_a_clem_run_copied_under_a_second_folder_name_is_stored_once(tmp_path, capsys):
    """Issue 89: a clem results folder copied under another name (the older clembench writes no meta, so the
    copy's episodes would be named by the new folder) is found by its files' content: the copy's
    interactions.json and scores.json are said to be already ingested and nothing is stored twice."""
    import shutil

    root = shared_file("real", "clembench-ludo")
    run = tmp_path / "run"
    shutil.copytree(root, run)
    shutil.copytree(run / "gpt-4o-t0.0--gpt-4o-t0.0", run / "gpt-4o-copy")
    copied = len(list((run / "gpt-4o-copy").rglob("interactions.json"))) + len(list((run / "gpt-4o-copy").rglob("scores.json")))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(run), "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    original, _ = _ingest("clembench-ludo", tmp_path, capsys)
    with original:
        expected = len(original.table("matches"))
    with Store(db, read_only=True) as store:
        assert len(store.table("matches")) == expected
    assert out["quarantined"] == 0 and copied > 0


@pytest.mark.parametrize("rewrite", ["re-indented", "crlf", "scores changed"])
@pytest.mark.parametrize("when", ["one ingest", "a later ingest"])
def test_a_clem_run_copied_with_other_bytes_leaves_clemscore_unchanged(tmp_path, capsys, rewrite, when):
    """Issue 104: a clem run copied beside itself with other bytes (re-indented, CRLF line ends, or its Main
    Scores changed): the copy's interactions.json are duplicate matches, and its scores.json, which belong to
    the interactions.json beside them, are set aside with them instead of adding a second set of scores to the
    original's matches; clem's numbers equal those of the run alone, ingested together or later."""
    import shutil

    from referee.run.ratings.runner_numbers import runner_numbers, Tables

    root = shared_file("real", "clembench-ludo")
    logs = tmp_path / "logs"
    shutil.copytree(root, logs / "run_a")
    shutil.copytree(root, logs / "run_b")
    for path in (logs / "run_b").rglob("*.json"):
        doc = _json(path)
        if rewrite == "scores changed" and path.name == "scores.json" and "Main Score" in doc.get("episode scores", {}):
            doc["episode scores"]["Main Score"] = 0.0
        text = json.dumps(doc, indent=None if rewrite == "scores changed" else 4)
        path.write_bytes((text.replace("\n", "\r\n") if rewrite == "crlf" else text).encode())
    alone, db = tmp_path / "alone.duckdb", tmp_path / "s.duckdb"
    assert main(["ingest", str(logs / "run_a"), "--store", str(alone), "--quiet"]) == 0
    if when == "one ingest":
        assert main(["ingest", str(logs), "--store", str(db), "--json"]) == 0
    else:
        assert main(["ingest", str(logs / "run_a"), "--store", str(db), "--quiet"]) == 0
        main(["ingest", str(logs / "run_b"), "--store", str(db), "--json"])  # exit 1: nothing new to accept
    capsys.readouterr()
    numbers = {}
    for name, path in (("alone", alone), ("both", db)):
        with Store(path, read_only=True) as store:
            numbers[name] = runner_numbers(Tables(store.table("matches"), store.table("results"),
                                                  store.table("measures"))).sort_values(["unit", "metric"])
            numbers[name + " measures"] = len(store.table("measures"))
            quarantine = store.table("quarantine")
    pd.testing.assert_frame_equal(numbers["both"].reset_index(drop=True), numbers["alone"].reset_index(drop=True))
    assert numbers["both measures"] == numbers["alone measures"]
    copied = len(list((logs / "run_b").rglob("scores.json")))
    strays = quarantine[quarantine["message"].str.contains("belongs to the interactions.json beside it")]
    # every copied scores.json is set aside, or skipped where its episode's files kept their bytes
    assert 0 < len(strays) <= copied and strays["source_file"].str.contains("run_b").all()


@pytest.mark.parametrize("fault", ["deep value", "foreign object"])
def test_one_faulty_record_appended_to_a_concordia_file_costs_itself_alone(tmp_path, capsys, fault):
    """Issue 104: a 5,000-deep value in one record of an appended rerun cost that whole array (11 records); a
    Kaggle replay appended as a second document cost the file. Each now costs itself: the first array's 12
    records are stored, the rerun's unchanged records set aside as repeats, the faulty one set aside naming why."""
    src = shared_file("real", "concordia-results-appended") / "test7__google_gemma-2-9b-it__all-mpnet-base-v2.json"
    text = src.read_text(encoding="utf-8")
    records = json.loads(text)
    if fault == "deep value":
        parts = [json.dumps(r) for r in records]
        parts[3] = parts[3][:-1] + ', "deep": ' + "[" * 5000 + "0" + "]" * 5000 + "}"
        appended = "[" + ", ".join(parts) + "]"
    else:
        appended = sorted(shared_file("real", "kaggle").glob("*connectx*"))[0].read_text(encoding="utf-8")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / src.name).write_text(text.rstrip() + "\n" + appended, encoding="utf-8")
    assert main(["ingest", str(logs), "--store", str(tmp_path / "s.duckdb"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accepted"] == len(records) == 12
    if fault == "deep value":
        # the deep record is set aside alone: as too deeply nested, or (where the stack reads it whole) for its
        # field that is no part of a ScenarioResult
        fault = set(out["by_reason"]) - {"repeated record"}
        assert out["read"] == 24 and out["by_reason"]["repeated record"] == 11, out
        assert len(fault) == 1 and fault <= {"too deeply nested", "unexpected field"} and out["quarantined"] == 12, out
    else:
        assert out["read"] == 13 and out["by_reason"] == {"malformed JSON": 1}, out
