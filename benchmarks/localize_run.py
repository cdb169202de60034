"""What the run that localizes a failure costs: tabulate 0.9.0 with ``_padleft`` broken (137 of its tests
fail, every one through its 2,700-line module), its test files run four ways, each a fresh interpreter
with no bytecode cache (as every run coderefine starts):

- the plain run that found the failures;
- the localizing run recording the functions each test calls;
- the same recording the lines each test runs of the module under review too (what coderefine does);
- the rival: coverage.py's line coverage of the same module with a context per test (``--contexts``
  is what per-test line data needs), when coverage is installed.

The sdist is pinned and cached as for ``benchmarks.run spec``.

    python -m benchmarks.run localize
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import Row
from benchmarks.spec_calls import BAD, GOOD, MODULE, tabulate_sdist


def _timed(runs: int, action: Callable[[], object]) -> tuple[float, float]:
    """The first run's seconds and the median of ``runs``."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples[0], sorted(samples)[len(samples) // 2]


def bench_localize(runs: int) -> list[Row]:
    from coderefine.project.runner import SubprocessRunner
    from coderefine.signals.pytest import DEFAULT_COMMAND, PytestConfig, PytestSignals

    archive = tabulate_sdist()
    if archive is None:
        return [Row("localizing run, tabulate 0.9.0", 0, "", "", None, "skipped: no sdist")]
    with tempfile.TemporaryDirectory(prefix="coderefine-localize-") as scratch:
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        root = Path(scratch) / "tabulate-0.9.0"
        module = root / MODULE
        module.write_text(module.read_text("utf-8").replace(GOOD, BAD, 1), "utf-8")
        tests = sorted(str(p.relative_to(root)) for p in (root / "test").glob("test_*.py"))
        config = PytestConfig(sys.executable, DEFAULT_COMMAND, 60, 600)
        signals = PytestSignals(SubprocessRunner(), config, {"PATH": os.environ["PATH"]})
        found = signals.collect(root, tests, calls=True, lines=[MODULE])
        failing = sum(r.failed for r in found.calls)
        lines = sum(len(r.lines) for r in found.calls)
        plain = _timed(runs, lambda: signals.collect(root, tests))
        called = _timed(runs, lambda: signals.collect(root, tests, calls=True))
        traced = _timed(runs, lambda: signals.collect(root, tests, calls=True, lines=[MODULE]))
        rival = _coverage(root, tests, runs)
    note = f"{len(found.calls)} tests, {failing} failing; first run {{:.1f}} s"
    rows = [
        Row("plain test run (found the failures)", plain[1], "s", "", None, note.format(plain[0])),
        Row("localizing run: calls", called[1], "s", "", None, note.format(called[0])),
        Row(
            "localizing run: calls and lines of the module under review",
            traced[1],
            "s",
            "",
            None,
            f"{lines:,} (test, line) pairs; {traced[1] / called[1]:.2f}x the calls alone; "
            + note.format(traced[0]),
        ),
    ]
    if rival is None:
        rows.append(Row("rival: coverage.py per-test contexts", 0, "", "", None, "skipped: no coverage"))
    else:
        rows.append(
            Row(
                "rival: coverage.py per-test contexts",
                rival[1],
                "s",
                "",
                None,
                f"ours is {traced[1] / rival[1]:.2f}x; first run {rival[0]:.1f} s",
            )
        )
    return rows


def _coverage(root: Path, tests: list[str], runs: int) -> tuple[float, float] | None:
    probe = subprocess.run([sys.executable, "-c", "import coverage"], capture_output=True, check=False)
    if probe.returncode != 0:
        return None
    argv = [
        sys.executable,
        "-m",
        "coverage",
        "run",
        f"--include={MODULE}",
        "--context=test",
        "-m",
        "pytest",
        "-q",
        "--tb=no",
        "-p",
        "no:cacheprovider",
        *tests,
    ]
    env = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1", "COVERAGE_FILE": str(root / ".cov")}
    # Per-test contexts need the pytest-cov plugin or coverage's dynamic contexts: the latter is
    # coverage alone, set in a config file.
    (root / ".coveragerc").write_text("[run]\ndynamic_context = test_function\n", "utf-8")
    return _timed(runs, lambda: subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False))
