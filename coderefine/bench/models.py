"""Models that keep the benchmark honest: an oracle that must score 100%, a do-nothing model that must
score 0%. Neither needs a network or a key."""

from __future__ import annotations

import difflib
from typing import Protocol

from coderefine.bench.suite import REVIEW_KINDS
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

    @property
    def name(self) -> str:
        return "oracle"

    def complete(self, request: ModelRequest) -> ModelReply:
        sent = request.prompt_text()
        wrong = [(a, b) for a, b in self._task.oracle_edits() if a.strip() and a.strip() in sent]
        buggy = bool(wrong)
        usage = Usage(len(sent) // 4, 50)
        if request.role == "critic":
            first = next((line.strip() for a, _ in wrong[:1] for line in a.splitlines() if line.strip()), "")
            line = 1
            if getattr(self._task, "kind", "") in REVIEW_KINDS and wrong:
                # A review is caught on the mutant's own line: point there, not at the function.
                first = _first_difference(*wrong[0]) or first
                line = int(getattr(self._task, "line", 1))
            critique: dict[str, object] = {
                "verdict": "revise" if buggy else "pass",
                "summary": "the body differs from the canonical solution" if buggy else "matches",
                "issues": [
                    {
                        "title": "bug",
                        "severity": "error",
                        "path": self._task.path,
                        "line": line,
                        "evidence": first,
                        "suggestion": "use the canonical body",
                    }
                ]
                if buggy
                else [],
            }
            edits_asked = request.tool is not None and "edits" in request.tool.input_schema["properties"]
            if buggy and edits_asked:
                critique["edits"] = "".join(_edit(self._task.path, a, b) for a, b in wrong)
            return ModelReply("", usage, self.name, tool_input=critique)
        if not buggy:
            return ModelReply("No change.", usage, self.name)
        return ModelReply("".join(_edit(self._task.path, a, b) for a, b in wrong), usage, self.name)


def _first_difference(wrong: str, right: str) -> str:
    """The first line of ``wrong`` where it differs from ``right``, stripped; where ``wrong`` lacks a
    line of ``right``, the line before the gap."""
    old, new = wrong.splitlines(), right.splitlines()
    for tag, i1, _, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            return old[i1].strip()
        if tag == "insert" and old:
            return old[max(i1 - 1, 0)].strip()
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
