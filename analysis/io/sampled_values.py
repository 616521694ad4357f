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


def hashable(value: object) -> object:
    """`value` with every list and object inside it hashable (`_Items`, `_Fields`), so that a log whose type,
    match id or player is a list or an object is drafted like any other (such keys are never chosen)."""
    if isinstance(value, list):
        return _Items(hashable(v) for v in value)
    if isinstance(value, dict):
        return _Fields((k, hashable(v)) for k, v in value.items())
    return value
