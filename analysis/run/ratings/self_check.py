"""A self-check of every output referee prints about agents' strength (`referee check`, `referee.check(...)`).

Two ways in, one set of invariants (`referee.run.ratings.invariants`: each recomputed from the printed columns,
never through the code that printed them, and each shown to fail on a planted contradiction in
tests/test_one_truth.py):

- `--results DIR ...`: the results folders `ratings`, `leaderboard`, `compare` (`--all` or one pair) and `rank`
  wrote, found by their manifests (each file's SHA-256 checked against it), read as a reader would and checked
  side by side; with `--store` as well, each printed table also against the same job run again on the store
  (the folders' own options, read from their provenance).
- `--store` alone: ratings (bt), leaderboard and compare --all computed through the jobs themselves, then checked
  the same way. The report runs this check on the board it prints (`referee.reporting`).

Whether the store records seats (for the seat invariant) is read from the store's own seat measure or a seated
runner's catalogue entry, not through `referee.prepare.covariates.seats`, which prints the seat effect.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from referee.result import CheckJobResult, Result
from referee.run.ratings.invariants import AGENT_KEYS, COLUMNS, PAIR_KEYS, Printed, check_outputs, same_cell

# a results folder's files and the table each one is (`Printed`'s fields); seat_effect.csv: a seat effect printed
FILES = {"ratings.csv": "ratings", "leaderboard.csv": "board", "rank_sets.csv": "sets", "tier_tests.csv": "tier_tests",
         "pairs.csv": "pairs", "compare.csv": "single", "intransitivity.csv": "cyclic"}
# the options that decide which board a job printed: folders written with different values are not one board
SCOPE_FLAGS = ("--store", "--runner", "--phase", "--where", "--parallel", "--seed", "--bootstrap", "--level")
BOARD_DRAWS = ("--bootstrap", "--level")  # the flags that set the board's draws (rank's --bootstrap is its own)


def _options(command: list[str]) -> dict:
    """The scope flags of a provenance command line ({flag: [values]}), each as given."""
    found: dict = {}
    for i, token in enumerate(command):
        flag, _, value = token.partition("=")
        if flag in SCOPE_FLAGS:
            if value:
                found.setdefault(flag, []).append(value)
            elif flag == "--parallel":
                found.setdefault(flag, []).append("yes")
            elif i + 1 < len(command):
                found.setdefault(flag, []).append(command[i + 1])
    return found


def _method(command: list[str]) -> str:
    for i, token in enumerate(command):
        if token.startswith("--method="):
            return token.partition("=")[2]
        if token == "--method" and i + 1 < len(command):
            return command[i + 1]
    return "bt"


def read_results(folders: list) -> tuple[Printed, list[dict], dict]:
    """The tables of results folders (`FILES`), as a `Printed`; the violations found while reading (a file changed
    since its manifest was written); and the folders' common scope options ({flag: values}). ValueError naming the
    folder where one is not a results folder, holds none of the tables checked, or was written from another board
    than the others (other store, runner, phase, filters, seed, draws or level)."""
    tables: dict = {}
    names: dict = {}
    problems: list[dict] = []
    scopes: list = []
    seat_printed = False
    for folder in map(Path, folders):
        manifest_path = folder / "manifest.json"
        if not manifest_path.is_file():
            raise ValueError(f"{folder}: no manifest.json: not a results folder that referee wrote")
        try:
            manifest = json.loads(manifest_path.read_text())
            provenance = json.loads((folder / "provenance.json").read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"{folder}: its manifest or provenance cannot be read ({exc})") from None
        command = [str(c) for c in (provenance.get("command") or [])]
        listed = {f["name"]: f for f in manifest.get("files", []) if isinstance(f, dict) and "name" in f}
        kinds = [name for name in listed if name in FILES]
        seat_printed = seat_printed or "seat_effect.csv" in listed
        if not kinds:
            raise ValueError(f"{folder}: none of the tables check reads ({', '.join(FILES)}); written by "
                             f"`{' '.join(command[:2]) or 'an unknown command'}`")
        if "ratings.csv" in kinds and _method(command) != "bt":
            raise ValueError(f"{folder}: ratings by {_method(command)}; the board and check read Bradley-Terry (bt)")
        options = _options(command)
        if kinds == ["intransitivity.csv"]:  # rank's --bootstrap resamples its game, not the board's draws
            options = {k: v for k, v in options.items() if k not in BOARD_DRAWS}
        scopes.append((folder, options, kinds == ["intransitivity.csv"]))
        for name in kinds:
            path = folder / name
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
            if digest != listed[name].get("sha256"):
                problems.append({"invariant": "files as written", "where": str(path),
                                 "what": "missing" if digest is None else "changed since its manifest was written"})
            if digest is None:
                continue
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
            key = FILES[name]
            if key in tables and key != "single":
                raise ValueError(f"{path}: a second {name} (also in {names[key]}): give one folder per job")
            tables[key] = pd.concat([tables[key], frame], ignore_index=True) if key in tables else frame
            names[key] = str(path) if key not in names else f"{names[key]}, {path}"
    return Printed(**tables, seat_printed=seat_printed, names=names), problems, _one_scope(scopes)


def _one_scope(scopes: list) -> dict:
    """The scope flags every folder shares ([(folder, flags, a rank folder)]): the board's folders must agree on
    all of them, a rank folder on all but the board's draws. ValueError naming two folders that disagree."""
    board = [(f, o) for f, o, rank in scopes if not rank]
    first, scope = board[0] if board else scopes[0][:2]
    for folder, options, rank in scopes:
        expected = {k: v for k, v in scope.items() if k not in BOARD_DRAWS} if rank else scope
        if options != expected:
            raise ValueError(f"{folder} and {first} were written from different boards: {options or 'defaults'} "
                             f"against {expected or 'defaults'} (store, runner, phase, filters, seed, draws and level "
                             "must agree)")
    return scope


