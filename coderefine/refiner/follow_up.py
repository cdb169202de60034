"""What goes back into the conversation after a model's answer: the definitions it asked to see, or a
retry that says what was wrong, sized to the smallest window; and why an answer could not be used."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from coderefine.models.base import Message, ModelReply, ModelRequest
from coderefine.refiner.asks import Ask, answer, asks_in
from coderefine.refiner.code_section import excerpt
from coderefine.refiner.context import FileView
from coderefine.refiner.prompting import MAX_ECHO, PromptBuilder, prompt_text

# What a retry keeps however little room its context leaves: the error's first lines, and an echo of the
# failed answer only when this much of it fits (less says nothing the error does not).
MIN_FEEDBACK = 600
MIN_ECHO = 400


def answered(
    request: ModelRequest,
    reply_text: str,
    texts: Mapping[str, str],
    shown: Mapping[str, FileView],
    room: int,
    asked: list[Ask] | None = None,
    last: bool = False,
) -> ModelRequest:
    """``request`` continued with the model's answer and the definitions it asked for (``asked``, or its
    ``SHOW:`` lines), within ``room`` characters. ``last``: the answer says no more asks are taken."""
    wanted = asked if asked is not None else asks_in(reply_text)
    definitions = answer(wanted, shown, texts, room, excerpt, last=last)
    messages = (*request.messages, Message.assistant(reply_text), Message.user(definitions))
    return dataclasses.replace(request, messages=messages)


def retry_within(
    prompts: PromptBuilder,
    request: ModelRequest,
    reply_text: str,
    template: str,
    feedback: str,
    prompt_chars: int | None,
) -> ModelRequest:
    """The retry of ``request``, within ``prompt_chars`` (the smallest known context of the models; None:
    no limit): what is wrong comes first, then as much of the failed answer as still fits (a 1.5B model's
    retry of a 7.3k-token request, its 867-token answer echoed, was refused by its 8k server)."""
    if prompt_chars is None:
        return prompts.retry(request, reply_text, template, feedback)
    room = prompt_chars - len(request.prompt_text()) - len(prompt_text(template))
    if len(feedback) > max(room, MIN_FEEDBACK):
        cut = max(room, MIN_FEEDBACK)
        feedback = feedback[:cut] + f"\n[... {len(feedback) - cut} more characters of this message cut ...]"
    echo = room - len(feedback)
    if echo < MIN_ECHO:
        note = f"(my answer of {len(reply_text)} characters, left out here for room; the error follows)"
        return prompts.retry(request, note, template, feedback)
    return prompts.retry(request, reply_text, template, feedback, max_echo=min(echo, MAX_ECHO))


def why(reply: ModelReply) -> str:
    """What the provider said about an unusable answer: cut at the token limit, empty, thoughts only."""
    if reply.stop_reason == "max_tokens":
        return " (the answer was cut off at the output token limit: answer shorter)"
    if not reply.text.strip() and reply.tool_input is None:
        return " (the answer was empty" + (
            ": only reasoning, no answer)" if reply.stop_reason == "reasoning-only" else ")"
        )
    return ""
