"""Signal records and the baseline comparison: what a change introduced, apart from old debt."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from coderefine.project.textfile import source_lines

Severity = Literal["error", "warning", "info"]
State = Literal["ok", "unavailable", "timeout", "skipped"]
SEVERITY_RANK: dict[str, int] = {"error": 3, "warning": 2, "info": 1}


@dataclass(frozen=True)
class Signal:
    """One fact about the code: a diagnostic, a failing test, a syntax error, a format difference."""

    source: str  # "ruff", "format", "pytest", "syntax"
    path: str
    line: int
    end_line: int
    code: str  # ruff rule, "format", the test's node id, "syntax-error"
    message: str
    severity: Severity = "warning"
    fixable: bool = False
    column: int = 0
    detail: str = ""  # a short traceback or the fix ruff would apply
    anchor: str = field(default="", compare=False)  # the stripped text of ``line``

    def key(self) -> tuple[str, ...]:
        """What identifies this signal across edits that move lines around."""
        if self.source == "pytest":
            return (self.source, self.code)
        if self.source == "format":
            # The message names line numbers; what ruff would rewrite is the same work wherever it sits.
            return (
                self.source,
                self.path,
                self.code,
                self.anchor,
                self.detail,
                str(self.end_line - self.line),
            )
        return (self.source, self.path, self.code, self.message, self.anchor)

    def location(self) -> str:
        return f"{self.path}:{self.line}" + (f":{self.column}" if self.column else "")


@dataclass(frozen=True)
class SourceStatus:
    """Whether a signal source ran. A source that did not run is never reported as clean."""

    source: str
    state: State
    note: str = ""


@dataclass(frozen=True)
class CallRecord:
    """The functions one test called, each by its file and the first line of its code (its first
    decorator's line for a decorated function), and whether the test failed: a run's coverage by
    definition, recorded only when asked for (``PytestSignals.collect(calls=True)``)."""

    nodeid: str
    failed: bool
    called: frozenset[tuple[str, int]]
    # The lines it ran of the files under review: a branch only failing tests take, in a definition
    # every test calls.
    lines: frozenset[tuple[str, int]] = frozenset()


@dataclass(frozen=True)
class SignalSet:
    """All signals of one version of the code, with the state of each source, and the functions each
    test called when the run recorded them."""

    signals: tuple[Signal, ...] = ()
    statuses: tuple[SourceStatus, ...] = ()
    calls: tuple[CallRecord, ...] = ()

    def missing(self) -> tuple[SourceStatus, ...]:
        return tuple(s for s in self.statuses if s.state in ("unavailable", "timeout"))

    @staticmethod
    def merge(parts: Iterable[SignalSet]) -> SignalSet:
        signals: list[Signal] = []
        statuses: list[SourceStatus] = []
        calls: list[CallRecord] = []
        for part in parts:
            signals.extend(part.signals)
            statuses.extend(part.statuses)
            calls.extend(part.calls)
        return SignalSet(tuple(sorted(signals, key=_order)), tuple(statuses), tuple(calls))


def _order(signal: Signal) -> tuple[str, int, int, str]:
    return (signal.path, signal.line, signal.column, signal.code)


@dataclass(frozen=True)
class Comparison:
    """The signals of a candidate, split by whether the change introduced them."""

    introduced: tuple[Signal, ...]
    existing: tuple[Signal, ...]
    fixed: tuple[Signal, ...]
    statuses: tuple[SourceStatus, ...]

    @property
    def clean(self) -> bool:
        """Nothing introduced and every source ran."""
        return not self.introduced and not self.missing()

    def missing(self) -> tuple[SourceStatus, ...]:
        return tuple(s for s in self.statuses if s.state in ("unavailable", "timeout"))

    def weight(self) -> tuple[int, int, int]:
        """Orders comparisons from best to worst: errors, then warnings, then the rest introduced."""
        counts = Counter(s.severity for s in self.introduced)
        return (counts["error"], counts["warning"], counts["info"])

    def no_worse_than(self, other: Comparison) -> bool:
        """At no severity more introduced signals than ``other``, and no more sources missing."""
        return all(
            mine <= theirs for mine, theirs in zip(self.weight(), other.weight(), strict=True)
        ) and len(self.missing()) <= len(other.missing())

    def better_than(self, other: Comparison) -> bool:
        """Fewer introduced signals at some severity than ``other``, and no more at any."""
        return self.no_worse_than(other) and self.weight() != other.weight()


def compare(before: SignalSet | None, after: SignalSet) -> Comparison:
    """Split ``after`` into what is new against ``before`` and what was already there.

    With no ``before`` (a whole-file review or a new file) everything counts as introduced.
    Matching is by ``Signal.key`` as a multiset, so a second copy of an old diagnostic is new.
    """
    if before is None:
        return Comparison(after.signals, (), (), after.statuses)
    remaining = Counter(s.key() for s in before.signals)
    introduced: list[Signal] = []
    existing: list[Signal] = []
    for signal in after.signals:
        key = signal.key()
        if remaining[key] > 0:
            remaining[key] -= 1
            existing.append(signal)
        else:
            introduced.append(signal)
    fixed: list[Signal] = []
    for signal in before.signals:
        key = signal.key()
        if remaining[key] > 0:
            remaining[key] -= 1
            fixed.append(signal)
    return Comparison(tuple(introduced), tuple(existing), tuple(fixed), after.statuses)


@dataclass(frozen=True)
class LineEdit:
    """One region a change rewrote, as 1-based inclusive line ranges of the old and the new text (the old
    range is empty, ``old_first > old_last``, for an insertion)."""

    old_first: int
    old_last: int
    new_first: int
    new_last: int


def line_edits(before: str, after: str) -> tuple[LineEdit, ...]:
    """The regions a change from ``before`` to ``after`` inserted, replaced or deleted.

    A deletion's new range is the two lines on either side of it, where the code closed up.
    """
    # Lines as Python numbers them (a form feed is no line break): signals and views count that way.
    old, new = ([line.rstrip("\r\n") for line in source_lines(text)] for text in (before, after))
    # The common head and tail are matched first: a one-line edit in a 2,000-line file then costs a
    # comparison of the lines between, not SequenceMatcher over the whole file (100 ms on every check).
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    middle = difflib.SequenceMatcher(
        None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=False
    )
    edits: list[LineEdit] = []
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        if tag != "equal":
            i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
            edits.append(LineEdit(i1 + 1, i2, *((j1 + 1, j2) if j2 > j1 else (max(j1, 1), j1 + 1))))
    return tuple(edits)


def touched_lines(before: str, after: str) -> frozenset[int]:
    """The 1-based lines of ``after`` that a change from ``before`` touched (see ``line_edits``)."""
    return frozenset(n for e in line_edits(before, after) for n in range(e.new_first, e.new_last + 1))


def _overlaps(signal: Signal, first: int, last: int) -> bool:
    return first <= last and signal.line <= last and max(signal.end_line, signal.line) >= first


def format_work(comparison: Comparison, edits: Mapping[str, tuple[LineEdit, ...]]) -> Comparison:
    """``comparison`` with format work counted as introduced only where the change touched lines, and
    those lines had no format work before (``edits``: the line edits of each modified file).

    ruff format works on whole statements and blank-line runs, so the runs it reports shift and regroup
    when unrelated code moves; and a badly formatted line that a change edits and leaves badly formatted
    is old debt, paired here with the format signal of the lines it replaced.
    """
    introduced: list[Signal] = []
    existing = list(comparison.existing)
    fixed = list(comparison.fixed)
    for signal in comparison.introduced:
        path_edits = edits.get(signal.path)
        if signal.source != "format" or path_edits is None:
            introduced.append(signal)
            continue
        hits = [e for e in path_edits if _overlaps(signal, e.new_first, e.new_last)]
        old = next(
            (
                index
                for index, gone in enumerate(fixed)
                if gone.source == "format"
                and gone.path == signal.path
                and any(_overlaps(gone, e.old_first, e.old_last) for e in hits)
            ),
            None,
        )
        if not hits:
            existing.append(signal)
        elif old is not None:
            existing.append(signal)
            del fixed[old]
        else:
            introduced.append(signal)
    return Comparison(tuple(introduced), tuple(existing), tuple(fixed), comparison.statuses)


def anchor_of(text_lines: list[str], line: int) -> str:
    """The stripped text of 1-based ``line``, or an empty string past the end."""
    return text_lines[line - 1].strip() if 0 < line <= len(text_lines) else ""


_LOCATION = re.compile(r"^\S.*:\d+: in \S+")


def failure_excerpt(detail: str, tail: int = 3) -> list[str]:
    """The rows of a short pytest traceback worth reading: where the test failed and the line there
    (the assert), where the error was raised if elsewhere, the first error row and the last ``tail`` rows;
    the middle is trimmed to "..."."""
    rows = [row for row in detail.strip().splitlines() if row.strip()]
    keep: set[int] = set()
    places = [i for i, row in enumerate(rows) if _LOCATION.match(row)]
    for i in places[:1] + places[-1:]:
        keep.update((i, i + 1))
    errors = [i for i, row in enumerate(rows) if row.startswith("E ")]
    keep.update(errors[:1])
    keep.update(range(max(len(rows) - tail, 0), len(rows)))
    if len(rows) <= len(keep) + 1:
        return rows
    excerpt: list[str] = []
    previous = -1
    for i in sorted(k for k in keep if k < len(rows)):
        if i - previous > 1:
            excerpt.append("...")
        excerpt.append(rows[i])
        previous = i
    return excerpt
