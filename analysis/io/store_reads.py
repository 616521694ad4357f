"""The store's typed readers (`referee.io.store.Store` inherits them): each canonical table a job reads, by a
method named for it, and the queries the report needs; no module outside `referee.io` reads the store by table
name or SQL. Columns are those of `referee.io.schema.TABLES`."""

from __future__ import annotations

import pandas as pd

# the columns that say which file (by its hash, as the sources table names it) and which record a row came from: the
# store keeps them for whoever traces a row back; no analysis reads them (a million arena matches and their two
# million results hold 220 MB of them in pandas)
PROVENANCE = ("content_hash", "record_index")


class StoreReads:
    """Typed reads of a store (`self.table`, `self.query`)."""

    def matches(self, leave_out: tuple[str, ...] = ()) -> pd.DataFrame:
        """One row per match: match_id, runner, game, scenario, phase, ... (`TABLES['matches']`), without the
        columns in `leave_out` (`PROVENANCE`: what no analysis reads, 80 MB of a million arena matches)."""
        return self.table("matches", leave_out)

    def results(self, leave_out: tuple[str, ...] = ()) -> pd.DataFrame:
        """One row per player of a match: match_id, player, agent, score, rank, ... (`TABLES['results']`), without
        the columns in `leave_out`."""
        return self.table("results", leave_out)

    def measures(self) -> pd.DataFrame:
        """One row per measure of a player in a match: match_id, player, name, value, kind, ..."""
        return self.table("measures")

    def events(self) -> pd.DataFrame:
        """One row per event of a match log: match_id, step, actor, kind, target, ... (`TABLES['events']`)."""
        return self.table("events")

    def scenarios(self) -> pd.DataFrame:
        """The catalogue's scenarios: scenario, substrate, background, mode, ... (`TABLES['scenarios']`)."""
        return self.table("scenarios")

    def scenario_tags(self) -> pd.DataFrame:
        """One row per (scenario, tag) of the catalogue."""
        return self.table("scenario_tags")

    def sources(self) -> pd.DataFrame:
        """One row per ingested file: source_file, content_hash, runner, accepted, ... (`TABLES['sources']`)."""
        return self.table("sources")

    def calibrations(self) -> pd.DataFrame:
        """One row per calibration run (`referee calibrate`): model, ran_at, sims, passed, folder, summary."""
        return self.table("calibrations")

    def tagged_runners(self) -> list[str]:
        """The runners, by name, whose scored matches name a scenario with catalogue tags: those the beta
        regressions and Measurement Layouts can model."""
        return self.query("SELECT DISTINCT m.runner FROM matches m JOIN scenario_tags t USING (scenario) "
                          "JOIN results r USING (match_id) WHERE r.score IS NOT NULL ORDER BY m.runner")["runner"].tolist()
