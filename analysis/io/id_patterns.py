"""Where the model hides in a player id: a regular expression with a group `agent` learnt from the ids of
sampled games (`referee map`'s `[agents] pattern`). Ids such as 'Player3_Game17_gpt-5' or 'gpt-5:0:a12' are
split on a separator; the tokens that change from game to game on one side (literal tokens, or letters then
digits that vary) are stripped until what is left recurs across games."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

SEPARATORS = ("_", "-", ":", "|", "/", ".", " ")


def id_pattern(ids_by_file: list[set[str]]) -> tuple[str | None, str]:
    """A regular expression with a group `agent` that strips the parts of the player ids that change from
    game to game (e.g. 'Player3_Game17_' of 'Player3_Game17_gpt-5'), so that the agents recur across files.

    `ids_by_file`: per sampled file, the player ids its results name. Returns (regex, evidence sentence), or
    (None, "") when no prefix or suffix of separator-delimited tokens (literal, or letters then varying
    digits) leaves agents that recur. Ids that already recur across files are their own agents."""
    ids = sorted({p for f in ids_by_file for p in f})
    if not ids:
        return None, ""
    in_files = Counter(p for f in ids_by_file for p in f)
    merged: list[str] = []  # patterns set aside because they make one agent of two players of most games
    found = _stripped(ids_by_file, ids, merged)
    if sum(1 for c in in_files.values() if c > 1) >= 0.5 * len(ids):
        # ids that recur are agents, unless a seat number in them ('Player2_gpt-5', 'Player3_gpt-5') splits one
        # model into several: then the seat is stripped as any token that changes from game to game
        if found[0] is not None and r"\d+" in found[0]:
            return found
        return "^(?P<agent>.+)$", ("the same player ids recur across files: each id is taken as the agent"
                                   + (f"; {merged[0]}" if merged else ""))
    return found if found[0] is not None or not merged else (None, merged[0])


def _stripped(ids_by_file: list[set[str]], ids: list[str], merged: list[str]) -> tuple[str | None, str]:
    """`id_pattern`'s search: the fewest separator-delimited tokens stripped from one side of every id that make
    the agents recur, as (regex, evidence), or (None, ""). A stripping that makes one agent of two players of one
    game in most games ('llm-0' ... 'llm-7' all 'llm') is never taken; why goes to `merged`."""
    for sep in SEPARATORS:
        if not all(sep in p for p in ids):
            continue
        tokens = [p.split(sep) for p in ids]
        shortest = min(len(t) for t in tokens)
        for side in ("prefix", "suffix"):
            fits = {k: _unmerged(_strip(ids_by_file, tokens, sep, side, k), ids_by_file, ids, sep, side, k, merged)
                    for k in range(1, shortest)}
            ks = [k for k, fit in fits.items() if fit is not None]
            if not ks:
                continue
            k = ks[0]  # the fewest tokens stripped that make agents recur, then on while the next token varies too
            while fits.get(k + 1) is not None and fits[k + 1][0][-1].endswith(r"\d+") \
                    and len(set(fits[k + 1][1])) <= len(set(fits[k][1])):
                k += 1
            regex, agents = fits[k][2], fits[k][1]
            stripped = sep.join(tokens[0][:k] if side == "prefix" else tokens[0][-k:])
            return regex, (f"{len(ids):,} player ids, {len(set(agents))} agents once the {side} '{stripped}' "
                           f"(and its like) is stripped, e.g. {ids[0]!r} -> {agents[0]!r}")
    return None, ""


MERGED_GAMES = 0.5  # a pattern that makes one agent of two players in more than this share of games is set aside


def _unmerged(fit, ids_by_file: list[set[str]], ids: list[str], sep: str, side: str, k: int, merged: list[str]):
    """`fit` (a `_strip` result) unless its agents merge two players of one game in most games (then None, and
    why appended to `merged`): a game's players are distinct, so a pattern that folds them into one agent reads
    the seat number as if it were noise."""
    if fit is None:
        return None
    of = dict(zip(ids, fit[1]))
    games = [f for f in ids_by_file if len(f) >= 2]
    folded = sum(1 for f in games if len({of[p] for p in f}) < len(f))
    if games and folded > MERGED_GAMES * len(games):
        stripped = sep.join(ids[0].split(sep)[:k] if side == "prefix" else ids[0].split(sep)[-k:])
        shown = f"{stripped}{sep}" if side == "prefix" else f"{sep}{stripped}"
        merged.append(f"stripping the {side} '{shown}' would make one agent of two players of one game in "
                      f"{folded} of {len(games)} games ({len(set(fit[1]))} agents for {len(ids)} ids), so it is not")
        return None
    return fit


def _strip(ids_by_file: list[set[str]], tokens: list[list[str]], sep: str, side: str, k: int):
    """(token patterns, agents, regex) when stripping `k` tokens from the `side` of every id leaves agents that
    recur (at most half as many as ids, one seen in two files or more), else None."""
    ids = [sep.join(t) for t in tokens]
    parts = [t[:k] if side == "prefix" else t[-k:] for t in tokens]
    pieces = [_generalise([p[j] for p in parts]) for j in range(k)]
    if any(x is None for x in pieces):
        return None
    agents = [sep.join(t[k:] if side == "prefix" else t[:-k]) for t in tokens]
    of = dict(zip(ids, agents))
    files_of = defaultdict(set)
    for i, f in enumerate(ids_by_file):
        for p in f:
            files_of[of[p]].add(i)
    if len(set(agents)) > len(ids) / 2 or not any(len(v) > 1 for v in files_of.values()):
        return None
    s = re.escape(sep)
    regex = ("^" + s.join(pieces) + s + "(?P<agent>.+)$" if side == "prefix"
             else "^(?P<agent>.+?)" + s + s.join(pieces) + "$")
    compiled = re.compile(regex)
    if not all((m := compiled.search(p)) and m.group("agent") == a for p, a in zip(ids, agents)):
        return None
    return (pieces if side == "prefix" else pieces[::-1]), agents, regex


def _generalise(values: list[str]) -> str | None:
    """A regular expression for one token position: the literal when every id has the same token, letters
    followed by digits that vary ('Game\\d+'), or None."""
    if len(set(values)) == 1:
        return re.escape(values[0])
    shapes = {re.fullmatch(r"([A-Za-z]*)(\d+)", v).group(1) if re.fullmatch(r"([A-Za-z]*)(\d+)", v) else None
              for v in values}
    if len(shapes) == 1 and None not in shapes:
        return re.escape(shapes.pop()) + r"\d+"
    return None


_LETTERS_NUMBER = re.compile(r"([A-Za-z]+)[ _\-:]?(\d+)")


def id_forms(full: str) -> set[str]:
    """The shorter forms a log may name the player `full` by, lower-cased: its first letters-then-number token
    ('Player5_gpt-4o' -> 'player5'), that token's initial and number ('p5'), the number alone ('5', a seat
    number), and its first separator-delimited token."""
    forms = set()
    found = _LETTERS_NUMBER.search(full)
    if found:
        letters, number = found.group(1), found.group(2)
        forms |= {f"{letters}{number}".lower(), f"{letters[0]}{number}".lower(), number.lstrip("0") or "0"}
    for sep in SEPARATORS:
        if sep in full:
            forms.add(full.split(sep, 1)[0].lower())
            break
    forms.discard(full.lower())
    return forms


def resolve_player(reference: str, known: set[str]) -> str | None:
    """The one id of `known` (the players a match's other lines name in full) that `reference` names: itself,
    or a shorter form of exactly one of them (`id_forms`: 'P5' for 'Player5_gpt-4o', a seat number; else the id's
    end after a separator: 'mistral' for 'Player3_Game9_mistral', results keyed by model); None when no id, or
    more than one, has that form."""
    if reference in known:
        return reference
    text = str(reference).strip().lower()
    text = text.lstrip("0") or text if text.isdigit() else text
    matches = [k for k in known if k != reference and text in id_forms(k)]
    if not matches and len(str(reference)) > 1:  # the id's end after a separator: 'mistral' of 'Player3_Game9_mistral'
        matches = [k for k in known if len(k) > len(str(reference)) + 1 and k.endswith(str(reference))
                   and k[-len(str(reference)) - 1] in SEPARATORS]
    return matches[0] if len(matches) == 1 else None


def resolve_reference(reference: str, known: set[str]) -> str | None:
    """The one id of `known` (the players a match's results name) that an event's `reference` names: itself, a
    shorter form of one (`resolve_player`: 'P7' for 'Player7_Game17_o3-mini'), or a longer form of one: the
    reference holds the id whole between separators or its ends ('Player4_Game17_mistral' or
    'seat-3/mistral/run07' where the results say 'mistral', a benchmark whose results are keyed by model); the
    longest such id where one holds another. None when no id, or more than one of one length, fits."""
    found = resolve_player(reference, known)
    if found is not None:
        return found
    text = str(reference)
    hits = [k for k in known if len(text) > len(k) + 1 and _holds(text, k)]
    if not hits:
        return None
    longest = max(len(k) for k in hits)
    hits = [k for k in hits if len(k) == longest]
    return hits[0] if len(hits) == 1 else None


def _holds(text: str, part: str) -> bool:
    """Whether `part` stands in `text` whole: at its start or end or between separators."""
    start = text.find(part)
    while start >= 0:
        end = start + len(part)
        if (start == 0 or text[start - 1] in SEPARATORS) and (end == len(text) or text[end] in SEPARATORS):
            return True
        start = text.find(part, start + 1)
    return False
