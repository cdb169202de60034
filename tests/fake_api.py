"""A fake Anthropic Messages API: a handler for httpx2.MockTransport, and the same as a loopback server.

Replies are scripted in order: a dict is a message body (use ``text_message`` / ``tool_message``), a tuple
``(status, body, headers)`` is an error response, and on the loopback server a transport fault: RESET (the
connection closes with no answer), CUT (the body ends half-way), SLOW (no answer for 3 s).
Every request is kept, parsed, in ``requests``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

Reply = dict[str, Any] | tuple[int, dict[str, Any], dict[str, str]] | str
RESET, CUT, SLOW = "RESET", "CUT", "SLOW"


def usage(inp: int = 100, out: int = 20, write: int = 0, read: int = 0) -> dict[str, int]:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
    }


def text_message(text: str, use: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "id": "msg_text",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": use or usage(),
    }


def tool_message(tool_input: dict[str, Any], use: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "id": "msg_tool",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "report_critique", "input": tool_input}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": use or usage(),
    }


def api_error(
    status: int, kind: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], dict[str, str]]:
    return (
        status,
        {"type": "error", "error": {"type": kind, "message": f"{kind} for the test"}},
        headers or {},
    )


class FakeAnthropic:
    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.billed = 0  # tokens of the answers that succeeded, as their usage says
        self._lock = threading.Lock()

    def answer(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            self.requests.append(json.loads(body))
            self.headers.append(headers)
            if not self.replies:
                return (
                    500,
                    {"type": "error", "error": {"type": "api_error", "message": "script exhausted"}},
                    {},
                )
            reply = self.replies.pop(0)
        if isinstance(reply, tuple):
            return reply
        if isinstance(reply, str):
            return 0, {"fault": reply}, {}
        with self._lock:
            self.billed += sum(reply["usage"].values())
        return 200, reply, {}

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        status, body, headers = self.answer(request.content, dict(request.headers))
        return httpx2.Response(status, json=body, headers=headers)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))


@contextmanager
def loopback_server(fake: FakeAnthropic) -> Iterator[str]:
    """Serve ``fake`` on 127.0.0.1; yields the base URL for ANTHROPIC_BASE_URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            status, body, headers = fake.answer(self.rfile.read(length), dict(self.headers))
            if status == 0:
                self._fault(str(body["fault"]))
                return
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _fault(self, fault: str) -> None:
            if fault == SLOW:
                time.sleep(3)
            if fault in (RESET, SLOW):
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            partial = json.dumps(text_message("cut")).encode()[:40]
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(partial)))
            self.end_headers()
            self.wfile.write(partial)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True  # a handler still sleeping (SLOW) must not hold up the test's end
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
