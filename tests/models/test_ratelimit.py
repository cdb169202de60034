"""Shared rate limits: caps per minute and the 429 back-off, on a fake clock; retry-after from the real SDK."""

from __future__ import annotations

import threading

import pytest

from coderefine.config import Settings
from coderefine.errors import RateLimitError
from coderefine.models.anthropic import AnthropicModel
from coderefine.models.base import Message, ModelReply, ModelRequest, Usage
from coderefine.models.ratelimit import (
    RateLimitedModel,
    RateLimiter,
    RateLimits,
    rate_limited,
    retry_after_seconds,
)
from tests.fake_api import FakeAnthropic, api_error, text_message


class FakeClock:
    """Time that moves only when someone sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds


def request(text: str = "x" * 400) -> ModelRequest:
    return ModelRequest("critic", (), (Message.user(text),), max_tokens=500)


class Answering:
    """A model that records when each call reached it and answers with ``usage``; raises what it is given."""

    def __init__(
        self, clock: FakeClock, usage: Usage | None = None, errors: list[Exception] | None = None
    ) -> None:
        self.clock = clock
        self.usage = usage or Usage(100, 10)
        self.errors = list(errors or ())
        self.times: list[float] = []

    @property
    def name(self) -> str:
        return "scripted"

    def complete(self, req: ModelRequest) -> ModelReply:
        self.times.append(self.clock())
        if self.errors:
            raise self.errors.pop(0)
        return ModelReply("ok", self.usage, "scripted")


def limited(clock: FakeClock, limits: RateLimits) -> RateLimiter:
    return RateLimiter(limits, clock=clock, sleep=clock.sleep)


def test_a_requests_per_minute_cap_spreads_the_calls_over_minutes() -> None:
    clock = FakeClock()
    inner = Answering(clock)
    model = RateLimitedModel(inner, limited(clock, RateLimits(requests_per_minute=2)))
    for _ in range(5):
        model.complete(request())
    assert inner.times == [0.0, 0.0, 60.0, 60.0, 120.0]


def test_an_input_tokens_cap_counts_what_the_calls_used() -> None:
    clock = FakeClock()
    inner = Answering(clock, Usage(700, 10, cache_write_tokens=250, cache_read_tokens=5_000))
    model = RateLimitedModel(inner, limited(clock, RateLimits(input_tokens_per_minute=1_000)))
    model.complete(request())  # estimated 100 tokens, settled at 950: cache reads do not count
    model.complete(request())  # 950 + 100 > 1000: waits for the first call to leave the window
    assert inner.times == [0.0, 60.0]
    # A call larger than the cap runs alone once the window is empty, instead of waiting for ever.
    big = RateLimitedModel(Answering(clock), limited(clock, RateLimits(input_tokens_per_minute=10)))
    big.complete(request("y" * 4_000))


def test_a_429_pauses_every_worker_for_the_retry_after() -> None:
    clock = FakeClock()
    limiter = limited(clock, RateLimits())
    first = Answering(clock, errors=[RateLimitError("429", retry_after=7.0)])
    second = Answering(clock)
    RateLimitedModel(first, limiter).complete(request())
    assert first.times == [0.0, 7.0] and limiter.backoffs == 1
    # Another worker asking during the pause waits for its end too.
    limiter.back_off(5.0)
    clock.now += 1.0
    RateLimitedModel(second, limiter).complete(request())
    assert second.times == [12.0]


def test_without_retry_after_the_back_off_grows_and_the_last_429_is_raised() -> None:
    clock = FakeClock()
    errors: list[Exception] = [RateLimitError("429") for _ in range(3)]
    inner = Answering(clock, errors=errors)
    model = RateLimitedModel(inner, limited(clock, RateLimits()), retries=2, first_backoff=5.0)
    with pytest.raises(RateLimitError):
        model.complete(request())
    assert inner.times == [0.0, 5.0, 15.0]


def test_workers_on_threads_share_one_window() -> None:
    clock = FakeClock()
    limiter = limited(clock, RateLimits(requests_per_minute=3))
    inners = [Answering(clock) for _ in range(3)]

    def work(model: RateLimitedModel) -> None:
        for _ in range(2):
            model.complete(request())

    threads = [threading.Thread(target=work, args=(RateLimitedModel(i, limiter),)) for i in inners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    times = sorted(t for inner in inners for t in inner.times)
    # Six calls, at most three in any minute.
    assert len(times) == 6 and all(times[i + 3] - times[i] >= 60 for i in range(3))


def test_retry_after_headers() -> None:
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_seconds({"retry-after": "20"}) == 20.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:20 GMT"}, now=1445412480.0) == 20.0
    assert retry_after_seconds({"retry-after": "soon"}) is None and retry_after_seconds(None) is None


def test_the_sdk_carries_retry_after_to_the_shared_back_off() -> None:
    fake = FakeAnthropic([api_error(429, "rate_limit_error", {"retry-after": "13"}), text_message("ok")])
    sdk_model = AnthropicModel(
        "claude-sonnet-5-5", environ={"ANTHROPIC_API_KEY": "k"}, max_retries=0, http_client=fake.client()
    )
    with pytest.raises(RateLimitError) as caught:
        sdk_model.complete(request())
    assert caught.value.retry_after == 13.0
    fake.replies.insert(0, api_error(429, "rate_limit_error", {"retry-after": "13"}))
    clock = FakeClock()
    model = RateLimitedModel(sdk_model, limited(clock, RateLimits()))
    assert model.complete(request()).text == "ok" and clock.sleeps == [13.0]


def test_the_caps_come_from_the_settings() -> None:
    model = rate_limited(
        Answering(FakeClock()), Settings(requests_per_minute=50, input_tokens_per_minute=40_000)
    )
    assert isinstance(model, RateLimitedModel)
    assert model.limiter.limits == RateLimits(50, 40_000, 0) and model.name == "scripted"
