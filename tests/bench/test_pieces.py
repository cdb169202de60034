"""Splitting a large release change by function: hunks, their definitions, and the pieces the fail-to-pass
tests reach, on small texts and a hand-made line trace."""

from __future__ import annotations

from coderefine.bench.library import Coverage
from coderefine.bench.pieces import definitions, hunks, revert, split_change

OLD = """import os


def width(text):
    return len(text)


def pad(text, size):
    return text + " " * (size - width(text))


class Table:
    def __init__(self, rows):
        self.rows = rows

    def render(self):
        return "\\n".join(self.rows)

    def count(self):
        return len(self.rows)
"""

NEW = """import os
import unicodedata


def _east_asian(char):
    return unicodedata.east_asian_width(char) in "WF"


def width(text):
    return sum(2 if _east_asian(c) else 1 for c in text)


def pad(text, size, fill=" "):
    return text + fill * (size - width(text))


class Table:
    def __init__(self, rows):
        self.rows = rows

    def render(self):
        return "\\n".join(row.rstrip() for row in self.rows)

    def count(self):
        return len(self.rows)
"""


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_each_hunk_belongs_to_the_definitions_it_touches() -> None:
    names = {h.names for h in hunks(OLD, NEW)}
    # One inserted block, the import and the helper: a definition of the names each binds.
    assert ("unicodedata", "_east_asian") in names
    assert ("Table.render",) in names  # a method, not its whole class
    assert any("width" in n for n in names) and any("pad" in n for n in names)
    assert not any("Table.count" in n for n in names)
    assert [d.name for d in definitions(NEW)][:3] == ["os", "unicodedata", "_east_asian"]


def test_reverting_every_hunk_gives_old_and_none_gives_new() -> None:
    found = hunks(OLD, NEW)
    assert revert(OLD, NEW, found) == OLD
    assert revert(OLD, NEW, []) == NEW
    only = [h for h in found if h.names == ("Table.render",)]
    text = revert(OLD, NEW, only)
    assert 'return "\\n".join(self.rows)' in text and "_east_asian" in text


def test_a_function_goes_with_its_new_helper_and_import_and_each_piece_with_its_tests() -> None:
    tests = ("t.py::test_width", "t.py::test_render", "t.py::test_pad")
    width = _line(NEW, "return sum(2")
    render = _line(NEW, "row.rstrip()")
    pad = _line(NEW, "fill * (size")
    lines = {width: (0, 2), render: (1,), pad: (2,)}
    coverage = Coverage(tests, {"m.py": lines})
    pieces, unreached = split_change(coverage, {"m.py": (OLD, NEW)}, ["m.py"], tests)
    assert unreached == []
    by_tests = {p.tests: p for p in pieces}
    # test_pad runs width's new line too: width, its new helper and the import join pad's piece.
    assert set(by_tests) == {("t.py::test_width", "t.py::test_pad"), ("t.py::test_render",)}
    joined = {name for _, name in by_tests[("t.py::test_width", "t.py::test_pad")].names}
    assert {"width", "pad", "_east_asian", "unicodedata"} <= joined
    start = by_tests[("t.py::test_width", "t.py::test_pad")].starts["m.py"]
    assert "unicodedata" not in start and "_east_asian" not in start and "row.rstrip()" in start
    compile(start, "m.py", "exec")
    render_start = by_tests[("t.py::test_render",)].starts["m.py"]
    assert render_start == revert(OLD, NEW, [h for h in hunks(OLD, NEW) if h.names == ("Table.render",)])
    assert by_tests[("t.py::test_render",)].size == 2
    assert pieces[0].tests == ("t.py::test_width", "t.py::test_pad")  # the piece most tests reach first


def test_a_test_that_runs_no_changed_line_reaches_the_changed_function_it_runs() -> None:
    # Only pad's signature changed: the def line runs at import, the body in the test.
    new = OLD.replace("def pad(text, size):", "def pad(text, size=8):")
    body = _line(new, 'return text + " "')
    coverage = Coverage(("t.py::test_pad", "t.py::test_other"), {"m.py": {body: (0,)}})
    pieces, unreached = split_change(
        coverage, {"m.py": (OLD, new)}, ["m.py"], ("t.py::test_pad", "t.py::test_other")
    )
    assert [p.tests for p in pieces] == [("t.py::test_pad",)] and unreached == ["t.py::test_other"]
    assert pieces[0].starts["m.py"] == OLD and pieces[0].describe() == "m.py (`pad`)"
