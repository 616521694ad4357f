"""The store's own readers and writers beyond its tables (`referee.io.store.Store` inherits them): the per-runner
overview and outcomes the report shows, an LLM judge's cache and its one-transaction write, and the export to
Parquet. Every SQL query referee runs lives in the store's modules (`store`, `store_file`, this one).

The Parquet export writes `out/{table}/runner=R/game=G/*.parquet` for the tables that hang off matches (matches,
results, measures, events: each row partitioned by its match's runner and game; a match without a game goes under
`game=(none)`; an empty table is one empty file with the columns), and `out/{table}.parquet` for the others
(scenarios, scenario_tags, quarantine, sources). DuckDB (`read_parquet('out/results/**/*.parquet',
hive_partitioning=1)`), pandas (`pd.read_parquet('out/results')`) and Dask read it back; the partition columns come
back as `runner` and `game`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from referee.io.schema import TABLES, columns

PARTITIONED = ("matches", "results", "measures", "events")
NO_GAME = "(none)"


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")  # a SQL string literal's quote doubled


class StoreQueries:
    """Readers and writers of a store (`self.con`, a DuckDB connection; `self.query`, `self._append`)."""

    def has_attribute(self, table: str, key: str) -> bool:
        """Whether any row of `table` (results, matches) keeps `key` in its `attrs` JSON (a column of the ingested
        file that was not declared as a measure)."""
        if table not in TABLES or "attrs" not in columns(table):
            raise KeyError(f"table {table!r} has no attrs; tables with attrs: "
                           f"{sorted(t for t in TABLES if 'attrs' in columns(t))}")
        if not key:
            return False
        path = '$."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'  # quoted: any name is one key, never a path
        found = self.con.execute(f"SELECT count(*) FROM {table} WHERE json_extract(attrs, ?) IS NOT NULL",
                                 [path]).fetchall()
        return bool(found[0][0])

    def runner_overview(self) -> pd.DataFrame:
        """One row per runner: runner, matches, agents, results, measures, events."""
        return self.query("""
            SELECT m.runner, count(DISTINCT m.match_id) AS matches, count(DISTINCT r.agent) AS agents,
                   count(r.player) AS results,
                   (SELECT count(*) FROM measures x JOIN matches y USING (match_id) WHERE y.runner = m.runner) AS measures,
                   (SELECT count(*) FROM events x JOIN matches y USING (match_id) WHERE y.runner = m.runner) AS events
            FROM matches m LEFT JOIN results r USING (match_id) GROUP BY m.runner ORDER BY m.runner""")

    def runner_outcomes(self) -> pd.DataFrame:
        """One row per runner: its players' results per outcome (win, loss, tie, forfeit, aborted, not said) and
        its aborted matches."""
        return self.query("""
            SELECT m.runner,
                   count(*) FILTER (WHERE r.outcome = 'win') AS win, count(*) FILTER (WHERE r.outcome = 'loss') AS loss,
                   count(*) FILTER (WHERE r.outcome = 'tie') AS tie,
                   count(*) FILTER (WHERE r.outcome = 'forfeit') AS forfeit,
                   count(*) FILTER (WHERE r.outcome = 'aborted') AS aborted,
                   count(*) FILTER (WHERE r.outcome IS NULL) AS "not said",
                   count(DISTINCT m.match_id) FILTER (WHERE r.outcome = 'aborted') AS "aborted matches"
            FROM matches m JOIN results r USING (match_id) GROUP BY m.runner ORDER BY m.runner""")

    def judged_keys(self) -> set[str]:
        """The cache keys of the judgments answered well (status ok)."""
        return set(self.query("SELECT key FROM judgments WHERE status = 'ok'")["key"])

    def cached_judgments(self, keys: list[str]) -> pd.DataFrame:
        """key, parsed (JSON text) of the well-answered judgments among `keys`, one row per key."""
        return self.query("SELECT key, parsed FROM judgments WHERE status = 'ok' AND key IN (SELECT unnest(?))",
                          [keys]).drop_duplicates("key")

    def record_judgments(self, rater: str, names: list[str], items: pd.DataFrame, new: pd.DataFrame,
                         quarantine: pd.DataFrame, ratings: pd.DataFrame) -> None:
        """One transaction: the new judgments, the quarantine rows, and `rater`'s ratings of `items` (match_id,
        player, other, round), its earlier ratings of the same items and measures `names` replaced."""
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            self._append("judgments", new)
            self._append("quarantine", quarantine)
            if names and len(items):
                keys = pd.DataFrame({"match_id": items["match_id"], "player": items["player"],
                                     "other": items["other"].fillna(""),
                                     "round": items["round"].fillna(-1).astype(int)})
                con.register("_judged", keys)
                try:
                    con.execute("DELETE FROM measures USING _judged k WHERE measures.kind = 'judge' AND "
                                "measures.rater = ? AND measures.name IN (SELECT unnest(?)) AND measures.match_id = "
                                "k.match_id AND measures.player = k.player AND coalesce(measures.other, '') = k.other "
                                "AND coalesce(measures.round, -1) = k.round", [rater, names])
                finally:
                    con.unregister("_judged")
            if len(ratings):
                self._append("measures", ratings.assign(content_hash=None).reindex(columns=columns("measures")))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def export_parquet(self, out: str | Path) -> dict[str, dict]:
        """Write every canonical table to `out` as Parquet (module docstring). Returns table -> {"path": where it
        went, "rows": how many}. FileExistsError when `out` exists and is not empty (nothing is overwritten)."""
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise FileExistsError(f"{out} is a file, not a folder; export to a new folder")
        if out.exists() and any(out.iterdir()):
            raise FileExistsError(f"{out} exists and is not empty; export to a new folder")
        out.mkdir(parents=True, exist_ok=True)
        written = {}
        for table in TABLES:
            cols = ", ".join(f't."{c}"' for c in columns(table) if not (table == "matches" and c in ("runner", "game")))
            rows = int(self.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
            if table in PARTITIONED:
                source = (f"SELECT {cols}, m.runner AS runner, coalesce(m.game, '{NO_GAME}') AS game FROM {table} t "
                          f"JOIN matches m USING (match_id)" if table != "matches" else
                          f"SELECT {cols}, t.runner AS runner, coalesce(t.game, '{NO_GAME}') AS game FROM matches t")
                path = out / table
                if rows:
                    self.con.execute(f"COPY ({source}) TO '{_quoted(path)}' (FORMAT PARQUET, PARTITION_BY (runner, "
                                     "game))")
                else:  # one empty file with the columns, so that every reader finds the table
                    path.mkdir()
                    self.con.execute(f"COPY ({source}) TO '{_quoted(path / 'empty.parquet')}' (FORMAT PARQUET)")
            else:
                path = out / f"{table}.parquet"
                self.con.execute(f"COPY (SELECT * FROM {table}) TO '{_quoted(path)}' (FORMAT PARQUET)")
            written[table] = {"path": str(path), "rows": rows}
        return written


def match_folders(con, ids: set[str]) -> dict[str, str]:
    """match id -> the folder of the file each of `ids` already in the store (connection `con`) was read from."""
    if not ids:
        return {}
    rows = con.execute("SELECT match_id, source_file FROM matches WHERE match_id IN (SELECT UNNEST(?))",
                       [sorted(ids)]).fetchall()
    return {mid: str(Path(source).parent) for mid, source in rows}
