"""`check`, `fix`, `draft` and `undo`: the commands a developer runs on their own files."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from coderefine.cli.commands import (
    load,
    recovered,
    refuse_foreign,
    require_change_source,
    settings_flags,
    warn,
)
from coderefine.errors import EXIT_CLEAN, EXIT_FINDINGS

if TYPE_CHECKING:
    from coderefine.signals.warm import WarmPytest
    from coderefine.timings import Timeline


def _with_early_server(args: argparse.Namespace, run: Callable[[WarmPytest | None], int]) -> int:
    """``run`` with a warm test server started before anything else: its import of pytest and the
    plugins overlaps finding the change, the imports after it and the model's set-up (about 0.1 s of a
    `check` whose floor is one pytest run). Closing it again afterwards is harmless."""
    from coderefine.signals.prestart import early

    started = early(Path.cwd(), os.environ) if args.tests is not False else None
    try:
        return run(started)
    finally:
        if started is not None:
            started.close()


def command_check(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    return _with_early_server(args, lambda started: _check(args, out, stdin, started))


def _check(args: argparse.Namespace, out: TextIO, stdin: TextIO, started: WarmPytest | None) -> int:
    require_change_source(args)
    repo, settings, change = load(args, stdin)
    if not change.files:
        out.write("coderefine check: no Python files in the change; nothing to do\n")
        return EXIT_CLEAN
    if getattr(args, "rules", False):
        return _print_rules(args, repo, settings, change, out)
    from coderefine.project.workspace import tree_files
    from coderefine.signals.prestart import prestart

    files = tree_files(change.root, repo)
    # The server learns its names before the heavier imports below, which its plugin loading overlaps.
    warm = prestart(change.root, settings, os.environ, files, started)
    from coderefine.project.runner import SubprocessRunner
    from coderefine.report.jsonout import render_check_json
    from coderefine.report.text import render_check
    from coderefine.signals.check import run_check

    result = run_check(change, settings, SubprocessRunner(), os.environ, files, warm)
    if args.output_format == "json":
        out.write(render_check_json(result, settings.fail_on))
    else:
        out.write(render_check(result, settings.fail_on, explain=args.explain))
    return EXIT_FINDINGS if result.failed(settings.fail_on) else EXIT_CLEAN


def _print_rules(args: argparse.Namespace, repo: Any, settings: Any, change: Any, out: TextIO) -> int:
    """``check --rules``: each file's rules whole, then the section one request gets (its tokens, what
    the budget cut), read from the version the door that reviews such a change reads them from."""
    from coderefine.project.rules import commit_reader, disk_reader
    from coderefine.refiner.rules import ProjectRules, render_plain, trusted_rules
    from coderefine.refiner.sections import fence

    if repo is not None and args.staged and repo.has_head():
        rules, where = trusted_rules(settings, commit_reader(repo, "HEAD")), "HEAD (as the hook reads them)"
    elif repo is not None and change.base:
        rules = trusted_rules(settings, commit_reader(repo, change.base))
        where = f"the merge base {change.base[:12]} (as review reads them)"
    else:
        rules, where = ProjectRules(settings, disk_reader(change.root)), "the files on disk"
    out.write(f"Project rules read from {where}.\n\n")
    for path in change.paths:
        out.write(render_plain(rules.sources([path]), path) + "\n")
    section = rules.section(change.paths, fence)
    if section.text:
        budget = f"budget {rules.tokens}" if rules.tokens else "no budget"
        out.write(
            f"The critic's request for these files carries about {section.tokens} tokens of rules ({budget})"
        )
        out.write(f"; cut: {'; '.join(section.cut)}.\n" if section.cut else ", nothing cut.\n")
    return EXIT_CLEAN


def command_fix(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    if args.command != "draft":
        from coderefine.cli.commands.sweep import command_sweep, is_sweep

        if is_sweep(args):
            return command_sweep(args, out, stdin)  # its files' runs start their own servers
    from coderefine.signals.prestart import early
    from coderefine.timings import Timeline, numbered
    from coderefine.timings import render as render_timings

    # Always kept (a few spans); printed with --timings. Its first phase is the interpreter's start and
    # coderefine's imports up to here.
    timeline = Timeline()
    timeline.since_start("start-up and imports")
    report: list[str] = []
    with timeline.phase("test server started"):
        started = early(Path.cwd(), os.environ) if args.tests is not False else None
    try:
        code, settings = _fix(args, stdin, started, timeline, report)
    finally:
        if started is not None:
            with timeline.phase("closing"):
                started.close()
    rows = numbered(timeline.rows())
    if settings is not None and settings.timings:
        sys.stderr.write(render_timings(rows))
    for text in report:
        out.write(text(rows) if callable(text) else text)
    return code


def _fix(
    args: argparse.Namespace,
    stdin: TextIO,
    started: WarmPytest | None,
    timeline: Timeline,
    report: list[Any],
) -> tuple[int, Any]:
    """The run; what it prints goes into ``report`` (a text, or a function of the timing rows, which
    are complete only once everything is closed)."""
    with timeline.phase("imports"):
        from coderefine.config import load_settings
        from coderefine.errors import UsageError
        from coderefine.models.factory import prefetch_sdks
        from coderefine.project.change import draft_change, project_root
        from coderefine.project.gitio import GitRepo

    with timeline.phase("settings and change"):
        if args.command == "draft":
            if not args.intent:
                raise UsageError("draft needs --intent TEXT: say what the new code should do")
            cwd = Path.cwd()
            target = Path(os.path.normpath(cwd / args.file))
            refuse_foreign([args.file], cwd, args.command)
            repo = GitRepo.find(target.parent if target.parent.exists() else cwd)
            settings = load_settings(project_root(target.parent, repo), os.environ, settings_flags(args))
            prefetch_sdks(settings)
            change = draft_change(args.file, cwd=cwd, repo=repo, max_bytes=settings.max_file_kib * 1024)
        else:
            require_change_source(args)
            repo, settings, change = load(args, stdin, on_settings=prefetch_sdks)
    if not change.files:
        report.append(f"coderefine {args.command}: no Python files in the change; nothing to do\n")
        return EXIT_CLEAN, settings
    from coderefine.project.workspace import tree_files
    from coderefine.signals.prestart import prestart

    with timeline.phase("project files"):
        files = tree_files(change.root, repo)
    with timeline.phase("interpreter and test server"):
        # prestart hands on the early server, or closes one of the wrong interpreter and starts another.
        warm = prestart(change.root, settings, os.environ, files, started)
    try:
        return _run_fix(args, report, repo, settings, change, files, warm, timeline), settings
    finally:
        if warm is not None:
            # Also when the run failed before its Evaluator took it (closing twice is harmless).
            with timeline.phase("closing"):
                warm.close()


def _run_fix(
    args: argparse.Namespace,
    report: list[Any],
    repo: Any,
    settings: Any,
    change: Any,
    files: list[str],
    warm: WarmPytest | None,
    timeline: Timeline,
) -> int:
    with timeline.phase("imports"):
        from coderefine.api import refine_change
        from coderefine.models.factory import make_role_model
        from coderefine.project.runner import SubprocessRunner
        from coderefine.report.progress import StreamProgress
        from coderefine.report.refine import render_refine, render_refine_json

    drafting = args.command == "draft"
    record = Path(args.record) if args.record else None
    with timeline.phase("model set-up"):
        batch = None
        if getattr(args, "batch", False):
            from coderefine.models.batch import batch_run
            from coderefine.models.batch_state import state_path

            batch = batch_run(state_path(change.root, repo.git_dir if repo else None), progress=sys.stderr)
        model = make_role_model(settings, os.environ, record=record, progress=sys.stderr, batch=batch)
    progress = StreamProgress(sys.stderr, sys.stderr.isatty())
    # A change read before another run's write is read again once the lock is ours (not a patch read
    # from stdin, which cannot be read twice, nor a draft's new file).
    reload = None if drafting or args.patch == "-" else lambda: load(args, io.StringIO())[2]
    try:
        outcome = refine_change(
            change,
            settings,
            model,
            repo,
            write=not args.dry_run,
            runner=SubprocessRunner(),
            environ=os.environ,
            intent=args.intent,
            draft=drafting,
            progress=progress,
            on_wait=warn,
            on_recover=recovered,
            warm=warm,
            files=files,
            timeline=timeline,
            reload=reload,
        )
    finally:
        progress.done()
    result, written = outcome.result, outcome.written
    not_written = outcome.not_written or ("a dry run (--dry-run, --diff)" if args.dry_run else "")
    if args.output_format == "json":
        report.append(
            lambda rows: render_refine_json(result, written=written, not_written=not_written, phases=rows)
        )
    else:
        report.append(render_refine(result, written=written, not_written=not_written))
    if outcome.findings_remain(settings.fail_on) or (args.exit_non_zero_on_fix and written):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def command_undo(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.api import undo

    result = undo(root=Path.cwd(), force=args.force, on_wait=warn)
    out.write(f"coderefine undo: restored {', '.join(result.restored) or 'nothing (already as before)'}\n")
    return EXIT_CLEAN
