"""A fake OpenAI Chat Completions API, for httpx2.MockTransport and the loopback server of fake_api.

Replies are scripted as in ``tests.fake_api``: a dict is a response body (use ``chat`` / ``tool_call``), a
tuple ``(status, body, headers)`` is an error response, and RESET / CUT / SLOW are transport faults on the
loopback server.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fake_api import FakeAnthropic


def chat_usage(prompt: int = 100, completion: int = 20, cached: int | None = None) -> dict[str, Any]:
    use: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        use["prompt_tokens_details"] = {"cached_tokens": cached}
    return use


def chat(
    content: str | None,
    *,
    finish: str = "stop",
    use: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    model: str = "served-model",
) -> dict[str, Any]:
    """A chat completion whose message has ``content`` (None: ``content: null``) and ``extra`` fields."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **(extra or {})},
                "finish_reason": finish,
            }
        ],
        "usage": use if use is not None else chat_usage(),
    }


def tool_call(arguments: dict[str, Any] | str, *, use: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion that calls report_critique; a str is sent as the (maybe malformed) arguments."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": "call_1", "type": "function", "function": {"name": "report_critique", "arguments": raw}}
    return chat(None, finish="tool_calls", use=use, extra={"tool_calls": [call]})


def openai_error(status: int, message: str = "for the test") -> tuple[int, dict[str, Any], dict[str, str]]:
    return status, {"error": {"message": message, "type": "invalid_request_error", "code": None}}, {}


class FakeOpenAI(FakeAnthropic):
    """The same script and request log as FakeAnthropic, with OpenAI's usage shape."""

    def answer(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            self.requests.append(json.loads(body))
            self.headers.append(headers)
            if not self.replies:
                return 500, {"error": {"message": "script exhausted", "type": "server_error"}}, {}
            reply = self.replies.pop(0)
        if isinstance(reply, tuple):
            return reply
        if isinstance(reply, str):
            return 0, {"fault": reply}, {}
        return 200, reply, {}

    def handler(self, request: Any) -> Any:
        self.urls.append(str(request.url))
        return super().handler(request)

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies)
        self.urls: list[str] = []
