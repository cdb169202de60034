"""The grammar of ``coderefine bench``, its ``merge`` and its ``make-suite``: options and help texts."""

from __future__ import annotations

import argparse

from coderefine.cli.options import add_batch_option


def add_bench_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="measure fix rate and cost of strategies on task suites built from real libraries",
        description="Run strategies side by side on a task suite (default: the shipped library suites, "
        "built on first use from pinned source distributions and cached under --out; or humanevalfix, or "
        "a folder made by 'coderefine bench make-suite'). A task's project holds the changed library and "
        "its visible tests (the signal); the whole test suite, hidden from model and signals, scores "
        "the result. Results are cached per task, strategy and model, so an interrupted run resumes. "
        "--model oracle (must score 100%) and --model do-nothing (must score 0%) check the harness "
        "itself, offline.",
        epilog="strategies: one-shot, self-refine, coderefine, coderefine-retry, coderefine-r1, "
        "coderefine-r2, signals-only, review (runs the suites' review tasks through coderefine review);\n"
        "NAME@MODEL runs a strategy with a model of its own\n"
        "examples:\n"
        "  coderefine bench --limit 20 --strategies one-shot,coderefine --jobs 4\n"
        "  coderefine bench --strategies one-shot@claude-opus-4-5,coderefine@claude-haiku-4-5\n"
        "  coderefine bench make-suite humanize==4.11.0 --tasks 60 -o suites/humanize\n"
        "  coderefine bench --suite suites/humanize --model oracle --strategies coderefine",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("--strategies", default="one-shot,self-refine,coderefine,review", metavar="LIST")
    bench.add_argument("--model", metavar="NAME", help="PROVIDER:MODEL, replay:FILE, oracle or do-nothing")
    for role in ("critic", "reviser"):
        bench.add_argument(
            f"--{role}-model", metavar="NAME", help=f"the {role}'s model in the mixed strategies"
        )
    bench.add_argument("--limit", type=int, default=0, metavar="N", help="the first N tasks only")
    bench.add_argument("--tasks", metavar="IDS", help="comma-separated task ids, e.g. 0,5,Python/12")
    bench.add_argument(
        "--seed", type=int, metavar="N", help="shuffle the tasks first (with --limit: a sample)"
    )
    bench.add_argument("--jobs", type=int, default=2, metavar="N", help="tasks run at once (default 2)")
    bench.add_argument("--out", default="bench-results", metavar="DIR", help="results and cache folder")
    bench.add_argument("--no-cache", action="store_true", help="run every pair again")
    add_batch_option(bench)
    bench.add_argument(
        "--suite",
        metavar="SUITE",
        default="libraries",
        help="libraries (default), humanevalfix, a folder from make-suite, or a JSON-lines file",
    )
    bench.add_argument("--rounds", type=int, metavar="N", help=argparse.SUPPRESS)
    bench.add_argument(
        "--shard",
        metavar="K/N",
        help="run only shard K of N of the (task, strategy) pairs (deterministic); combine the shards' "
        "--out folders with 'coderefine bench merge'",
    )
    bench_commands = bench.add_subparsers(dest="bench_command", metavar="make-suite|merge")
    bench_merge = bench_commands.add_parser(
        "merge",
        help="combine the results of 'bench --shard K/N' jobs into one results.json and results.md",
        description="Read each shard's results.json (its --out folder, or the file), refuse shards of "
        "different runs and a missing or repeated shard, and write one run's results with the summary, "
        "intervals and pairwise tests computed again over every task.",
        epilog="example:\n  coderefine bench merge shard-1 shard-2 shard-3 --out bench-results",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_merge.add_argument("dirs", nargs="+", metavar="DIR", help="the shards' --out folders")
    bench_merge.add_argument("--out", default="bench-results", metavar="DIR", help="where to write")
    make_suite = bench_commands.add_parser(
        "make-suite",
        help="build a task suite from a pinned library or your own project",
        description="Build bug and feature tasks from a real library with a pytest suite: its source "
        "distribution is downloaded with pip into a venv of its own (or --from names a local checkout, "
        "run with the interpreter of its .venv if it has one), its tests run twice for a green baseline, "
        "and mutants and removed function bodies are kept only when a test notices them. With "
        "--upgrade-to, release tasks instead: the changes between two releases that the new release's "
        "tests notice. Deterministic for a seed; built in a temporary folder and renamed into place when "
        "complete.",
        epilog="examples:\n"
        "  coderefine bench make-suite tabulate==0.9.0 --tasks 60 -o suites/tabulate\n"
        "  coderefine bench make-suite --from . --tasks 40 -o suites/mine\n"
        "  coderefine bench make-suite boltons==26.1.0 --upgrade-to 26.2.0 -o suites/boltons-26.2.0\n"
        "  coderefine bench make-suite boltons --released-after 2026-06-01 -o suites/boltons-recent",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    make_suite.add_argument("requirement", nargs="?", metavar="NAME==VERSION")  # NAME alone: see below
    make_suite.add_argument("--from", dest="from_path", metavar="PATH", help="a local checkout with tests")
    make_suite.add_argument(
        "--tasks",
        type=int,
        default=60,
        metavar="N",
        help="bug and feature tasks to make (default 60); added beyond them: clean twins of bug tasks "
        "(up to N/6), review pairs (N/8, each a review and a review-clean task), feature-tests tasks "
        "(up to N/6) and multi-location tasks (up to N/12 each of three bugs in one module and of a bug "
        "in each of two files), so a suite holds up to about 1.8 times N. Fewer is said with why (not "
        "enough code to mutate, few functions with a docstring, ...). With --upgrade-to: at most N release "
        "tasks",
    )
    make_suite.add_argument("--seed", type=int, default=0, metavar="N", help="the seed (default 0)")
    make_suite.add_argument(
        "--disguise",
        action="store_true",
        help="rename private names and locals and reorder definitions first (behaviour kept, tests green), "
        "so a model's memory of the library helps less; a separate suite",
    )
    make_suite.add_argument(
        "--requires",
        metavar="LIST",
        default="pytest",
        help="comma-separated test dependencies the library does not declare, beside pytest (which is "
        "always installed unless a pin of it is given here); what it declares (its dependencies, and its "
        "test, tests or testing extra) is installed with them",
    )
    make_suite.add_argument(
        "--deselect",
        action="append",
        metavar="PATTERN",
        help="leave tests out from the start (repeatable, or comma-separated): a node id prefix "
        "(tests/test_x.py::test_y), or a test file or folder, a glob (tests/test_speedups.py), not even "
        "collected; for tests that cannot run here, e.g. of a compiled extension the source build lacks",
    )
    make_suite.add_argument(
        "--upgrade-to",
        metavar="NEW",
        help="release tasks: the changes from NAME==VERSION to this release that NEW's tests notice",
    )
    make_suite.add_argument(
        "--released-after",
        metavar="DATE",
        help="only releases uploaded to PyPI after DATE (YYYY-MM-DD); with NAME alone, every such release "
        "is tried with the one before it, a release suite each in a folder under -o, and a table of the "
        "pairs (tasks made, or why none) is printed and written to -o's pairs.md",
    )
    make_suite.add_argument("-o", "--out", required=True, metavar="SUITE", help="the suite folder to create")
