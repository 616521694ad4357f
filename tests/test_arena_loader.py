"""Pairwise arenas: the real LLMFAO judgments, Chatbot-Arena spellings, bad rows, simulator round trip."""

import pandas as pd

from referee.io.loaders import arena, detect
from referee.io.loaders.base import LoadOptions, file_hash
from referee.simulators.arena import simulate_arena, write_arena
from tests.conftest import shared_file


def load(path, **mapping):
    return arena.load(path, file_hash(path), LoadOptions(mapping=mapping))


def test_llmfao_counts():
    path = shared_file("llmfao", "llmfao.csv")
    assert detect(path) == "arena"
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (8931, 8931, 0)
    matches, results = result.frame("matches"), result.frame("results")
    assert len(matches) == 8931 and results["agent"].nunique() == 59
    raw = pd.read_csv(path)
    assert set(results["agent"]) == set(raw["left"]) | set(raw["right"])
    # the winner column: left -> first wins, right -> second wins, tie -> half each
    first = results[results.role == "first"].set_index("match_id")["score"]
    counts = raw["winner"].value_counts()
    assert (first == 1).sum() == counts["left"] and (first == 0).sum() == counts["right"]
    assert (first == 0.5).sum() == counts["tie"]
    assert matches["game"].nunique() == raw["prompt"].nunique()


