"""The commands behind the CLI: each turns parsed arguments into library calls and an exit code.

Library modules are imported inside the functions, so that importing a command module costs nothing
and ``--version`` and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
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

    cwd = Path.cwd()
    patch_text = read_patch(args, stdin)
    first = Path(os.path.normpath(cwd / args.files[0])) if args.files else cwd
    repo, root = project_of(args, cwd, args.files)
    settings = load_settings(root or project_root(first, repo), os.environ, settings_flags(args))
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
        root=root,
    )
    return repo, settings, change


def project_of(args: argparse.Namespace, cwd: Path, files: Sequence[Path]) -> tuple[Any, Path | None]:
    """The git repository of the named files, and the project folder ``--root`` names (None: found from
    the files, as their git top level or nearest pyproject.toml).

    Without ``--root``, a file outside the git repository of the current folder is refused: it would be
    taken as a project of its own (its folder and every test below it) and reviewed, and paid for, there.
    """
    from coderefine.errors import UsageError
    from coderefine.project.gitio import GitRepo

    given = getattr(args, "root", None)
    if given is not None:
        folder = Path(os.path.normpath(cwd / given))
        if not folder.is_dir():
            raise UsageError(f"--root {given}: not a folder; name the project folder")
        repo = GitRepo.find(folder)
        return repo, (repo.root if repo is not None else folder)
    refuse_foreign(files, cwd, args.command)
    first = Path(os.path.normpath(cwd / files[0])) if files else cwd
    return GitRepo.find(first if first.exists() else first.parent), None


def refuse_foreign(files: Sequence[Path], cwd: Path, command: str) -> None:
    """Refuse a file outside the git repository the current folder is in, saying how to review it."""
    from coderefine.errors import InputError
    from coderefine.project.change import project_root
    from coderefine.project.gitio import GitRepo

    outside = [f for f in files if not Path(os.path.normpath(cwd / f)).is_relative_to(cwd)]
    here = GitRepo.find(cwd) if outside else None
    if here is None:
        return  # every file below the current folder, or no repository to stand in
    for name in outside:
        absolute = Path(os.path.normpath(cwd / name))
        if absolute.resolve().is_relative_to(here.root):
            continue
        own = GitRepo.find(absolute if absolute.exists() else absolute.parent)
        folder = own.root if own is not None else project_root(absolute, None)
        rel = os.path.relpath(absolute, folder)
        raise InputError(
            f"{name}: outside the git repository you are in ({here.root}), so not part of its project. "
            f"Review it from its own project: cd {folder} && coderefine {command} {rel}; or name that "
            f"project here with --root {folder}"
        )


def require_change_source(args: argparse.Namespace) -> None:
    from coderefine.errors import UsageError

    if not args.files and not args.staged and args.base is None and args.patch is None:
        raise UsageError(f"name the files to {args.command}, or use --staged, --base REF or --patch FILE")
