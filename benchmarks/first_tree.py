"""The first `fix` in a big project: cold and warm, at 50, 5,000 and 20,000 files, with aider beside it.

    python benchmarks/first_tree.py                    # 50, 5000, 20000 files; 3 rounds
    python benchmarks/first_tree.py --sizes 20000 --runs 5

The projects are the generated repositories of the scale benchmark (`benchmarks/scale_repo.py`: packages
of modules with one test file each). Each round clones one afresh (outside the timing), breaks one module
so that its test fails, and runs `coderefine fix` on it with a zero-latency OpenAI-compatible server (critic:
revise; reviser: the one-line fix; critic: pass):

- **cold**: an empty cache folder (`XDG_CACHE_HOME` a new folder): the user's first `fix` in the project,
  and every CI job. The persistent test tree is filled then, and the import index built;
- **warm**: the same project and cache folder again, the bug put back;
- **aider**: aider 0.86.2 (its own venv, see `benchmarks/rivals.py`) fixing the same bug with the same
  canned edit and running the same test file (`--auto-test`), in a fresh clone, without its repository
  map (`--map-tokens 0`): with it, aider scans every file before its first request (81 s at 5,000 files
  on two cores).

The report's `time:` line of the cold run is printed beside it, so where the time goes is shown. Figures
are printed, never asserted: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.fake_openai_server import MODEL, FakeServer  # noqa: E402
from benchmarks.first_run import CRITIC_PASS, _environ, _load  # noqa: E402
from benchmarks.rivals import AIDER, aider_available  # noqa: E402
from benchmarks.scale_repo import _git, cached_repo  # noqa: E402

SIZES = (50, 5_000, 20_000)
TARGET = "pkg0000/m0000_01.py"
TEST = "tests/pkg0000/test_m0000_01.py"
GOOD_LINE = "    return value * 2 + 0\n"
BAD_LINE = "    return value * 2 + 1\n"
FIX = f"{TARGET}\n```python\n<<<<<<< SEARCH\n{BAD_LINE}=======\n{GOOD_LINE}>>>>>>> REPLACE\n```\n"
CRITIC_REVISE = (
    '{"verdict": "revise", "summary": "step adds one", "issues": [{"title": "step adds one too many", '
    f'"severity": "error", "path": "{TARGET}", "line": 8, "end_line": 8, '
    '"evidence": "return value * 2 + 1", "suggestion": "add nothing"}]}'
)
DONE = "The fix is in place and the tests pass."


def fresh_clone(files: int, parent: Path) -> Path:
    """A clone of the generated repository with the bug in ``TARGET`` (uncommitted)."""
    root = parent / "project"
    _git(parent, "clone", "-q", str(cached_repo(files)), str(root))
    break_target(root)
    return root


def break_target(root: Path) -> None:
    path = root / TARGET
    text = path.read_text()
    if GOOD_LINE not in text:
        raise RuntimeError(f"{TARGET} of the generated repository changed: update this benchmark")
    path.write_text(text.replace(GOOD_LINE, BAD_LINE))


def coderefine_fix(root: Path, cache_home: Path) -> tuple[float, str]:
    """One `coderefine fix` wall and its report's timing line."""
    with FakeServer([CRITIC_REVISE, FIX, CRITIC_PASS]) as server:
        argv = [sys.executable, "-m", "coderefine", "fix", TARGET]
        argv += ["--model", f"openai-compatible:{MODEL}", "-m", "step() is wrong: fix it"]
        start = time.perf_counter()
        done = subprocess.run(
            argv, cwd=root, env=_environ(cache_home, server.url), capture_output=True, text=True
        )
        wall = time.perf_counter() - start
    if GOOD_LINE not in (root / TARGET).read_text():
        raise RuntimeError(
            f"coderefine fix did not write the fix:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    timing = re.search(r"^time: .*$", done.stdout + done.stderr, re.MULTILINE)
    return wall, timing.group(0) if timing else ""


def aider_fix(root: Path) -> float:
    with FakeServer([FIX, DONE]) as server:
        argv = [str(AIDER), "--model", f"openai/{MODEL}", "--openai-api-base", server.url]
        argv += ["--openai-api-key", "unused", "--edit-format", "diff", "--yes-always", "--no-auto-commits"]
        argv += ["--no-check-update", "--analytics-disable", "--no-show-model-warnings", "--no-stream"]
        argv += ["--no-pretty", "--no-show-release-notes", "--no-auto-lint", "--auto-test"]
        # No repository map: aider's default scans every file first (81 s at 5,000 files here, and at
        # 20,000 it gave up without an edit), so the rival is measured in its fastest setup.
        argv += ["--map-tokens", "0"]
        argv += [
            "--test-cmd",
            f"{sys.executable} -m pytest -q {TEST}",
            "--message",
            "step() is wrong: fix it",
        ]
        argv.append(TARGET)
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=600)
        wall = time.perf_counter() - start
    if GOOD_LINE not in (root / TARGET).read_text():
        raise RuntimeError(f"aider did not write the fix:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall


def measure(sizes: list[int], runs: int) -> list[str]:
    rows = [
        "| files | cold | warm | aider | cold / aider | cold run's time line |",
        "| ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for size in sizes:
        cold, warm, rival, timings = [], [], [], []
        for number in range(1, runs + 1):
            print(f"{size} files, round {number}/{runs} ({_load()})", flush=True)
            with tempfile.TemporaryDirectory(prefix="coderefine-first-tree-") as scratch:
                parent = Path(scratch)
                root = fresh_clone(size, parent)
                cache_home = parent / "cache"
                cache_home.mkdir()
                wall, timing = coderefine_fix(root, cache_home)
                cold.append(wall)
                timings.append(timing)
                break_target(root)
                warm.append(coderefine_fix(root, cache_home)[0])
            if aider_available():
                with tempfile.TemporaryDirectory(prefix="coderefine-first-tree-") as scratch:
                    rival.append(aider_fix(fresh_clone(size, Path(scratch))))
        median_cold = statistics.median(cold)
        aider = f"{statistics.median(rival):.2f} s" if rival else "not installed"
        ratio = f"{median_cold / statistics.median(rival):.2f}x" if rival else ""
        line = timings[cold.index(sorted(cold)[len(cold) // 2])]
        rows.append(
            f"| {size} | {median_cold:.2f} s | {statistics.median(warm):.2f} s | {aider} | {ratio} | {line} |"
        )
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=list(SIZES))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    rows = measure(args.sizes, args.runs)
    print(f"\n{sys.platform}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, {_load()} at the end")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
