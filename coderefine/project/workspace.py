"""An isolated copy of the project, where candidates are evaluated: never the user's working tree.

The copy holds the project's files (tracked and untracked-but-not-ignored in git; outside git, a walk
that skips virtual environments and caches), so tests find their data and configuration. It is made
once per run and reused: each evaluation only rewrites the files under review. With a ``TreeCache``
(``basetree.py``) the copy persists between runs and only the files that changed since are copied;
without one, or when all its slots are busy, it is a temporary copy removed on exit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from types import TracebackType

from coderefine.project.basetree import Slots
from coderefine.project.bulkcopy import BULK_MIN, tar_copy
from coderefine.project.gitio import GitRepo
from coderefine.project.slot import Slot

_SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "env",
    "__pycache__",
    "node_modules",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "build",
    "dist",
    ".coderefine",
    ".eggs",
}
MAX_WALK_FILES = 20_000


def project_files(root: Path, repo: GitRepo | None) -> list[str]:
    """The files a copy of the project needs, as POSIX paths relative to ``root``."""
    if repo is not None and repo.root == root:
        return repo.project_files()
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        rel_folder = Path(folder).relative_to(root)
        for name in sorted(names):
            found.append((rel_folder / name).as_posix())
            if len(found) >= MAX_WALK_FILES:
                return found
    return found


def tree_files(root: Path, repo: GitRepo | None) -> list[str]:
    """The files a copy of the project holds: ``project_files`` and, in git, the ignored Python files a
    build wrote beside the project's own (``GitRepo.ignored_sources``). Never a list of files to review:
    a generated file is not the user's code."""
    files = project_files(root, repo)
    if repo is None or repo.root != root:
        return files
    return sorted({*files, *repo.ignored_sources(files)})


def copy_files(root: Path, files: Iterable[str], dest: Path) -> None:
    """Copy ``files`` (relative to ``root``) below ``dest``, skipping what cannot matter to tests."""
    # Stale bytecode could shadow the candidate's source (see signals/pytest.py).
    wanted = [rel for rel in files if not rel.endswith((".pyc", ".pyo"))]
    copied = set()
    if len(wanted) >= BULK_MIN and tar_copy(str(root), wanted, str(dest)):
        for rel in wanted:
            try:
                if os.lstat(dest / rel).st_size == os.lstat(root / rel).st_size:
                    copied.add(rel)
            except OSError:
                pass
    for rel in wanted:
        if rel in copied:
            continue
        source = root / rel
        target = dest / rel
        if not (source.is_file() or source.is_symlink()):
            continue  # deleted in the working tree but still tracked
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(source, target, follow_symlinks=False)
        except OSError:
            continue  # unreadable files cannot matter to the tests more than to the user


class IsolatedTree:
    """A copy of the project; a context manager that removes (or releases) it on exit."""

    def __init__(
        self,
        root: Path,
        files: Iterable[str],
        overrides: Mapping[str, bytes] | None = None,
        populate: Callable[[Path], None] | None = None,
        remove: Iterable[str] = (),
        cache: Slots | None = None,
    ) -> None:
        """Copy ``files`` from ``root`` (or let ``populate`` fill the copy, e.g. from the git index),
        then drop ``remove`` and write ``overrides``. With ``cache`` (and no ``populate``), the copy
        is a persistent slot brought up to date, not a new one."""
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._slot: Slot | None = None
        self._slots = cache
        if cache is not None and populate is None:
            self._slot = cache.acquire(root)
        if self._slot is not None:
            self.path = self._slot.path
            dropped = set(remove)
            try:
                self._slot.sync(root, [rel for rel in files if rel not in dropped])
            except BaseException:
                self._slot.release()  # not back to a pool: its copy is in no known state
                raise
            self.write_all(overrides or {})
            return
        self._dir = tempfile.TemporaryDirectory(prefix="coderefine-tree-")
        self.path = Path(self._dir.name) / root.name
        self.path.mkdir()
        if populate is not None:
            populate(self.path)
            for rel in remove:
                (self.path / rel).unlink(missing_ok=True)
        else:
            dropped = set(remove)
            copy_files(root, [rel for rel in files if rel not in dropped], self.path)
        for rel, data in (overrides or {}).items():
            self.write(rel, data)

    def write(self, rel: str, data: bytes) -> None:
        """Put ``data`` at ``rel`` inside the copy (never outside it)."""
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts:
            raise ValueError(f"refusing to write outside the isolated tree: {rel}")
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # A new file, not a write into the old one: whatever a test left at this path (a symlink, a
        # second link to some file) is replaced, never written through.
        if target.is_symlink() or target.is_file():
            target.unlink()
        target.write_bytes(data)

    def write_all(self, files: Mapping[str, bytes]) -> None:
        for rel, data in files.items():
            self.write(rel, data)

    def read_text(self, rel: str) -> str:
        try:
            return (self.path / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def texts(self, rels: Sequence[str]) -> dict[str, str]:
        return {rel: self.read_text(rel) for rel in rels}

    def close(self) -> None:
        if self._slot is not None and self._slots is not None:
            self._slots.release(self._slot)  # what the run wrote is undone by the next sync, not now
            self._slot = None
        if self._dir is not None:
            self._dir.cleanup()

    def __enter__(self) -> IsolatedTree:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
