"""A scripted Anthropic Messages API server on 127.0.0.1: canned replies in turn (the last one repeats),
each after ``delay`` seconds, so that a run with the default model (a bare Claude name, reached through
``ANTHROPIC_BASE_URL``) measures the tool and its SDK, not a model.

A reply that parses as a JSON object is a tool call's input (the critic's forced tool); any other reply is
text. Streaming is not served: coderefine and litellm's non-streaming calls do not ask for it.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-5-5"


def message(reply: str, tool: str | None) -> dict[str, Any]:
    """The Messages API body of ``reply``: a ``tool_use`` block when a tool was offered and the reply is a
    JSON object, else one text block."""
    content: dict[str, Any] = {"type": "text", "text": reply}
    stop = "end_turn"
    if tool is not None:
        try:
            data = json.loads(reply)
        except ValueError:
            data = None
        if isinstance(data, dict):
            content = {"type": "tool_use", "id": "toolu_fake", "name": tool, "input": data}
            stop = "tool_use"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [content],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def make_handler(replies: list[str], log: list[str], delay: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(size) or b"{}")
            log.append(self.path)
            reply = replies[min(len(log), len(replies)) - 1]
            choice = request.get("tool_choice") or {}
            tools = request.get("tools") or []
            forced = choice.get("type") in ("tool", "any") and tools
            time.sleep(delay)
            data = json.dumps(message(reply, tools[0]["name"] if forced else None)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class FakeAnthropicServer:
    """``with FakeAnthropicServer(replies) as server: server.url`` (the value of ANTHROPIC_BASE_URL)."""

    def __init__(self, replies: list[str], delay: float = 0.01) -> None:
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(replies, self.requests, delay))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeAnthropicServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
