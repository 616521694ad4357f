"""Sentences that read a result to the user, used by the jobs (`referee.run`) and the report
(`referee.present`) alike: what a cyclic share says against its chance range, a per-game Kendall tau beside the
COMPACT paper's only when both are computed the same way, and the construct-validity audit's report (audit.md)."""

from __future__ import annotations

import pandas as pd

from referee.models.validity import CHECK_TITLES

LIST_ITEMS = 10  # items of a list named in a sentence; the rest counted (the whole list is in a table or CSV)
SMALLEST = 0.001  # a positive number below this reads '< 0.001', in sentences and table cells alike


def chance_reading(row) -> str:
    """One sentence on a cyclic share against its chance range (a `GameRanking.cyclic` row)."""
    verdict = ("more than noise in a one-axis game explains" if row.chance_p < 0.05
               else "no evidence of cycles beyond noise")
    p = "p < 0.005" if row.chance_p < 0.005 else f"p = {row.chance_p:.2f}"
    return (f"games with one axis and the same comparisons reach {row.chance_lower:.2f}-{row.chance_upper:.2f} by "
            f"chance (a share of {row.cyclic_share:.2f} or more: {p}): {verdict}")


def cyclic_interval(row) -> str:
    """A cyclic share's bootstrap interval in words (a `GameRanking.cyclic` row): ' (95 % ...: lower-upper)', or
    '' where no bootstrap was asked, or why there is none."""
    if pd.isna(row.lower):
        return "" if str(row.interval).startswith("none: no bootstrap") else f" (no interval: {row.interval[6:]})"
    return f" ({row.interval}: {row.lower:.2f}-{row.upper:.2f})"


COMPACT_KENDALL_TAU = 0.68  # the COMPACT paper's mean per-game Kendall tau, per-game model by plain maximum likelihood


def kendall_reading(mean_tau: float, tau_elo: float | None) -> str:
    """The mean per-game Kendall tau in words: beside the COMPACT paper's 0.68 only when the per-game model was
    fitted as the paper's, by plain maximum likelihood (`tau_elo` None); otherwise it names the prior and how
    to get the paper's protocol."""
    if tau_elo is None:
        return (f"mean {mean_tau:.2f}, per-game deviations by plain maximum likelihood as in the COMPACT paper, "
                f"which reports {COMPACT_KENDALL_TAU}")
    return (f"mean {mean_tau:.2f}, per-game deviations shrunk by a Normal(0, {tau_elo:g} Elo) prior; the COMPACT "
            "paper's figure is by plain maximum likelihood (`referee paper compact`)")


def audit_markdown(result) -> str:
    """The audit's report (audit.md) for `result` (an `referee.run.social.audit.AuditResult`): the verdict, then each
    check with PASS, FAIL, INFO or NOT RUN and its reading, then the notes."""
    from referee.markdown_text import md_text as md

    lines = [f"# Construct-validity audit{': ' + md(result['formula']) if result.get('formula') else ''}", "",
             f"**Verdict:** {md(result.verdict)}", "",
             f"{result['players']} players; outcome measures: {md(', '.join(result['outcomes']))}. PASS and FAIL mark the "
             "checks against the outcome (3-6), the reproduction and the spectator check; INFO sections describe.", ""]
    for key, title in CHECK_TITLES.items():
        if key in result:
            check = result[key]
            mark = {True: "PASS", False: "FAIL", None: "INFO"}[check.get("passed")]
            lines += [f"## {title} ({mark})", "", md(check["verdict"]), ""]
        else:
            lines += [f"## {title} (NOT RUN)", "", f"Not run: {md(result.get('skipped', {}).get(key, 'no data for it'))}.",
                      ""]
    if result.notes:
        lines += ["## Notes", ""] + [f"- {md(n)}" for n in result.notes] + [""]
    return "\n".join(lines)


def cut_list(items, limit: int = LIST_ITEMS, where: str = "", sep: str = ", ") -> str:
    """Items joined with `sep`, the first `limit` of them and a count of the rest ('... and 97 more', with where
    the whole list is when `where` says)."""
    items = [str(i) for i in items]
    if len(items) <= limit:
        return sep.join(items)
    return sep.join(items[:limit]) + f" and {len(items) - limit} more" + (f" ({where})" if where else "")


def p_text(p: float) -> str:
    """'= 0.012' or '< 0.001': a p-value in a sentence as a reader reads it (never e-notation)."""
    return f"< {SMALLEST:g}" if p < SMALLEST else f"= {p:.3f}"
