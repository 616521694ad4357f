"""Values of sampled log records that can be counted and compared whatever they hold: a list or an object
becomes hashable by its JSON (`referee map` drafts a mapping from counts of such values)."""

from __future__ import annotations

import json


class _Items(list):
    """A list value of a sampled record that can be counted and compared like text (by its JSON)."""

    def __hash__(self):
        return hash(json.dumps(self, sort_keys=True, default=str))


class _Fields(dict):
    """An object value of a sampled record that can be counted and compared like text (by its JSON)."""

    def __hash__(self):
        return hash(json.dumps(self, sort_keys=True, default=str))


DEPTH = 32  # levels of lists and objects kept; what lies deeper is one stand-in text (a draft never chooses it)
TOO_DEEP = "<nested deeper than referee map samples>"


def hashable(value: object, depth: int = DEPTH) -> object:
    """`value` with every list and object inside it hashable (`_Items`, `_Fields`), so that a log whose type,
    match id or player is a list or an object is drafted like any other (such keys are never chosen); a
    container nested deeper than `depth` levels becomes the text TOO_DEEP (a 900-deep array is a value, never
    a reason to run out of stack)."""
    if isinstance(value, (list, dict)) and depth <= 0:
        return TOO_DEEP
    if isinstance(value, list):
        return _Items(hashable(v, depth - 1) for v in value)
    if isinstance(value, dict):
        return _Fields((k, hashable(v, depth - 1)) for k, v in value.items())
    return value
