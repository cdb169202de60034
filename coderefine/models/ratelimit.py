"""Provider rate limits shared by every worker of a run: a ``Model`` wrapper for any provider.

Requests and tokens per minute are capped over a sliding 60-second window (``requests-per-minute``,
``input-tokens-per-minute``, ``output-tokens-per-minute``; 0 = no cap): a call waits until it fits, so a
sweep stays under the provider's limit instead of tripping it. When the provider still answers 429 after
the SDK's own retries, every worker pauses (for the reply's retry-after, else a growing back-off) and the
call is tried again. Input tokens count as the provider counts them for its limit: uncached input and
cache writes; cache reads do not count. The clock and sleep are passed in, so tests need no waiting.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from coderefine.config import Settings
from coderefine.errors import RateLimitError
from coderefine.models.base import Model, ModelReply, ModelRequest, Usage, Wrapped

WINDOW = 60.0
# A call's output is unknown until it is answered; this much is held for it until then.
_OUTPUT_GUESS = 1_024


@dataclass(frozen=True)
class RateLimits:
    requests_per_minute: int = 0
    input_tokens_per_minute: int = 0
    output_tokens_per_minute: int = 0

    @classmethod
    def of(cls, settings: Settings) -> RateLimits:
        return cls(
            settings.requests_per_minute, settings.input_tokens_per_minute, settings.output_tokens_per_minute
        )


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The wait a 429 asks for: ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(float(millis) / 1000, 0.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        if value.strip().replace(".", "", 1).isdigit():
            return max(float(value), 0.0)
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


class _Slot:
    """One call in the window: when it started, and the tokens it used (estimated until answered)."""

    __slots__ = ("at", "input", "output")

    def __init__(self, at: float, input_tokens: int, output_tokens: int) -> None:
        self.at = at
        self.input = input_tokens
        self.output = output_tokens


class RateLimiter:
    """The window and the back-off shared by every worker; safe to use from several threads."""

    def __init__(
        self,
        limits: RateLimits,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._slots: deque[_Slot] = deque()
        self._paused_until = 0.0
        self.waited = 0.0  # seconds spent waiting, by every worker together
        self.backoffs = 0

    def acquire(self, input_tokens: int, output_tokens: int = _OUTPUT_GUESS) -> _Slot:
        """Wait until a call of this size fits the caps and no back-off is on; count it in."""
        while True:
            with self._lock:
                now = self._clock()
                wait = self._wait(now, input_tokens, output_tokens)
                if wait <= 0:
                    slot = _Slot(now, input_tokens, output_tokens)
                    self._slots.append(slot)
                    return slot
                self.waited += wait
            self._sleep(wait)

    def settle(self, slot: _Slot, usage: Usage) -> None:
        """Replace the estimate of an answered call with what it used."""
        with self._lock:
            slot.input = usage.input_tokens + usage.cache_write_tokens
            slot.output = usage.output_tokens

    def back_off(self, seconds: float) -> None:
        """Pause every worker for ``seconds`` from now (a 429)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + seconds)
            self.backoffs += 1

    def _wait(self, now: float, input_tokens: int, output_tokens: int) -> float:
        if now < self._paused_until:
            return self._paused_until - now
        while self._slots and self._slots[0].at <= now - WINDOW:
            self._slots.popleft()
        slots = list(self._slots)
        limits = self.limits
        waits = [0.0]
        if limits.requests_per_minute and len(slots) >= limits.requests_per_minute:
            waits.append(slots[len(slots) - limits.requests_per_minute].at + WINDOW - now)
        caps = (
            (limits.input_tokens_per_minute, input_tokens, [s.input for s in slots]),
            (limits.output_tokens_per_minute, output_tokens, [s.output for s in slots]),
        )
        for cap, wanted, uses in caps:
            used = sum(uses)
            if not cap or used + wanted <= cap:
                continue
            # Wait until enough of the oldest calls leave the window; a call larger than the cap runs
            # alone once the window is empty.
            for slot, use in zip(slots, uses, strict=True):
                used -= use
                if used + wanted <= cap or used == 0:
                    waits.append(slot.at + WINDOW - now)
                    break
        return max(waits)


class RateLimitedModel(Wrapped):
    """``inner`` with the shared ``limiter`` in front of every call and a shared back-off on 429."""

    def __init__(
        self, inner: Model, limiter: RateLimiter, *, retries: int = 4, first_backoff: float = 5.0
    ) -> None:
        super().__init__(inner)
        self.limiter = limiter
        self._retries = retries
        self._first_backoff = first_backoff

    def complete(self, request: ModelRequest) -> ModelReply:
        estimate = len(request.prompt_text()) // 4
        for attempt in range(self._retries + 1):
            slot = self.limiter.acquire(estimate, min(request.max_tokens, _OUTPUT_GUESS))
            try:
                reply = self._inner.complete(request)
            except RateLimitError as exc:
                if attempt == self._retries:
                    raise
                wait = exc.retry_after if exc.retry_after is not None else self._first_backoff * 2**attempt
                self.limiter.back_off(wait)
                continue
            self.limiter.settle(slot, reply.usage)
            return reply
        raise AssertionError("unreachable")


def rate_limited(model: Model, settings: Settings) -> Model:
    """``model`` behind one limiter with the configured caps (the 429 back-off applies without caps)."""
    return RateLimitedModel(model, RateLimiter(RateLimits.of(settings)))
