"""The typed values a mapped runner's keys hold (`mapped.py`): text, whole numbers, numbers, scores and times, each
checked, a fault a `RecordError` naming the JSON key (`field`)."""

from __future__ import annotations

import math

from referee.io.loaders.base import RecordError, parse_time, score_value, storable_text, whole_number


def text(value, field: str) -> str | None:
    """A text field: text as it is (RecordError for a lone surrogate), a whole number or finite decimal as its
    digits; RecordError for an object, a list, a boolean, NaN or an infinity."""
    if value is None:
        return None
    if type(value) is str:
        return storable_text(value, field)
    if isinstance(value, (dict, list, bool)) or (isinstance(value, float) and not math.isfinite(value)):
        raise RecordError("wrong type", field, f"expected text, got {value!r}"[:300])
    return str(value)


def integer(value, field: str) -> int | None:
    if value is None:
        return None
    if type(value) is int:
        return whole_number(value, field)
    if isinstance(value, bool) or not isinstance(value, float) or not value.is_integer():
        raise RecordError("wrong type", field, f"expected a whole number, got {value!r}"[:300])
    return whole_number(int(value), field)


def number(value, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise RecordError("wrong type", field, f"expected a finite number, got {value!r}")
    return float(value)


def score(value, field: str) -> float | None:
    return None if value is None else score_value(value, field, allow_neg_inf=False)


def time(value, field: str):
    return None if value is None else parse_time(text(value, field), field)


KINDS = {"round": integer, "seq": integer, "value": number, "score": score, "rank": score, "time": time}  # field -> reader