def test_chatbot_arena_spelling_and_both_bad(tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text("model_a,model_b,winner,judge,tstamp\n"
                    "x,y,model_a,j1,1700000000\nx,y,tie (bothbad),j2,1700000060\nx,y,model_b,j1,1700000120\n")
    assert detect(path) == "arena"
    result = load(path)
    r = result.frame("results")
    assert r[r.role == "first"]["score"].tolist() == [1.0, 0.0, 0.0]
    assert r[r.role == "second"]["rank"].tolist() == [2.0, 1.0, 1.0]
    assert str(result.frame("matches")["started_at"].iloc[0]) == "2023-11-14 22:13:20"


def test_bad_rows(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("left,right,winner,time\n"
                    "x,y,left,2026-01-01T00:00:00Z\n"   # 2 ok
                    ",y,left,\n"                         # 3 missing first
                    "x,y,,\n"                            # 4 missing winner
                    "x,y,maybe,\n"                       # 5 unknown winner
                    "x,x,tie,\n"                         # 6 self-comparison
                    "x,y,right,soon\n")                  # 7 unreadable time
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (6, 1, 5)
    got = sorted(zip(result.quarantine.record.astype(int), result.quarantine.reason, result.quarantine.field))
    assert got == [(3, "missing value", "left"), (4, "missing value", "winner"), (5, "wrong value", "winner"),
                   (6, "self-comparison", "right"), (7, "wrong type", "time")]


def test_mapping_and_missing_columns(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("red,blue,outcome\nx,y,first\n")
    assert load(path).quarantine.iloc[0].reason == "missing field"
    result = load(path, first="red", second="blue", winner="outcome")
    assert result.accepted == 1


def test_simulated_arena_round_trips(tmp_path):
    sim = simulate_arena(n_agents=6, n_judgments=3000, seed=2)
    paths = write_arena(sim, tmp_path / "sim")
    result = load(paths["judgments"])
    assert result.accepted == 3000
    r = result.frame("results")
    firsts = r[r.role == "first"].reset_index(drop=True)
    expected = sim.judgments["winner"].map({"first": 1.0, "second": 0.0, "tie": 0.5, "tie-both-bad": 0.0})
    assert firsts["score"].tolist() == expected.tolist()
    # win rates rank like the true ratings
    wins = r.groupby("agent")["score"].mean()
    truth = pd.Series(sim.truth["ratings"])
    assert wins.rank().corr(truth.reindex(wins.index).rank()) > 0.9


def _frames(result) -> dict:
    return {name: result.frame(name).reset_index(drop=True) for name in ("matches", "results", "measures")}


def test_a_csv_read_block_by_block_stores_and_sets_aside_exactly_what_the_whole_file_read_does(tmp_path, monkeypatch):
    """issue 107: a CSV is read 16 MB at a time; cut into blocks of a few rows here, the same rows are stored and the
    same rows set aside for the same reasons in the same order (reason by reason, each in file order) as one read of
    the whole file; a time column that is not ISO 8601 throughout (Unix seconds are decided over the whole column)
    is read whole."""
    lines = ["first,second,winner,judge,time,length_a,length_b"]
    for k in range(120):
        first, second, winner = f"m{k % 7}", f"m{(k + 3) % 7}", ("first", "second", "tie")[k % 3]
        if k in (5, 77):
            second = first  # self-comparison, in two blocks
        if k in (12, 90):
            winner = "nobody"
        if k == 40:
            first = ""
        length = "12x" if k in (33, 101) else str(100 + k)
        lines.append(f"{first},{second},{winner},j{k % 4},2026-01-01T00:{k % 60:02d}:00Z,{length},{200 + k}")
    iso = tmp_path / "iso.csv"
    iso.write_text("\n".join(lines) + "\n")
    unix = tmp_path / "unix.csv"
    unix.write_text("\n".join(lines[:1] + [f"{line.rsplit(',', 3)[0]},{1700000000 + k},1,2"
                                           for k, line in enumerate(lines[1:])]) + "\n")
    found = {}
    for path in (iso, unix):
        whole = found[path] = load(path)
        monkeypatch.setattr(arena, "BLOCK_BYTES", 512)  # about ten rows a block
        blocks = load(path)
        if path is iso:
            assert arena._streamed(path, file_hash(path), LoadOptions()) is not None
        else:  # mostly Unix seconds: not read by blocks
            assert arena._streamed(path, file_hash(path), LoadOptions()) is None
        monkeypatch.setattr(arena, "BLOCK_BYTES", 1 << 24)
        assert (blocks.read, blocks.accepted, blocks.quarantined) == (whole.read, whole.accepted, whole.quarantined)
        for name, frame in _frames(whole).items():
            pd.testing.assert_frame_equal(_frames(blocks)[name], frame, check_dtype=False)
        assert [(b["record"], b["reason"], b["field"]) for b in blocks.bad] == \
            [(b["record"], b["reason"], b["field"]) for b in whole.bad]
    iso_read = found[iso]
    assert [(b["record"], b["reason"]) for b in iso_read.bad] == [  # by reason, each in file order
        ("42", "missing value"), ("14", "wrong value"), ("92", "wrong value"), ("7", "self-comparison"),
        ("79", "self-comparison"), ("35", "wrong type"), ("103", "wrong type")]
    assert (iso_read.quarantined, iso_read.accepted, found[unix].quarantined) == (7, 113, 5)


def test_hostile_csvs_read_by_blocks_of_any_size_give_what_the_whole_file_read_gives(tmp_path, monkeypatch):
    """Generated CSVs of hostile cells (blank, non-ASCII space, quoted commas and newlines, a row too wide, a byte
    order mark, a column missing, Unix and ISO times, digit separators): read by blocks of 64 bytes and of 16 MB, each
    gives the read, accepted and set-aside counts, the reasons and messages and the stored rows that the whole-file
    read (`_read`, the streamed path turned off) gives."""
    import random

    from referee.io.loaders.base import NotThisRunner

    rng = random.Random(3)
    cells = ["m1", "m2", " m3 ", "", "é", "m\u00a0", "first", "second", "tie", "left", "nobody", "tie (bothbad)",
             "aborted", "forfeit-first", "2026-01-01T00:00:00Z", "1700000000", "nan", "1e30", "12", "12.5", " 7 ",
             "1_000", "true", "x,y", 'q"x', "a\nb"]
    headers = [["first", "second", "winner"], ["first", "second", "winner", "judge", "time", "length_a", "length_b"],
               ["model_a", "model_b", "winner", "tstamp"], ["left", "right", "winner", "prompt", "id"],
               ["first", "second", "judge"]]

    def cell():
        c = rng.choice(cells)
        return '"' + c.replace('"', '""') + '"' if any(ch in c for ch in ',"\n') else c

    def read(path):
        try:
            r = load(path)
        except NotThisRunner as exc:
            return ("not this runner", str(exc))
        stored = tuple(r.frame(name).reset_index(drop=True).to_json(date_format="iso")
                       for name in ("matches", "results", "measures"))
        return (r.read, r.accepted, r.quarantined, [(b["record"], b["reason"], b["message"]) for b in r.bad], stored)

    whole_read = arena._streamed
    for case in range(80):
        header = rng.choice(headers)
        rows = [",".join(cell() for _ in header) for _ in range(rng.randint(0, 40))]
        if rows and rng.random() < 0.15:
            rows[rng.randrange(len(rows))] += ",extra"
        path = tmp_path / f"{case}.csv"
        path.write_text(("\ufeff" if rng.random() < 0.1 else "") + ",".join(header) + "\n" + "\n".join(rows) + "\n")
        monkeypatch.setattr(arena, "_streamed", lambda *args: None)
        whole = read(path)
        monkeypatch.setattr(arena, "_streamed", whole_read)
        for size in (64, 1 << 24):
            monkeypatch.setattr(arena, "BLOCK_BYTES", size)
            assert read(path) == whole, (case, size)


def test_a_json_line_without_a_judge_costs_nothing_and_its_match_has_no_judge(tmp_path):
    """A JSON-lines file where some judgments name no judge (or id): each is stored with the keys it has (a missing
    value left out of `attrs`, as the row-wise read wrote it), and another line's fault costs that line alone (the
    columnar attrs once failed on the missing value and set the whole file aside)."""
    import json

    path = tmp_path / "judgments.jsonl"
    lines = [{"first": "a", "second": "b", "winner": "first", "judge": "j1", "id": "x1"},
             {"first": "a", "second": "c", "winner": "second"},
             {"first": "b", "second": "c", "winner": "tie", "id": "x3"},
             {"first": 7, "second": "c", "winner": "tie", "judge": "j2"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (4, 3, 1)
    assert result.frame("matches")["attrs"].tolist() == ['{"judge": "j1", "id": "x1"}', "{}", '{"id": "x3"}']
    assert [(b["record"], b["reason"], b["field"]) for b in result.bad] == [("4", "wrong type", "first")]


def test_a_list_or_an_object_where_one_value_belongs_costs_its_line_alone(tmp_path):
    """A JSON line whose time is a list, or whose judge, prompt or id is an object, is set aside naming the key; the
    file's other lines are stored (a list in the time column once failed the whole file: 'unhashable type')."""
    import json

    path = tmp_path / "judgments.jsonl"
    lines = [{"first": "a", "second": "b", "winner": "first", "time": "2026-01-01T00:00:00Z", "judge": "j1"},
             {"first": "a", "second": "c", "winner": "second", "time": [1]},
             {"first": "b", "second": "c", "winner": "tie", "judge": {"name": "j2"}},
             {"first": "c", "second": "a", "winner": "first", "prompt": ["p"], "time": 1700000000}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = load(path)
    assert (result.read, result.accepted, result.quarantined) == (4, 1, 3)
    assert sorted((b["record"], b["reason"], b["field"]) for b in result.bad) == [
        ("2", "wrong type", "time"), ("3", "wrong type", "judge"), ("4", "wrong type", "prompt")]
    assert result.frame("matches")["attrs"].tolist() == ['{"judge": "j1"}']
