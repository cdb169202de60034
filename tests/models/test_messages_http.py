"""The Messages API without the SDK: the request as the SDK sends it, its retries, its errors in
coderefine's words, over a real loopback server (the same fake the SDK's tests use)."""

from __future__ import annotations

import pytest

from coderefine.errors import (
    AuthError,
    ConnectionFailedError,
    ModelError,
    OverloadedError,
    RateLimitError,
    ReplyCutShortError,
)
from coderefine.models.anthropic import AnthropicModel, error_words, request_params
from coderefine.models.messages_http import MessagesClient, proxied
from tests.fake_api import CUT, RESET, FakeAnthropic, api_error, loopback_server, text_message, tool_message
from tests.models.test_anthropic import request


def client(url: str, retries: int = 2, waits: list[float] | None = None) -> MessagesClient:
    return MessagesClient(
        base_url=url,
        headers={"x-api-key": "sk-ant-test"},
        timeout=10,
        max_retries=retries,
        words=error_words("claude-sonnet-5-5"),
        sleep=(waits if waits is not None else []).append,
    )


def test_the_request_is_the_sdks_and_the_reply_is_read() -> None:
    fake = FakeAnthropic(
        [tool_message({"verdict": "pass", "summary": "ok", "issues": []}), text_message("hi")]
    )
    with loopback_server(fake) as url:
        model = AnthropicModel(
            "claude-sonnet-5-5", environ={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"}
        )
        first = model.complete(request())
        second = model.complete(request(force=False))
    assert fake.requests[0] == request_params("claude-sonnet-5-5", request())
    headers = {k.lower(): v for k, v in fake.headers[0].items()}
    assert headers["x-api-key"] == "k" and headers["anthropic-version"] == "2023-06-01"
    assert first.tool_input == {"verdict": "pass", "summary": "ok", "issues": []}
    assert second.text == "hi" and second.tool_input is None
    assert (first.usage.input_tokens, first.usage.output_tokens) == (100, 20)


def test_429_and_529_are_retried_with_the_wait_asked_for() -> None:
    fake = FakeAnthropic(
        [
            api_error(429, "rate_limit_error", {"retry-after-ms": "5"}),
            api_error(529, "overloaded_error", {"retry-after": "2"}),
            text_message("ok"),
        ]
    )
    waits: list[float] = []
    with loopback_server(fake) as url:
        data = client(url, waits=waits).create({"model": "m"})
    assert data["content"][0]["text"] == "ok"
    assert waits == [0.005, 2.0]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (api_error(401, "authentication_error"), AuthError),
        (api_error(403, "permission_error"), AuthError),
        (api_error(404, "not_found_error"), ModelError),
        (api_error(400, "invalid_request_error"), ModelError),
    ],
)
def test_refusals_are_not_retried_and_say_what_to_do(reply: object, error: type[Exception]) -> None:
    fake = FakeAnthropic([reply, text_message("never asked")])  # type: ignore[list-item]
    with loopback_server(fake) as url, pytest.raises(error):
        client(url).create({"model": "m"})
    assert len(fake.requests) == 1


def test_what_stays_failing_is_coderefines_error_after_the_retries() -> None:
    fake = FakeAnthropic([api_error(529, "overloaded_error")] * 3)
    with loopback_server(fake) as url, pytest.raises(OverloadedError, match="529"):
        client(url).create({"model": "m"})
    fake = FakeAnthropic([api_error(429, "rate_limit_error", {"retry-after": "30"})] * 2)
    with loopback_server(fake) as url, pytest.raises(RateLimitError) as raised:
        client(url, retries=1).create({"model": "m"})
    assert raised.value.retry_after == 30.0


def test_a_cut_body_and_a_reset_are_retried_then_reported() -> None:
    fake = FakeAnthropic([CUT, RESET, text_message("ok")])
    with loopback_server(fake) as url:
        assert client(url).create({"model": "m"})["content"][0]["text"] == "ok"
    for fault, error in ((CUT, ReplyCutShortError), (RESET, ConnectionFailedError)):
        fake = FakeAnthropic([fault, fault])
        with loopback_server(fake) as url, pytest.raises(error):
            client(url, retries=1).create({"model": "m"})


def test_x_should_retry_false_is_obeyed() -> None:
    fake = FakeAnthropic([api_error(500, "api_error", {"x-should-retry": "false"}), text_message("ok")])
    with loopback_server(fake) as url, pytest.raises(OverloadedError):
        client(url).create({"model": "m"})


def test_the_sdk_makes_the_call_behind_a_proxy_or_with_a_given_http_client() -> None:
    assert proxied({"HTTPS_PROXY": "http://proxy:3128"}) and proxied({"all_proxy": "socks5://p"})
    assert not proxied({"PATH": "/usr/bin"})
    env = {"ANTHROPIC_API_KEY": "k", "HTTPS_PROXY": "http://proxy:3128"}
    assert AnthropicModel("claude-sonnet-5-5", environ=env)._direct is None
    assert AnthropicModel("claude-sonnet-5-5", environ={"ANTHROPIC_API_KEY": "k"})._direct is not None