def seats_recorded(store, runner: str | None = None) -> bool:
    """Whether the store's data record seats: a seat measure with a value, or a match of a runner whose catalogue
    entry declares seats (read here from the store and the catalogue, not through `covariates.seats`)."""
    from referee.prepare.covariates import SEAT_MEASURE, seated_runners

    measures = store.measures()
    if measures is not None and len(measures):
        found = measures[(measures["name"] == SEAT_MEASURE) & measures["value"].notna()]
        if len(found):
            return True
    runners = set(store.runners())
    return bool((runners if runner is None else runners & {runner}) & set(seated_runners()))


def _recomputed(store, scope: dict) -> Printed:
    """ratings (bt), leaderboard and compare --all of `store` within `scope`, computed through the jobs."""
    from referee.models.progress import sized_stages
    from referee.models.ratings.rank_sets import MANY_AGENTS
    from referee.models.registry import methods_with
    from referee.run.job_table import JOBS

    def job(name: str, **options) -> Result:
        return JOBS[name].compute(store, **options)

    [board_method] = methods_with(board=True)
    ratings = job("ratings", method=board_method, **scope)
    agents = int(ratings.table()["rating"].notna().sum())
    stage = sized_stages(agents >= MANY_AGENTS, "check", 2, f"ratings of {agents:,} agents; the leaderboard and "
                         f"compare --all recomputed ({agents * (agents - 1) // 2:,} pairs at most), then checked")
    with stage("the leaderboard"):
        board = job("leaderboard", **scope)
    with stage("compare --all"):
        pairs = job("compare", all=True, **scope)
    return Printed(ratings=ratings.table(), board=board.table(), sets=board.table("rank_sets"),
                   tier_tests=board.table("tier_tests"), pairs=pairs.table(), seat_printed="seat_effect" in board.tables,
                   names={"ratings": "ratings", "board": "leaderboard", "sets": "leaderboard's rank sets",
                          "tier_tests": "leaderboard's tier tests", "pairs": "compare --all"})


