"""The first `fix` in a project new to coderefine, as a new user tries it (issue #32), beside aider's.

The project: two files at its top (``stats.py``, whose ``mean()`` divides by ``len(xs) - 1``, and
``test_stats.py`` with one failing test), ``pyproject.toml`` with pytest's ``pythonpath = ["."]``, no
virtual environment of its own, committed with git; a fresh copy and a fresh ``XDG_CACHE_HOME`` every
run, no ``VIRTUAL_ENV`` (so the interpreter is coderefine's own, found by the fallback). coderefine runs
with its default model (a Claude name) against a scripted Anthropic Messages server on loopback that
answers each call in 10 ms: three calls, a loop that ends in two rounds (the critic's second issue stands
on no signal, so the critic confirms the fix). aider 0.86.2 makes the same repair against the same kind of
server (litellm's Anthropic client), then runs the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.fake_anthropic_server import MODEL, FakeAnthropicServer
from benchmarks.fixtures import GIT_ENV
from benchmarks.rivals import AIDER

STATS = '"""Small statistics."""\n\n\ndef mean(xs):\n    return sum(xs) / (len(xs) - 1)\n'
TEST = "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"
PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\n'
INTENT = "mean() must return the arithmetic mean"
ISSUES = [
    {
        "title": "mean divides by one too few",
        "severity": "error",
        "path": "stats.py",
        "line": 5,
        "end_line": 5,
        "evidence": "return sum(xs) / (len(xs) - 1)",
        "suggestion": "divide by len(xs)",
    },
    {
        "title": "the module does not say what the mean of an empty list is",
        "severity": "warning",
        "path": "stats.py",
        "line": 1,
        "end_line": 1,
        "evidence": '"""Small statistics."""',
        "suggestion": "say it in the docstring",
    },
]
REVISE = json.dumps({"verdict": "revise", "summary": "mean is wrong", "issues": ISSUES})
PASS = json.dumps({"verdict": "pass", "summary": "fine", "issues": []})
FIX = (
    "stats.py\n```python\n<<<<<<< SEARCH\n    return sum(xs) / (len(xs) - 1)\n=======\n"
    "    return sum(xs) / len(xs)\n>>>>>>> REPLACE\n```\n"
)
FIXED = "return sum(xs) / len(xs)\n"
DONE = "The fix is in place and the test passes."


def make_project(parent: Path) -> Path:
    root = parent / "proj"
    root.mkdir()
    (root / "stats.py").write_text(STATS)
    (root / "test_stats.py").write_text(TEST)
    (root / "pyproject.toml").write_text(PYPROJECT)
    env = {**GIT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "stats"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return root


def user_environ(cache_home: Path, base_url: str) -> dict[str, str]:
    """A shell with nothing of coderefine's or a venv's in it, and the scripted server as the API."""
    drop = ("CODEREFINE_", "XDG_", "OPENAI_", "ANTHROPIC_", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return env | {
        "XDG_CACHE_HOME": str(cache_home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "unused",
    }


def coderefine_run(program: list[str]) -> tuple[float, list[dict[str, object]]]:
    """One cold run: its wall, and its phases (``--timings``, from the JSON report)."""
    with tempfile.TemporaryDirectory(prefix="coderefine-new-project-") as scratch:
        parent = Path(scratch)
        root = make_project(parent)
        (parent / "cache").mkdir()
        with FakeAnthropicServer([REVISE, FIX, PASS]) as server:
            argv = [*program, "fix", "stats.py", "-m", INTENT, "--timings", "--format", "json"]
            env = user_environ(parent / "cache", server.url)
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)
            wall = time.perf_counter() - start
            calls = len(server.requests)
        if FIXED not in (root / "stats.py").read_text() or calls != 3:
            raise RuntimeError(f"coderefine fix ({calls} calls):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return wall, list(json.loads(done.stdout)["phases"])


def aider_run() -> float:
    """aider's wall on the same project, against the same kind of server."""
    with tempfile.TemporaryDirectory(prefix="coderefine-new-project-") as scratch:
        parent = Path(scratch)
        root = make_project(parent)
        (parent / "cache").mkdir()
        with FakeAnthropicServer([FIX, DONE]) as server:
            argv = [
                str(AIDER),
                "--model",
                f"anthropic/{MODEL}",
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
                INTENT,
                "stats.py",
            ]
            env = user_environ(parent / "cache", server.url)
            # litellm reads the Anthropic base from here, and would fetch its price list at import.
            env |= {"ANTHROPIC_API_BASE": server.url, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)
            wall = time.perf_counter() - start
        if FIXED not in (root / "stats.py").read_text():
            raise RuntimeError("aider did not fix stats.py:\n" + done.stdout[-2000:] + done.stderr[-2000:])
        return wall
