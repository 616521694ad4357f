"""Record isolation (issue 51): every runner's file with one value of one record replaced by each hostile
value class (`tests.hostile.corpus`) is read without an internal error, loses no record but that one, and
hands the store only rows its schema holds."""

from __future__ import annotations

import hashlib
import os
import zlib

import pytest

from referee.io.reading import FileReader, load_file
from tests.hostile.corpus import BASES, base, mutants


def _read(path, runner):
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    result, _ = load_file(path, digest, FileReader(runner=runner))
    return result


def problems_of(result, good: int, bad: int, single: bool = False) -> list[str]:
    """What is wrong with one mutant's read, against its base's `good` accepted and `bad` set-aside records
    (`single`: the file is one record, which may be set aside whole, but with its reason, not a loader error)."""
    found = []
    reasons = {(b["reason"], b["record"]) for b in result.bad}
    whole = any(record == "-" for _, record in reasons) and not single
    if whole or any(r == "loader error" for r, _ in reasons):
        found.append(f"the file was set aside whole: {[b['message'][:160] for b in result.bad][:2]}")
    if result.read != result.accepted + len(result.bad):
        found.append(f"counts: read {result.read}, accepted {result.accepted}, set aside {len(result.bad)}")
    if result.accepted < good - 1 or len(result.bad) > bad + 1:
        found.append(f"accepted {result.accepted} of the base's {good}, set aside {len(result.bad)}: "
                     f"{[b['message'][:160] for b in result.bad][:3]}")
    try:
        result.tables  # every table conformed to the store's schema, as the store writes it
    except Exception as exc:  # noqa: BLE001 - the point: the store must take every row handed to it
        found.append(f"rows the store cannot hold: {type(exc).__name__}: {str(exc)[:160]}")
    return found


# `make test` reads a third of each base's mutants, chosen by a hash of (place, class) so that every class is tried
# at about a third of the places and every place with about a third of the classes; `make test-all`
# (REFEREE_FULL=1) reads them all (812 for an Inspect log: 28 s)
STRIDE = 1 if os.environ.get("REFEREE_FULL") else 3


def chosen(where: str, klass: str) -> bool:
    """Whether the mutant of class `klass` at place `where` is written and read in this run (`STRIDE`)."""
    return zlib.crc32(f"{where}|{klass}".encode()) % STRIDE == 0


@pytest.mark.parametrize("name", list(BASES))
def test_one_hostile_value_costs_at_most_its_own_record(name, tmp_path):
    hostile = base(name, tmp_path / "bases")
    plain = hostile.file(tmp_path / "plain")
    hostile.write(hostile.records, plain)
    before = _read(plain, hostile.runner)
    assert before.accepted >= (1 if hostile.single else 2) and not before.bad, (name, before.accepted, before.bad[:2])
    failures = []
    for m in mutants(hostile, tmp_path / "mutants", keep=chosen):
        found = problems_of(_read(m.path, hostile.runner), before.accepted, len(before.bad), hostile.single)
        if found:
            failures.append(f"{m.klass} at {m.where}: " + "; ".join(found))
    assert not failures, f"{len(failures)} failure(s):\n" + "\n".join(failures[:40])
