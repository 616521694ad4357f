"""Generate the hostile-input corpus (issue 14): mutants of every runner's files, written on demand, never
committed as data.

`build_corpus(out)` writes one folder per mutant under `out` and returns `Mutant`s: the files to ingest
together (the mutant and the good files it depends on), the mutant file, its runner, the mutation class,
and what a correct ingest must report: `bad` records of the mutant quarantined (None: the whole file is one
quarantined record) and every other record accepted.

Mutation classes: `deep` (a value nested 10,000 deep), `badbyte` (a byte that is not UTF-8 inside a text),
`inf` (a number written 1e400), `dupkey` (a key repeated in one object), `bom` (a UTF-8 byte-order mark
before the first record), `truncated` (the last record cut in half), `garbage` (random bytes), `empty`,
`dupheader` (CSV: a column named twice), `badtime` (arena: a Unix time of 1e30), `corrupt` (Parquet bytes cut).

Run it alone to look at the corpus: `python -m tests.fuzz_corpus OUT`.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from referee.io.resources import shipped

SAMPLE = shipped("sample")
DEEP = 10_000


@dataclass
class Mutant:
    """One hostile input: `files` are ingested together; `path` is the mutant; `bad` is how many of its
    records must be quarantined (None: the file is quarantined whole, as one record), `good` how many
    must be accepted (None: not checked, e.g. a whole-file fault)."""

    name: str
    runner: str
    kind: str
    files: list[Path]
    path: Path
    bad: int | None
    good: int | None


def _lines(path: Path, limit: int | None = None) -> list[str]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines[:limit] if limit else lines


def _records_lines(n: int = 20) -> list[str]:
    return [json.dumps({"game": "g", "match": f"r{i}", "a": float(i % 3), "b": 1.0}) for i in range(n)]


def _table_lines(n: int = 20) -> list[str]:
    return [json.dumps({"match": f"t{i // 2}", "agent": f"x{i % 2}", "score": float(i)}) for i in range(n)]


def _deep(line: str) -> str:
    return line[:-1] + ', "deep": ' + "[" * DEEP + "]" * DEEP + "}"


def _dupkey(line: str) -> str:
    first = next(iter(json.loads(line)))
    return '{"' + first + '": "again", ' + line[1:]


def _badbyte(line: str) -> bytes:
    data = line.encode("utf-8")
    at = data.index(b'"', data.index(b":") + 1) + 1  # inside the first text value
    return data[:at] + b"\xff" + data[at:]


def _inf(line: str, key: str) -> str:
    if f'"{key}":' in line:
        return re.sub(rf'"{key}": ?-?[0-9.]+', f'"{key}": 1e400', line, count=1)
    return line[:-1] + f', "{key}": 1e400}}'


# line-based JSON runners: (name, runner, base lines, numeric key for `inf`, companion files)
def _line_bases() -> list[tuple[str, str, list[str], str, list[Path]]]:
    return [
        ("ranked-games", "ranked", _lines(SAMPLE / "ranked" / "logs" / "games.jsonl", 12), "points", []),
        ("ranked-turns", "ranked", _lines(SAMPLE / "ranked" / "logs" / "turns.jsonl", 40), "value",
         [SAMPLE / "ranked" / "logs" / "games.jsonl"]),
        ("compact", "compact", _lines(SAMPLE / "compact" / "logs" / "games.jsonl", 90), "reward", []),
        ("aoa-events", "aoa", _lines(SAMPLE / "aoa_sim" / "logs" / "events.jsonl", 60), "value",
         [SAMPLE / "aoa_sim" / "logs" / "season.json"]),
        ("records-lines", "records", _records_lines(), "a", []),
        ("table-lines", "table", _table_lines(), "score", []),
        ("textarena", "textarena", _textarena_lines(), "reward", []),
        ("gtbench", "gtbench", _lines(SAMPLE / "gtbench" / "logs" / "matches.jsonl", 12), "scores", []),
        ("sotopia", "sotopia", _lines(SAMPLE / "sotopia" / "logs" / "episodes.jsonl", 12), "goal", []),
    ]


def _textarena_lines(n: int = 12) -> list[str]:
    """Game lines in the textarena runner's format, as `record_textarena` writes them."""
    lines = []
    for g in range(n):
        players = [{"player_id": p, "agent": f"agent-{(g + p) % 5}", "role": f"Player {p}", "reward": [1, -1, 0][p],
                    "invalid_move": p == 1, "turn_count": 3} for p in range(3)]
        lines.append(json.dumps({"format": "referee-textarena/1", "game_id": f"g{g}", "env_id": "Snake-v0",
                                 "seed": g, "players": players}))
    return lines


