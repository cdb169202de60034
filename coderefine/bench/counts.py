"""How make-suite and bench count things: a number with a noun that agrees with it, a suite by kind
of task with its shapes on a line of their own, and why a suite has fewer tasks than asked for."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

# The families of tasks, in the order a reader meets them (docs/benchmarks.md); any other kind follows.
KINDS = ("bug", "multi-location", "feature", "feature-tests", "release", "clean", "review", "review-clean")


class _Task(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def shape(self) -> str: ...


def plural(count: int, noun: str, many: str = "") -> str:
    """``"1 task"``, ``"2 tasks"``; ``many`` for a noun whose plural is not the noun and an s."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {many or noun + 's'}"


def by_kind(tasks: Sequence[_Task]) -> str:
    """``"46 tasks: 23 bug, 7 feature, 5 feature-tests, 5 clean, 3 review, 3 review-clean"``."""
    kinds = _counts(t.kind for t in tasks)
    order = [k for k in KINDS if k in kinds] + sorted(k for k in kinds if k not in KINDS)
    parts = ", ".join(f"{kinds[k]} {k}" for k in order)
    return plural(len(tasks), "task") + (f": {parts}" if parts else "")


def shapes(tasks: Sequence[_Task]) -> str:
    """The shapes within each kind that has more than its own name for a shape (``"bug: 18 single,
    5 multi; review: 2 rename+extract, 1 invert"``), or "" when none has."""
    found: list[str] = []
    kinds = _counts(t.kind for t in tasks)
    for kind in [k for k in KINDS if k in kinds] + sorted(k for k in kinds if k not in KINDS):
        of_kind = _counts(t.shape for t in tasks if t.kind == kind)
        if set(of_kind) == {kind} or kind == "review-clean":
            continue  # its shape is its kind's name; a review-clean task has its review's shape
        found.append(f"{kind}: " + ", ".join(f"{n} {s}" for s, n in sorted(of_kind.items())))
    return "; ".join(found)


@dataclass(frozen=True)
class Shortfall:
    """Fewer tasks of one family than asked for, and why."""

    family: str
    wanted: int
    made: int
    why: str

    def describe(self) -> str:
        return f"{self.made} of {self.wanted} {self.family} ({self.why})"


def shortfall_message(label: str, asked: int, made: int, shortfalls: Sequence[Shortfall]) -> str:
    """``"lib: 22 of the 30 bug and feature tasks asked for (--tasks): 16 of 25 bug (...); ..."``, or ""
    when the suite has what was asked for."""
    if made >= asked:
        return ""
    reasons = "; ".join(s.describe() for s in shortfalls if s.made < s.wanted)
    return f"{label}: {made} of the {asked} bug and feature tasks asked for (--tasks)" + (
        f": {reasons}" if reasons else ""
    )


def _counts(values: Iterable[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for value in values:
        found[value] = found.get(value, 0) + 1
    return found
