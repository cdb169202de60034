"""The options several commands share (change source, signals, models, batch, sweeps), with their help."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_change_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="*", type=Path, metavar="FILE", help="Python files (or, for fix, folders) to review"
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--staged",
        action="store_true",
        help="review the staged change (default: the working tree against HEAD)",
    )
    source.add_argument("--base", metavar="REF", help="review the change since the merge base with REF")
    source.add_argument("--patch", metavar="FILE", help="review a unified diff from FILE ('-' for stdin)")
    parser.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="the project the files belong to (default: their git repository, else their nearest "
        "pyproject.toml); needed for a file outside the git repository of the current folder",
    )


def add_test_choice(parser: argparse.ArgumentParser) -> None:
    """--no-tests and --all-tests (the ``tests`` setting)."""
    parser.add_argument(
        "--no-tests", dest="tests", action="store_false", default=None, help="do not run pytest"
    )
    parser.add_argument(
        "--all-tests",
        dest="tests",
        action="store_const",
        const="all",
        help="run the whole test suite, not only the tests related to the change",
    )


def add_signal_options(parser: argparse.ArgumentParser) -> None:
    add_test_choice(parser)
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the project's interpreter for pytest (default: .venv, then VIRTUAL_ENV)",
    )
    parser.add_argument(
        "--test-timeout", type=float, metavar="SECONDS", help="limit for one test (default 30)"
    )
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning", "info", "never"),
        help="lowest severity that fails the run (default warning)",
    )
    parser.add_argument(
        "--format",
        dest="output_format",
        choices=("text", "json"),
        default="text",
        help="output format",
    )


MODEL_HELP = (
    "PROVIDER:MODEL (anthropic, bedrock, vertex, openai, openai-compatible, ollama, vllm, llamacpp, "
    "lmstudio; a bare name is Anthropic's), or replay:FILE to replay a recorded run"
)


def add_role_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="NAME", help=MODEL_HELP)
    for role in ("author", "critic", "reviser"):
        parser.add_argument(f"--{role}-model", metavar="NAME", help=f"the {role}'s model (default: --model)")


def add_batch_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch",
        action="store_true",
        help="send the model requests through the provider's batch API (Anthropic, OpenAI): half the "
        "price, answers in minutes to hours (at most 24 h); an interrupted run resumes its batches",
    )


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--intent", metavar="TEXT", help="what the change is meant to do")
    add_role_model_options(parser)
    parser.add_argument("--rounds", type=int, metavar="N", help="most critique/revise rounds (default 3)")
    parser.add_argument("--record", metavar="FILE", help="record every model request and reply as JSON lines")
    parser.add_argument(
        "--diff", "--dry-run", dest="dry_run", action="store_true", help="show the patch; write nothing"
    )
    parser.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 when files were changed, as pre-commit expects",
    )
    parser.add_argument(
        "--timings",
        action="store_true",
        default=None,
        help="print where the wall time went, phase by phase, on stderr (and in --format json); "
        "also CODEREFINE_TIMINGS=1",
    )


SWEEP_RULE = """\
files or a sweep: FILEs named one by one are one change (a change that spans them, refined together).
A FOLDER, --all, --exclude or --sweep makes a sweep: each file is refined on its own, --jobs at a time,
within --budget; one file's failure never stops the others; the summary lists every file's outcome and
the exit code is the worst of them. An interrupted sweep continues where it stopped when the same
command runs again, and one 'coderefine undo' restores every file it wrote."""


def add_sweep_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sweeps (one refine per file)")
    group.add_argument(
        "--all", dest="all_files", action="store_true", help="every Python file git tracks (a sweep)"
    )
    group.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files whose path, name or folder matches GLOB (repeatable; a sweep)",
    )
    group.add_argument("--sweep", action="store_true", help="refine each named FILE on its own")
    group.add_argument(
        "--shard",
        metavar="K/N",
        help="refine only shard K of N of the selected files (balanced by size), one CI job per shard",
    )
    group.add_argument(
        "--jobs", type=int, metavar="N", help="files refined at once (default: jobs setting, 4)"
    )
    group.add_argument(
        "--budget",
        type=float,
        metavar="DOLLARS",
        help="most the whole sweep may cost; files not started within it are listed as skipped",
    )
