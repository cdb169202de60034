"""Models that keep the benchmark honest: an oracle that must score 100%, a do-nothing model that must
score 0%. Neither needs a network or a key."""

from __future__ import annotations

from coderefine.bench.tasks import MODULE, Task
from coderefine.models.base import ModelReply, ModelRequest, Usage


def _edit(search: str, replace: str) -> str:
    return f"{MODULE}\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


class OracleModel:
    """Knows the canonical solution: the critic says revise while the buggy body is there, and the author
    and reviser answer with an edit block that puts the canonical body in its place."""

    def __init__(self, task: Task) -> None:
        self._task = task

    @property
    def name(self) -> str:
        return "oracle"

    def complete(self, request: ModelRequest) -> ModelReply:
        sent = request.prompt_text()
        buggy = self._task.buggy_solution.strip() in sent
        usage = Usage(len(sent) // 4, 50)
        if request.role == "critic":
            first = next(line.strip() for line in self._task.buggy_solution.splitlines() if line.strip())
            critique = {
                "verdict": "revise" if buggy else "pass",
                "summary": "the body differs from the canonical solution" if buggy else "matches",
                "issues": [
                    {
                        "title": "bug",
                        "severity": "error",
                        "path": MODULE,
                        "line": 1,
                        "evidence": first,
                        "suggestion": "use the canonical body",
                    }
                ]
                if buggy
                else [],
            }
            return ModelReply("", usage, self.name, tool_input=critique)
        if not buggy:
            return ModelReply("No change.", usage, self.name)
        return ModelReply(_edit(self._task.buggy_solution, self._task.canonical_solution), usage, self.name)


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