def _write(folder: Path, name: str, content: bytes | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def build_corpus(out: Path, seed: int = 0) -> list[Mutant]:
    """Write every mutant under `out`; returns them (see the module docstring)."""
    rng = np.random.default_rng(seed)
    out = Path(out)
    mutants: list[Mutant] = []

    def add(name, runner, kind, filename, content, companions, bad, good):
        folder = out / f"{name}-{kind}"
        path = _write(folder, filename, content)
        mutants.append(Mutant(f"{name}-{kind}", runner, kind, [path] + list(companions), path, bad, good))

    for name, runner, lines, key, companions in _line_bases():
        n, last = len(lines), lines[-1]
        body = "\n".join(lines[:-1]) + "\n"
        filename = f"{name}.jsonl"
        add(name, runner, "deep", filename, body + _deep(last) + "\n", companions, 1, n - 1)
        add(name, runner, "dupkey", filename, body + _dupkey(last) + "\n", companions, 1, n - 1)
        add(name, runner, "badbyte", filename, body.encode() + _badbyte(last) + b"\n", companions, 1, n - 1)
        add(name, runner, "inf", filename, body + _inf(last, key) + "\n", companions, 1, n - 1)
        add(name, runner, "truncated", filename, body + last[: len(last) // 2], companions, 1, n - 1)
        add(name, runner, "bom", filename, b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode(), companions, 0, n)
        add(name, runner, "garbage", filename, rng.bytes(3000), companions, None, None)
        add(name, runner, "empty", filename, "", companions, None, None)

    # JSON documents: a Concordia per-agent file (a list) and a records array
    concordia = SAMPLE / "concordia" / "logs" / "agent_01__gemma-2-9b-it__all-mpnet-base-v2.json"
    replays = sorted((SAMPLE / "kaggle" / "replays").glob("*.json"))[:3]
    docs = {"concordia": (json.loads(concordia.read_text()), "concordia", concordia.name),
            "records-array": ([json.loads(line) for line in _records_lines()], "records", "records-array.json"),
            "kaggle": ([json.loads(r.read_text()) for r in replays], "kaggle", "replays.json")}
    for name, (doc, runner, filename) in docs.items():
        n = len(doc)
        text = json.dumps(doc)
        last = json.dumps(doc[-1])
        head = text[: text.rindex(last)]
        add(name, runner, "dupkey", filename, head + _dupkey(last) + "]", [], 1, n - 1)
        add(name, runner, "badbyte", filename, head.encode() + _badbyte(last) + b"]", [], 1, n - 1)
        add(name, runner, "bom", filename, b"\xef\xbb\xbf" + text.encode(), [], 0, n)
        add(name, runner, "deep", filename, head + _deep(last) + "]", [], 1, n - 1)  # the deep element alone
        add(name, runner, "truncated", filename, text[: len(text) // 2], [], None, None)
        add(name, runner, "garbage", filename, rng.bytes(3000), [], None, None)
        add(name, runner, "empty", filename, "", [], None, None)

    # one-object files: a Concordia 2.x simulation log and a clembench episode (the file is the one record)
    episode = SAMPLE / "clembench" / "results" / "mock--programmatic" / "guessnumber" / "easy" / "instance_00000"
    singles = {"concordia-log": (SAMPLE / "concordia_log" / "simulation.json", "concordia-log"),
               "clembench": (episode / "interactions.json", "clembench")}
    for name, (source, runner) in singles.items():
        text = source.read_text()
        add(name, runner, "bom", source.name, b"\xef\xbb\xbf" + text.encode(), [], 0, 1)
        add(name, runner, "dupkey", source.name, "{" + text.strip()[1:].replace('"entries"', '"entries": [], "entries"', 1)
            .replace('"meta"', '"meta": {}, "meta"', 1), [], None, None)
        add(name, runner, "truncated", source.name, text[: len(text) // 2], [], None, None)
        add(name, runner, "garbage", source.name, rng.bytes(3000), [], None, None)
        add(name, runner, "empty", source.name, "", [], None, None)

    # ZIP logs: an Inspect .eval log cut short, overwritten with noise, emptied
    log = SAMPLE / "inspect" / "logs" / "addition_weak.eval"
    data = log.read_bytes()
    add("inspect", "inspect", "truncated", log.name, data[: len(data) // 2], [], None, None)
    add("inspect", "inspect", "garbage", log.name, b"PK\x03\x04" + rng.bytes(3000), [], None, None)
    add("inspect", "inspect", "empty", log.name, b"", [], None, None)

    # CSV: an arena and a long table
    arena = _lines(SAMPLE / "arena" / "logs" / "judgments.csv", 41)
    table = ["match,agent,score"] + [f"t{i // 2},x{i % 2},{i}" for i in range(20)]
    meltingpot = _lines(SAMPLE / "meltingpot" / "logs" / "results.csv", 41)
    for name, runner, rows in (("arena", "arena", arena), ("table-csv", "table", table),
                               ("meltingpot", "meltingpot", meltingpot)):
        n = len(rows) - 1
        body = "\n".join(rows) + "\n"
        add(name, runner, "bom", f"{name}.csv", b"\xef\xbb\xbf" + body.encode(), [], 0, n)
        header = rows[0].split(",")
        add(name, runner, "dupheader", f"{name}.csv", ",".join(header + [header[0]]) + "\n" +
            "\n".join(r + ",x" for r in rows[1:]) + "\n", [], None, None)
        add(name, runner, "badbyte", f"{name}.csv", body.encode().replace(b"\n", b"\xff\n", 2)[:], [], None, None)
        add(name, runner, "garbage", f"{name}.csv", rng.bytes(3000), [], None, None)
        add(name, runner, "empty", f"{name}.csv", "", [], None, None)
    add("table-csv", "table", "inf", "table-csv.csv", "\n".join(table[:-1] + ["t9,x1,1e400"]) + "\n", [], 1, 19)
    add("arena", "arena", "badtime", "arena.csv",
        "\n".join(arena[:-1] + [re.sub(r",[^,]*$", ",1e30", arena[-1])]) + "\n", [], 1, 39)
    # Parquet cut short
    import pandas as pd

    parquet = out / "table-parquet-corrupt" / "table.parquet"
    parquet.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"match": ["m1", "m1"], "agent": ["a", "b"], "score": [1.0, 0.0]}).to_parquet(parquet)
    parquet.write_bytes(parquet.read_bytes()[:-40])
    mutants.append(Mutant("table-parquet-corrupt", "table", "corrupt", [parquet], parquet, None, None))
    return mutants


if __name__ == "__main__":
    corpus = build_corpus(Path(sys.argv[1]))
    print(f"wrote {len(corpus)} mutants under {sys.argv[1]}")
