"""coderefine's performance benchmarks: one command prints a table of medians.

    python benchmarks/run.py            # every benchmark
    python benchmarks/run.py --quick    # fewer repetitions
    python benchmarks/run.py startup gate check

Figures are medians of several runs on this machine (noted in the header). Targets come from the
project's issues; a figure over its target is marked, but the script never fails on timing: these
machines are noisy, and a benchmark is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.common import Row, render  # noqa: E402
from benchmarks.costs import bench_calls, bench_context, bench_suite_calls, bench_tokens  # noqa: E402
from benchmarks.localize_run import bench_localize  # noqa: E402
from benchmarks.spec_calls import bench_spec  # noqa: E402
from benchmarks.speed import bench_check, bench_gate, bench_hook, bench_round, bench_startup  # noqa: E402


def bench_walls(runs: int) -> list[Row]:
    from benchmarks.rivals import aider_available, aider_wall
    from benchmarks.walls import AIDER_FIX_S, PR_AGENT_REVIEW_S, fix_wall, review_wall

    runs = min(runs, 5)
    cold = {"CODEREFINE_WARM_TESTS": "false"}
    fixes, colds, reviews, cold_reviews, peaks, aiders = [], [], [], [], [], []
    for _ in range(runs):  # alternating, so that the machine's load weighs on both alike
        seconds, peak = fix_wall(1)
        fixes.append(seconds)
        peaks.append(peak)
        if aider_available():
            aiders.append(aider_wall())
        colds.append(fix_wall(1, cold)[0])
        reviews.append(review_wall(1))
        cold_reviews.append(review_wall(1, cold))
    fix, peak, review = statistics.median(fixes), max(peaks), statistics.median(reviews)
    fix_cold, review_cold = statistics.median(colds), statistics.median(cold_reviews)
    aider = statistics.median(aiders) if aiders else AIDER_FIX_S
    fix_ratio, review_ratio = fix / aider, review / PR_AGENT_REVIEW_S
    quoted = "against the issue's quoted {} s; not installed here"
    aider_note = (
        f"aider measured here, alternating: {aider * 1000:,.0f} ms" if aiders else quoted.format(AIDER_FIX_S)
    )
    return [
        Row("fix, mean() scenario, zero-latency model", fix * 1000, "ms", "", None, "two pytest runs"),
        Row(
            "  ratio to aider 0.86.2 fix-and-test",
            fix_ratio,
            "x",
            "<= 0.35x",
            fix_ratio <= 0.35,
            aider_note,
        ),
        Row("  peak memory of a fix run", peak, "MiB", "<= 120 MiB", peak <= 120, "replayed model: no SDK"),
        Row(
            "  the same with warm-tests = false",
            fix_cold * 1000,
            "ms",
            "",
            None,
            f"the warm runner saves {1 - fix / fix_cold:.0%}",
        ),
        Row("review --base main, one verified fix", review * 1000, "ms"),
        Row(
            "  ratio to PR-Agent 0.49.0 local review",
            review_ratio,
            "x",
            "<= 0.35x",
            review_ratio <= 0.35,
            f"against the issue's quoted {PR_AGENT_REVIEW_S} s; pr-agent 0.49.0 is not on PyPI",
        ),
        Row(
            "  the same with warm-tests = false",
            review_cold * 1000,
            "ms",
            "",
            None,
            f"the warm runner saves {1 - review / review_cold:.0%}",
        ),
    ]


BENCHMARKS: dict[str, Callable[[int], list[Row]]] = {
    "startup": bench_startup,
    "gate": bench_gate,
    "check": bench_check,
    "round": bench_round,
    "tokens": bench_tokens,
    "hook": bench_hook,
    "walls": bench_walls,
    "calls": bench_calls,
    "suite-calls": bench_suite_calls,
    "context": bench_context,
    "spec": bench_spec,
    "localize": bench_localize,
}


def main() -> int:
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        # Users' Pythons cache bytecode; measuring without it would time the compiler, not coderefine.
        print("note: PYTHONDONTWRITEBYTECODE was set; unset for these measurements")
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help=f"benchmarks to run: {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="3 runs each instead of 7")
    args = parser.parse_args()
    runs = 3 if args.quick else 7
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; medians of {runs} runs"
    )
    if shutil.which("git") is None:
        print("git is required")
        return 2
    rows: list[Row] = []
    for name in args.names or BENCHMARKS:
        rows.extend(BENCHMARKS[name](runs))
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
