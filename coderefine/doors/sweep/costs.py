"""What a sweep's files cost: counted as the calls are answered, and guessed before a file starts."""

from __future__ import annotations

from collections.abc import Mapping

from coderefine.config import Settings
from coderefine.models.base import Model, ModelReply, ModelRequest, Usage, Wrapped
from coderefine.models.prices import cost_of

# A first guess of one file's calls before any file has finished: critic, reviser, confirming critic.
_CALLS_PER_FILE = 3
_PROMPT_OVERHEAD_TOKENS = 3_000
_OUTPUT_TOKENS_PER_CALL = 800


class Meter(Wrapped):
    """The shared model, counting the cost of one file's calls as they are answered."""

    def __init__(self, inner: Model, prices: Mapping[str, Mapping[str, object]]) -> None:
        super().__init__(inner)
        self._prices = prices
        self.cost = 0.0
        self.tokens = 0

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self._inner.complete(request)
        # A batch answer is billed at the batch price, as the run's ledger bills it.
        self.cost += cost_of(reply.model, reply.usage, self._prices, batch=reply.batch)
        self.tokens += reply.usage.total
        return reply


def prior_cost(size: int, settings: Settings) -> float:
    """A file's expected cost before any file has finished: three calls that each show the file."""
    per_call = Usage(size // 3 + _PROMPT_OVERHEAD_TOKENS, _OUTPUT_TOKENS_PER_CALL)
    return _CALLS_PER_FILE * cost_of(settings.model, per_call, settings.prices)
