"""A scripted model: answers from a list given in advance and keeps every request it was sent.

For tests and for trying prompts by hand; no network, no key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from coderefine.errors import ReplayError
from coderefine.models.base import ModelReply, ModelRequest, Usage

Script = (
    str | Mapping[str, Any] | ModelReply | Callable[[ModelRequest], "str | Mapping[str, Any] | ModelReply"]
)


class ScriptedModel:
    """Replies in order. A str is a text reply, a mapping a tool input (the critique), a callable is
    called with the request and returns either."""

    def __init__(self, replies: Iterable[Script] = (), name: str = "scripted") -> None:
        self._replies: list[Script] = list(replies)
        self._name = name
        self.history: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def enqueue(self, *replies: Script) -> None:
        self._replies.extend(replies)

    def complete(self, request: ModelRequest) -> ModelReply:
        self.history.append(request)
        if not self._replies:
            raise ReplayError(f"the scripted model has no reply left for the {request.role} call")
        item = self._replies.pop(0)
        if callable(item):
            item = item(request)
        if isinstance(item, ModelReply):
            return item
        tokens = max(len(request.prompt_text()) // 4, 1)
        if isinstance(item, str):
            return ModelReply(item, Usage(tokens, max(len(item) // 4, 1)), self._name)
        return ModelReply("", Usage(tokens, 50), self._name, tool_input=dict(item))
