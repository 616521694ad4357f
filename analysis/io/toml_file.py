"""TOML files: reading a user's (catalogue, column mapping, runner mapping) with one set of errors, every way the
file cannot be read becoming the caller's error type, naming the file and what it should have been; and writing
values and lines for a drafted file (`toml_value`, `toml_line`), by the TOML writer, never by string formatting."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import tomli_w


def read_toml(path: str | Path, what: str, error: type[Exception] = ValueError) -> dict:
    """The TOML document at `path` (a `what`, e.g. 'runner mapping'); raises `error` naming the file for a missing
    file, text that is not UTF-8, invalid TOML, tables nested too deeply to read, or any other read failure."""
    path = Path(path)
    try:
        return tomllib.loads(read_capped(path, what, TOML_CAP, error))
    except FileNotFoundError as exc:
        raise error(f"{path}: no such {what} file") from exc
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}): a {what} is TOML in UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: invalid TOML in the {what}: {exc}") from exc
    except RecursionError as exc:
        raise error(f"{path}: tables nested too deeply to read") from exc
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from exc


TOML_CAP = 16 << 20  # bytes: the largest catalogue, mapping or formula file read (the bundled ones are < 100 KB)


def unreadable(path: Path, what: str, cap: int) -> str | None:
    """Why the file at `path` (a `what`) is not read, before any read: a device, a FIFO or a folder (`/dev/zero`
    would never end) or more than `cap` bytes; None when it is a regular file within the cap, or is missing (its
    reader says so)."""
    import stat

    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(
            info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else "not a regular file"
        return f"{str(path)[:200]}: {kind}, not a {what} file"
    if info.st_size > cap:
        return f"{str(path)[:200]}: {info.st_size:,} bytes, more than a {what} can be ({cap >> 20} MiB at most)"
    return None


def read_capped(path: Path, what: str, cap: int, error: type[Exception] = ValueError) -> str:
    """The UTF-8 text of the regular file at `path` (a `what`), refused with `error` naming the file before it is
    read where `unreadable` says why (a missing file raises FileNotFoundError, the caller's to word)."""
    why = unreadable(path, what, cap)
    if why:
        raise error(why)
    with open(path, "rb") as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:  # grew while being read
        raise error(f"{path}: more than {cap >> 20} MiB, more than a {what} can be")
    return data.decode("utf-8")


LITERAL = re.compile(r"^[^'\x00-\x08\x0a-\x1f\x7f]*$")  # text a TOML literal string holds as it is
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # what a TOML comment may not hold


def toml_value(value) -> str:
    """A TOML value written by the TOML writer (tomli-w): a string as a literal ('...', regular expressions
    stay readable) where it holds no single quote or control character, else as the writer escapes it."""
    if isinstance(value, (list, tuple)):  # inline, on the key's line
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str) and LITERAL.match(value):
        return f"'{value}'"
    return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()



def toml_line(line: str) -> str:
    """One line of a drafted file with any control character (which only a comment quoting the logs can hold) shown
    as its escape, so that text from the logs never starts a line of its own or breaks the file."""
    return CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), line)
