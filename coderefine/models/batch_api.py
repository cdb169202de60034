"""What a provider's batch API gives back, shared by ``batch.py`` (which gathers and waits) and the two
providers' backends (``batch_anthropic.py``, ``batch_openai.py``), so that neither side imports the other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from coderefine.models.base import ModelReply, ModelRequest


@dataclass(frozen=True)
class Failure:
    """A request of a batch that has no answer: errored, expired or canceled."""

    kind: str
    message: str
    retryable: bool = True


Outcome = ModelReply | Failure


@dataclass(frozen=True)
class BatchStatus:
    ended: bool
    done: int
    total: int
    state: str = ""
    failed: str = ""  # the whole batch was refused (OpenAI's "failed": the input did not validate)


class BatchBackend(Protocol):
    """One provider's batch API, for one model."""

    @property
    def name(self) -> str: ...

    def params(self, request: ModelRequest) -> dict[str, Any]: ...

    def create(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str: ...

    def status(self, batch_id: str) -> BatchStatus: ...

    def results(self, batch_id: str, requests: Mapping[str, ModelRequest]) -> dict[str, Outcome]: ...
