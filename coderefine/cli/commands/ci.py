"""`review`: the CI door."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from coderefine.cli.commands import settings_flags

if TYPE_CHECKING:
    from coderefine.config import Settings
    from coderefine.doors.review.basecache import BaseResults
    from coderefine.doors.review.run import ReviewReport
    from coderefine.project.change import Change
    from coderefine.project.gitio import GitRepo
    from coderefine.signals.warm import WarmPytest

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
        if path:
            _check_output_path(value, Path(path))
        outputs.append((name, path or None))
    return outputs


def _check_output_path(value: str, path: Path) -> None:
    """Refuse an output file that cannot be written, before any model call is paid for."""
    from coderefine.errors import UsageError

    if path.is_dir():
        raise UsageError(f"--format {value}: '{path}' is a directory; name a file, such as {path / 'out'}")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"--format {value}: the folder '{folder}' does not exist; create it or name another")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"--format {value}: '{path}' cannot be written; check its permissions")


def command_review(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.signals.prestart import early

    # Started before anything else: pytest's import in the warm server overlaps the review's own start
    # (imports, git, the model's SDK). Closing it again after the review is harmless.
    started = early(Path.cwd(), os.environ) if args.tests is not False else None
    try:
        return _review(args, out, started)
    finally:
        if started is not None:
            started.close()


def _review(args: argparse.Namespace, out: TextIO, started: WarmPytest | None) -> int:
    from coderefine.config import load_settings
    from coderefine.doors.review.run import choose_intent, run_review
    from coderefine.doors.review.shard import parse_shard
    from coderefine.errors import GitError, MissingKeyError, UsageError
    from coderefine.models.factory import make_role_model
    from coderefine.models.ratelimit import RateLimits, rate_limited
    from coderefine.project.change import from_branch
    from coderefine.project.gitio import GitRepo
    from coderefine.project.runner import SubprocessRunner
    from coderefine.signals.prestart import prestart

    outputs = _parse_outputs(args.output)
    shard = parse_shard(args.shard) if args.shard else None
    jobs = args.jobs if args.jobs is not None else 1
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    if shard is not None and args.github_review:
        raise UsageError(
            "--github-review with --shard: a shard sees only its files, so one shard's review would mark the "
            "others' comments resolved; publish once from 'coderefine merge SHARD.json... --github-review'"
        )
    repo = GitRepo.find(Path.cwd())
    if repo is None:
        raise GitError("review needs a git repository: run it in a checkout of the pull request")
    settings = load_settings(repo.root, os.environ, settings_flags(args))
    if args.budget is not None:
        if args.budget <= 0:
            raise UsageError(f"--budget must be a positive number of dollars, not {args.budget:g}")
        settings = dataclasses.replace(settings, max_cost=args.budget)
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
            batch = None
            if args.batch:
                from coderefine.models.batch import batch_run
                from coderefine.models.batch_state import state_path

                batch = batch_run(state_path(repo.root, repo.git_dir), workers=jobs, progress=sys.stderr)
            model = make_role_model(settings, os.environ, progress=sys.stderr, batch=batch)
            if jobs > 1 or RateLimits.of(settings) != RateLimits():
                # Concurrent files share the provider's limits, as a sweep's workers do.
                model = rate_limited(model, settings)
        except MissingKeyError as exc:
            if args.require_model:
                raise
            note = (
                f"The model step was skipped: no {_credentials(exc)} (pull requests from forks get no "
                "secrets). Signals only."
            )
    head_sha = repo.rev_parse(args.head)
    # A checkout of the head (CI's usual case) is copied from the working tree, which a persistent copy
    # follows file by file; any other head is exported from git in full.
    tracked = repo.clean_at(head_sha)
    # The working tree also holds what a build wrote and git ignores (a generated version.py): the head's
    # package imports it.
    files = (
        sorted({*tracked, *repo.ignored_sources(tracked)}) if tracked is not None else repo.project_files()
    )
    report = run_review(
        change,
        settings,
        model,
        SubprocessRunner(),
        os.environ,
        files,
        intent=intent,
        intent_source=source,
        head=head_sha,
        populate_tree=None if tracked is not None else lambda dest: repo.export_commit(head_sha, dest),
        model_note=note,
        shard=shard,
        jobs=jobs,
        on_file=_ReviewProgress(sys.stderr) if model is not None else None,
        warm=prestart(repo.root, settings, os.environ, files, started),
        base_results=_base_results(repo, change, head_sha, settings),
    )
    if shard is None:  # a shard's report is held back once merged, where it is published
        report = held_back(report, settings, repo, args.github_review)
    write_outputs(report, outputs, out)
    if args.github_review:
        publish(report)
    return report.exit_code(settings.fail_on)


class _ReviewProgress:
    """A line on stderr as each file's critique starts and ends: counts, cost so far, time left (the mean
    file so far), and the files it is waiting on."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._start = clock()

    def __call__(self, done: int, total: int, cost: float, running: tuple[str, ...] = ()) -> None:
        elapsed = self._clock() - self._start
        left = f", ~{elapsed / done * (total - done):.0f}s left" if done else ""
        waiting = f"; critiquing {', '.join(running)}" if running else ""
        self._stream.write(
            f"coderefine review: {done}/{total} files critiqued, ${cost:.2f} so far, "
            f"{elapsed:.0f}s elapsed{left}{waiting}\n"
        )
        self._stream.flush()


