"""Which values of a column are among a set of values: `Series.isin` at arena scale.

pandas' `isin` on an Arrow-backed string column turns every value of the set into a Python object first (a
million match ids: about 1.5 s a call, and a rating command makes a dozen). `is_in` hands both sides to Arrow's
`is_in` kernel instead (about 0.05 s for the same call) and falls back to pandas for what Arrow cannot compare
(`referee.models.codes.positions` does the same for `Index.get_indexer`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def is_in(values: pd.Series, among) -> np.ndarray:
    """Boolean mask, shape (len(values),): True where `values` (a Series) holds one of `among` (a Series, an
    array, a list or a set). Missing values are never in the set (pandas would match a NaN to a NaN); values of
    different kinds never match ("1" is not 1)."""
    pool = among if isinstance(among, (pd.Series, pd.Index, np.ndarray)) else pd.Series(list(among), dtype=object)
    try:
        left = pa.array(values, from_pandas=True)
        right = pa.array(pool, from_pandas=True)
        if len(right) == 0 or pa.types.is_null(right.type):
            return np.zeros(len(values), bool)
        if left.type != right.type:
            strings = (pa.string(), pa.large_string(), pa.string_view())
            if not (left.type in strings and right.type in strings):
                return np.asarray(values.isin(pool), bool)  # no cast across kinds: "1" is not 1
            right = right.cast(left.type)
        mask = pc.is_in(left, value_set=right, skip_nulls=True)
        return np.asarray(mask.fill_null(False).to_numpy(zero_copy_only=False), bool)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError):
        return np.asarray(values.isin(pool), bool)


def agents_in(frame: pd.DataFrame, columns: tuple[str, ...] = ("a", "b")) -> list[str]:
    """The distinct values of `columns` (a comparisons table's agents), sorted: one `unique` per column (a
    Python set over a million Arrow strings takes about a second; this, about 10 ms)."""
    found: set = set()
    for column in columns:
        found |= set(frame[column].unique())
    return sorted(found)
