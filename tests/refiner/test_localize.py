"""Where the failing tests point: definitions ranked by the failing tests that call them."""

from __future__ import annotations

from coderefine.refiner.localize import is_test_code, localize
from coderefine.signals.base import CallRecord

MOD = (
    "def helper(x):\n"  # 1
    "    return x\n"
    "\n\n"
    "class Box:\n"  # 5
    "    @staticmethod\n"  # 6
    "    def shut(x):\n"
    "        return [v for v in x]\n"  # 8
    "\n\n"
    "def opened(x):\n"  # 11
    "    return x\n"
)
OTHER = "def util(x):\n    return x\n"


def calls(nodeid: str, failed: bool, *called: tuple[str, int]) -> CallRecord:
    return CallRecord(nodeid, failed, frozenset(called))


def test_the_definition_only_failing_tests_call_comes_first_with_its_counts() -> None:
    runs = [
        calls("t::a", True, ("pkg/mod.py", 1), ("pkg/mod.py", 6), ("pkg/mod.py", 8), ("tests/t.py", 1)),
        calls("t::b", True, ("pkg/mod.py", 1), ("pkg/mod.py", 6), ("lib/other.py", 1)),
        calls("t::c", False, ("pkg/mod.py", 1), ("pkg/mod.py", 11)),
        calls("t::d", False, ("pkg/mod.py", 1)),
    ]
    read = {"lib/other.py": OTHER}.get
    found = localize(runs, read, ["pkg/mod.py"], {"pkg/mod.py": MOD})
    assert (found.failing, found.passing) == (2, 2)
    first = found.suspects[0]
    # The comprehension's code (line 8) counts for the method it is written in, and the decorator's
    # line (a decorated function's first line) for the method.
    assert (first.path, first.name, first.failed, first.passed) == ("pkg/mod.py", "Box.shut", 2, 0)
    assert "pkg/mod.py:6 Box.shut: run by 2 of 2 failing tests, 0 of 2 passing" in found.section()
    names = [s.name for s in found.suspects]
    assert names.index("util") < names.index("helper")  # called by every test: says little
    assert "opened" not in names  # only a passing test calls it
    assert "(not under review: read-only)" in found.describe(found.suspects[names.index("util")])
    assert all(not s.path.startswith("tests/") for s in found.suspects)
    # A revision that moved the method: its lines are found again by name.
    moved = "\n\n" + MOD
    lines = found.lines({"pkg/mod.py": moved})["pkg/mod.py"]
    assert {8, 9, 10} <= lines and 6 not in lines and 13 not in lines


def test_without_failing_tests_nothing_is_ranked() -> None:
    found = localize([calls("t::a", False, ("pkg/mod.py", 1))], {}.get, ["pkg/mod.py"], {"pkg/mod.py": MOD})
    assert found.suspects == () and found.section() == ""


def test_test_code_is_never_a_suspect() -> None:
    assert is_test_code("tests/helpers.py") and is_test_code("pkg/conftest.py") and is_test_code("test_x.py")
    assert not is_test_code("pkg/testing_utils.py")


def test_the_failing_tests_the_best_suspect_does_not_explain_point_at_the_second_bug() -> None:
    """Two bugs: three tests fail in Box.shut, one in opened. A cut at the best score alone left opened
    an outline line (it ranks below the helper every test calls); the failing test that does not run
    Box.shut points at it."""
    runs = [
        *(calls(f"t::shut{n}", True, ("pkg/mod.py", 1), ("pkg/mod.py", 6)) for n in range(3)),
        calls("t::opened", True, ("pkg/mod.py", 1), ("pkg/mod.py", 11)),
        *(calls(f"t::ok{n}", False, ("pkg/mod.py", 1)) for n in range(4)),
        calls("t::opened_ok", False, ("pkg/mod.py", 11)),
    ]
    found = localize(runs, {}.get, ["pkg/mod.py"], {"pkg/mod.py": MOD})
    first, *rest = found.suspects
    assert first.name == "Box.shut"
    opened = next(s for s in rest if s.name == "opened")
    assert opened.score < first.score * 0.9
    assert {s.name for s in found.covering} == {"Box.shut", "opened"}
    lines = found.lines({"pkg/mod.py": MOD})["pkg/mod.py"]
    assert {6, 7, 8, 11, 12} <= lines and 1 not in lines  # the helper every test calls stays an outline line
    assert "pkg/mod.py:11 opened" in found.section()


def test_read_only_suspects_ranked_first_leave_the_best_under_review_in_view() -> None:
    """pyflakes: the message classes a wrong report builds run only in failing tests and outrank every
    definition of the checker under review, where the bug is and the only code a view can show."""
    messages = "".join(f"class M{n}:\n    def __init__(self):\n        pass\n\n\n" for n in range(6))
    read = {"pkg/messages.py": messages}.get
    runs = [
        calls("t::a", True, *(("pkg/messages.py", 2 + 5 * n) for n in range(6)), ("pkg/mod.py", 6)),
        calls("t::b", True, ("pkg/mod.py", 1), ("pkg/mod.py", 6)),
        *(calls(f"t::p{n}", False, ("pkg/mod.py", 1), ("pkg/mod.py", 6)) for n in range(5)),
    ]
    found = localize(runs, read, ["pkg/mod.py"], {"pkg/mod.py": MOD})
    assert not any(s.under_review for s in found.suspects[:5])
    # The best under review is named, and its lines are what a view keeps whole.
    assert "pkg/mod.py:6 Box.shut" in found.section()
    assert 8 in found.lines({"pkg/mod.py": MOD})["pkg/mod.py"]
    # Each failing test's own suspect is looked for under review: Box.shut covers both.
    assert [s.name for s in found.covering] == ["Box.shut"]


