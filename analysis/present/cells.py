"""How one table cell reads, in HTML, Markdown and the terminal alike: numbers in fixed notation with about four
significant digits (never e-notation), a missing value as a dash, an open bound as "open", a truth value as
yes/no. `cell_text(value)` is one cell; `readable(frame)` a whole table as text, for printing. The CSV files keep
the numbers themselves.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from referee.readings import SMALLEST  # below this (and above 0) a number prints as '<0.001'

MISSING = "—"  # an em dash: a cell with no value
OPEN = "open"  # an interval's end that the data leave open (an agent that never lost, or never won)
DIGITS = 4  # significant digits of a non-integer number
LONGEST = 240  # characters of a text cell shown; a longer one is cut and says so (the CSV holds it whole)
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # shown as its escape: a player's text never drives a terminal


def _number(value: float) -> str:
    if math.isinf(value):
        return OPEN
    if value == 0 or float(value).is_integer() and abs(value) < 1e15:
        return f"{value:.0f}"
    if abs(value) < SMALLEST:
        return f"<{SMALLEST:g}" if value > 0 else f">-{SMALLEST:g}"
    decimals = max(0, DIGITS - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def cell_text(value) -> str:
    """One cell as a reader sees it: '—' for a missing value (None, NaN, NA, NaT), 'open' for an infinite bound,
    'yes'/'no' for a truth value, integers whole, other numbers with four significant digits in fixed notation
    ('<0.001' for a small positive number), anything else as its text (cut after LONGEST characters; a control
    character, which a player's text may hold to drive a terminal, shown as its escape: '\x1b', '\n')."""
    if value is None or value is pd.NA or value is pd.NaT:
        return MISSING
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return MISSING if math.isnan(value) else _number(float(value))
    text = CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(value))
    if len(text) > LONGEST:
        return text[:LONGEST].rsplit(" ", 1)[0] + f" … ({len(text):,} characters; whole in the CSV)"
    return MISSING if text in ("", "nan", "<NA>", "None", "NaN") else text


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell of `frame` as `cell_text` (a table of strings, same index and columns)."""
    return frame.astype(object).map(cell_text) if len(frame.columns) else frame.astype(object)
