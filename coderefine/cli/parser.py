"""The command line's grammar: every command, option and help text. Nothing here runs anything."""

from __future__ import annotations

import argparse
from pathlib import Path

from coderefine.cli.bench_parser import add_bench_parser
from coderefine.cli.options import (
    SWEEP_RULE,
    add_batch_option,
    add_change_options,
    add_model_options,
    add_role_model_options,
    add_signal_options,
    add_sweep_options,
    add_test_choice,
)
from coderefine.version import __version__

_DESCRIPTION = """\
Refine a Python change with a self-refine loop grounded in facts: ruff diagnostics and pytest results
go into every critique, and every patch passes a libcst + compile() gate before it is written.
"""

_EPILOG = """\
examples:
  coderefine init                         show (then write) the config, hook and workflow a project needs
  coderefine check app.py                 signals of app.py's uncommitted change (no model needed)
  coderefine check --staged               signals of what is staged for commit
  coderefine check --base origin/main     signals of this branch since it left main
  coderefine check --rules app.py         the project's rules (AGENTS.md, ...) the critic gets for app.py
  git diff | coderefine check --patch -   signals of a patch
  coderefine fix app.py -m "handle empty input"   refine a change with the model and write it
  coderefine draft new.py --intent "parse ISO dates"   write new code, then refine it
  coderefine review --base origin/main    CI: review a branch, with verified suggestions
  coderefine merge shard-*.json           CI: one review from the jobs of 'review --shard K/N'
  coderefine bench --limit 20             fix rate and cost against one-shot and self-refine
  coderefine install-hook                 run coderefine on every commit (or use pre-commit)
  coderefine undo                         restore the files of the last write

exit codes: 0 clean, 1 findings remain, 2 usage or configuration error, 3 internal error,
4 model provider unavailable, 130 interrupted. Models: --model PROVIDER:MODEL (docs/models.md).
Settings live in [tool.coderefine] of pyproject.toml; see 'coderefine check --help'.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coderefine",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"coderefine {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="print the signals of a change (ruff, format, tests, syntax); no model",
        description="Print what a critic would be told about a change: the ruff diagnostics, format "
        "differences, failing related tests and syntax errors it introduced, apart from old debt. "
        "A file with no change (or outside git) is reviewed whole. Exit 0 when clean, 1 when "
        "something at or above --fail-on was introduced or a signal could not be collected.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_change_options(check)
    add_signal_options(check)
    check.add_argument(
        "--explain",
        action="store_true",
        help="also say which tests ran and how each was found (the import chain from the test to the "
        "change, or its name); --format json always has it, as tests_why",
    )
    check.add_argument(
        "--rules",
        action="store_true",
        help="print the project's rules each file of the change gets (AGENTS.md and the other rules-files "
        "down its folders, the rules setting), as the critic is told them, and run nothing; with --staged "
        "they are HEAD's and with --base the merge base's, as the hook and review read them",
    )

    fix = commands.add_parser(
        "fix",
        help="refine a change with the model: critique, revise, gate, and write the accepted result",
        description="Refine the uncommitted change of FILEs (or the whole files when they have none) "
        "against the intent: the critic reviews it with the signals, the reviser answers with edit "
        "blocks, every candidate must pass the libcst + compile() gate and may not make any signal "
        "worse. The best candidate is written atomically; 'coderefine undo' restores the files.",
        epilog="examples:\n  coderefine fix app.py -m 'handle an empty list'\n"
        "  coderefine fix app.py --dry-run          show the patch, write nothing\n"
        "  coderefine fix app.py --model replay:run.jsonl   reproduce a recorded run\n"
        "  coderefine fix src/ -m 'replace the deprecated utcnow()' --jobs 4 --budget 5\n\n" + SWEEP_RULE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_change_options(fix)
    add_sweep_options(fix)
    add_model_options(fix)
    add_batch_option(fix)
    add_signal_options(fix)

    draft = commands.add_parser(
        "draft",
        help="write new code from an intent with the model, then refine it like fix",
        description="The author writes the change the intent asks for into FILE (which may not exist "
        "yet); then it is refined and written like 'coderefine fix'.",
    )
    draft.add_argument("file", type=Path, metavar="FILE", help="the Python file to write or extend")
    add_model_options(draft)
    add_signal_options(draft)

    hook = commands.add_parser(
        "hook",
        help="the pre-commit hook: review the staged change of FILEs (default: every staged Python file)",
        description="Review exactly what will be committed (the index), file by file, with a review "
        "cache: a file reviewed before with the same content, intent, model and settings costs no model "
        "call and no test run. Modes: fix (refine and write fixes; the hook then fails so you can review "
        "and re-stage), check (critique only; exit 1 when issues at or above fail-on remain), signals "
        "(no model: ruff, format, tests, syntax).",
        epilog="The mode comes from --mode/--check, else hook-mode in [tool.coderefine] (default fix).\n"
        "Skip the hook once: SKIP=coderefine git commit ...",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    hook.add_argument("files", nargs="*", type=Path, metavar="FILE", help="staged files to review")
    hook.add_argument("--mode", choices=("fix", "check", "signals"), help="what the hook does")
    hook.add_argument("--check", action="store_true", help="same as --mode check")
    hook.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="limit for the whole hook (default 600)"
    )
    hook.add_argument(
        "--commit-msg", action="store_true", help="the first FILE is the commit message: use it as the intent"
    )
    hook.add_argument("-m", "--intent", metavar="TEXT", help="what the change is meant to do")
    add_role_model_options(hook)
    add_test_choice(hook)

    review = commands.add_parser(
        "review",
        help="CI: review a branch's change and publish findings with verified fixes; never writes",
        description="Review the change from the merge base of --base to --head (default HEAD). The critic "
        "sees what the change introduced (new ruff diagnostics, tests that fail on head) and the hunks; "
        "for each issue the reviser proposes a fix, offered as a suggestion only when it applies to the "
        "head, passes the gate, and no signal gets worse. The intent comes from the pull request (title "
        "and body, GITHUB_EVENT_PATH), else the commit messages, else --intent. Without an API key the "
        "model step is skipped and the signals are still reported.",
        epilog="examples:\n"
        "  coderefine review --base origin/main\n"
        "  coderefine review --base origin/main --format github --format sarif=coderefine.sarif\n"
        "  coderefine review --base origin/main --github-review --fail-on error\n"
        "  coderefine review --base origin/main --shard 2/4 --fail-on never --format json=shard-2.json\n"
        "formats: text, json, markdown, sarif, github (annotations + job summary), gitlab (code quality)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    review.add_argument("--base", required=True, metavar="REF", help="the branch the change goes into")
    review.add_argument("--head", default="HEAD", metavar="REF", help="the head of the change (default HEAD)")
    review.add_argument(
        "--format", dest="output", action="append", metavar="FORMAT[=FILE]", help="an output; repeat for more"
    )
    review.add_argument(
        "--github-review", action="store_true", help="publish a pull request review (GITHUB_TOKEN)"
    )
    review.add_argument("--no-model", action="store_true", help="signals only")
    review.add_argument(
        "--require-model",
        action="store_true",
        help="fail (exit 2) instead of skipping the model without a key",
    )
    review.add_argument(
        "-m", "--intent", metavar="TEXT", help="the intent when there is no PR text and no commit message"
    )
    add_role_model_options(review)
    add_batch_option(review)
    add_test_choice(review)
    review.add_argument(
        "--fail-on", choices=("error", "warning", "info", "never"), help="lowest severity that fails the job"
    )
    review.add_argument(
        "--budget",
        type=float,
        metavar="DOLLARS",
        help="most the review may cost (max-cost for this run); files not reached are listed as not reviewed",
    )
    review.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="files critiqued at once (default 1); the signal runs of proposed fixes take turns",
    )
    review.add_argument(
        "--shard",
        metavar="K/N",
        help="review only shard K of N of the changed files (balanced by size; the signals still cover "
        "the whole change); combine the shards' JSON with 'coderefine merge'",
    )
    _add_merge_parser(commands)

    add_bench_parser(commands)

    install = commands.add_parser(
        "install-hook",
        help="install coderefine as this repository's git pre-commit hook (without the pre-commit framework)",
        description="Write .git/hooks/pre-commit (or core.hooksPath) running 'coderefine hook'. An existing "
        "hook that is not coderefine's is kept unless --force.",
    )
    install.add_argument("--force", action="store_true", help="replace an existing hook")

    cache = commands.add_parser("cache", help="show or clear the review cache")
    cache.add_argument("action", choices=("info", "clear"), nargs="?", default="info")

    undo = commands.add_parser(
        "undo",
        help="restore the files of coderefine's last write",
        description="Restore every file of the last write exactly as it was. Refuses when a file "
        "changed since, unless --force.",
    )
    undo.add_argument("--force", action="store_true", help="restore even files that changed since")
    _add_mcp_parser(commands)
    _add_init_parser(commands)
    return parser


def _add_merge_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    merge = commands.add_parser(
        "merge",
        help="CI: combine the JSON reports of 'review --shard K/N' jobs into one review",
        description="Combine the reports of a sharded review (review --shard K/N --format json=FILE) into "
        "one report: one SARIF run, one job summary with annotations, one GitLab file and one pull request "
        "review, each finding once (by fingerprint). The shards must review the same head and merge base, "
        "and each of 1..N must come exactly once (--allow-partial merges what is there and says which "
        "shards are missing). The exit code follows --fail-on over the merged findings.",
        epilog="examples:\n"
        "  coderefine merge shard-*.json --format github --format sarif=coderefine.sarif\n"
        "  coderefine merge shards/*.json --github-review --fail-on error\n"
        "formats: text, json, markdown, sarif, github (annotations + job summary), gitlab (code quality)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    merge.add_argument("reports", nargs="+", metavar="SHARD.json", help="the JSON report of each shard")
    merge.add_argument(
        "--format", dest="output", action="append", metavar="FORMAT[=FILE]", help="an output; repeat for more"
    )
    merge.add_argument(
        "--github-review", action="store_true", help="publish one pull request review (GITHUB_TOKEN)"
    )
    merge.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge even when shards are missing (the report names them); different commits are never merged",
    )
    merge.add_argument(
        "--fail-on", choices=("error", "warning", "info", "never"), help="lowest severity that fails the job"
    )


_MCP_EPILOG = """\
tools:
  check     the signals a change introduced (ruff, format, syntax, related tests); no model.
            An agent calls it after editing Python files, before it says it is done.
  critique  the critic's verdict and located issues for a change against its intent; writes nothing.
  refine    the whole loop; returns the patch (dry_run, the default) or writes it with an undo journal.
  undo      restores the files of the last write.