def against_recomputation(printed: Printed, again: Printed) -> pd.DataFrame:
    """Every table of `printed` against the same table recomputed (`again`): each shared column agent by agent or
    pair by pair (the one-truth invariant across the two)."""
    found = []
    for key in AGENT_KEYS + ("tier_tests",) + PAIR_KEYS:
        mine, theirs = getattr(printed, key), getattr(again, "pairs" if key == "single" else key)
        if mine is None or theirs is None:
            continue
        index = {"tier_tests": ["agent", "next"], "pairs": ["agent_a", "agent_b"], "single": ["agent_a", "agent_b"]}
        keys = index.get(key, ["agent"])
        x, y = mine.set_index(keys), theirs.set_index(keys)
        for at in x.index.intersection(y.index):
            for column in x.columns.intersection(y.columns):
                if not same_cell(x.at[at, column], y.at[at, column]):
                    found.append({"invariant": "as recomputed", "where": f"{printed.where(key)}: {at}.{column}",
                                  "what": f"printed {x.at[at, column]!r}, recomputed {y.at[at, column]!r}"})
        missing = y.index.difference(x.index) if key != "single" else []
        for at in missing:
            found.append({"invariant": "as recomputed", "where": f"{printed.where(key)}: {at}",
                          "what": "recomputed but not printed"})
    return pd.DataFrame(found, columns=COLUMNS)


def check(store=None, results: list[str] | None = None, runner: str | None = None, phase: list[str] | None = None,
          where: list[str] | None = None, parallel: bool = False, seed: int = 0) -> CheckJobResult:
    """Check the printed numbers about agents' strength (module doc). store : a `Store` (None with `results`);
    results : results folders to read. Main table `violations` (invariant, where, what; empty when all hold); the
    result fails (the command exits 1) when any invariant is broken. Fields: `checked` (what was read),
    `violations` (count). ValueError when neither a store nor folders are given, or the folders are not one
    board's."""
    if store is None and not results:
        raise ValueError("give --store STORE (ratings, leaderboard and compare --all computed and checked) or "
                         "--results FOLDER ... (the folders those jobs wrote, checked as written)")
    scope = dict(runner=runner, phase=phase, where=where, parallel=parallel, seed=seed)  # as each job takes them
    level, problems = 0.95, []
    if results:
        printed, problems, written = read_results(results)
        if "--level" in written:
            level = float(written["--level"][0])
        if store is not None:
            if {"--bootstrap", "--level"} & set(written):
                raise ValueError("the folders were written with --bootstrap or --level; the recomputation on the store "
                                 "reads the default draws and level: check the folders without --store")
            again = _recomputed(store, _written_scope(written, scope))
            problems += against_recomputation(printed, again).to_dict("records")
    else:
        printed = _recomputed(store, scope)
    recorded = seats_recorded(store, runner) if store is not None else None
    found = pd.concat([pd.DataFrame(problems, columns=COLUMNS), check_outputs(printed, level, recorded)],
                      ignore_index=True)
    read = [f"{len(t)} {k}" for k, t in (("agents", printed.board if printed.board is not None else printed.ratings),
                                         ("pairs", printed.pairs), ("neighbour tests", printed.tier_tests),
                                         ("single comparisons", printed.single), ("cyclic shares", printed.cyclic))
            if t is not None]
    checked = ", ".join(read) + (f" from {len(results)} folder(s)" if results else "") + (
        "; against a recomputation on the store" if results and store is not None else "")
    lines = ["every invariant holds: " + checked] if found.empty else [
        f"{len(found)} violation(s) over {checked}:", found.to_string(index=False)]
    return CheckJobResult("check", {"violations": found}, [], {}, fields={"checked": checked, "violations": len(found)},
                          lines=lines, failure=None if found.empty else f"{len(found)} invariant(s) broken")


def _written_scope(written: dict, scope: dict) -> dict:
    """The jobs' scope as the folders were written (their provenance's flags), else as given."""
    out = dict(scope)
    if "--runner" in written:
        out["runner"] = written["--runner"][0]
    if "--phase" in written:
        out["phase"] = written["--phase"]
    if "--where" in written:
        out["where"] = written["--where"]
    if "--parallel" in written:
        out["parallel"] = True
    if "--seed" in written:
        out["seed"] = int(written["--seed"][0])
    return out
