"""Checks of a rendered figure as a reader sees it: its size on the page and that no two labels overlap."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.text import Text

from referee.present.figures import MAX_HEIGHT, TWO_COLUMNS

SLACK = 0.05  # inches


def _shown(text: Text | None) -> bool:
    return text is not None and text.get_visible() and bool(text.get_text().strip())


def rendered_texts(fig: Figure) -> list[Text]:
    """Every piece of text drawn on `fig`: titles, axis labels, tick labels inside the view, annotations,
    legend entries, figure texts. Draws the figure first."""
    fig.canvas.draw()
    out: list[Text] = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) * 1e-6
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if lo - span <= tick.get_loc() <= hi + span:
                    out += [t for t in (tick.label1, tick.label2) if _shown(t)]
            out += [t for t in (axis.label, axis.get_offset_text()) if _shown(t)]
        out += [t for t in (ax.title, ax._left_title, ax._right_title) if _shown(t)]
        out += [t for t in ax.texts if _shown(t)]
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            out += [t for t in legend.get_texts() + [legend.get_title()] if _shown(t)]
    out += [t for t in fig.texts if _shown(t)]
    if _shown(getattr(fig, "_suptitle", None)):
        out.append(fig._suptitle)
    for legend in fig.legends:
        out += [t for t in legend.get_texts() if _shown(t)]
    unique = {id(t): t for t in out}  # the suptitle is also among fig.texts
    return list(unique.values())


def figure_problems(fig: Figure) -> list[str]:
    """What a reader would object to in `fig`: a size beyond two columns by `MAX_HEIGHT` inches, text
    outside the figure (cut off), or two texts overlapping (from their rendered extents, 1 px tolerance)."""
    problems = []
    width, height = fig.get_size_inches()
    if width > TWO_COLUMNS + SLACK or height > MAX_HEIGHT + SLACK:
        problems.append(f"size {width:.2f} x {height:.2f} in exceeds {TWO_COLUMNS} x {MAX_HEIGHT} in")
    texts = rendered_texts(fig)
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]
    w_px, h_px = width * fig.dpi, height * fig.dpi
    for text, box in zip(texts, boxes):
        if box.x0 < -1 or box.y0 < -1 or box.x1 > w_px + 1 or box.y1 > h_px + 1:
            problems.append(f"text {text.get_text()!r} is cut off (extends outside the figure)")
    for i in range(len(boxes)):
        a = boxes[i]
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            if min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1:
                problems.append(f"texts overlap: {texts[i].get_text()!r} and {texts[j].get_text()!r}")
    return problems
