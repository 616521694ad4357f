"""Reading a user's TOML file (catalogue, column mapping, runner mapping) with one set of errors: every way the
file cannot be read becomes the caller's error type, naming the file and what it should have been."""

from __future__ import annotations

import tomllib
from pathlib import Path


def read_toml(path: str | Path, what: str, error: type[Exception] = ValueError) -> dict:
    """The TOML document at `path` (a `what`, e.g. 'runner mapping'); raises `error` naming the file for a missing
    file, text that is not UTF-8, invalid TOML, tables nested too deeply to read, or any other read failure."""
    path = Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
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
