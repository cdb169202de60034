"""Which files a sweep works on: folders expanded, ``--all`` tracked Python files, ``--exclude`` globs.

A plain function of its inputs, so that other splits of the list (shards) stand on the same selection.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from coderefine.errors import InputError
from coderefine.project.change import PYTHON_SUFFIXES, relative_path
from coderefine.project.gitio import GitRepo
from coderefine.project.workspace import project_files


def excluded(path: str, globs: Sequence[str]) -> bool:
    """Whether a glob matches ``path`` (POSIX, relative to the root), its file name, or a folder it is in
    (by its path or its name), so ``tests``, ``tests/*``, ``*_pb2.py`` and ``src/legacy`` do what they
    say. As in ``fnmatch``, ``*`` also matches ``/``."""
    pure = PurePosixPath(path)
    folders = [p for p in pure.parents if p.as_posix() != "."]
    candidates = [path, pure.name, *(p.as_posix() for p in folders), *(p.name for p in folders)]
    return any(fnmatch.fnmatchcase(c, g.rstrip("/")) for g in globs for c in candidates)


def select_files(
    root: Path,
    paths: Sequence[str | os.PathLike[str]],
    all_tracked: bool = False,
    excludes: Sequence[str] = (),
    *,
    repo: GitRepo | None = None,
    cwd: Path | None = None,
) -> list[str]:
    """The Python files of a sweep, as sorted POSIX paths relative to ``root``.

    ``paths`` (relative to ``cwd``, default ``root``) are files or folders; a folder stands for the
    Python files in it that git tracks or would add (outside git: a walk that skips virtual environments
    and caches). ``all_tracked`` adds every Python file git tracks (outside git: every Python file of the
    walk). A file matching an ``excludes`` glob is left out, even when named.
    """
    here = cwd or root
    listing: list[str] | None = None
    chosen: set[str] = set()
    if all_tracked:
        names = repo.tracked_files() if repo is not None and repo.root == root else project_files(root, repo)
        chosen.update(n for n in names if n.endswith(PYTHON_SUFFIXES))
    for path in paths:
        absolute = Path(os.path.normpath(here / path))
        rel = relative_path(Path(path), root, here)
        if absolute.is_dir():
            if listing is None:
                listing = [n for n in project_files(root, repo) if n.endswith(PYTHON_SUFFIXES)]
            inside = [n for n in listing if rel == "." or PurePosixPath(n).is_relative_to(rel)]
            if not inside:
                raise InputError(f"{path}: a folder with no Python files in it; name another")
            chosen.update(inside)
        elif not absolute.exists():
            raise InputError(f"{path}: no such file or folder; check the path")
        elif not rel.endswith(PYTHON_SUFFIXES):
            raise InputError(f"{path}: not a Python file (.py or .pyi); name Python files or folders")
        else:
            chosen.add(rel)
    selected = sorted(n for n in chosen if not excluded(n, excludes))
    if not selected:
        what = "every file was excluded by --exclude" if chosen else "no Python files were selected"
        raise InputError(f"nothing to sweep: {what}; name a folder, a file, or use --all")
    return selected
