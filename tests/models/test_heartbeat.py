from __future__ import annotations

import io
import threading

from coderefine.models.base import ModelReply, ModelRequest, Usage
from coderefine.models.heartbeat import Heartbeat
from tests.models.test_anthropic import request


class Slow:
    """Answers once the test lets it, so the heartbeat has time to beat."""

    def __init__(self) -> None:
        self.release = threading.Event()

    @property
    def name(self) -> str:
        return "llamacpp:tiny"

    def complete(self, request: ModelRequest) -> ModelReply:
        self.release.wait(10)
        return ModelReply("done", Usage(), self.name)


class Stream(io.StringIO):
    def __init__(self, inner: Slow, beats: int) -> None:
        super().__init__()
        self._inner, self._beats = inner, beats

    def flush(self) -> None:
        if self.getvalue().count("\n") >= self._beats:
            self._inner.release.set()


def test_a_long_call_says_it_is_still_waiting() -> None:
    slow = Slow()
    stream = Stream(slow, beats=2)
    ticks = iter(range(0, 1000, 15))
    reply = Heartbeat(slow, stream, after=0.01, every=0.01, clock=lambda: float(next(ticks))).complete(
        request()
    )
    assert reply.text == "done"
    lines = stream.getvalue().splitlines()
    assert lines[0] == "coderefine: still waiting for the critic (llamacpp:tiny): 15s"
    assert len(lines) >= 2


def test_a_quick_call_says_nothing() -> None:
    slow = Slow()
    slow.release.set()
    stream = io.StringIO()
    Heartbeat(slow, stream, after=30).complete(request())
    assert stream.getvalue() == ""
