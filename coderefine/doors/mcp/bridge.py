"""Between the server's event loop and the library, which blocks: one job, in a worker thread, per call.

From the thread, progress goes back to the client as progress notifications, and model calls can go to
the client's model by sampling, both through the event loop. Sampling takes one of two roads, by protocol
version: up to 2025-11-25 a ``sampling/createMessage`` request on the connection's back-channel; from
2026-07-28, which has no back-channel, the call answers ``InputRequiredResult`` with the sampling request
and the job's id as its state, the client retries the call with the answer, and the job goes on.

When the client cancels, the job is told through an event: the run stops at its next step, and nothing is
written after that (a write that already started finishes whole, as every journalled write does).
"""

from __future__ import annotations

import contextlib
import queue
import secrets
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext

from coderefine.api import CancelledError, resolve_model
from coderefine.config import Settings
from coderefine.doors.mcp.results import ToolOutput
from coderefine.doors.mcp.sampling import Sample, SampleCall, SamplingModel
from coderefine.errors import ModelError
from coderefine.models.base import Model, ModelReply, ModelRequest, Wrapped

# A model counts as configured when the project or the environment chose one, or a provider's key is set;
# otherwise a client that can sample lends its own model.
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
_STOP = object()

Event = tuple[str, Any]  # ("sample", (key, CreateMessageRequestParams)) or ("done", ToolOutput)


class Job:
    """One tool call's work, run in a worker thread; it may outlive the request that started it."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], work: Callable[[Job], ToolOutput]) -> None:
        self.id = secrets.token_urlsafe(18)
        self.ctx = ctx
        self.cancel = threading.Event()
        self.pending = ""  # the key of the sampling request the job waits on
        # A sampled call may take as long as a provider's (the model-timeout setting); a client that does
        # not come back with the answer by then (on 2026-07-28, where nothing says it gave up) fails it.
        self.answer_timeout = 120.0
        self._work = work
        self._steps = 0
        self._send, self._receive = anyio.create_memory_object_stream[Event](1)
        self._answers: queue.Queue[object] = queue.Queue()
        self._waiting: set[anyio.CancelScope] = set()  # back-channel sampling requests in flight

    async def run(self) -> None:
        output = await anyio.to_thread.run_sync(self._work, self)
        await self._send.send(("done", output))

    async def next_event(self) -> Event:
        """The job's next sampling request, or its result; on cancellation, stop the job."""
        try:
            return await self._receive.receive()
        except anyio.get_cancelled_exc_class():
            self.stop()
            raise

    def stop(self) -> None:
        """Tell the job to stop at its next step (call on the event loop)."""
        self.cancel.set()
        for scope in list(self._waiting):
            scope.cancel()
        self._answers.put(_STOP)

    def answer(self, response: object) -> None:
        self._answers.put(response)

    # The thread side: the loop's Progress protocol, cancellation and sampling.

    def check(self) -> None:
        if self.cancel.is_set():
            raise CancelledError("the call was cancelled; no file was written")

    def notify(self, message: str) -> None:
        """A progress notification (only if the client asked for progress; never fails the run)."""
        if self.cancel.is_set():
            return
        self._steps += 1
        # A notification that cannot be delivered is no reason to stop the work.
        with contextlib.suppress(Exception):
            anyio.from_thread.run(self.ctx.session.report_progress, self._steps, None, message)

    def phase(self, name: str, round_number: int, tokens: int) -> None:
        where = "draft" if round_number == 0 and name != "signals" else f"round {round_number}"
        self.notify(f"{where}: {name}" + (f" ({tokens} tokens so far)" if tokens else ""))

    def can_sample(self) -> bool:
        caps = self.ctx.session.client_capabilities
        return caps is not None and caps.sampling is not None

    def sample(self, call: SampleCall) -> Sample:
        """Send ``call`` to the client's model and wait for its answer."""
        self.check()
        self.notify(f"asking the client's model ({call.role})")
        params = types.CreateMessageRequestParams(
            messages=[
                types.SamplingMessage(role=role, content=types.TextContent(type="text", text=text))
                for role, text in call.messages
            ],
            system_prompt=call.system,
            max_tokens=call.max_tokens,
        )
        if self.ctx.session.can_send_request:
            result: object = anyio.from_thread.run(self._create_message, params)
        else:
            self._steps += 1
            self.pending = f"sample-{self._steps}"
            anyio.from_thread.run(self._send.send, ("sample", (self.pending, params)))
            try:
                result = self._answers.get(timeout=self.answer_timeout)
            except queue.Empty:
                result = None
        self.check()
        if isinstance(result, types.ErrorData):
            raise ModelError(f"the MCP client refused the sampling request: {result.message}")
        if not isinstance(result, types.CreateMessageResult):
            raise ModelError(
                f"the MCP client did not answer the sampling request (within {self.answer_timeout:g}s); "
                "raise model-timeout in [tool.coderefine] if its model needs longer"
            )
        if not isinstance(result.content, types.TextContent):
            raise ModelError(f"the MCP client's model answered the {call.role} call without text")
        return Sample(result.content.text, result.model, str(result.stop_reason or ""))

    async def _create_message(self, params: types.CreateMessageRequestParams) -> object:
        from mcp.shared.exceptions import MCPError

        with anyio.CancelScope() as scope:
            self._waiting.add(scope)
            try:
                with anyio.fail_after(self.answer_timeout), warnings.catch_warnings():
                    # Sampling is deprecated by the newest protocol version, not by those that carry it.
                    warnings.simplefilter("ignore")
                    return await self.ctx.session.create_message(
                        params.messages,
                        max_tokens=params.max_tokens,
                        system_prompt=params.system_prompt,
                        related_request_id=self.ctx.request_id,
                    )
            except MCPError as exc:
                return types.ErrorData(code=exc.error.code, message=exc.error.message)
            except TimeoutError:
                return None
            finally:
                self._waiting.discard(scope)
        return None  # cancelled


class Witness(Wrapped):
    """Passes calls to a model and keeps the names of the models that answered."""

    def __init__(self, inner: Model, source: str) -> None:
        super().__init__(inner)
        self.source = source
        self.answered: list[str] = []

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self._inner.complete(request)
        if reply.model not in self.answered:
            self.answered.append(reply.model)
        return reply

    def describe(self) -> dict[str, object]:
        return {"source": self.source, "configured": self._inner.name, "answered": list(self.answered)}


def choose_model(job: Job, settings: Settings, environ: Mapping[str, str], spec: str | None) -> Witness:
    """The configured provider's model; else, when the client can sample, the client's own model."""
    configured = spec is not None or "model" in settings.sources or any(environ.get(k) for k in PROVIDER_KEYS)
    if not configured and job.can_sample():
        job.answer_timeout = settings.model_timeout
        return Witness(SamplingModel(job.sample), "sampling")
    return Witness(resolve_model(spec, settings, environ), "provider")
