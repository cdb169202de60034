"""`fix` over folders, ``--all`` or ``--exclude``: a sweep, one refine per file."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from coderefine.cli.commands import project_of, recovered, settings_flags, warn
from coderefine.errors import EXIT_CLEAN

if TYPE_CHECKING:
    from coderefine.project.cache import ReviewCache
    from coderefine.project.gitio import GitRepo


def is_sweep(args: argparse.Namespace) -> bool:
    """A folder, ``--all``, ``--exclude`` or ``--sweep`` makes a sweep; files named one by one are one
    change. ``--jobs`` and ``--budget`` need a sweep."""
    from coderefine.errors import UsageError

    folder = any((Path.cwd() / f).is_dir() for f in getattr(args, "files", ()))
    sweep = bool(folder or args.all_files or args.exclude or args.sweep)
    if sweep and (args.staged or args.base is not None or args.patch is not None):
        raise UsageError(
            "a sweep refines files as they are; drop --staged, --base and --patch, or name files"
        )
    if not sweep and (args.jobs is not None or args.budget is not None or args.shard is not None):
        raise UsageError(
            "--jobs, --budget and --shard apply to sweeps: name a folder, use --all, or add --sweep to "
            "refine each file on its own"
        )
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.budget is not None and args.budget <= 0:
        raise UsageError(f"--budget must be a positive number of dollars, not {args.budget:g}")
    return sweep


def command_sweep(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.config import load_settings
    from coderefine.doors.review.shard import parse_shard, shard_files
    from coderefine.doors.sweep.report import SweepProgress, render_sweep, render_sweep_json
    from coderefine.doors.sweep.run import Sweep
    from coderefine.doors.sweep.select import select_files
    from coderefine.models.factory import make_role_model
    from coderefine.models.ratelimit import rate_limited
    from coderefine.project.change import project_root
    from coderefine.project.runner import SubprocessRunner

    cwd = Path.cwd()
    first = Path(os.path.normpath(cwd / args.files[0])) if args.files else cwd
    repo, named = project_of(args, cwd, args.files)
    root = named or project_root(first, repo)
    settings = load_settings(root, os.environ, settings_flags(args))
    shard = parse_shard(args.shard) if args.shard else None
    files = select_files(root, args.files, args.all_files, args.exclude, repo=repo, cwd=cwd)
    if shard is not None:
        files = shard_files([(f, _size(root / f)) for f in files], *shard)
        if not files:
            out.write(
                f"coderefine fix: shard {args.shard} has no files (fewer files than shards); nothing to do\n"
            )
            return EXIT_CLEAN
    record = Path(args.record) if args.record else None
    jobs = args.jobs or settings.jobs
    batch = None
    if args.batch:
        from coderefine.models.batch import batch_run
        from coderefine.models.batch_state import state_path

        # One batch run for every worker: a round's requests from all files go out as one batch.
        batch = batch_run(state_path(root, repo.git_dir if repo else None), workers=jobs, progress=sys.stderr)
    made = make_role_model(settings, os.environ, record=record, progress=sys.stderr, batch=batch)
    model = rate_limited(made, settings)
    progress = SweepProgress(sys.stderr, sys.stderr.isatty())
    sweep = Sweep(
        root,
        repo,
        settings,
        model,
        runner=SubprocessRunner(),
        environ=os.environ,
        cache=sweep_cache(root, repo, len(files), settings.cache_max_entries),
        intent=args.intent,
        write=not args.dry_run,
        jobs=jobs,
        budget=args.budget or 0.0,
        fail_on_fix=args.exit_non_zero_on_fix,
        listener=progress,
    )
    try:
        result = sweep.run(files, on_wait=warn, on_recover=recovered)
    finally:
        progress.done()
    if args.output_format == "json":
        out.write(render_sweep_json(result))
    else:
        out.write(render_sweep(result, "coderefine " + shlex.join(sys.argv[1:])))
    if result.interrupted:
        warn("interrupted: files marked 'interrupted' were left as they were; run the same command again")
    return result.exit_code


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def sweep_cache(root: Path, repo: GitRepo | None, files: int, at_least: int) -> ReviewCache:
    """The sweep's own results folder, next to the review cache, large enough to hold a whole sweep."""
    from coderefine.project.cache import ReviewCache

    base = ReviewCache.for_project(root, repo.git_dir if repo is not None else None, at_least)
    return ReviewCache(base.folder.parent / "sweep", max(at_least, 2 * files + 100))
