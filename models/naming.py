"""Words for messages about names: the close-match suggestion every "unknown name" error gives."""

from __future__ import annotations

import difflib


def suggest(word: str, options) -> str:
    """' (did you mean 'X'?)' for the closest of `options` to a mistyped `word` (difflib, ratio >= 0.75), else ''."""
    close = difflib.get_close_matches(word, [str(o) for o in options], n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""
