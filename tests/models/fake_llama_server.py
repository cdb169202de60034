"""A stand-in for llama-cpp-python's server that dies on its first chat request, as a native build does.

Run as ``python fake_llama_server.py [-c CODE] ... --port N``: the arguments coderefine gives the real
server's Python, so a wrapper that execs this file can be ``LLAMA_SERVER_PYTHON``. ``-c`` code without a
``--port`` is the probe for ``llama_cpp.server`` and succeeds. With a port it writes a few log lines, answers
``GET /v1/models``, and on the first ``POST`` appends a line to ``$FAKE_LLAMA_REQUESTS`` (when set), writes
one more log line and kills itself with ``$FAKE_LLAMA_SIGNAL`` (default SIGILL) without answering.
Standard library only.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        requests = os.environ.get("FAKE_LLAMA_REQUESTS")
        if requests:
            with open(requests, "a") as sink:
                sink.write(self.path + "\n")
        print("ggml_cpu: repacking the weights of blk.0.attn_q for AMX", flush=True)
        # No core file of the fake is left in the test's folder.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), signal.Signals[os.environ.get("FAKE_LLAMA_SIGNAL", "SIGILL")])

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main(argv: list[str]) -> int:
    if "--port" not in argv:
        return 0  # the probe: "python -c 'import llama_cpp.server.app'"
    port = int(argv[argv.index("--port") + 1])
    print("llama_model_loader: loaded meta data with 26 key-value pairs", flush=True)
    print("llm_load_tensors: CPU_REPACK model buffer size = 720.00 MiB", flush=True)
    server = HTTPServer(("127.0.0.1", port), _Handler)
    print(f"INFO:     Uvicorn running on http://127.0.0.1:{port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
