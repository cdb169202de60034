"""A zero-latency OpenAI-compatible chat server on 127.0.0.1 that answers with canned replies (in turn; the
last one repeats), so that another tool's wall on the `mean()` scenario measures the tool, not a model.

    python benchmarks/fake_openai_server.py REPLY_FILE...   # prints its URL, serves until killed

Streaming requests get the same reply as one server-sent chunk; ``/v1/models`` lists one model.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL = "fake-model"


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def chunk(text: str, finish: str | None) -> dict[str, Any]:
    delta = {"role": "assistant", "content": text} if text else {}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def make_handler(replies: list[str], log: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._json({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "me"}]})

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(size) or b"{}")
            log.append(self.path)
            reply = replies[min(len(log), len(replies)) - 1]
            if not request.get("stream"):
                self._json(completion(reply))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for part in (chunk(reply, None), chunk("", "stop")):
                self.wfile.write(f"data: {json.dumps(part)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


class FakeServer:
    """The server in a thread of this process: ``with FakeServer(replies) as server: server.url``."""

    def __init__(self, replies: list[str]) -> None:
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(replies, self.requests))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":
    server = FakeServer([Path(p).read_text() for p in sys.argv[1:]])
    with server:
        print(server.url, flush=True)
        threading.Event().wait()
