"""The runners' registry: every built-in runner's entry (`referee.io.loaders.runner.Runner`, its loader module's
`RUNNER`), by name. Ties in detection keep this order; the table runner is the tabular fallback and scores lowest.
A runner mapping file's runner is not registered: its name may be none of these (`reserved_runner_name`)."""

from __future__ import annotations

from referee.io.loaders import (aoa, arena, clembench, compact, concordia, concordia_log, gtbench, inspect_log, kaggle,
                                 meltingpot, ranked, records, sotopia, table, textarena)
from referee.io.loaders.runner import Runner

RUNNERS: dict[str, Runner] = {m.RUNNER.name: m.RUNNER for m in (
    concordia, concordia_log, records, aoa, compact, arena, ranked, textarena, kaggle, clembench, gtbench, inspect_log,
    sotopia, meltingpot, table)}
MAPPED = "mapped"  # the mapping format's own name (`referee formats mapped`, `referee.io.loaders.mapped.RUNNER`)


def reserved_runner_name(name: str) -> bool:
    """Whether a mapping may not be called `name`: a built-in runner's name, or the mapping format's ('mapped'),
    whose matches would mix with the built-in runner's."""
    return name.strip().lower() in (*RUNNERS, MAPPED)
