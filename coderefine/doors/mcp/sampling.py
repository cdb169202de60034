"""A model that answers through someone else's model: an MCP client's, by sampling.

Sampling carries plain messages and text; it cannot force a tool call. So the request is flattened (the
system blocks into one system prompt, each message into text, fencing and all unchanged), and when the
critic's structured answer is required the schema is appended to the last message: the answer comes back
as JSON text, which the critique parser reads and repairs like any other. The reviser's edit blocks go
through the same gate as every other model's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from coderefine.models.base import ModelReply, ModelRequest, Role, Usage
from coderefine.refiner.prompting import prompt_text

SAMPLING_PREFIX = "sampling:"


@dataclass(frozen=True)
class SampleCall:
    """One sampling request: a system prompt and the conversation, as text."""

    role: Role
    system: str
    messages: tuple[tuple[Literal["user", "assistant"], str], ...]
    max_tokens: int


@dataclass(frozen=True)
class Sample:
    """The client's answer: its text and the name of the model that wrote it."""

    text: str
    model: str
    stop_reason: str = ""


Sampler = Callable[[SampleCall], Sample]


def sample_call(request: ModelRequest) -> SampleCall:
    """``request`` as a sampling call; a forced tool becomes a JSON answer asked for in words."""
    messages = [(m.role, m.text) for m in request.messages]
    if request.tool is not None and request.force_tool and messages and messages[-1][0] == "user":
        schema = json.dumps(dict(request.tool.input_schema), separators=(",", ":"))
        ask = prompt_text("sampling_critique").replace("{schema}", schema)
        messages[-1] = ("user", messages[-1][1] + "\n\n" + ask)
    system = "\n\n".join(b.text for b in request.system)
    return SampleCall(request.role, system, tuple(messages), request.max_tokens)


class SamplingModel:
    """Sends each request to ``sampler`` and keeps the names of the models that answered.

    Sampling reports no token counts; usage is estimated (four characters a token) so that the token
    budget still bounds a run. The reply's model is ``sampling:NAME``, which costs nothing here: the
    client pays for its own model.
    """

    def __init__(self, sampler: Sampler) -> None:
        self._sampler = sampler
        self.answered: list[str] = []

    @property
    def name(self) -> str:
        return SAMPLING_PREFIX + (self.answered[-1] if self.answered else "client")

    def complete(self, request: ModelRequest) -> ModelReply:
        call = sample_call(request)
        sample = self._sampler(call)
        if sample.model not in self.answered:
            self.answered.append(sample.model)
        sent = len(call.system) + sum(len(text) for _, text in call.messages)
        usage = Usage(input_tokens=max(sent // 4, 1), output_tokens=max(len(sample.text) // 4, 1))
        return ModelReply(sample.text, usage, SAMPLING_PREFIX + sample.model, stop_reason=sample.stop_reason)
