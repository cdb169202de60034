"""aider's wall on the `mean()` scenario, against a zero-latency fake OpenAI-compatible server, measured
beside coderefine's on this machine.

aider 0.86.2 is installed by hand into its own venv under the benchmark cache, never into the project:

    python3 -m venv ~/.cache/coderefine/bench/aider-venv
    ~/.cache/coderefine/bench/aider-venv/bin/pip install aider-chat==0.86.2

Without network, aider tries to fetch its model list on every run (seconds of waiting that are no part of
its work); seed it as a networked first run leaves it:

    mkdir -p ~/.aider/caches && cp ~/.cache/coderefine/bench/aider-venv/lib/python3*/site-packages/litellm/\
model_prices_and_context_window_backup.json ~/.aider/caches/model_prices_and_context_window.json

Its scenario is the one the issue quotes: fix the bug with one model reply (aider's SEARCH/REPLACE format,
the same canned edit coderefine's reviser gives), run the tests (`--auto-test`), and stop. A second reply
("the tests pass") answers the call aider makes after the test run. PR-Agent 0.49.0 is not measured: that
version is not on PyPI (only 0.2.x is), so its quoted wall stays a constant.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.fake_openai_server import MODEL, FakeServer
from benchmarks.walls import FIX, _project

CACHE = Path(os.environ.get("CODEREFINE_BENCH_CACHE", Path.home() / ".cache" / "coderefine" / "bench"))
AIDER = CACHE / "aider-venv" / "bin" / "aider"
DONE = "The fix is in place and the tests pass."


def aider_available() -> bool:
    return AIDER.exists()


def aider_wall() -> float:
    """One wall of aider fixing `mean()` and running the tests, its model a zero-latency fake server."""
    with tempfile.TemporaryDirectory() as scratch, FakeServer([FIX, DONE]) as server:
        root = _project(Path(scratch), branch_bug=False)
        argv = [
            str(AIDER),
            "--model",
            f"openai/{MODEL}",
            "--openai-api-base",
            server.url,
            "--openai-api-key",
            "unused",
            "--edit-format",
            "diff",
            "--yes-always",
            "--no-auto-commits",
            "--no-check-update",
            "--analytics-disable",
            "--no-show-model-warnings",
            "--no-stream",
            "--no-pretty",
            "--no-show-release-notes",
            "--no-auto-lint",
            "--test-cmd",
            f"{sys.executable} -m pytest -q",
            "--auto-test",
            "--message",
            "mean() is wrong: fix it",
            "pkg/stats.py",
        ]
        # litellm would otherwise fetch its model price list from the network at import.
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)
        seconds = time.perf_counter() - start
        fixed = "sum(values) / len(values)\n" in (root / "pkg/stats.py").read_text()
        assert fixed and len(server.requests) >= 1, done.stdout[-2000:] + done.stderr[-2000:]
    return seconds
