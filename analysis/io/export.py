"""The store as Parquet: one folder per canonical table, data tables partitioned by runner and game.

`export_parquet(store, out)` writes `out/{table}/runner=R/game=G/*.parquet` for the tables that hang off
matches (matches, results, measures, events: each row partitioned by its match's runner and game; a match
without a game goes under `game=(none)`; an empty table is one empty file with the columns), and `out/{table}.parquet` for the others (scenarios,
scenario_tags, quarantine, sources). DuckDB (`read_parquet('out/results/**/*.parquet', hive_partitioning=1)`),
pandas (`pd.read_parquet('out/results')`) and Dask (`dask.dataframe.read_parquet('out/results')`) read it
back; the partition columns come back as `runner` and `game`.
"""

from __future__ import annotations

from pathlib import Path

from referee.io.schema import TABLES, columns

PARTITIONED = ("matches", "results", "measures", "events")
NO_GAME = "(none)"


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")  # a SQL string literal's quote doubled


def export_parquet(store, out: str | Path) -> dict[str, dict]:
    """Write every canonical table of an open `referee.io.store.Store` to `out` as Parquet (module docstring).

    Returns table -> {"path": where it went, "rows": how many}. Raises FileExistsError when `out` exists and
    is not empty (nothing is overwritten).
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not empty; export to a new folder")
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for table in TABLES:
        cols = ", ".join(f't."{c}"' for c in columns(table) if not (table == "matches" and c in ("runner", "game")))
        rows = int(store.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
        if table in PARTITIONED:
            source = (f"SELECT {cols}, m.runner AS runner, coalesce(m.game, '{NO_GAME}') AS game FROM {table} t "
                      f"JOIN matches m USING (match_id)" if table != "matches" else
                      f"SELECT {cols}, t.runner AS runner, coalesce(t.game, '{NO_GAME}') AS game FROM matches t")
            path = out / table
            if rows:
                store.con.execute(f"COPY ({source}) TO '{_quoted(path)}' (FORMAT PARQUET, PARTITION_BY (runner, game))")
            else:  # one empty file with the columns, so that every reader finds the table
                path.mkdir()
                store.con.execute(f"COPY ({source}) TO '{_quoted(path / 'empty.parquet')}' (FORMAT PARQUET)")
        else:
            path = out / f"{table}.parquet"
            store.con.execute(f"COPY (SELECT * FROM {table}) TO '{_quoted(path)}' (FORMAT PARQUET)")
        written[table] = {"path": str(path), "rows": rows}
    return written
