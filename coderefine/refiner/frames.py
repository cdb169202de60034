"""Where signals point in a file: the lines they name and the frames of failing tests' tracebacks.

A failing test's traceback lists the frames it passed through, the outermost first; those in the code
under review are evidence of where the fault is, the innermost (where it raised) most of all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from coderefine.signals.base import Signal


def signal_lines(path: str, signals: Iterable[Signal]) -> set[int]:
    """Lines of ``path`` that signals point at, including the frames of failing tests' tracebacks."""
    frame = re.compile(rf"(?:^|[\s\"'/]){re.escape(path)}\"?(?::|, line )(\d+)")
    lines: set[int] = set()
    for signal in signals:
        if signal.path == path:
            lines.update(range(signal.line, max(signal.end_line, signal.line) + 1))
        if signal.source == "pytest":
            lines.update(int(m.group(1)) for m in frame.finditer(signal.detail))
    return {n for n in lines if n > 0}


def crashed(texts: Mapping[str, str], errors: Iterable[Signal]) -> bool:
    """Whether every failing test among ``errors`` has a frame of its traceback in ``texts``' files (it
    raised in the code under review, not at an assertion of its own)."""
    failing = [s for s in errors if s.source == "pytest" and not s.code.startswith("collect:")]
    return bool(failing) and all(
        any(signal_lines(path, [s]) - _own_lines(path, s) for path in texts) for s in failing
    )


# How many of a failing test's innermost frames in the code under review a view keeps when not all fit.
DEEP_FRAMES = 3


def innermost_frames(
    texts: Mapping[str, str], errors: Iterable[Signal], count: int = DEEP_FRAMES
) -> dict[str, frozenset[int]]:
    """The last ``count`` frames of each failing test's traceback that are in ``texts``' files, by path
    (a traceback lists the outermost frame first)."""
    if not texts:
        return {}
    paths = "|".join(re.escape(path) for path in sorted(texts, key=len, reverse=True))
    frame = re.compile(rf"(?:^|[\s\"'/])({paths})\"?(?::|, line )(\d+)")
    found: dict[str, set[int]] = {}
    for signal in errors:
        if signal.source != "pytest":
            continue
        frames = [(m.group(1), int(m.group(2))) for m in frame.finditer(signal.detail)]
        for path, line in frames[-count:]:
            found.setdefault(path, set()).add(line)
    return {path: frozenset(lines) for path, lines in found.items()}


def _own_lines(path: str, signal: Signal) -> set[int]:
    """The lines a signal names itself (not its traceback's frames), when it is about ``path``."""
    return set(range(signal.line, max(signal.end_line, signal.line) + 1)) if signal.path == path else set()
