"""A loader's record-level and file-level errors, and the limits of what a quarantine keeps and the format probe
reads (`referee.io.loaders.base` re-exports them for the loaders)."""

from __future__ import annotations

DATA_TABLES = ("matches", "results", "measures", "events")
RAW_CAP = 1 << 20  # raw text kept in quarantine per source file: at most 1 MiB (the source keeps the rest)
FILE_RAW_CAP = 64 << 10  # a file set aside whole keeps its first 64 KiB as raw text (it stays at its path)
HEAD_RAW_CAP = 4 << 10  # a file no runner recognises keeps its head only: thousands of them stay in bounded memory
PROBE = 10  # a file whose first PROBE records all fail the same way (FORMAT_REASONS) is not this runner
FORMAT_REASONS = ("unexpected field", "missing field", "wrong type", "not JSON lines", "not this runner")
_SYNTAX = ("malformed JSON", "truncated line", "truncated file")


def _way(reason: str, field: str | None) -> tuple[str, str | None]:
    """How a record failed, for the format probe: JSON syntax errors, and values that are not objects,
    are one way (the file is not JSON lines)."""
    if reason in _SYNTAX + ("not UTF-8", "too deeply nested") or (reason == "wrong type" and field is None):
        return "not JSON lines", None
    return reason, field


class RecordError(ValueError):
    """One record is bad input: `reason` is a short category, `field` the offending field (or None)."""

    def __init__(self, reason: str, field: str | None, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.field = field
        self.detail = detail


class NotThisRunner(ValueError):
    """The file is not in this loader's format (it may be another runner's).

    `runner` is the loader that gave up, `reason`/`field` how its first records failed, `detail` the
    sentence; the store tries the next candidate runner and, when none fits, quarantines the file once.
    """

    def __init__(self, detail: str, runner: str | None = None, reason: str = "not this runner",
                 field: str | None = None):
        super().__init__(detail)
        self.detail = detail
        self.runner = runner
        self.reason = reason
        self.field = field


def checked_keys(value: object, what: str, required=(), allowed=None, where: str | None = None) -> dict:
    """`value` as a record object that carries every key of `required` and, when `allowed` is given, no key
    outside it; else RecordError ('wrong type', 'missing field' or 'unexpected field') naming the field (under
    `where`, e.g. 'players[2]') and `what` the object is (e.g. 'a player')."""
    at = (lambda key: f"{where}.{key}" if where else key)  # noqa: E731
    if not isinstance(value, dict):
        raise RecordError("wrong type", where, f"expected {what} object, got {type(value).__name__}")
    missing = [k for k in required if k not in value]
    if missing:
        raise RecordError("missing field", at(missing[0]), f"{what} carries '{missing[0]}'")
    extra = sorted(set(value) - set(allowed)) if allowed is not None else []
    if extra:
        raise RecordError("unexpected field", at(extra[0]), f"field '{extra[0]}' is not part of {what}")
    return value


INT64 = (-(1 << 63), (1 << 63) - 1)  # the store's whole numbers (BIGINT)


def storable_text(value: str, field: str | None) -> str:
    """`value` when the store can hold it (UTF-8 text); RecordError('not UTF-8') for a lone surrogate, which
    a JSON escape such as "\\ud800" makes and no UTF-8 text holds. O(1) for ASCII text."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise RecordError("not UTF-8", field, f"the text {value[:exc.start][-40:]!r}... holds a lone surrogate "
                              f"{value[exc.start]!r}, which is not UTF-8 text") from None
    return value


def whole_number(value: int, field: str | None) -> int:
    """`value` when the store's 64-bit whole numbers hold it; RecordError('out of range') naming the field."""
    if not INT64[0] <= value <= INT64[1]:
        raise RecordError("out of range", field, f"{str(value)[:40]}{'...' if len(str(value)) > 40 else ''} is past "
                          "the 64-bit whole numbers the store holds")
    return value
