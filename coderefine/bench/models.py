"""Models that keep the benchmark honest: an oracle that must score 100%, a do-nothing model that must
score 0%. Neither needs a network or a key."""

from __future__ import annotations

import contextlib
import difflib
import re
from typing import Protocol

from coderefine.bench.suite import RELEASE_KIND, REVIEW_KINDS
from coderefine.models.base import ModelReply, ModelRequest, Usage


class _Known(Protocol):
    @property
    def path(self) -> str: ...
    def oracle_edits(self) -> list[tuple[str, str]]: ...


def _edit(path: str, search: str, replace: str) -> str:
    return f"{path}\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


class OracleModel:
    """Knows the original code: the critic says revise while a changed part is there, and the author
    and reviser answer with edit blocks that put the original back."""

    def __init__(self, task: _Known) -> None:
        self._task = task
        self._starts: dict[str, str] = {}

    def _start_text(self, path: str = "") -> str:
        """The file the task starts from; empty when the task cannot say (a HumanEvalFix task, whose
        file is small and always shown whole)."""
        path = path or self._task.path
        if path not in self._starts:
            start_text = getattr(self._task, "start_text", None)
            clean_module = getattr(self._task, "clean_module", None)
            self._starts[path] = ""
            if callable(start_text) and callable(clean_module):
                with contextlib.suppress(OSError, ValueError):
                    if path == self._task.path:
                        self._starts[path] = str(start_text(clean_module()))
                    else:
                        self._starts[path] = str(start_text(clean_module(path), path))
        return self._starts[path]

    def _changes(self) -> list[tuple[str, str, str]]:
        """(path, wrong, right) of every edit; a task of one file gives its own path to each."""
        changes = getattr(self._task, "oracle_changes", None)
        if callable(changes):
            return [(str(p), str(a), str(b)) for p, a, b in changes()]
        return [(self._task.path, a, b) for a, b in self._task.oracle_edits()]

    def _line_of(self, wrong: str, right: str, path: str = "") -> int:
        """The line, in the file the task starts from, where ``wrong`` first differs from ``right``: where
        a real critic points, so that a reviser shown only part of a large module sees it."""
        start = self._start_text(path)
        at = self._occurrence(start, wrong) if start else -1
        if at < 0:
            return 1
        first = start.count("\n", 0, at) + 1
        old, new = wrong.splitlines(), right.splitlines()
        for tag, i1, _, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag != "equal":
                return first + min(i1, max(len(old) - 1, 0))
        return first

    def _pieces(self, wrong: str, right: str, path: str = "") -> list[tuple[str, str]]:
        """The edits that turn ``wrong`` into ``right``: the changed lines with just enough lines around
        them to be unique in the file, as a reviser shown a window of a long function would write them;
        the whole function when the file is not known."""
        start = self._start_text(path)
        if start and start.count(wrong) > 1:
            # The same text twice (a method of two classes, one with its call dropped): a reviser
            # quotes the lines around it until its SEARCH names one place.
            return [_widened(start, self._occurrence(start, wrong), wrong, right)]
        if not start or start.count(wrong) != 1:
            return [(wrong, right)]
        return _hunks(wrong, right, start)

    def _occurrence(self, start: str, wrong: str) -> int:
        """Where ``wrong`` is in ``start`` (-1 when it is not): of several places, the one holding the
        task's line, else the nearest to it."""
        places, at = [], start.find(wrong)
        while at >= 0:
            places.append(at)
            at = start.find(wrong, at + 1)
        if len(places) < 2:
            return places[0] if places else -1
        line = int(getattr(self._task, "line", 0) or 0)

        def distance(at: int) -> int:
            first = start.count("\n", 0, at) + 1
            last = first + wrong.count("\n")
            return 0 if first <= line <= last else min(abs(line - first), abs(line - last))

        return min(places, key=distance)

    @property
    def name(self) -> str:
        return "oracle"

    def complete(self, request: ModelRequest) -> ModelReply:
        sent = request.prompt_text()
        kind = getattr(self._task, "kind", "")
        edits = [(p, a, b) for p, a, b in self._changes() if a.strip() and a != b]
        if kind == RELEASE_KIND:
            # A release's change is many hunks over whole files: each hunk is an edit of its own, pointed
            # at by its own issue, so that a reviser shown excerpts of a long file is shown every one.
            edits = [(p, x, y) for p, a, b in edits for x, y in self._pieces(a, b, p)]
        # What of each wrong function is in sight: the pieces whose text the request shows.
        # A release's pieces are already unique where they are applied: split again against the
        # starting text, a later piece could match twice once the earlier ones are in.
        seen = {
            e: ([(e[1], e[2])] if e[1].strip() in sent else [])
            if kind == RELEASE_KIND
            else [p for p in self._pieces(e[1], e[2], e[0]) if p[0].strip() in sent]
            for e in edits
        }
        wrong = [e for e in edits if seen[e]]
        blocks = "".join(_edit(e[0], s, r) for e in wrong for s, r in seen[e])
        usage = Usage(len(sent) // 4, 50)
        if request.role == "critic":
            # A large module may be shown in part: a function outside the excerpts is only named in the
            # outline, where a critic that knows the bug would still point (at its line), so that the
            # reviser is shown it. A release hunk whose new text is not in sight is pointed at too: the
            # critic cannot see that it was made.
            outlined = [
                e
                for e in edits
                if e not in wrong
                and (_outlined(e[1], sent) or (kind == RELEASE_KIND and e[2].strip() not in sent))
            ]
            buggy = bool(wrong or outlined)
            issues = []
            for path, a, b in wrong + outlined:
                # The evidence is the faulty line itself, where a real critic would quote (the critique's
                # line is anchored on it).
                first = _first_difference(a, b) or next((x.strip() for x in a.splitlines() if x.strip()), "")
                if kind in REVIEW_KINDS:
                    line = int(getattr(self._task, "line", 1))
                else:
                    line = self._line_of(a, b, path)
                issues.append(
                    {
                        "title": "bug",
                        "severity": "error",
                        "path": path,
                        "line": line,
                        "evidence": first,
                        "suggestion": "use the canonical body",
                    }
                )
            critique: dict[str, object] = {
                "verdict": "revise" if buggy else "pass",
                "summary": "the body differs from the canonical solution" if buggy else "matches",
                "issues": issues,
            }
            edits_asked = request.tool is not None and "edits" in request.tool.input_schema["properties"]
            if wrong and edits_asked:
                critique["edits"] = blocks
            return ModelReply("", usage, self.name, tool_input=critique)
        if not wrong:
            return ModelReply("No change.", usage, self.name)
        return ModelReply(blocks, usage, self.name)


def _hunks(wrong: str, right: str, start: str) -> list[tuple[str, str]]:
    """The pieces that turn ``wrong`` (found once in ``start``) into ``right``, in order: each changed run
    of lines with enough context to be unique in the text it is applied to, which is ``start`` with the
    pieces before it already applied (an earlier piece's new text may repeat a later one's old text)."""
    old, new = wrong.splitlines(keepends=True), right.splitlines(keepends=True)
    changes = [
        op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    windows: list[list[int]] = []  # [old start, old end, new start, new end] of each piece

    def applied(count: int) -> str:
        """``start`` once the first ``count`` pieces are applied."""
        if not count:
            return start
        last = windows[count - 1]
        return start.replace(wrong, "".join(new[: last[3]]) + "".join(old[last[1] :]), 1)

    for _, i1, i2, j1, j2 in changes:
        context = 1
        while True:
            a1, a2 = max(i1 - context, 0), min(i2 + context, len(old))
            window = [a1, a2, j1 - (i1 - a1), j2 + (a2 - i2)]
            merged = bool(windows) and a1 < windows[-1][1]  # overlaps the previous piece: one piece
            if merged:
                window = [windows[-1][0], a2, windows[-1][2], window[3]]
            search = "".join(old[window[0] : window[1]])
            text = applied(len(windows) - 1 if merged else len(windows))
            if (search.strip() and _matches(text, search) == 1) or (a1 == 0 and a2 == len(old)):
                break
            context *= 2
        if merged:
            windows[-1] = window
        else:
            windows.append(window)
    return [("".join(old[a1:a2]), "".join(new[b1:b2])) for a1, a2, b1, b2 in windows]


def _widened(start: str, at: int, wrong: str, right: str) -> tuple[str, str]:
    """``(wrong, right)`` with as many of the lines around ``start``'s place ``at`` as make the
    SEARCH text match there alone."""
    before = start[:at].splitlines(keepends=True)
    after = start[at + len(wrong) :].splitlines(keepends=True)
    count = 1
    while count <= max(len(before), len(after)):
        pre, post = "".join(before[-count:]), "".join(after[:count])
        if _matches(start, pre + wrong + post) == 1:
            return pre + wrong + post, pre + right + post
        count *= 2
    return wrong, right


def _matches(text: str, search: str) -> int:
    """Where ``search`` matches ``text`` as whole lines, overlapping matches counted, as an edit block's
    SEARCH is matched (``str.count`` misses ``b\nb\n`` twice in ``b\nb\nb\n``)."""
    lines, needle = text.splitlines(), search.splitlines()
    size = len(needle)
    return sum(1 for i in range(len(lines) - size + 1) if lines[i : i + size] == needle)


_OUTLINE = re.compile(r"<<<DATA kind=outline [^>]*id=(\w+)>>>(.*?)<<<END DATA id=\1>>>", re.DOTALL)


def _outlined(function: str, sent: str) -> bool:
    """Whether ``sent`` names the definition that ``function`` holds only in a view's outline, not in
    full: as ``LINE: def name(...)``, or in a folded form as ``name:LINE``."""
    found = re.search(r"^\s*(?:async\s+)?(def|class)\s+(\w+)", function, re.MULTILINE)
    if found is None:
        return False
    keyword, name = found.group(1), found.group(2)
    prefix = "(?:async )?def" if keyword == "def" else "class"
    # Methods are indented under their class.
    if re.search(rf"^\d+:\s+{prefix} {re.escape(name)}\b", sent, re.MULTILINE) is not None:
        return True
    # A folded outline lists a class's methods, or a long module's names, as ``name:LINE``.
    folded = rf"(?:^|[\s,])({re.escape(name)}):\d+\b"
    return any(re.search(folded, block.group(2), re.MULTILINE) for block in _OUTLINE.finditer(sent))


def _first_difference(wrong: str, right: str) -> str:
    """The first line of ``wrong`` where it differs from ``right``, stripped; where ``wrong`` lacks a
    line of ``right``, the line at the gap, or the one before it when that is blank or the gap is at the
    end: the lines on either side of a missing line both count as the mutant's."""
    old, new = wrong.splitlines(), right.splitlines()
    for tag, i1, _, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            return old[i1].strip()
        if tag == "insert" and old:
            around = [old[i] for i in (i1, i1 - 1) if 0 <= i < len(old) and old[i].strip()]
            return around[0].strip() if around else ""
    return ""


class DoNothingModel:
    """Passes everything and changes nothing."""

    @property
    def name(self) -> str:
        return "do-nothing"

    def complete(self, request: ModelRequest) -> ModelReply:
        usage = Usage(len(request.prompt_text()) // 4, 5)
        if request.role == "critic":
            return ModelReply(
                "", usage, self.name, tool_input={"verdict": "pass", "summary": "fine", "issues": []}
            )
        return ModelReply("No change is needed.", usage, self.name)


SELF_CHECK_MODELS = ("oracle", "do-nothing")
