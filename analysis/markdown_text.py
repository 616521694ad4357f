"""Text from the data as Markdown that shows what it says: below every layer, so that a reading
(`referee.readings`) and the report (`referee.present.markdown`) escape alike."""

from __future__ import annotations

import html
import re

# Markdown syntax in text: brackets (links, images), emphasis and code marks, strikethrough, a backslash, an
# underscore that can open or close emphasis (not one inside a word: `llm_00` stays as typed, as CommonMark
# reads it), and a `#` that starts a line (a heading). Each is escaped with a backslash (CommonMark: any ASCII
# punctuation), so a name such as `[click](javascript:alert(3))` shows as typed and links nowhere.
MARKDOWN = re.compile(r"[\\`*\[\]~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|^#", re.M)


def md_text(value) -> str:
    """`value` as Markdown text: `<`, `>` and `&` as HTML entities and Markdown's own syntax backslash-escaped
    (`MARKDOWN`), so that a renderer shows it as typed: no tag, link, emphasis, code or heading planted."""
    return MARKDOWN.sub(lambda m: "\\" + m.group(0), html.escape(str(value), quote=False))
