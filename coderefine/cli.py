"""The command line: parse arguments, call the library, map errors to exit codes. Nothing else.

Library modules are imported inside the command functions, so that ``--version`` and ``--help``
import nothing heavy (libcst, gitpython, the model SDK).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from coderefine import __version__
from coderefine.errors import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    CoderefineError,
)

_DESCRIPTION = """\
Refine a Python change with a self-refine loop grounded in facts: ruff diagnostics and pytest results
go into every critique, and every patch passes a libcst + compile() gate before it is written.
"""

_EPILOG = """\
examples:
  coderefine check app.py                 signals of app.py's uncommitted change (no model needed)
  coderefine check --staged               signals of what is staged for commit
  coderefine check --base origin/main     signals of this branch since it left main
  git diff | coderefine check --patch -   signals of a patch
  coderefine fix app.py -m "handle empty input"   refine a change with the model and write it
  coderefine draft new.py --intent "parse ISO dates"   write new code, then refine it
  coderefine review --base origin/main    CI: review a branch, with verified suggestions
  coderefine bench --limit 20             fix rate and cost against one-shot and self-refine
  coderefine install-hook                 run coderefine on every commit (or use pre-commit)
  coderefine undo                         restore the files of the last write

exit codes: 0 clean, 1 findings remain, 2 usage or configuration error, 3 internal error,
130 interrupted. Settings live in [tool.coderefine] of pyproject.toml; see 'coderefine check --help'.
"""


def _add_change_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE", help="Python files to review")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--staged",
        action="store_true",
        help="review the staged change (default: the working tree against HEAD)",
    )
    source.add_argument("--base", metavar="REF", help="review the change since the merge base with REF")
    source.add_argument("--patch", metavar="FILE", help="review a unified diff from FILE ('-' for stdin)")


def _add_signal_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-tests", dest="tests", action="store_false", default=None, help="do not run pytest"
    )
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


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--intent", metavar="TEXT", help="what the change is meant to do")
    parser.add_argument("--model", metavar="NAME", help="model name, or replay:FILE to replay a recorded run")
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
    _add_change_options(check)
    _add_signal_options(check)

    fix = commands.add_parser(
        "fix",
        help="refine a change with the model: critique, revise, gate, and write the accepted result",
        description="Refine the uncommitted change of FILEs (or the whole files when they have none) "
        "against the intent: the critic reviews it with the signals, the reviser answers with edit "
        "blocks, every candidate must pass the libcst + compile() gate and may not make any signal "
        "worse. The best candidate is written atomically; 'coderefine undo' restores the files.",
        epilog="examples:\n  coderefine fix app.py -m 'handle an empty list'\n"
        "  coderefine fix app.py --dry-run          show the patch, write nothing\n"
        "  coderefine fix app.py --model replay:run.jsonl   reproduce a recorded run",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_change_options(fix)
    _add_model_options(fix)
    _add_signal_options(fix)

    draft = commands.add_parser(
        "draft",
        help="write new code from an intent with the model, then refine it like fix",
        description="The author writes the change the intent asks for into FILE (which may not exist "
        "yet); then it is refined and written like 'coderefine fix'.",
    )
    draft.add_argument("file", type=Path, metavar="FILE", help="the Python file to write or extend")
    _add_model_options(draft)
    _add_signal_options(draft)

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
    hook.add_argument("--model", metavar="NAME", help="model name, or replay:FILE")
    hook.add_argument(
        "--no-tests", dest="tests", action="store_false", default=None, help="do not run pytest"
    )

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
    review.add_argument("--model", metavar="NAME", help="model name, or replay:FILE")
    review.add_argument(
        "--no-tests", dest="tests", action="store_false", default=None, help="do not run pytest"
    )
    review.add_argument(
        "--fail-on", choices=("error", "warning", "info", "never"), help="lowest severity that fails the job"
    )

    bench = commands.add_parser(
        "bench",
        help="measure fix rate and cost on HumanEvalFix against one-shot and self-refine",
        description="Run strategies side by side on a task suite (default: HumanEvalFix, Python, 164 "
        "tasks). Each task is a small project with the buggy module and its docstring examples as tests "
        "(the signal); the full hidden tests only score the result. Results are cached per task, strategy "
        "and model, so an interrupted run resumes. --model oracle (must score 100%%) and --model "
        "do-nothing (must score 0%%) check the harness itself, offline.",
        epilog="strategies: one-shot, self-refine, coderefine, coderefine-r1, coderefine-r2, signals-only\n"
        "example:  coderefine bench --limit 20 --strategies one-shot,coderefine --jobs 4",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("--strategies", default="one-shot,self-refine,coderefine", metavar="LIST")
    bench.add_argument("--model", metavar="NAME", help="a model, replay:FILE, oracle or do-nothing")
    bench.add_argument("--limit", type=int, default=0, metavar="N", help="the first N tasks only")
    bench.add_argument("--tasks", metavar="IDS", help="comma-separated task ids, e.g. 0,5,Python/12")
    bench.add_argument(
        "--seed", type=int, metavar="N", help="shuffle the tasks first (with --limit: a sample)"
    )
    bench.add_argument("--jobs", type=int, default=2, metavar="N", help="tasks run at once (default 2)")
    bench.add_argument("--out", default="bench-results", metavar="DIR", help="results and cache folder")
    bench.add_argument("--no-cache", action="store_true", help="run every pair again")
    bench.add_argument("--suite", metavar="FILE", help="another suite in the same JSON-lines format")
    bench.add_argument("--rounds", type=int, metavar="N", help=argparse.SUPPRESS)

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
    return parser


def _flags(args: argparse.Namespace) -> dict[str, object]:
    names = ("tests", "python", "test_timeout", "fail_on", "rounds", "model", "intent")
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def _warn(message: str) -> None:
    print(f"coderefine: {message}", file=sys.stderr)


def _recover(journal: Any) -> None:
    """Undo what an interrupted earlier write left half-done, and say so."""
    restored = journal.recover()
    if restored:
        _warn(f"an earlier run was interrupted while writing; restored {', '.join(restored)} as they were")


def _read_patch(args: argparse.Namespace, stdin: TextIO) -> str | None:
    from coderefine.errors import InputError

    if args.patch is None:
        return None
    if args.patch == "-":
        return stdin.read()
    try:
        return Path(args.patch).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{args.patch}: cannot read the patch ({exc.strerror})") from exc


def _load(args: argparse.Namespace, stdin: TextIO) -> tuple[Any, Any, Any]:
    """The repository, settings and change the arguments ask for."""
    from coderefine.change import load_change, project_root
    from coderefine.config import load_settings
    from coderefine.gitio import GitRepo

    cwd = Path.cwd()
    patch_text = _read_patch(args, stdin)
    first = Path(os.path.normpath(cwd / args.files[0])) if args.files else cwd
    repo = GitRepo.find(first if first.exists() else first.parent)
    settings = load_settings(project_root(first, repo), os.environ, _flags(args))
    change = load_change(
        args.files,
        cwd=cwd,
        repo=repo,
        staged=args.staged,
        base=args.base,
        patch_text=patch_text,
        max_bytes=settings.max_file_kib * 1024,
    )
    return repo, settings, change


def _require_change_source(args: argparse.Namespace) -> None:
    from coderefine.errors import UsageError

    if not args.files and not args.staged and args.base is None and args.patch is None:
        raise UsageError(f"name the files to {args.command}, or use --staged, --base REF or --patch FILE")


def _command_check(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.check import run_check
    from coderefine.report.jsonout import render_check_json
    from coderefine.report.text import render_check
    from coderefine.runner import SubprocessRunner
    from coderefine.workspace import project_files

    _require_change_source(args)
    repo, settings, change = _load(args, stdin)
    if not change.files:
        out.write("coderefine check: no Python files in the change; nothing to do\n")
        return EXIT_CLEAN
    result = run_check(change, settings, SubprocessRunner(), os.environ, project_files(change.root, repo))
    render = render_check_json if args.output_format == "json" else render_check
    out.write(render(result, settings.fail_on))
    return EXIT_FINDINGS if result.failed(settings.fail_on) else EXIT_CLEAN


def _command_fix(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.change import draft_change, project_root
    from coderefine.config import load_settings
    from coderefine.errors import UsageError
    from coderefine.fix import FixOutcome, run_refine, write_result
    from coderefine.gitio import GitRepo
    from coderefine.lock import run_lock
    from coderefine.models.factory import make_model
    from coderefine.report.progress import StreamProgress
    from coderefine.report.refine import render_refine, render_refine_json
    from coderefine.runner import SubprocessRunner
    from coderefine.workspace import project_files
    from coderefine.writes import Journal

    drafting = args.command == "draft"
    if drafting:
        if not args.intent:
            raise UsageError("draft needs --intent TEXT: say what the new code should do")
        cwd = Path.cwd()
        target = Path(os.path.normpath(cwd / args.file))
        repo = GitRepo.find(target.parent if target.parent.exists() else cwd)
        settings = load_settings(project_root(target.parent, repo), os.environ, _flags(args))
        change = draft_change(args.file, cwd=cwd, repo=repo, max_bytes=settings.max_file_kib * 1024)
    else:
        _require_change_source(args)
        repo, settings, change = _load(args, stdin)
    if not change.files:
        out.write(f"coderefine {args.command}: no Python files in the change; nothing to do\n")
        return EXIT_CLEAN
    record = Path(args.record) if args.record else None
    model = make_model(settings.model, settings, os.environ, record=record)
    progress = StreamProgress(sys.stderr, sys.stderr.isatty())
    journal = Journal.for_project(change.root, repo.git_dir if repo else None)
    written: tuple[str, ...] = ()
    with run_lock(journal.lock_path, on_wait=_warn):
        _recover(journal)
        try:
            result = run_refine(
                change,
                settings,
                model,
                SubprocessRunner(),
                os.environ,
                project_files(change.root, repo),
                intent=args.intent,
                draft=drafting,
                progress=progress,
            )
        finally:
            progress.done()
        if result.changed and not args.dry_run:
            written, _ = write_result(result, journal)
    outcome = FixOutcome(result, written)
    if args.output_format == "json":
        out.write(render_refine_json(result, written=written))
    else:
        out.write(render_refine(result, written=written))
    if outcome.findings_remain(settings.fail_on) or (args.exit_non_zero_on_fix and written):
        return EXIT_FINDINGS
    return EXIT_CLEAN


_SKIP_HINT = (
    " To commit now without coderefine: SKIP=coderefine git commit ... ; to run the hook without a model "
    '(signals only): hook-mode = "signals" in [tool.coderefine], or CODEREFINE_HOOK_MODE=signals.'
)


def commit_message_intent(text: str) -> str:
    """The commit message without git's comment lines and anything below the scissors line."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("# ------------------------ >8 ------------------------"):
            break
        if not line.startswith("#"):
            lines.append(line)
    return "\n".join(lines).strip()


