"""Markdown that shows what it says: text that comes from the data (agent names, notes, table cells) is escaped,
so that no renderer reads it as HTML (`<script>`, `<img onerror>`), as Markdown (a link, emphasis, code, a
heading) or a cell's `|` as a column break.
`referee.present.report` writes report.md with these, `referee.readings.audit_markdown` audit.md."""

from __future__ import annotations

import re

import pandas as pd
from markupsafe import Markup

from referee.markdown_text import MARKDOWN, md_text  # noqa: F401 - the escaping itself lives below every layer


def md_cell(value):
    """One table cell: text escaped (`md_text`) with `|` as `\\|`; numbers and missing values as they are."""
    return md_text(value).replace("|", "\\|") if isinstance(value, str) else value


def md_table(cells: pd.DataFrame) -> Markup:
    """A table of cell texts (`referee.present.cells.readable`) as a Markdown table, every cell and header escaped
    (`md_cell`), numbers right-aligned; Markup, so that the template does not escape it again."""
    shown = cells.set_axis([md_cell(str(c)) for c in cells.columns], axis=1)
    shown = shown.map(md_cell) if len(shown.columns) else shown
    align = ["right" if _numbers(shown[c]) else "left" for c in shown.columns]
    return Markup(shown.to_markdown(index=False, disable_numparse=True, colalign=align))


NUMBER = re.compile(r"^[-+<>≥≤]?\s?\d[\d.,–\s-]*$|^—$|^open$")  # a number, interval or rank set as a cell reads


def _numbers(column: pd.Series) -> bool:
    """Whether a column of cell texts holds numbers (right-aligned, as figures are set)."""
    texts = [str(v) for v in column]
    return bool(texts) and all(NUMBER.match(v) for v in texts) and any(v[:1].isdigit() or v[1:2].isdigit()
                                                                     for v in texts)


def md_finalize(value):
    """The Markdown template's finalize: every `{{ value }}` escaped unless already Markdown (`Markup`)."""
    return value if isinstance(value, Markup) else md_text(value)
