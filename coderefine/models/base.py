"""The Model protocol: one call that takes a request and returns text, tool input and usage.

Requests are provider-neutral records. A content block marked ``cache`` ends the stable prefix that the
provider may cache (Anthropic's ``cache_control``); everything after it changes from call to call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Role = Literal["author", "critic", "reviser"]


@dataclass(frozen=True)
class Usage:
    """Tokens of one or more calls. ``input_tokens`` counts only uncached input, as the API reports it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
        )

    @property
    def total_input(self) -> int:
        """Every input token sent, cached or not."""
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    @property
    def total(self) -> int:
        return self.total_input + self.output_tokens


@dataclass(frozen=True)
class Block:
    """A piece of text in a message. ``cache`` marks the end of the cacheable prefix."""

    text: str
    cache: bool = False


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    blocks: tuple[Block, ...]

    @classmethod
    def user(cls, *texts: str) -> Message:
        return cls("user", tuple(Block(t) for t in texts))

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", (Block(text),))

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks)


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model must call; its input is the structured answer."""

    name: str
    description: str
    input_schema: Mapping[str, Any]

    def chars(self) -> int:
        """About what its definition adds to a request, as the providers serialize it."""
        return len(self.name) + len(self.description) + len(json.dumps(self.input_schema))


@dataclass(frozen=True)
class ModelRequest:
    role: Role
    system: tuple[Block, ...]
    messages: tuple[Message, ...]
    max_tokens: int
    tool: ToolSpec | None = None
    force_tool: bool = True  # False: the tool is listed (keeping the cached prefix equal) but not used

    def prompt_text(self) -> str:
        """Everything the request sends, as one string (for redaction checks and records)."""
        parts = [b.text for b in self.system]
        parts += [m.text for m in self.messages]
        return "\n".join(parts)


@dataclass(frozen=True)
class ModelReply:
    text: str
    usage: Usage
    model: str
    tool_input: Mapping[str, Any] | None = None
    stop_reason: str = ""
    batch: bool = False  # answered through a batch API: billed at the batch discount


class Model(Protocol):
    """A language model. ``name`` is what prices and reports call it."""

    @property
    def name(self) -> str: ...

    def complete(self, request: ModelRequest) -> ModelReply: ...


def warm_up(model: object) -> None:
    """Start a model's slow set-up (its SDK import) now, if it has one, so that it overlaps other work."""
    warm = getattr(model, "warm_up", None)
    if callable(warm):
        warm()


def ready(model: object) -> None:
    """Wait for a model's slow set-up, if it has one; what went wrong there is left for its first call
    to raise, as it would have without this wait."""
    wait = getattr(model, "ready", None)
    if callable(wait):
        wait()


class Wrapped:
    """A model around another (a heartbeat, a recorder, a witness): the inner model's name and warm-up,
    and calls passed through; a wrapper overrides ``complete`` to add its own work."""

    def __init__(self, inner: Model) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    def warm_up(self) -> None:
        warm_up(self._inner)

    def ready(self) -> None:
        ready(self._inner)

    def complete(self, request: ModelRequest) -> ModelReply:
        return self._inner.complete(request)
