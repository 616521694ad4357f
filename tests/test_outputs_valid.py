"""Every output valid by construction (issue 51): `--json` parses with a strict JSON parser (no NaN, no
Infinity), Markdown holds no unescaped `<` from the data, and `ingest --json` names one example per reason."""

from __future__ import annotations

import html

import json

import numpy as np
import pandas as pd

from referee.cli import main
from referee.present.markdown import md_table, md_text
from referee.present.outputs import json_text


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_json_text_writes_no_nan_or_infinity():
    value = {"a": float("nan"), "b": np.float64("inf"), "c": -np.inf, "d": pd.NA, "e": pd.NaT, "f": [1.5, np.nan],
             "g": pd.DataFrame({"x": [np.nan, 2.0]})}
    assert _strict(json_text(value)) == {"a": None, "b": None, "c": None, "d": None, "e": None, "f": [1.5, None],
                                         "g": [{"x": None}, {"x": 2.0}]}


def _leaves(value):
    """Every scalar inside a parsed JSON value."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _hostile_store(tmp_path):
    """Two-player games whose agents are named as markup, one of them with a single game (open intervals)."""
    rng = np.random.default_rng(0)
    names = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "plain|pipe", "ok"]
    rows = []
    for m in range(120):
        a, b = rng.choice(3, 2, replace=False)
        won = rng.random() < 0.5
        rows += [{"match": f"m{m}", "agent": names[a], "score": float(won)},
                 {"match": f"m{m}", "agent": names[b], "score": float(not won)}]
    rows += [{"match": "x", "agent": "ok", "score": 1.0}, {"match": "x", "agent": names[0], "score": 0.0}]
    path, store = tmp_path / "g.csv", tmp_path / "g.duckdb"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert main(["ingest", str(path), "--store", str(store)]) == 0
    return store, names


def test_every_json_output_parses_strictly(tmp_path, capsys):
    store, names = _hostile_store(tmp_path)
    capsys.readouterr()
    for k, args in enumerate((["compare", names[0], "ok"], ["rank", "--method", "nash", "--min-games", "1"],
                              ["rank", "--method", "alpha-rank", "--min-games", "1"], ["ratings", "--method", "bt"])):
        out = [] if args[0] == "compare" else ["--out", str(tmp_path / f"out{k}")]
        assert main(args + out + ["--store", str(store), "--json"]) == 0, args
        payload = _strict(capsys.readouterr().out)  # raises on NaN or Infinity
        assert "error" not in payload and any(v is None for v in _leaves(payload)), args  # a missing value as null
    bad = tmp_path / "bad.csv"
    bad.write_text("match,agent,score\nm1,a,1\nm1,b,oops\nm2,a,1\nm2,b,0\n", encoding="utf-8")
    main(["ingest", str(bad), "--store", str(tmp_path / "b.duckdb"), "--json"])
    payload = _strict(capsys.readouterr().out)
    [reason] = payload["reasons"]
    assert reason["count"] == 1 and reason["example"]["source_file"] == str(bad)
    assert reason["example"]["field"] == "score" and reason["example"]["record"]


def test_markdown_holds_no_unescaped_markup(tmp_path, capsys):
    store, names = _hostile_store(tmp_path)
    out = tmp_path / "report"
    assert main(["report", "--store", str(store), "--out", str(out), "--no-models"]) == 0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "<script" not in markdown and "<img" not in markdown and "&lt;script&gt;" in markdown
    assert "plain\\|pipe" in markdown
    from referee.present.cells import readable

    table = md_table(readable(pd.DataFrame({"agent": ["<b>x</b>", "a|b"], "n": [1, 2]})))
    assert "<b>" not in table and "&lt;b&gt;" in table and "a\\|b" in table
    assert md_text("1 < 2 & 3 > 2") == "1 &lt; 2 &amp; 3 &gt; 2"


def test_agent_names_plant_no_live_markdown(tmp_path):
    """Issue 71: agents named as Markdown (a javascript: link, emphasis, code, a heading) show in report.md as
    typed: rendered by a CommonMark parser (markdown-it), the page holds no link to javascript:, and each name
    reads back as its own text, not as emphasis or code."""
    from markdown_it import MarkdownIt

    names = ["[click](javascript:alert(3))", "*loud*", "`tick`", "# head", "_under_", "ok"]
    rng = np.random.default_rng(1)
    rows = []
    for m in range(150):
        a, b = rng.choice(len(names), 2, replace=False)
        won = rng.random() < 0.5
        rows += [{"match": f"m{m}", "agent": names[a], "score": float(won)},
                 {"match": f"m{m}", "agent": names[b], "score": float(not won)}]
    path, store, out = tmp_path / "g.csv", tmp_path / "g.duckdb", tmp_path / "report"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert main(["ingest", str(path), "--store", str(store)]) == 0
    assert main(["report", "--store", str(store), "--out", str(out), "--no-models"]) == 0
    rendered = MarkdownIt("commonmark").enable("table").render((out / "report.md").read_text(encoding="utf-8"))
    assert "javascript:" not in "".join(t.attrGet("href") or "" for t in _tokens(rendered))
    assert 'href="javascript' not in rendered
    for name in names[:-1]:
        assert html.escape(name, quote=False) in rendered, name  # shown as typed
    assert "<em>loud</em>" not in rendered and "<code>tick</code>" not in rendered and "<h1>head" not in rendered


def _tokens(rendered: str):
    """The anchors of rendered HTML, as objects with attrGet('href') (parsed with the standard library)."""
    from html.parser import HTMLParser

    found = []

    class Anchors(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "a":
                found.append(type("A", (), {"attrGet": lambda self, k, a=dict(attrs): a.get(k)})())

    Anchors().feed(rendered)
    return found


def test_numeric_options_refuse_digit_separators_and_spaces():
    import pytest

    from referee.run.options import count, positive_float, positive_int

    for parse in (count, positive_int, positive_float):
        for text in ("1_0", " 10", "10 ", ""):
            with pytest.raises(ValueError, match="expected"):
                parse(text)
    assert count("10") == 10 and positive_float("1e3") == 1000.0 and positive_int(3) == 3
