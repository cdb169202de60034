"""A run's ledger: the tokens, cost and time it spent, checked against its budgets before each call."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from coderefine.config import Settings
from coderefine.errors import BudgetExceededError, TimeLimitError
from coderefine.models.base import ModelReply, ModelRequest, Role, Usage
from coderefine.models.prices import cost_of
from coderefine.refiner.records import ModelCharge
from coderefine.timings import Span


@dataclass
class Ledger:
    """Tokens, cost and time of a run (mutable; one per run, shared by the sessions of a review)."""

    settings: Settings
    clock: Callable[[], float]
    deadline: float | None = None
    usage: dict[str, Usage] = field(default_factory=dict)
    cost: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    # Each phase as it happened, for --timings (coderefine/timings.py); ``timings`` sums them by name.
    spans: list[Span] = field(default_factory=list)
    by_model: dict[tuple[str, str], ModelCharge] = field(default_factory=dict)
    largest_call: int = 0  # the most input tokens (cached or not) one call sent
    # A review's files may be critiqued concurrently (`review --jobs`), all charged to one ledger.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def tokens(self) -> int:
        return sum(u.total for u in self.usage.values())

    def charge(self, role: Role, reply: ModelReply) -> None:
        cost = cost_of(reply.model, reply.usage, self.settings.prices, batch=reply.batch)
        # A batch call is its own line of the report, so the discounted price is seen as such.
        label = f"{reply.model} (batch)" if reply.batch else reply.model
        sent = reply.usage.input_tokens + reply.usage.cache_read_tokens + reply.usage.cache_write_tokens
        with self._lock:
            self.largest_call = max(self.largest_call, sent)
            self.usage[role] = self.usage.get(role, Usage()) + reply.usage
            self.cost += cost
            old = self.by_model.get((role, label), ModelCharge(role, label, Usage(), 0.0))
            self.by_model[(role, label)] = ModelCharge(role, label, old.usage + reply.usage, old.cost + cost)

    def charges(self) -> tuple[ModelCharge, ...]:
        return tuple(self.by_model.values())

    def allow(self, request: ModelRequest) -> None:
        """Refuse a call that could take the run past its token, cost or time budget."""
        if self.deadline is not None and self.clock() >= self.deadline:
            raise TimeLimitError("the time limit was reached")
        estimate = len(request.prompt_text()) // 3 + request.max_tokens
        max_tokens, max_cost = self.settings.max_tokens, self.settings.max_cost
        if max_tokens and self.tokens() + estimate > max_tokens:
            raise BudgetExceededError(f"token budget of {max_tokens} reached ({self.tokens()} used)")
        if max_cost and self.cost >= max_cost:
            raise BudgetExceededError(f"cost budget of ${max_cost:.2f} reached (${self.cost:.2f} used)")

    def time(self, phase: str, start: float, label: str = "") -> None:
        """``phase``'s total grows; the span is named ``label`` (default: the phase)."""
        end = self.clock()
        with self._lock:
            self.timings[phase] = self.timings.get(phase, 0.0) + end - start
            self.spans.append(Span(label or phase, start, end))

    def span(self, name: str, start: float) -> None:
        """A phase of ``--timings`` alone, in no total of the report."""
        end = self.clock()
        with self._lock:
            self.spans.append(Span(name, start, end))
