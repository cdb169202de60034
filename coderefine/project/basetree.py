"""Persistent copies of a project, kept between evaluations and runs, so a candidate's tree costs what
its change costs.

The copies ("slots", ``slot.py``) live in the user's cache folder, outside the project, one folder per
project. A slot is held with an ``flock`` for as long as a tree uses it, so concurrent runs (the hook's
jobs, a sweep's workers, a baseline beside its candidate) each get their own slot; when every slot is
busy, the caller falls back to a temporary copy. Copies of projects unused for two weeks are removed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from coderefine.project.slot import MANIFEST, Slot

SLOTS = 16
# A project whose copies were not used for this long is removed the next time any project is prepared.
STALE_SECONDS = 14 * 24 * 3600


def tree_cache_folder(environ: Mapping[str, str]) -> Path | None:
    """Where persistent copies live: ``$XDG_CACHE_HOME/coderefine/trees``, else
    ``~/.cache/coderefine/trees``; None (temporary copies only) without either.

    Not a ``CODEREFINE_*`` variable: those are settings, and a cache folder is no setting of a run."""
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "coderefine" / "trees"
    home = environ.get("HOME")
    return Path(home) / ".cache" / "coderefine" / "trees" if home else None


class Slots(Protocol):
    """Where trees get their slots: ``TreeCache`` itself, or a run's ``treepool.TreePool``."""

    def acquire(self, root: Path) -> Slot | None: ...

    def release(self, slot: Slot) -> None: ...

    def project_folder(self, root: Path) -> Path: ...

    def filled(self, root: Path) -> bool: ...


class TreeCache:
    """The persistent copies of projects below ``folder``: up to ``slots`` per project."""

    def __init__(self, folder: Path, slots: int = SLOTS, clock: float | None = None) -> None:
        self.folder = folder
        self._slots = slots
        self._now = clock

    def project_folder(self, root: Path) -> Path:
        key = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:20]
        return self.folder / key

    def acquire(self, root: Path) -> Slot | None:
        """A free slot of ``root``'s copies, locked; None when all are busy or the cache is unusable."""
        project = self.project_folder(root)
        try:
            project.mkdir(parents=True, exist_ok=True)
            (project / "used").write_text(str(root.resolve()) + "\n", "utf-8")
        except OSError:
            return None
        self._prune(project)
        for n in range(self._slots):
            folder = project / f"slot{n}"
            try:
                folder.mkdir(exist_ok=True)
                fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            return Slot(folder, root, fd)
        return None

    def release(self, slot: Slot) -> None:
        slot.release()

    def filled(self, root: Path) -> bool:
        """Whether some copy of ``root`` was made whole before (its manifest saved)."""
        return any(self.project_folder(root).glob(f"slot*/{MANIFEST}"))

    def clear(self, root: Path) -> bool:
        """Remove ``root``'s copies; False (nothing removed) while a run holds one of them."""
        project = self.project_folder(root)
        if not project.exists():
            return True
        if not _nobody_holds(project):
            return False
        shutil.rmtree(project, ignore_errors=True)
        return True

    def _prune(self, keep: Path) -> None:
        """Remove the copies of projects unused for ``STALE_SECONDS`` (moved, deleted, forgotten)."""
        now = self._now if self._now is not None else time.time()
        try:
            projects = list(self.folder.iterdir())
        except OSError:
            return
        for project in projects:
            if project == keep:
                continue
            try:
                if now - (project / "used").stat().st_mtime < STALE_SECONDS:
                    continue
            except OSError:
                pass
            if _nobody_holds(project):
                shutil.rmtree(project, ignore_errors=True)


def _nobody_holds(project: Path) -> bool:
    for lock in project.glob("slot*/lock"):
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        finally:
            os.close(fd)
    return True
