"""Where a run's wall time goes (``--timings``): the phases of the main thread, end to end.

Each phase is a span of one clock (``time.monotonic``, the loop's own clock, so the loop's spans of
signals, calls and gate fit in). Spans nest: a phase's row is its own time, less that of the phases inside
it, and what no phase covers is a row of its own ("other"), so the rows add up to the wall time from the
process's start by construction. Work done beside the main thread (the SDK's import, the test server's)
is not a row: the main thread's waits for it are.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """One phase of the main thread: ``start`` and ``end`` on the timeline's clock."""

    name: str
    start: float
    end: float


@dataclass(frozen=True)
class Row:
    """A phase's own seconds: its span less the phases inside it."""

    name: str
    seconds: float


def process_age(clock: Callable[[], float] = time.monotonic) -> float:
    """Seconds since this process started (the interpreter's own start and imports included), from the
    kernel's record of it; 0 where there is none to read (then the timeline starts at its creation)."""
    try:
        with open(f"/proc/{os.getpid()}/stat", encoding="ascii") as handle:
            # The command name (field 2) may hold spaces and parentheses: fields count from its end.
            fields = handle.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


class Timeline:
    """The spans of one run. Cheap enough to keep always; only reported when asked for."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, origin: float | None = None) -> None:
        """``origin``: when the run started on ``clock`` (default: the process's start)."""
        self._clock = clock
        self.origin = clock() - process_age() if origin is None else origin
        self._spans: list[Span] = []

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = self._clock()
        try:
            yield
        finally:
            self._spans.append(Span(name, start, self._clock()))

    def since_start(self, name: str) -> None:
        """A phase from the run's start until now (what came before the timeline was made)."""
        self._spans.append(Span(name, self.origin, self._clock()))

    def add(self, spans: Iterable[Span]) -> None:
        """Spans measured elsewhere on the same clock (the loop's)."""
        self._spans.extend(spans)

    def rows(self, end: float | None = None) -> tuple[Row, ...]:
        """The phases in the order they started, each with its own time; gaps are "other". They add up
        to ``end - origin`` (default: now)."""
        stop = self._clock() if end is None else end
        spans = sorted(self._spans, key=lambda s: (s.start, -s.end))
        return tuple(r for r in _rows(spans, self.origin, stop, "other") if r.seconds > 0)


def _rows(spans: list[Span], start: float, end: float, gap: str) -> Iterator[Row]:
    """The rows of ``spans`` (sorted) within ``start``..``end``, a partition of it: a span inside another
    is its child, and a parent's row is the time none of its children covers."""
    at = start
    index = 0
    while index < len(spans):
        span = spans[index]
        index += 1
        children: list[Span] = []
        while index < len(spans) and spans[index].start < span.end:
            children.append(spans[index])
            index += 1
        begin, finish = max(span.start, at), min(span.end, end)
        if finish <= begin:
            continue
        if begin > at:
            yield Row(gap, begin - at)
        inner = list(_rows(children, begin, finish, ""))
        yield Row(span.name, sum(r.seconds for r in inner if not r.name))
        yield from (r for r in inner if r.name)
        at = finish
    if end > at:
        yield Row(gap, end - at)


def phase(timeline: Timeline | None, name: str) -> contextlib.AbstractContextManager[None]:
    """``timeline.phase(name)``, or nothing when the run keeps no timeline."""
    return contextlib.nullcontext() if timeline is None else timeline.phase(name)


def numbered(rows: Iterable[Row]) -> tuple[Row, ...]:
    """The rows for a reader: what no phase covered gathered into one last row ("other"), rows of one name
    that end up adjacent merged, and a name that comes back numbered (signals 1, signals 2)."""
    merged: list[Row] = []
    other = 0.0
    for row in rows:
        if row.name == "other":
            other += row.seconds
        elif merged and merged[-1].name == row.name:
            merged[-1] = Row(row.name, merged[-1].seconds + row.seconds)
        else:
            merged.append(row)
    counts: dict[str, int] = {}
    for row in merged:
        counts[row.name] = counts.get(row.name, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for row in merged:
        seen[row.name] = seen.get(row.name, 0) + 1
        out.append(Row(f"{row.name} {seen[row.name]}" if counts[row.name] > 1 else row.name, row.seconds))
    if other:
        out.append(Row("other", other))
    return tuple(out)


def render(rows: Iterable[Row]) -> str:
    """The rows as text, with the wall time they add up to."""
    listed = list(rows)
    total = sum(r.seconds for r in listed)
    width = max((len(r.name) for r in listed), default=0)
    lines = [f"timings: {total:.2f}s wall, from the process's start"]
    for row in listed:
        share = row.seconds / total * 100 if total else 0.0
        lines.append(f"  {row.name:<{width}}  {row.seconds:6.3f}s  {share:4.1f}%")
    return "\n".join(lines) + "\n"


def rows_data(rows: Iterable[Row]) -> list[dict[str, object]]:
    return [{"phase": r.name, "seconds": round(r.seconds, 4)} for r in rows]
