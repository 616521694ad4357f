"""What every paper module shares: one manifest entry per numbered item of a paper (`Item`), the writer of
its figures and tables, and the manifest itself (`manifest.json`: every number of the paper with its files, or
the reason it could not be made from this store, and the protocol each was made by)."""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from referee.models import progress
from referee.present.outputs import ResultsFolder


@dataclass
class Item:
    """One numbered figure, table or finding of a paper: `number` ('Figure 2', 'Table 3', 'Section 4.1'),
    `title` (what it shows), `files` (written, relative to the output folder; empty when not made), `reason`
    (why it was not made from this store), `protocol` (model, likelihood, prior, normalisation, folds,
    finalists ... as used), `referee_default` (where referee's default analysis would differ), and where the
    paper's own data reproduce one of its numbers, `published` beside `computed` and their `difference`
    (`quote`)."""

    number: str
    title: str
    files: list[str] = field(default_factory=list)
    reason: str | None = None
    protocol: dict = field(default_factory=dict)
    referee_default: str | None = None
    published: dict | None = None  # {"value", "where"}: the paper's own number, quoted only beside `computed`
    computed: float | int | str | None = None  # referee's number for the same quantity, from this store
    difference: float | None = None  # computed - published, where both are numbers

    def quote(self, value, where: str, computed) -> "Item":
        """Quote the paper's `value` (at `where`, e.g. 'Section 4.1') beside referee's `computed` for the same
        quantity, with their difference where both are numbers; returns the item."""
        self.published, self.computed = {"value": value, "where": where}, computed
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, computed))
        # the difference as a reader reads it (175.3 - 175 is 0.3, not 0.30000000000001137)
        self.difference = float(f"{computed - value:.10g}") if numbers else None
        return self


KINDS = ("Figure", "Table", "Section", "Appendix")  # the manifest lists items in this order, then by number


def paper_order(number: str) -> tuple:
    """Sort key of an item number: its kind (`KINDS`), then its numbers ('Section 4.10' after 'Section 4.9')."""
    kind, _, rest = number.partition(" ")
    digits = "".join(c if c.isdigit() else " " for c in rest.split("(")[0]).split()
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), [int(d) for d in digits], rest)


def file_stem(number: str) -> str:
    """'Figure 3 (left)' -> 'figure_3_left', 'Table 12' -> 'table_12', 'Section 4.1' -> 'section_4_1'."""
    return "_".join("".join(c if c.isalnum() else " " for c in number.lower()).split())


def readable_values(value):
    """A protocol's values as the paper prints them: every float (in a dict or list too) as a table cell reads
    (`referee.present.cells.cell_text`: about four significant digits, '—' for a missing one); other values as
    they are."""
    from referee.present.cells import cell_text

    if isinstance(value, dict):
        return {k: readable_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [readable_values(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return cell_text(value)
    return value


def _cut(text: str, most: int) -> str:
    """`text` in at most `most` characters, '...' ending one that was cut (a progress line's item title or reason)."""
    return text if len(text) <= most else text[:most - 3] + "..."


class PaperWriter:
    """Writes a paper's items into a results folder: `figure(item, fig[, table])` (PNG, SVG and its numbers), `table(item, frame)`
    (CSV), `missing(item, reason)`, then `close(paper, protocol)` writes `manifest.json` and returns it."""

    def __init__(self, folder: ResultsFolder, paper: str = "paper"):
        self.folder, self.paper = folder, paper
        self.items: list[Item] = []
        self.began = self.last = time.perf_counter()

    def figure(self, item: Item, fig, table: pd.DataFrame | None = None) -> Item:
        """Write `fig` as NUMBER.png and .svg, and `table` (the numbers it draws) as NUMBER.csv when given;
        record the item (once)."""
        stem = file_stem(item.number)
        self.folder.figure(stem, fig)
        item.files += [f"{stem}.png", f"{stem}.svg"]
        if table is not None:
            self.table(item, table)
        return self._keep(item)

    def table(self, item: Item, frame: pd.DataFrame, suffix: str = "") -> Item:
        """Write `frame` as NUMBER[SUFFIX].csv and record the item (once)."""
        stem = file_stem(item.number) + suffix
        self.folder.table(stem, frame)
        item.files.append(f"{stem}.csv")
        return self._keep(item)

    def missing(self, item: Item, reason: str) -> Item:
        """Record an item this store cannot make, with the reason."""
        item.reason = reason
        return self._keep(item)

    def _keep(self, item: Item) -> Item:
        """Record `item` once, its protocol's numbers as a reader reads them (`readable_values`); its first record
        is said as the paper's progress (on stdout: the paper's log), with the time since the item before it."""
        item.protocol = readable_values(item.protocol)
        if not any(kept is item for kept in self.items):
            self.items.append(item)
            now = time.perf_counter()
            made = "made" if item.files else f"not made ({_cut(item.reason, 100)})" if item.reason else "not made"
            progress.say(f"referee paper {self.paper} [{len(self.items)}] {item.number} ({_cut(item.title, 60)}): {made}; "
                         f"{progress.seconds(now - self.last)} ({progress.seconds(now - self.began)} in all)",
                         sys.stdout)
            self.last = now
        return item

    def close(self, paper: str, protocol: dict, notes: list[str]) -> dict:
        """Write `manifest.json` (paper, protocol, notes, made / not_made counts, items as recorded, and the
        files with their hashes) and the folder's provenance; returns the manifest."""
        manifest = {"paper": paper, "protocol": protocol, "notes": notes,
                    "made": sum(bool(i.files) for i in self.items),
                    "not_made": sum(not i.files for i in self.items),
                    "items": [asdict(i) for i in sorted(self.items, key=lambda i: paper_order(i.number))]}
        self.folder.notes(notes)
        return self.folder.close(extra=manifest)
