"""A fix's diff as suggestions: the hunks of ``git diff -U0`` as replacements of head lines, and the
review comments GitHub accepts for them (only on lines the pull request's diff shows, the RIGHT side).

Standard library only, like the step script.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    """Head lines ``start``..``end`` of ``path`` become ``lines`` (a suggestion's range and text)."""

    path: str
    start: int
    end: int
    lines: tuple[str, ...]


def fence(text: str, info: str) -> tuple[str, str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return ticks + info, ticks


def right_lines(diff: str) -> dict[str, set[int]]:
    """The head lines a pull request's diff shows (RIGHT side): where a suggestion may sit."""
    shown: dict[str, set[int]] = {}
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        match = _HUNK.match(line)
        if match and path:
            start, count = int(match.group(3)), int(match.group(4) or "1")
            shown.setdefault(path, set()).update(range(start, start + count))
    return shown


def fix_hunks(diff: str, head_text: Callable[[str], list[str]]) -> list[Hunk]:
    """The hunks of a ``git diff -U0`` as replacements of head lines; an insertion takes its neighbour."""
    hunks: list[Hunk] = []
    path, current, added = "", None, []
    for line in [*diff.splitlines(), "@@ end"]:
        if line.startswith(("@@", "diff --git")) and current is not None:
            hunks.append(_hunk(path, current, tuple(added), head_text))
            current, added = None, []
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        match = _HUNK.match(line)
        if match and path:
            current = (int(match.group(1)), int(match.group(2) or "1"))
        elif current is not None and line.startswith("+"):
            added.append(line[1:])
    return hunks


def _hunk(
    path: str, old: tuple[int, int], added: tuple[str, ...], head_text: Callable[[str], list[str]]
) -> Hunk:
    start, count = old
    if count:
        return Hunk(path, start, start + count - 1, added)
    lines = head_text(path)  # a pure insertion after line `start`: a suggestion replaces at least one line
    if start == 0:
        return Hunk(path, 1, 1, (*added, *lines[:1]))
    return Hunk(path, start, start, (lines[start - 1], *added))


def suggestions(hunks: list[Hunk], shown: Mapping[str, set[int]]) -> tuple[list[dict[str, Any]], list[Hunk]]:
    """The review comments of the hunks GitHub can place, and the hunks it cannot."""
    placed = [h for h in hunks if all(n in shown.get(h.path, set()) for n in range(h.start, h.end + 1))]
    comments = []
    for hunk in placed:
        text = "\n".join(hunk.lines)
        opening, closing = fence(text, "suggestion")
        comment: dict[str, Any] = {"path": hunk.path, "line": hunk.end, "side": "RIGHT"}
        if hunk.start < hunk.end:
            comment.update(start_line=hunk.start, start_side="RIGHT")
        body = "Verified by coderefine (gated, no signal worse):"
        comment["body"] = f"{body}\n{opening}\n{text}\n{closing}" if text else f"{body}\n{opening}\n{closing}"
        comments.append(comment)
    return comments, [h for h in hunks if h not in placed]
