"""No machine path reaches a reader: every absolute path in a report's text and tables is written relative to the
report's folder (`relative_paths`), a bundled sample by its name in referee's data."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pandas as pd

from referee.io.resources import data_root

ABSOLUTE = re.compile(r"(?<![\w.:/)\]>-])/(?:[\w.+@%=-]+/)*[\w.+@%=-]+/?")  # a POSIX absolute path in text


def relative_paths(text, base: Path):
    """`text` with every absolute path on this machine (its first folder exists here: /tmp/..., /home/...)
    written relative to `base` (the report's folder), so that no machine path reaches a reader; anything else
    unchanged (URLs, fractions, a path whose first folder this machine lacks). A file of referee's own data (a
    bundled sample) is named from that folder: 'referee data/samples/...'."""
    if not isinstance(text, str) or "/" not in text:
        return text

    def relative(match: re.Match) -> str:
        found = match.group(0)
        first = found.strip("/").split("/")[0]
        if not first or not _top_folder(first):
            return found
        shipped, real = _shipped(), Path(found).resolve()  # (an editable install links to referee's data)
        if real.is_relative_to(shipped) and not base.is_relative_to(shipped):
            return "referee data/" + real.relative_to(shipped).as_posix()  # a bundled sample, by its name
        return os.path.relpath(found, base)

    return ABSOLUTE.sub(relative, text)


@functools.cache
def _top_folder(name: str) -> bool:
    """Whether `/name` exists on this machine (asked once per name: a report's cells repeat a few roots)."""
    return (Path("/") / name).exists()


@functools.cache
def _shipped() -> Path:
    """referee's own data folder, resolved once."""
    return Path(data_root()).resolve()


def relative_frame(frame: pd.DataFrame, base: Path) -> pd.DataFrame:
    """`frame` with `relative_paths` applied to every text column."""
    text = [c for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])]
    return frame.assign(**{c: frame[c].map(lambda v: relative_paths(v, base)) for c in text}) if text else frame
