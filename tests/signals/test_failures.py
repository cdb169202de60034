"""Failing tests grouped by where they fail, and folded to a size."""

from coderefine.signals.base import Signal
from coderefine.signals.failures import fold, group_failures, shape


def failing(
    name: str, where: str = "tests/common.py:2", message: str = "test failed: AssertionError"
) -> Signal:
    detail = f"tests/test_t.py:9: in {name}\n    helper()\n{where}: in helper\n    assert a == b\nE   AssertionError"
    return Signal(
        "pytest", "tests/test_t.py", 9, 9, f"tests/test_t.py::{name}", message, "error", detail=detail
    )


def full(signal: Signal) -> str:
    return f"- {signal.code} FULL {signal.detail}"


def short(signal: Signal) -> str:
    return f"- {signal.code}"


def test_failures_group_by_their_innermost_frame_and_message_shape() -> None:
    lint = Signal("ruff", "m.py", 1, 1, "F401", "unused")
    signals = [
        failing("test_a"),
        lint,
        failing("test_b", message="test failed: assert 'x' == 'y'"),
        failing("test_c", message="test failed: assert 'p' == 'q'"),
        failing("test_d", where="tests/common.py:7"),
        failing("test_e"),
    ]
    groups = group_failures(signals)
    assert [[s.code.split("::")[-1] for s in g.members] for g in groups] == [
        ["test_a", "test_e"],
        ["F401"],
        ["test_b", "test_c"],  # the same shape: only the values differ
        ["test_d"],
    ]
    assert groups[0].place == "tests/common.py:2"
    assert shape("assert 12 == 0x1f and 'a' in \"b\"") == "assert N == N and '…' in '…'"


def test_a_fold_shows_two_in_full_then_one_line_each_then_a_count() -> None:
    signals = [failing(f"test_{n}") for n in range(10)]
    unlimited = fold(signals, full, short, 0)
    assert sum("FULL" in line for line in unlimited.lines) == 2 and unlimited.counted == 0
    assert len(unlimited.lines) == 10
    budget = len(full(signals[0])) * 2 + len(short(signals[2])) * 3 + 5
    folded = fold(signals, full, short, budget)
    assert [line.split()[1] for line in folded.lines[:5]] == [s.code for s in signals[:5]]
    assert (
        folded.lines[-1]
        == "- ... and 5 more that failed the same way at tests/common.py:2 (test failed: AssertionError)"
    )
    assert folded.counted == 5
    capped = fold(signals, full, short, 0, short_cap=1)
    assert capped.counted == 7


def test_every_group_shows_its_first_member_before_any_group_shows_more() -> None:
    signals = [failing(f"test_{n}") for n in range(5)] + [failing("test_z", where="pkg/m.py:3")]
    folded = fold(signals, full, short, len(full(signals[0])) * 2 + 10)
    assert any("test_z FULL" in line for line in folded.lines)
    assert sum("FULL" in line for line in folded.lines) == 2
    assert folded.counted == 4


def test_a_budget_too_small_for_some_groups_counts_them_in_one_line() -> None:
    signals = [failing("test_a", where=f"pkg/m.py:{n}") for n in range(4)]
    folded = fold(signals, full, short, 1)
    assert len(folded.lines) == 2 and folded.lines[-1] == "- ... and 3 more signals not shown"
    assert folded.counted == 3


def test_identical_reports_of_one_test_are_one_entry_that_says_how_many() -> None:
    # pytest reports each failing subtest of a unittest loop on its own, often with the same message.
    bare = Signal("pytest", "", 0, 0, "tests/test_t.py::test_loop", "test failed: TypeError", "error")
    traced = failing("test_loop", message="test failed: TypeError")
    other = failing("test_other")
    folded = fold([bare, traced, bare, bare, other, traced], full, short, 0)
    assert folded.lines == (
        "- tests/test_t.py::test_loop FULL "
        + traced.detail.split("\n", 1)[0]
        + " (reported 5 times, identically)\n"
        + traced.detail.split("\n", 1)[1],
        "- tests/test_t.py::test_other FULL " + other.detail,
    )
    assert folded.counted == 0
