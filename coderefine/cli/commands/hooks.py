"""`hook`, `install-hook` and `cache`: the pre-commit door."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from coderefine.cli.commands import recover, settings_flags, warn
from coderefine.errors import EXIT_CLEAN

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


def command_hook(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.config import load_settings
    from coderefine.doors.hook import Hook
    from coderefine.errors import GitError, InputError, ModelError
    from coderefine.models.factory import make_role_model
    from coderefine.project.cache import ReviewCache
    from coderefine.project.gitio import GitRepo
    from coderefine.project.lock import run_lock
    from coderefine.project.runner import SubprocessRunner
    from coderefine.project.writes import Journal

    cwd = Path.cwd()
    repo = GitRepo.find(cwd)
    if repo is None:
        raise GitError("the hook reviews what is staged: run it inside a git repository")
    flags = settings_flags(args)
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
        model_factory=lambda: make_role_model(settings, os.environ),
        runner=SubprocessRunner(),
        environ=os.environ,
        cache=ReviewCache.for_project(repo.root, repo.git_dir, settings.cache_max_entries),
    )
    journal = Journal.for_project(repo.root, repo.git_dir)
    try:
        if settings.hook_mode == "fix":
            with run_lock(journal.lock_path, on_wait=warn):
                recover(journal)
                result = hook.run(files, cwd=cwd, timeout=settings.hook_timeout)
        else:
            result = hook.run(files, cwd=cwd, timeout=settings.hook_timeout)
    except ModelError as exc:
        # The same class, so the exit code stays the cause's (4 for a provider that is unavailable).
        raise type(exc)(f"{exc}.{_SKIP_HINT}") from exc
    out.write(result.render())
    return result.exit_code


def command_install_hook(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.doors.githook import install_hook
    from coderefine.errors import GitError
    from coderefine.project.gitio import GitRepo

    repo = GitRepo.find(Path.cwd())
    if repo is None:
        raise GitError("install-hook needs a git repository; run it inside one")
    target = install_hook(repo.hooks_dir(), sys.executable, args.force)
    out.write(f"coderefine: installed {target}; skip it once with SKIP=coderefine git commit ...\n")
    return EXIT_CLEAN


def command_cache(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from coderefine.project.basetree import TreeCache, tree_cache_folder
    from coderefine.project.cache import ReviewCache
    from coderefine.project.change import project_root
    from coderefine.project.gitio import GitRepo

    cwd = Path.cwd()
    repo = GitRepo.find(cwd)
    root = project_root(cwd, repo)
    cache = ReviewCache.for_project(root, repo.git_dir if repo else None, 1)
    folder = tree_cache_folder(os.environ)
    trees = TreeCache(folder) if folder is not None else None
    if args.action == "clear":
        out.write(f"coderefine cache: removed {cache.clear()} entries from {cache.folder}\n")
        if trees is not None and trees.project_folder(root).exists():
            if trees.clear(root):
                out.write(f"coderefine cache: removed the test trees in {trees.project_folder(root)}\n")
            else:
                out.write("coderefine cache: the test trees are in use by a run; clear again when it ends\n")
    else:
        out.write(f"coderefine cache: {len(cache)} entries in {cache.folder}\n")
        if trees is not None and trees.project_folder(root).exists():
            out.write(f"coderefine cache: test trees in {trees.project_folder(root)}\n")
    return EXIT_CLEAN
