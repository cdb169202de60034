"""llama.cpp's server (llama-cpp-python's ``python -m llama_cpp.server``) for one run, on a free local port.

The server is a child process that must never outlive the run, however the run ends. Three ways make sure:
``stop()`` (called when the model is closed, and at interpreter exit), its own session (a Ctrl-C in the
terminal reaches coderefine, which stops it in order, not the server half-way through a reply), and a pipe
on its stdin that it watches: when coderefine dies without cleaning up (SIGKILL, a crash), the pipe closes
and the server exits at once.

Memory stays bounded: no ``--cache`` (llama-cpp-python's RAM prompt cache grew to 23 GB over an hour). The
server's one slot still reuses the KV cache of the longest prefix shared with the previous prompt, which is
what a refine loop's calls share (the system text and the code come first), and that is bounded by the
context size. Nor are all positions' logits kept (``--logits_all false``): the server's default holds a row
of the vocabulary per context position, 5 GB for Qwen's 152k-token vocabulary at 8,192 tokens, and its
memory grew towards that as prompts got longer (2 GB to 6 GB over a bench of the 0.5B model).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from coderefine.errors import ProviderUnavailableError, ServerDiedError
from coderefine.models.server_exit import PORTABLE_CMAKE_ARGS, ServerExit, died_message
from coderefine.models.windows import LOCAL_CONTEXT

# Runs the server as ``python -m llama_cpp.server`` would, with one thread that exits the process when
# stdin reaches its end (the parent is gone).
_LAUNCH = """\
import os, runpy, sys, threading
def _watch():
    sys.stdin.buffer.read()
    os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""
NEEDS = (
    "gguf: models need llama-cpp-python's server: "
    f"CMAKE_ARGS=\"{PORTABLE_CMAKE_ARGS}\" pip install --no-cache-dir 'coderefine[local-model]' (llama.cpp "
    "builds from source, a few minutes; for a portable instruction set, as a native build can die with "
    "SIGILL), or set LLAMA_SERVER_PYTHON to a Python that has llama_cpp.server"
)


def cpu_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ServerOptions:
    model: Path
    python: str
    context: int = LOCAL_CONTEXT
    # llama-cpp-python's default is half the cores; a run on a CPU wants all that it is allowed.
    threads: int = 0
    chat_format: str = ""  # "" = the chat template in the GGUF file
    startup_timeout: float = 300.0

    def argv(self, port: int) -> list[str]:
        threads = str(self.threads or cpu_threads())
        argv = [self.python, "-c", _LAUNCH, "--model", str(self.model), "--n_ctx", str(self.context)]
        argv += ["--n_threads", threads, "--n_threads_batch", threads]
        # The server keeps every position's logits by default: n_ctx x vocabulary floats, 5 GB for Qwen's
        # 152k tokens at 8,192, filled as prompts grow (it looked like a leak). Nothing here reads them.
        argv += ["--logits_all", "false"]
        if self.chat_format:
            argv += ["--chat_format", self.chat_format]
        return [*argv, "--host", "127.0.0.1", "--port", str(port)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def has_server(python: str) -> bool:
    probe = subprocess.run([python, "-c", "import llama_cpp.server.app"], capture_output=True, check=False)
    return probe.returncode == 0


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/models", timeout=5) as answer:
            json.load(answer)
    except (OSError, ValueError):
        return False
    return True


class LocalServer:
    """One server process; ``start()`` returns its OpenAI base URL, ``stop()`` ends it (idempotent).

    ``command`` gives the server's command line for a port (``options.argv`` unless a test stands another
    server in). A server that ended by itself is remembered: ``start()`` and ``check_alive()`` raise
    ``ServerDiedError`` from then on, so no request is sent to a port nobody listens on."""

    def __init__(
        self,
        options: ServerOptions,
        *,
        command: Callable[[int], Sequence[str]] | None = None,
        popen: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen,
        ready: Callable[[str], bool] = _answers,
        probe: Callable[[str], bool] = has_server,
    ) -> None:
        self._options = options
        self._command = command or options.argv
        self._popen = popen
        self._ready = ready
        self._probe = probe
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._answered = False
        self._died: ServerExit | None = None
        self.url = ""

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, size: int = 3000) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        return Path(self._log.name).read_bytes()[-size:].decode("utf-8", errors="replace")

    def check_alive(self, wait: float = 0.0) -> None:
        """Raise ``ServerDiedError`` when the server ended by itself; ``wait`` seconds are given to one that
        is going down (a request can fail a moment before its server's exit can be seen). The wait holds
        no lock: other calls to a live server go on meanwhile."""
        process = self._process
        if wait > 0 and process is not None and self._died is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(wait)
        with self._lock:
            self._raise_if_died()

    def _raise_if_died(self, wait: float = 0.0) -> None:
        process = self._process
        if self._died is None and process is not None:
            try:
                code = process.wait(wait) if wait > 0 else process.poll()
            except subprocess.TimeoutExpired:
                code = None
            if code is not None:
                self._died = ServerExit(code, self.log_tail())
        if self._died is not None:
            options, answered = self._options, self._answered
            raise ServerDiedError(died_message(options.model, options.python, self._died, answered=answered))

    def start(self) -> str:
        with self._lock:
            self._raise_if_died()
            if self._process is not None:
                return self.url
            if not self._probe(self._options.python):
                raise ProviderUnavailableError(NEEDS)
            try:
                return self._start_locked()
            except ServerDiedError:
                exit_ = self._died
                if exit_ is None or exit_.signal is not None:
                    raise  # killed by a signal (a CPU fault): another start meets the same build
                # It exited while starting: a port taken between choosing and binding it, say. Once
                # more on a new port; a second exit is for good.
                self._died = None
                return self._start_locked()

    def _start_locked(self) -> str:
        port = free_port()
        self._log = tempfile.NamedTemporaryFile(prefix="coderefine-llama-", suffix=".log")  # noqa: SIM115
        self._process = self._popen(
            list(self._command(port)),
            stdin=subprocess.PIPE,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{port}/v1"
        try:
            self._wait_ready()
        except BaseException:
            self._stop_locked()
            raise
        self._answered = True
        return self.url

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self._options.startup_timeout
        while not self._ready(self.url):
            self._raise_if_died()
            if time.monotonic() > deadline:
                raise ProviderUnavailableError(
                    f"llama.cpp's server for {self._options.model} did not answer within "
                    f"{self._options.startup_timeout:.0f}s; its output:\n{self.log_tail()}"
                )
            time.sleep(0.25)

    def stop(self) -> None:
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()  # the watch thread exits the server at once
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
