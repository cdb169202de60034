"""Between the server's event loop and the library, which blocks: one worker thread per tool call.

The library runs in a worker thread. From there, progress goes back to the client as progress
notifications, and model calls can go to the client as sampling requests, both through the event loop.
When the client cancels the call, the thread is told through an event: the run stops at its next step,
and nothing is written after that (a write that already started finishes whole, as every write does).
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext

from coderefine.api import CancelledError, resolve_model
from coderefine.config import Settings
from coderefine.errors import ModelError
from coderefine.models.base import Model, ModelReply, ModelRequest
from coderefine.models.sampling import Sample, SampleCall, SamplingModel

T = TypeVar("T")

# A model counts as configured when the project or the environment chose one, or a provider's key is set;
# otherwise a client that can sample lends its own model.
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


class CallBridge:
    """The thread side of one tool call: progress, cancellation and sampling."""

    def __init__(self, ctx: ServerRequestContext[Any, Any]) -> None:
        self._ctx = ctx
        self.cancel = threading.Event()
        self._steps = 0
        self._waiting: set[anyio.CancelScope] = set()  # sampling requests in flight, on the event loop

    def notify(self, message: str) -> None:
        """A progress notification (only if the client asked for progress; never fails the run)."""
        if self.cancel.is_set():
            return
        self._steps += 1
        # A notification that cannot be delivered is no reason to stop the work.
        with contextlib.suppress(Exception):
            anyio.from_thread.run(self._ctx.session.report_progress, self._steps, None, message)

    def phase(self, name: str, round_number: int, tokens: int) -> None:
        """The loop's Progress protocol."""
        where = "draft" if round_number == 0 and name != "signals" else f"round {round_number}"
        self.notify(f"{where}: {name}" + (f" ({tokens} tokens so far)" if tokens else ""))

    def can_sample(self) -> bool:
        caps = self._ctx.session.client_capabilities
        return bool(caps is not None and caps.sampling is not None and self._ctx.session.can_send_request)

    def sample(self, call: SampleCall) -> Sample:
        """Send ``call`` to the client's model and wait for its answer."""
        if self.cancel.is_set():
            raise CancelledError("the run was cancelled; no file was written")
        self.notify(f"asking the client's model ({call.role})")
        result = anyio.from_thread.run(self._create_message, call)
        content = result.content
        if not isinstance(content, types.TextContent):
            raise ModelError(f"the MCP client's model answered the {call.role} call without text")
        return Sample(content.text, result.model, str(result.stop_reason or ""))

    async def _create_message(self, call: SampleCall) -> types.CreateMessageResult:
        from mcp.shared.exceptions import MCPError

        messages = [
            types.SamplingMessage(role=role, content=types.TextContent(type="text", text=text))
            for role, text in call.messages
        ]
        result: object = None
        with anyio.CancelScope() as scope:
            self._waiting.add(scope)
            try:
                with warnings.catch_warnings():
                    # Sampling is deprecated by the newest protocol version, not by those that carry it.
                    warnings.simplefilter("ignore")
                    result = await self._ctx.session.create_message(
                        messages,
                        max_tokens=call.max_tokens,
                        system_prompt=call.system,
                        related_request_id=self._ctx.request_id,
                    )
            except MCPError as exc:
                raise ModelError(f"the MCP client refused the sampling request: {exc}") from exc
            finally:
                self._waiting.discard(scope)
        if scope.cancelled_caught or not isinstance(result, types.CreateMessageResult):
            raise CancelledError("the run was cancelled; no file was written")
        return result

    async def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` in a worker thread; on cancellation, tell it to stop and let the caller go."""
        try:
            return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            self.cancel.set()
            for scope in list(self._waiting):
                scope.cancel()
            raise


class Witness:
    """Passes calls to a model and keeps the names of the models that answered."""

    def __init__(self, inner: Model, source: str) -> None:
        self._inner = inner
        self.source = source
        self.answered: list[str] = []

    @property
    def name(self) -> str:
        return self._inner.name

    def warm_up(self) -> None:
        warm = getattr(self._inner, "warm_up", None)
        if callable(warm):
            warm()

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self._inner.complete(request)
        if reply.model not in self.answered:
            self.answered.append(reply.model)
        return reply

    def describe(self) -> dict[str, object]:
        return {"source": self.source, "configured": self._inner.name, "answered": list(self.answered)}


def choose_model(
    bridge: CallBridge, settings: Settings, environ: Mapping[str, str], spec: str | None
) -> Witness:
    """The configured provider's model; else, when the client can sample, the client's own model."""
    configured = spec is not None or "model" in settings.sources or any(environ.get(k) for k in PROVIDER_KEYS)
    if not configured and bridge.can_sample():
        return Witness(SamplingModel(bridge.sample), "sampling")
    return Witness(resolve_model(spec, settings, environ), "provider")