HANDLER = (
    "def handle(node):\n"  # 1
    "    if node.kind == 'is':\n"  # 2
    "        report(node)\n"  # 3
    "    return node\n"  # 4
    "\n\n"
    "def parse(text):\n"  # 7
    "    if text:\n"  # 8
    "        return text.split()\n"  # 9
    "    return []\n"  # 10
    "\n\n"
    "def fmt(text):\n"  # 13
    "    if '%' in text:\n"  # 14
    "        report(text)\n"  # 15
    "    return text\n"  # 16
)


def ran(nodeid: str, failed: bool, called: tuple[int, ...], lines: tuple[int, ...] = ()) -> CallRecord:
    return CallRecord(
        nodeid,
        failed,
        frozenset(("pkg/h.py", line) for line in called),
        frozenset(("pkg/h.py", line) for line in lines),
    )


def test_a_branch_only_failing_tests_take_is_shown_beside_the_best_definition() -> None:
    """An AST handler every test runs, wrong in a branch only the failing tests take: by definition it
    says no more than the parser every test runs too (2 of 2 failing, 8 of 8 passing each); its line 3
    says all (2 failing, 0 passing). Lines do not rank (they gather round one decision: tabulate's
    callers of `_padleft`), but a line above the best definition is shown beside it."""
    runs = [
        *(ran(f"t::bad{n}", True, (1, 7), (2, 3, 4, 8, 9)) for n in range(2)),
        *(ran(f"t::ok{n}", False, (1, 7), (2, 4, 8, 9)) for n in range(8)),
    ]
    found = localize(runs, {}.get, ["pkg/h.py"], {"pkg/h.py": HANDLER})
    handle = next(s for s in found.suspects if s.name == "handle")
    assert (handle.failed, handle.passed, handle.line, handle.line_failed, handle.line_passed) == (
        2,
        8,
        3,
        2,
        0,
    )
    assert handle.score < 0.5 and handle.line_score == 1.0
    assert (
        "pkg/h.py:1 handle: run by 2 of 2 failing tests, 8 of 8 passing; its line 3 by 2 failing, 0 passing"
        in (found.section())
    )
    assert handle in found.covering and {1, 2, 3, 4} <= found.lines({"pkg/h.py": HANDLER})["pkg/h.py"]
    # A definition no line of which beats it names no line.
    parse = next(s for s in found.suspects if s.name == "parse")
    assert parse.line == 0 and "its line" not in found.describe(parse)
    # Without recorded lines only the definitions count.
    plain = localize(
        [CallRecord(r.nodeid, r.failed, r.called) for r in runs], {}.get, ["pkg/h.py"], {"pkg/h.py": HANDLER}
    )
    assert all(s.line == 0 for s in plain.suspects)


def test_definitions_tied_for_a_failing_tests_best_are_all_kept() -> None:
    """pyflakes: the one test of invalid % formats runs lines no passing test runs in the parser and in
    the checker's handler (1.0 each), the bug in the handler; the spectrum cannot choose, so both are
    shown."""
    runs = [
        *(ran(f"t::is{n}", True, (1,), (2, 3, 4)) for n in range(3)),
        ran("t::percent", True, (7, 13), (8, 9, 14, 15, 16)),
        *(ran(f"t::ok{n}", False, (1, 7, 13), (2, 4, 8, 10, 14, 16)) for n in range(6)),
    ]
    found = localize(runs, {}.get, ["pkg/h.py"], {"pkg/h.py": HANDLER})
    assert [s.name for s in found.covering][:1] == ["handle"]
    assert {"parse", "fmt"} <= {s.name for s in found.covering}
    assert {7, 13, 15} <= found.lines({"pkg/h.py": HANDLER})["pkg/h.py"]


def test_more_suspects_tied_for_the_best_than_a_request_names_are_no_evidence() -> None:
    """pyflakes 3.0.1: one failing test beside four passing runs 18 of the checker's methods no passing
    test runs; five of them, chosen by length, filled the views. None is shown for the tie; the one a
    failing test is named after still is."""
    names = ["open_file", "read_rows", "pad_left", "draw_border", "wrap_text", "join_cells", "fit", "end"]
    text = "".join(f"def {name}(x):\n    return x\n\n\n" for name in names)
    starts = [1 + 4 * n for n in range(8)]
    runs = [
        CallRecord("t::test_draw_border", True, frozenset(("pkg/c.py", line) for line in starts)),
        *(CallRecord(f"t::ok{n}", False, frozenset({("pkg/c.py", 1)})) for n in range(4)),
    ]
    found = localize(runs, {}.get, ["pkg/c.py"], {"pkg/c.py": text})
    assert len(found.tied()) == 7  # open_file is run by the passing tests too
    assert [s.name for s in found.named] == ["draw_border"]
    assert found.lines({"pkg/c.py": text}) == {"pkg/c.py": frozenset({13, 14})}  # draw_border alone
    section = found.section()
    assert (
        "- 7 definitions under review tie for the best (run by 1 of 1 failing tests, 0 of 4 passing"
        in section
    )
    assert "pkg/c.py:13 draw_border" in section and "pkg/c.py:17 wrap_text" not in section
    # As many as a request names are still shown: the tests single those out.
    assert found.tied(count=7) == () and len(found.lines({"pkg/c.py": text}, count=7)["pkg/c.py"]) == 14
