"""A canonical table's `attrs` (the JSON text each loader keeps of what a record carried beyond the schema) as
columns: `attrs_columns(frame, keys)` parses each row once and returns one column per key asked for."""

from __future__ import annotations

import json

import pandas as pd


def attrs_columns(frame: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    """One column per key of `keys`, indexed as `frame`: the value each row's `attrs` JSON holds under it, None
    where the row has no attrs or not that key."""
    parsed = frame["attrs"].map(lambda a: json.loads(a) if isinstance(a, str) and a else {})
    return pd.DataFrame({key: parsed.map(lambda a, k=key: a.get(k)) for key in keys}, index=frame.index)
