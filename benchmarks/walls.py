"""End-to-end walls of the `mean()` scenario: `coderefine fix` and `coderefine review --base main` on a
one-line bug with one failing test, with a zero-latency model (replayed answers), as separate processes.

The reference walls are those of aider 0.86.2 (fix and test) and PR-Agent 0.49.0 (local review) on the
same scenario with a zero-latency scripted model, measured once on this kind of machine (2 cores) and
quoted in the project's performance issue; neither tool is installed here, so they are constants.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.fixtures import GIT_ENV

AIDER_FIX_S = 5.61
PR_AGENT_REVIEW_S = 5.92

GOOD = '''"""Small statistics."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def spread(values: list[float]) -> float:
    return max(values) - min(values)
'''
BUGGY = GOOD.replace("sum(values) / len(values)", "sum(values) / (len(values) + 1)")
TESTS = """from pkg.stats import mean, spread


def test_mean() -> None:
    assert mean([1.0, 2.0, 3.0]) == 2.0


def test_spread() -> None:
    assert spread([1.0, 4.0]) == 3.0
"""
ISSUE = {
    "title": "mean divides by one too many",
    "severity": "error",
    "path": "pkg/stats.py",
    "line": 8,
    "end_line": 8,
    "evidence": "return sum(values) / (len(values) + 1)",
    "suggestion": "divide by len(values)",
}
FIX = (
    "pkg/stats.py\n```python\n<<<<<<< SEARCH\n    return sum(values) / (len(values) + 1)\n=======\n"
    "    return sum(values) / len(values)\n>>>>>>> REPLACE\n```\n"
)
REVISE = {"verdict": "revise", "summary": "mean is wrong", "issues": [ISSUE]}
PASS = {"verdict": "pass", "summary": "fine", "issues": []}


def _git(root: Path, *args: str) -> None:
    env = {**GIT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)


def _project(parent: Path, branch_bug: bool) -> Path:
    root = parent / "stats"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/stats.py").write_text(GOOD if branch_bug else BUGGY)
    (root / "tests/test_stats.py").write_text(TESTS)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "stats")
    if branch_bug:
        _git(root, "checkout", "-q", "-b", "feature")
        (root / "pkg/stats.py").write_text(BUGGY)
        _git(root, "commit", "-q", "-am", "faster mean")
    return root


def _replay(path: Path, entries: list[tuple[str, dict[str, object]]]) -> str:
    path.write_text("".join(json.dumps({"role": role, "reply": reply}) + "\n" for role, reply in entries))
    return f"replay:{path}"


def _run(argv: list[str], cwd: Path, expect: str, extra: dict[str, str] | None = None) -> tuple[float, float]:
    """The wall of one run, and its peak memory in MiB (the largest of it and the processes it waited for)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEREFINE_")} | (extra or {})
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, _, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = 0  # reaped above
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    assert expect in text, text
    return seconds, usage.ru_maxrss / 1024


def fix_wall(runs: int, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Median wall of `coderefine fix pkg/stats.py`, and the peak memory (MiB) of any of the runs."""
    samples, peaks = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as scratch:
            root = _project(Path(scratch), branch_bug=False)
            model = _replay(
                Path(scratch) / "m.jsonl",
                [
                    ("critic", {"tool_input": REVISE}),
                    ("reviser", {"text": FIX}),
                    ("critic", {"tool_input": PASS}),
                ],
            )
            argv = [sys.executable, "-m", "coderefine", "fix", "pkg/stats.py", "--model", model]
            seconds, peak = _run(argv, root, "stopped", env)
            samples.append(seconds)
            peaks.append(peak)
            assert "len(values)\n" in (root / "pkg/stats.py").read_text()
    return statistics.median(samples), max(peaks)


def review_wall(runs: int, env: dict[str, str] | None = None) -> float:
    """Median wall of `coderefine review --base main` with one verified suggestion."""
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as scratch:
            root = _project(Path(scratch), branch_bug=True)
            model = _replay(
                Path(scratch) / "m.jsonl", [("critic", {"tool_input": REVISE}), ("reviser", {"text": FIX})]
            )
            argv = [sys.executable, "-m", "coderefine", "review", "--base", "main", "--model", model]
            samples.append(_run(argv, root, "[verified fix]", env)[0])
    return statistics.median(samples)
