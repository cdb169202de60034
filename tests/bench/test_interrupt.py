"""SIGTERM stops `coderefine bench` as Ctrl-C does, even while a model reply is awaited."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from tests.test_interrupts import interruptible


@contextmanager
def silent_server(asked: threading.Event) -> Iterator[str]:
    """A loopback server that reads a request and never answers (until the test ends)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with suppress(OSError):
                connection.recv(65536)
            if stop.is_set():  # a late connection (a retry by the dying client): nobody closes it but us
                connection.close()
                return
            held.append(connection)
            asked.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.close()
        # A connection accepted after the test's requests (a retry by the dying client) is held too: wait
        # for the thread, so no socket is left for the garbage collector to warn about in a later test.
        thread.join(timeout=10)
        for connection in held:
            with suppress(OSError):
                connection.close()


BENCH = [sys.executable, "-m", "coderefine", "bench", "--suite", "humanevalfix", "--tasks", "0"]
BENCH += ["--strategies", "one-shot", "--no-cache"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_bench_while_a_model_reply_is_awaited(tmp_path: Path, signum: int) -> None:
    asked = threading.Event()
    with silent_server(asked) as url:
        proc = subprocess.Popen(
            [*BENCH, "--out", str(tmp_path / "out")],
            cwd=tmp_path,
            env={**os.environ, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": url},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,
        )
        try:
            assert asked.wait(60), "the bench never asked the model"
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted" in err
