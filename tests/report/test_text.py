"""The folded signal list of the text reports: its closing line is the total of the counts above it."""

from __future__ import annotations

from coderefine.report.text import signal_entries
from coderefine.signals.base import Signal


def failing(name: str, where: int) -> Signal:
    detail = f"tests/test_m.py:{where}: in {name}\n    assert f() == 1\nE   assert 0 == 1"
    return Signal(
        "pytest",
        "tests/test_m.py",
        where,
        where,
        f"tests/test_m.py::{name}",
        "assert 0 == 1",
        "error",
        detail=detail,
    )


def test_the_closing_line_is_the_total_of_every_count_above_it() -> None:
    same = [failing(f"test_same_{n}", 5) for n in range(10)]
    others = [failing(f"test_other_{n}", 100 + n) for n in range(8)]
    lines = signal_entries([*same, *others], budget=600)
    counts = [line for line in lines if "... and " in line]
    total = sum(int(line.split("... and ")[1].split()[0]) for line in counts)
    assert len(counts) >= 2, lines  # a group's rest, and the groups not shown
    assert lines[-1].startswith(f"{total} signals in all are only counted above, not listed")
