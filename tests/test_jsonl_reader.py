"""The JSON-lines reader: the fast (Arrow) and careful (line by line) paths agree, and every line is accounted for."""

import json

import pyarrow as pa
import pytest

from referee.io.loaders.jsonl import count_lines, read_jsonl

FIELDS = {"a": pa.int64(), "b": pa.string(), "c": pa.float64(), "d": pa.bool_()}


def _write(tmp_path, lines, name="x.jsonl"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_fast_and_careful_paths_give_the_same_table(tmp_path):
    rows = [{"a": i, "b": f"s{i}", "c": i / 2, "d": i % 2 == 0} for i in range(50)]
    rows[3]["c"] = -float("inf")
    clean = _write(tmp_path, [json.dumps(r) for r in rows])
    blanky = _write(tmp_path, [json.dumps(r) for r in rows[:10]] + [""] + [json.dumps(r) for r in rows[10:]], "y.jsonl")
    fast, bad, how = read_jsonl(clean, FIELDS)
    assert how == "fast" and not bad
    careful, bad, how = read_jsonl(blanky, FIELDS)
    assert how == "careful" and not bad
    assert fast.drop_columns("_line").equals(careful.drop_columns("_line"))
    assert fast["_line"].to_pylist() == list(range(1, 51))
    assert careful["_line"].to_pylist() == list(range(1, 11)) + list(range(12, 52))


@pytest.mark.parametrize("line, reason, field", [
    ('{"a": 1.5}', "wrong type", "a"),
    ('{"a": true}', "wrong type", "a"),
    ('{"b": 3}', "wrong type", "b"),
    ('{"c": "x"}', "wrong type", "c"),
    ('{"c": NaN}', "NaN", "c"),
    ('{"e": 1}', "unexpected field", "e"),
    ('{"a": 1, "a": 2}', "duplicate key", "a"),
    ('[1, 2]', "wrong type", None),
    ('{"a": 1,, }', "malformed JSON", None),
    ('{"a": 1', "truncated line", None),
])
def test_each_bad_line_goes_careful_and_is_named(tmp_path, line, reason, field):
    path = _write(tmp_path, ['{"a": 1}', line, '{"a": 3}'])
    table, bad, how = read_jsonl(path, FIELDS)
    assert how == ("fast" if reason == "NaN" else "careful")  # Arrow parses NaN; it is set aside afterwards
    assert table["a"].to_pylist() == [1, 3] and table["_line"].to_pylist() == [1, 3]
    assert [(b.line, b.error.reason, b.error.field, b.raw) for b in bad] == [(2, reason, field, line)]


def test_two_objects_on_one_line_are_not_silently_split(tmp_path):
    path = _write(tmp_path, ['{"a": 1}{"a": 2}', '{"a": 3}'])
    table, bad, how = read_jsonl(path, FIELDS)
    assert how == "careful" and len(bad) == 1 and bad[0].line == 1


def test_count_lines(tmp_path):
    for text, expected in [("a\nb\n", (2, False)), ("a\nb", (2, False)), ("\na\n", (2, True)),
                           ("a\n\nb\n", (3, True)), ("a\n \nb", (3, True)), ("a\n  ", (2, True)), ("", (0, False))]:
        path = tmp_path / "c.txt"
        path.write_text(text)
        assert count_lines(path) == expected, text