def _command_hook(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.cache import ReviewCache
    from coderefine.config import load_settings
    from coderefine.errors import GitError, InputError, ModelError
    from coderefine.gitio import GitRepo
    from coderefine.hook import Hook
    from coderefine.lock import run_lock
    from coderefine.models.factory import make_model
    from coderefine.runner import SubprocessRunner
    from coderefine.writes import Journal

    cwd = Path.cwd()
    repo = GitRepo.find(cwd)
    if repo is None:
        raise GitError("the hook reviews what is staged: run it inside a git repository")
    flags = _flags(args)
    if args.check:
        flags["hook_mode"] = "check"
    if args.mode:
        flags["hook_mode"] = args.mode
    if args.timeout is not None:
        flags["hook_timeout"] = args.timeout
    settings = load_settings(repo.root, os.environ, flags)
    files = list(args.files)
    intent = args.intent or settings.intent
    if args.commit_msg:
        if not files:
            raise InputError("--commit-msg needs the commit message file (pre-commit passes it)")
        message_file = files.pop(0)
        try:
            message = commit_message_intent(message_file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"{message_file}: cannot read the commit message ({exc.strerror})") from exc
        intent = message or intent
    hook = Hook(
        repo,
        settings,
        mode=settings.hook_mode,  # type: ignore[arg-type]
        intent=intent,
        model_factory=lambda: make_model(settings.model, settings, os.environ),
        runner=SubprocessRunner(),
        environ=os.environ,
        cache=ReviewCache.for_project(repo.root, repo.git_dir, settings.cache_max_entries),
    )
    journal = Journal.for_project(repo.root, repo.git_dir)
    try:
        if settings.hook_mode == "fix":
            with run_lock(journal.lock_path, on_wait=_warn):
                _recover(journal)
                result = hook.run(files, cwd=cwd, timeout=settings.hook_timeout)
        else:
            result = hook.run(files, cwd=cwd, timeout=settings.hook_timeout)
    except ModelError as exc:
        raise ModelError(f"{exc}.{_SKIP_HINT}") from exc
    out.write(result.render())
    return result.exit_code


def _command_install_hook(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.errors import GitError
    from coderefine.githook import install_hook
    from coderefine.gitio import GitRepo

    repo = GitRepo.find(Path.cwd())
    if repo is None:
        raise GitError("install-hook needs a git repository; run it inside one")
    target = install_hook(repo.hooks_dir(), sys.executable, args.force)
    out.write(f"coderefine: installed {target}; skip it once with SKIP=coderefine git commit ...\n")
    return EXIT_CLEAN


def _command_cache(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.cache import ReviewCache
    from coderefine.change import project_root
    from coderefine.gitio import GitRepo

    cwd = Path.cwd()
    repo = GitRepo.find(cwd)
    root = project_root(cwd, repo)
    cache = ReviewCache.for_project(root, repo.git_dir if repo else None, 1)
    if args.action == "clear":
        out.write(f"coderefine cache: removed {cache.clear()} entries from {cache.folder}\n")
    else:
        out.write(f"coderefine cache: {len(cache)} entries in {cache.folder}\n")
    return EXIT_CLEAN


_REVIEW_FORMATS = ("text", "json", "markdown", "sarif", "github", "gitlab")


def _parse_outputs(values: list[str] | None) -> list[tuple[str, str | None]]:
    from coderefine.errors import UsageError

    outputs: list[tuple[str, str | None]] = []
    for value in values or ["text"]:
        name, _, path = value.partition("=")
        if name not in _REVIEW_FORMATS:
            raise UsageError(
                f"unknown format '{name}'; choose from {', '.join(_REVIEW_FORMATS)} (FORMAT or FORMAT=FILE)"
            )
        outputs.append((name, path or None))
    return outputs


def _command_review(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.change import from_branch
    from coderefine.config import load_settings
    from coderefine.errors import GitError, MissingKeyError
    from coderefine.gitio import GitRepo
    from coderefine.models.factory import make_model
    from coderefine.report import github, gitlab, sarif
    from coderefine.report import review as review_report
    from coderefine.review import choose_intent, run_review
    from coderefine.runner import SubprocessRunner

    outputs = _parse_outputs(args.output)
    repo = GitRepo.find(Path.cwd())
    if repo is None:
        raise GitError("review needs a git repository: run it in a checkout of the pull request")
    settings = load_settings(repo.root, os.environ, _flags(args))
    change = from_branch(repo, args.base, head=args.head, max_bytes=settings.max_file_kib * 1024)
    intent, source = choose_intent(
        os.environ.get("GITHUB_EVENT_PATH"), change.messages, args.intent, settings.intent
    )
    model = None
    note = ""
    if args.no_model:
        note = "The model step was skipped (--no-model): signals only."
    else:
        try:
            model = make_model(settings.model, settings, os.environ)
        except MissingKeyError:
            if args.require_model:
                raise
            note = (
                "The model step was skipped: no ANTHROPIC_API_KEY (pull requests from forks get no secrets). "
                "Signals only."
            )
    head_sha = repo.rev_parse(args.head)
    report = run_review(
        change,
        settings,
        model,
        SubprocessRunner(),
        os.environ,
        repo.project_files(),
        intent=intent,
        intent_source=source,
        head=head_sha,
        populate_tree=lambda dest: repo.export_commit(head_sha, dest),
        model_note=note,
    )
    renderers = {
        "text": review_report.render_text,
        "json": review_report.render_json,
        "markdown": review_report.render_markdown,
        "sarif": sarif.render_sarif,
        "github": github.render_annotations,
        "gitlab": gitlab.render_gitlab,
    }
    for name, path in outputs:
        text = renderers[name](report)
        if path:
            Path(path).write_text(text, encoding="utf-8")
        else:
            out.write(text)
        if name == "github":
            github.append_step_summary(report, os.environ)
    if args.github_review:
        from coderefine.github_api import GitHubReviewer

        published = GitHubReviewer.from_environment(os.environ).publish(report)
        print(
            f"coderefine: review published: {len(published.posted)} new comments, "
            f"{len(published.kept)} kept, "
            f"{len(published.resolved)} resolved, {len(published.moved_to_summary)} moved to the summary",
            file=sys.stderr,
        )
    return report.exit_code(settings.fail_on)


def _command_bench(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.bench.harness import run_bench
    from coderefine.bench.models import DoNothingModel, OracleModel
    from coderefine.bench.report import markdown, write_reports
    from coderefine.bench.strategies import strategies
    from coderefine.bench.tasks import DATA, load_tasks, select_tasks
    from coderefine.config import load_settings
    from coderefine.models.base import Model
    from coderefine.models.factory import make_model
    from coderefine.runner import SubprocessRunner

    settings = load_settings(Path.cwd(), os.environ, _flags(args))
    suite = Path(args.suite) if args.suite else DATA
    tasks = select_tasks(
        load_tasks(suite), ids=args.tasks.split(",") if args.tasks else (), limit=args.limit, seed=args.seed
    )
    chosen = strategies(args.strategies)
    if settings.model == "oracle":
        oracles: dict[str, Model] = {t.task_id: OracleModel(t) for t in tasks}
        model_for = lambda task: oracles[task.task_id]  # noqa: E731
    elif settings.model == "do-nothing":
        nothing = DoNothingModel()
        model_for = lambda task: nothing  # noqa: E731
    else:
        shared = make_model(settings.model, settings, os.environ)
        model_for = lambda task: shared  # noqa: E731
    total = len(tasks) * len(chosen)
    done = 0

    def report(result: Any, cached: bool) -> None:
        nonlocal done
        done += 1
        state = "fixed" if result.fixed else ("error: " + result.error if result.error else "not fixed")
        note = (
            " (cached)" if cached else f" ({result.rounds} rounds, ${result.cost:.4f}, {result.seconds:.1f}s)"
        )
        _warn(f"[{done}/{total}] {result.strategy} {result.task_id}: {state}{note}")

    out_dir = Path(args.out)
    results = run_bench(
        tasks,
        chosen,
        model_for,
        settings,
        SubprocessRunner(),
        os.environ,
        cache_dir=None if args.no_cache else out_dir / "cache",
        jobs=args.jobs,
        on_result=report,
    )
    meta = {
        "suite": suite.name,
        "model": settings.model,
        "tasks": len(tasks),
        "seed": args.seed,
        "strategies": [s.name for s in chosen],
    }
    written = write_reports(results, meta, out_dir)
    out.write(markdown(results, meta))
    out.write("\nwrote " + ", ".join(str(p) for p in written) + "\n")
    return EXIT_CLEAN


def _command_undo(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.change import project_root
    from coderefine.gitio import GitRepo
    from coderefine.lock import run_lock
    from coderefine.writes import Journal

    cwd = Path.cwd()
    repo = GitRepo.find(cwd)
    root = project_root(cwd, repo)
    journal = Journal.for_project(root, repo.git_dir if repo else None)
    with run_lock(journal.lock_path, on_wait=_warn):
        result = journal.undo(force=args.force)
    out.write(f"coderefine undo: restored {', '.join(result.restored) or 'nothing (already as before)'}\n")
    return EXIT_CLEAN


_COMMANDS = {
    "check": _command_check,
    "fix": _command_fix,
    "draft": _command_fix,
    "hook": _command_hook,
    "review": _command_review,
    "bench": _command_bench,
    "install-hook": _command_install_hook,
    "cache": _command_cache,
    "undo": _command_undo,
}


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, stdin: TextIO | None = None) -> int:
    """Run coderefine with ``argv`` and return the exit code (never raises, but for SystemExit of --help)."""
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(out)
        return EXIT_CLEAN
    previous = _handle_sigterm()
    try:
        return _COMMANDS[args.command](args, out, stdin or sys.stdin)
    except CoderefineError as exc:
        print(f"coderefine: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("coderefine: interrupted; no file was left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # the last line of defence: a bug, reported with what is needed to fix it
        print(
            f"coderefine: internal error (coderefine {__version__}, Python {sys.version.split()[0]}); "
            "please report it with this traceback:",
            file=sys.stderr,
        )
        traceback.print_exc()
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _handle_sigterm() -> Any:
    """Treat SIGTERM like Ctrl-C, so that the same clean-up runs (temporary trees, half-done writes)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_interrupt)