The model is the configured one (--model, [tool.coderefine] model, ANTHROPIC_API_KEY); when none is
configured and the client supports sampling, the client's own model answers.

An MCP host runs:  coderefine mcp --root /path/to/project
"""


def _add_mcp_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="serve check, critique, refine and undo to coding agents over MCP (stdio)",
        description="Start a Model Context Protocol server on stdin/stdout for coding agents (Claude "
        "Code, Cursor and other MCP clients), in the project of the current folder or --root. Every path "
        "a tool is given must lie inside that root. Needs the MCP SDK: pip install 'coderefine[mcp]'.",
        epilog=_MCP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mcp.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="the project folder (default: the git top level of the current folder)",
    )
    mcp.add_argument(
        "--model", metavar="NAME", help="the model for critique and refine (default: the setting)"
    )


def _add_init_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    init = commands.add_parser(
        "init",
        help="set a project up: the [tool.coderefine] table, the pre-commit entry and the review workflow",
        description="Show what a project needs to start with coderefine, then write it: a "
        "[tool.coderefine] table appended to pyproject.toml (the test settings detected, the common "
        "defaults as comments; the rest of the file is kept byte for byte), the pre-commit entry "
        "(appended to .pre-commit-config.yaml, or a new one; pinned to this version's tag, or to the "
        "commit it was installed from), .github/workflows/coderefine-review.yml (one step: the "
        "coderefine action; when it reviews is --reviews) and .github/workflows/coderefine-commands.yml "
        "(/coderefine review, fix, explain and help in pull request comments, for owners, members and "
        "collaborators). Nothing that exists is overwritten; what is left alone is said, with why. "
        "Without --yes or --dry-run it asks, and refuses when there is no terminal to ask on.",
        epilog="examples:\n  coderefine init --dry-run     show what would be written\n"
        "  coderefine init --yes         write it without asking\n"
        "  coderefine init --reviews opened   review a pull request once when opened, then on request\n\n"
        "--reviews (what each costs: README, 'Reviews on request'):\n"
        "  push     every push of a pull request is reviewed (the default), and on request\n"
        "  opened   once when a pull request is opened or marked ready, then on request\n"
        "  request  only when someone allowed comments /coderefine review (no pull_request workflow)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    choice = init.add_mutually_exclusive_group()
    choice.add_argument("--dry-run", action="store_true", help="show the files, write nothing")
    choice.add_argument("-y", "--yes", action="store_true", help="write the files without asking")
    init.add_argument(
        "--reviews",
        choices=("push", "opened", "request"),
        default="push",
        help="when pull requests are reviewed without being asked (default push)",
    )
    init.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="the project folder (default: the git top level of the current folder)",
    )
