"""Whether a run's first request showed every line a task's injected bugs (or its release change) touch:
the bench's ``localized`` column. A line the first request hides must be found by asking, or guessed."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

Spans = tuple[tuple[int, int], ...]


def task_changes(task: Any) -> list[tuple[str, str, str]]:
    """(path, wrong, right) of each of the task's edits; none when the task cannot say."""
    changes = getattr(task, "oracle_changes", None)
    if callable(changes):
        return [(str(p), str(a), str(b)) for p, a, b in changes()]
    edits = getattr(task, "oracle_edits", None)
    return [(str(task.path), str(a), str(b)) for a, b in edits()] if callable(edits) else []


def bug_lines(changes: Iterable[tuple[str, str, str]], starts: Mapping[str, str]) -> dict[str, set[int]]:
    """The lines of each starting file that an edit changes (a pure insertion marks the line it goes
    before), where the edit's wrong text is found."""
    found: dict[str, set[int]] = {}
    for path, wrong, right in changes:
        text = starts.get(path, "")
        at = text.find(wrong) if wrong else -1
        if at < 0:
            continue
        first = text.count("\n", 0, at) + 1
        old, new = wrong.splitlines(), right.splitlines()
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, _, _ in matcher.get_opcodes():
            if tag != "equal":
                last = max(i2, i1 + 1) if old else 1
                found.setdefault(path, set()).update(
                    range(first + min(i1, len(old) - 1), first + min(last, len(old)))
                )
    return found


def localized(lines: Mapping[str, set[int]], shown: Mapping[str, Spans]) -> bool | None:
    """Whether every one of ``lines`` was shown (``shown``: a file's excerpts, () for whole); None
    when the lines are not known or no request was made."""
    if not lines or not shown:
        return None  # no line known, or no request made
    for path, wanted in lines.items():
        if path not in shown:
            return False
        spans = shown[path]
        if spans and not all(any(a <= n <= b for a, b in spans) for n in wanted):
            return False
    return True
