"""The runners' registry: every built-in runner's entry (`referee.io.loaders.runner.Runner`), by name, found in the
loader modules of this package that declare one (`RUNNER`): adding a runner is adding its loader module, nothing
here. Detection ties keep the registry's order, the runners' names in alphabetical order (a fallback runner, the
table runner, is tried after every specific one whatever its name). A runner mapping file's runner is not
registered: its name may be none of these (`reserved_runner_name`)."""

from __future__ import annotations

import pkgutil
from importlib import import_module
from pathlib import Path

from referee.io.loaders.runner import Runner

MAPPED = "mapped"  # the mapping format's own name (`referee formats mapped`, `referee.io.loaders.mapped.RUNNER`)


def _declared() -> dict[str, Runner]:
    """Every loader module's `RUNNER` but the mapping format's, by runner name in alphabetical order."""
    found = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name != MAPPED:
            entry = getattr(import_module(f"{__package__}.{info.name}"), "RUNNER", None)
            if isinstance(entry, Runner):
                found[entry.name] = entry
    return dict(sorted(found.items()))


RUNNERS: dict[str, Runner] = _declared()


def reserved_runner_name(name: str) -> bool:
    """Whether a mapping may not be called `name`: a built-in runner's name, or the mapping format's ('mapped'),
    whose matches would mix with the built-in runner's."""
    return name.strip().lower() in (*RUNNERS, MAPPED)
