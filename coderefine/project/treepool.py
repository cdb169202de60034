"""The persistent copies one run holds between its evaluations: a sweep's files take turns in them.

Without it, each file of a sweep took a slot, brought it up to date against the whole project (a stat
of every file on both sides, and the manifest read again), and released it: 0.12 s a file at 20,000
files, which made a sweep grow with the repository. Held in the pool, a slot is brought up to date
against the project once, at its first use in the run; later uses stat only the copy's side, to put
back what the last file's run wrote or a test changed (``Slot.hold``). The project is the run's view of
it, taken when each slot was first used: a sweep already sees the project as it found it (the files it
wrote are pinned to their old bytes), and a file the user edits during the sweep waits for the next run,
as a file edited during one ``fix`` does.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

from coderefine.project.basetree import TreeCache
from coderefine.project.slot import Slot


class TreePool:
    """``TreeCache``'s ``acquire``/``release``, with released slots kept held for the next evaluation of
    this run. ``close`` saves their manifests and releases them."""

    def __init__(self, cache: TreeCache) -> None:
        self._cache = cache
        self._idle: list[Slot] = []
        self._lock = threading.Lock()
        self._closed = False

    def project_folder(self, root: Path) -> Path:
        return self._cache.project_folder(root)

    def filled(self, root: Path) -> bool:
        return self._cache.filled(root)

    def acquire(self, root: Path) -> Slot | None:
        with self._lock:
            for idle in self._idle:
                if idle.root == root:
                    self._idle.remove(idle)
                    return idle
        slot = self._cache.acquire(root)
        if slot is not None:
            slot.hold()
        return slot

    def release(self, slot: Slot) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(slot)
                return
        slot.flush()
        slot.release()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for slot in idle:
            slot.flush()
            slot.release()

    def __enter__(self) -> TreePool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
