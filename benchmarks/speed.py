"""Walls of the commands on this machine: start-up, the gate, `check`, a refine round, the hook."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import Row, coderefine_cmd, median_of
from benchmarks.fixtures import make_project

HERE = Path(__file__).resolve().parent


def bench_startup(runs: int) -> list[Row]:
    rows = []
    for args in (("--version",), ("--help",)):
        seconds = median_of(
            runs, lambda a=args: subprocess.run(coderefine_cmd(*a), capture_output=True, check=True)
        )  # type: ignore[misc]
        target, limit = ("<= 80 ms", 0.08) if args == ("--version",) else ("< 100 ms", 0.1)
        rows.append(Row(f"coderefine {' '.join(args)}", seconds * 1000, "ms", target, seconds <= limit))
    bare = median_of(runs, lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    rows.append(Row("python -c pass (for scale)", bare * 1000, "ms"))
    return rows


def bench_gate(runs: int) -> list[Row]:
    from coderefine.edits.gate import run_gate

    with tempfile.TemporaryDirectory() as scratch:
        root = make_project(Path(scratch), functions=222, tests=50)
        before = (root / "pkg" / "big.py").read_text()
        after = before.replace("return value + 1", "return value + 2", 1)
        run_gate({"pkg/big.py": after}, {"pkg/big.py": before}, root=root, allowed=["pkg/big.py"])  # warm
        seconds = median_of(
            runs,
            lambda: run_gate(
                {"pkg/big.py": after}, {"pkg/big.py": before}, root=root, allowed=["pkg/big.py"]
            ),
        )
        lines = before.count("\n")
        marks: list[float] = []

        def gate_with_start() -> None:
            run_gate(
                {"pkg/big.py": after},
                {"pkg/big.py": before},
                root=root,
                allowed=["pkg/big.py"],
                on_runnable=lambda: marks.append(time.perf_counter()),
            )
            marks.append(time.perf_counter())

        overlapped = []
        for _ in range(runs):
            gate_with_start()
            overlapped.append(marks[-1] - marks[-2])
        share = statistics.median(overlapped)
    return [
        Row(f"gate on a {lines}-line module", seconds * 1000, "ms", "< 300 ms", seconds < 0.3),
        Row(
            "  of which after the candidate's tests started",
            share * 1000,
            "ms",
            "",
            None,
            "libcst parse + changed symbols overlap the test run",
        ),
    ]


def bench_check(runs: int) -> list[Row]:
    """`check` against ruff and pytest alone, measured as pairs: each repetition times ruff, pytest and
    the three `check` cases back to back, and the overhead is the median of the per-repetition
    differences. Timing each in its own block of runs let the machine's load drift between blocks, which
    moved the overhead by +-200 ms from one run of the script to the next."""
    from coderefine.signals.ruff import find_ruff

    ruff = find_ruff() or "ruff"
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as scratch:
        projects = {
            case: make_project(Path(scratch) / case, functions=222, tests=50) for case in _CHECK_CASES
        }
        big = projects["modified"] / "pkg/big.py"
        # A change that keeps the tests green: the usual case, which needs no baseline test run.
        big.write_text(big.read_text().replace("scale the value", "scale the given value", 1))
        big = projects["failing"] / "pkg/big.py"
        big.write_text(big.read_text().replace("return value + 1", "return value + 3", 1))
        root = projects["whole"]

        def ruff_alone() -> None:
            text = (root / "pkg/big.py").read_text()
            for sub in (
                ["check", "--output-format", "json", "--isolated", "--exit-zero"],
                ["format", "--isolated"],
            ):
                subprocess.run(
                    [ruff, *sub, "--stdin-filename", "pkg/big.py", "-"],
                    input=text,
                    text=True,
                    capture_output=True,
                    cwd=root,
                )

        def pytest_alone() -> None:
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_big.py"],
                cwd=root,
                capture_output=True,
                env=env,
            )

        def check(case: str) -> None:
            subprocess.run(
                coderefine_cmd("check", "pkg/big.py"), cwd=projects[case], capture_output=True, env=env
            )

        for case in _CHECK_CASES:  # the first run of a project builds its persistent test tree
            check(case)
        samples: dict[str, list[float]] = {name: [] for name in ("ruff", "pytest", *_CHECK_CASES)}
        overheads: dict[str, list[float]] = {case: [] for case in _CHECK_CASES}
        for _ in range(runs):
            samples["ruff"].append(_timed(ruff_alone))
            samples["pytest"].append(_timed(pytest_alone))
            floor = max(samples["ruff"][-1], samples["pytest"][-1])
            for case in _CHECK_CASES:
                samples[case].append(_timed(lambda c=case: check(c)))  # type: ignore[misc]
                overheads[case].append(samples[case][-1] - floor)
    ms = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    over = {case: statistics.median(values) * 1000 for case, values in overheads.items()}
    rows = [
        Row("ruff check + format alone (2,000 lines)", ms["ruff"], "ms"),
        Row("pytest alone (50 tests)", ms["pytest"], "ms"),
        Row("check, whole file (one pytest run)", ms["whole"], "ms"),
        Row("  overhead beyond max(ruff, pytest)", over["whole"], "ms", "<= 150 ms", over["whole"] <= 150),
        Row("check, modified file, tests pass", ms["modified"], "ms"),
        Row(
            "  overhead beyond max(ruff, pytest)",
            over["modified"],
            "ms",
            "<= 150 ms",
            over["modified"] <= 150,
        ),
        Row(
            "check, modified file, a test fails",
            ms["failing"],
            "ms",
            "",
            None,
            "adds a baseline run of the failing test file",
        ),
    ]
    return rows


_CHECK_CASES = ("whole", "modified", "failing")


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def bench_round(runs: int) -> list[Row]:
    import json

    from tests.conftest import SMALL_PROJECT
    from tests.refiner.test_loop import BUGGY

    rounds, initial, peaks = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as scratch:
            root = make_project(Path(scratch), files=SMALL_PROJECT)
            (root / "pkg" / "mod.py").write_text(BUGGY)
            done = subprocess.run(
                [sys.executable, str(HERE / "round_probe.py"), str(root)],
                capture_output=True,
                text=True,
                check=True,
                cwd=HERE.parent,
            )
            data = json.loads(done.stdout.strip().splitlines()[-1])
            assert data["stop"] == "passed", data
            rounds.append(data["round"])
            initial.append(data["initial_signals"])
            peaks.append(data["peak_rss_mib"])
    round_s, peak = statistics.median(rounds), statistics.median(peaks)
    return [
        Row("start: SDK import overlapped with signals", statistics.median(initial) * 1000, "ms"),
        Row("one full round, zero-latency model (SDK)", round_s * 1000, "ms", "< 1200 ms", round_s < 1.2),
        Row("peak memory of the run", peak, "MiB", "< 150 MiB", peak < 150),
    ]


def bench_hook(runs: int) -> list[Row]:
    import json

    from tests.conftest import SMALL_PROJECT
    from tests.refiner.test_loop import BUGGY, PASS

    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as scratch:
        root = make_project(Path(scratch), files=SMALL_PROJECT)
        (root / "pkg" / "mod.py").write_text(BUGGY)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        replay = Path(scratch) / "replay.jsonl"
        replay.write_text(json.dumps({"role": "critic", "reply": {"tool_input": PASS}}) + "\n")
        env = dict(os.environ)
        subprocess.run(
            coderefine_cmd("hook", "--check", "--model", f"replay:{replay}"),
            cwd=root,
            env=env,
            capture_output=True,
        )
        replay.write_text("")  # from now on any model call would fail the run

        def hit() -> None:
            done = subprocess.run(
                coderefine_cmd("hook", "--check", "--model", f"replay:{replay}"),
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
            )
            assert "1 from the cache" in done.stdout, done.stdout + done.stderr

        seconds = median_of(runs, hit)
        rows.append(
            Row(
                "hook on a reviewed file (cache hit)",
                seconds * 1000,
                "ms",
                "<= 150 ms",
                seconds <= 0.15,
                "0 model calls, 0 test runs",
            )
        )

    from coderefine.config import Settings
    from coderefine.doors.hook import Hook
    from coderefine.models.scripted import ScriptedModel
    from coderefine.project.cache import ReviewCache
    from coderefine.project.gitio import GitRepo
    from coderefine.project.runner import SubprocessRunner

    latency = 0.5
    for jobs in (1, 4):
        with tempfile.TemporaryDirectory() as scratch:
            files = {f"pkg/m{n}.py": f"def f{n}(x):\n    return x + {n}\n" for n in range(20)}
            root = make_project(Path(scratch), files={"pkg/__init__.py": ""})
            for rel, text in files.items():
                (root / rel).write_text(text)
            subprocess.run(["git", "add", "-A"], cwd=root, check=True)

            def critic(request: object) -> dict[str, object]:
                time.sleep(latency)
                return PASS

            model = ScriptedModel([critic] * 20)
            repo = GitRepo.find(root)
            assert repo is not None
            settings = Settings(tests=False, jobs=jobs)
            hook = Hook(
                repo,
                settings,
                mode="check",
                intent="i",
                model_factory=lambda m=model: m,  # type: ignore[misc]
                runner=SubprocessRunner(),
                environ=dict(os.environ),
                cache=ReviewCache(Path(scratch) / "cache", 100),
            )
            start = time.perf_counter()
            result = hook.run([], cwd=root, timeout=0)
            seconds = time.perf_counter() - start
            assert result.exit_code == 0 and len(result.verdicts) == 20
            rows.append(
                Row(
                    f"hook on 20 changed files, {latency:g}s model, jobs={jobs}",
                    seconds * 1000,
                    "ms",
                    "",
                    None,
                    f"serial model time {20 * latency:g}s",
                )
            )
    return rows
