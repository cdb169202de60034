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