def write_outputs(report: ReviewReport, outputs: list[tuple[str, str | None]], out: TextIO) -> None:
    """Each ``--format`` output of a review (or of merged shards), to its file or to ``out``."""
    from coderefine.doors.review import github, gitlab, sarif
    from coderefine.doors.review import render as review_report

    summary = bool(os.environ.get("GITHUB_STEP_SUMMARY"))  # written beside the annotations
    renderers = {
        "text": review_report.render_text,
        "json": review_report.render_json,
        "markdown": review_report.render_markdown,
        "sarif": sarif.render_sarif,
        "github": lambda report: github.render_annotations(report, summary),
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


def held_back(report: ReviewReport, settings: Settings, repo: GitRepo | None, github: bool) -> ReviewReport:
    """``report`` without the findings a person dismissed (the ignore file; on GitHub, resolved threads
    and thumbs-down reactions), said on stderr."""
    from coderefine.doors.review.dismissed import apply_dismissals
    from coderefine.doors.review.github_api import GitHubReviewer

    reviewer = GitHubReviewer.from_environment(os.environ) if github else None
    report, note = apply_dismissals(report, settings.ignore_file, repo, reviewer)
    if report.held_back:
        print(f"coderefine: {len(report.held_back)} dismissed finding(s) held back", file=sys.stderr)
    if note:
        print(f"coderefine: {note}", file=sys.stderr)
    return report


def publish(report: ReviewReport) -> None:
    """The pull request review (``--github-review``): inline comments and the one summary comment."""
    from coderefine.doors.review.github_api import GitHubReviewer

    published = GitHubReviewer.from_environment(os.environ).publish(report)
    print(
        f"coderefine: review published: {len(published.posted)} new comments, "
        f"{len(published.kept)} kept, "
        f"{len(published.resolved)} resolved, {len(published.moved_to_summary)} moved to the summary",
        file=sys.stderr,
    )


def command_merge(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.config import load_settings
    from coderefine.doors.review.merge import load_shard, merge_shards
    from coderefine.project.gitio import GitRepo

    outputs = _parse_outputs(args.output)
    shards = [load_shard(Path(name)) for name in args.reports]
    report = merge_shards(shards, allow_partial=args.allow_partial)
    # The merge job may run without a checkout; with one, [tool.coderefine] fail-on counts as in review.
    repo = GitRepo.find(Path.cwd())
    root = repo.root if repo is not None else Path.cwd()
    flags = {"fail_on": args.fail_on} if args.fail_on else {}
    settings = load_settings(root, os.environ, flags)
    report = held_back(report, settings, repo, args.github_review)
    write_outputs(report, outputs, out)
    if args.github_review:
        publish(report)
    return report.exit_code(settings.fail_on)


def _credentials(exc: Exception) -> str:
    """What was missing, from the first line of the message (``no X for the model 'M'.``)."""
    first = str(exc).splitlines()[0] if str(exc) else "credentials"
    return first.removeprefix("no ").removesuffix(" Ways in:").rstrip(".")


def _base_results(repo: GitRepo, change: Change, head_sha: str, settings: Settings) -> BaseResults | None:
    """The base's test results kept between reviews, in the project's review cache (the review's tree is
    always exactly the head commit: its clean checkout, or the commit exported)."""
    from coderefine.doors.review.basecache import base_results
    from coderefine.project.cache import ReviewCache
    from coderefine.signals.interpreter import find_interpreter

    if not settings.tests:
        return None
    cache = ReviewCache.for_project(repo.root, repo.git_dir, settings.cache_max_entries)
    python = find_interpreter(repo.root, settings.python, os.environ)
    return base_results(change, repo.blob_ids(head_sha), settings, python, cache)
