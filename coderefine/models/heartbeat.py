"""Say on stderr that a long model call is still running: a local model on a CPU can take minutes, and a
silent terminal looks hung."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from coderefine.models.base import Model, ModelReply, ModelRequest, Wrapped


class Heartbeat(Wrapped):
    """Wraps a model; while a call runs longer than ``after`` seconds, writes a line every ``every``."""

    def __init__(
        self,
        inner: Model,
        stream: TextIO,
        *,
        after: float = 10.0,
        every: float = 15.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(inner)
        self._stream = stream
        self._after = after
        self._every = every
        self._clock = clock

    def complete(self, request: ModelRequest) -> ModelReply:
        done = threading.Event()
        start = self._clock()

        def beat() -> None:
            wait = self._after
            while not done.wait(wait):
                elapsed = self._clock() - start
                self._stream.write(
                    f"coderefine: still waiting for the {request.role} ({self._inner.name}): {elapsed:.0f}s\n"
                )
                self._stream.flush()
                wait = self._every

        thread = threading.Thread(target=beat, name="coderefine-heartbeat", daemon=True)
        thread.start()
        try:
            return self._inner.complete(request)
        finally:
            done.set()
            thread.join()
