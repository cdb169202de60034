"""The commands behind the CLI: each turns parsed arguments into library calls and an exit code.

Library modules are imported inside the functions, so that importing a command module costs nothing
and ``--version`` and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO


def settings_flags(args: argparse.Namespace) -> dict[str, object]:
    names = (
        "tests",
        "python",
        "test_timeout",
        "fail_on",
        "rounds",
        "model",
        "author_model",
        "critic_model",
        "reviser_model",
        "intent",
        "timings",
    )
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def warn(message: str) -> None:
    # One write of the whole line: two threads' messages never run together on one line.
    sys.stderr.write(f"coderefine: {message}\n")
    sys.stderr.flush()


def recover(journal: Any) -> None:
    """Undo what an interrupted earlier write left half-done, and say so."""
    recovered(journal.recover())


def recovered(restored: tuple[str, ...]) -> None:
    if restored:
        warn(f"an earlier run was interrupted while writing; restored {', '.join(restored)} as they were")


def read_patch(args: argparse.Namespace, stdin: TextIO) -> str | None:
    from coderefine.errors import InputError

    if args.patch is None:
        return None
    if args.patch == "-":
        return stdin.read()
    try:
        return Path(args.patch).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{args.patch}: cannot read the patch ({exc.strerror})") from exc


def load(
    args: argparse.Namespace, stdin: TextIO, on_settings: Callable[[Any], None] | None = None
) -> tuple[Any, Any, Any]:
    """The repository, settings and change the arguments ask for; ``on_settings`` is called with the
    settings as soon as they are known, before the change is read."""
    from coderefine.config import load_settings
    from coderefine.project.change import load_change, project_root
    from coderefine.project.gitio import GitRepo

    cwd = Path.cwd()
    patch_text = read_patch(args, stdin)
    first = Path(os.path.normpath(cwd / args.files[0])) if args.files else cwd
    repo = GitRepo.find(first if first.exists() else first.parent)
    settings = load_settings(project_root(first, repo), os.environ, settings_flags(args))
    if on_settings is not None:
        on_settings(settings)
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


def require_change_source(args: argparse.Namespace) -> None:
    from coderefine.errors import UsageError

    if not args.files and not args.staged and args.base is None and args.patch is None:
        raise UsageError(f"name the files to {args.command}, or use --staged, --base REF or --patch FILE")
