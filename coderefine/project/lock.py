"""One coderefine run at a time per project, for the runs that write.

The lock is an ``flock`` on a file next to the undo journal. The kernel releases it when the process dies,
however it dies, so a lock left by a killed run is never stale: the next run simply gets it. The file
holds the holder's pid, for the message a waiting run prints.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from coderefine.errors import LockedError


@contextlib.contextmanager
def run_lock(
    path: Path,
    *,
    timeout: float = 600.0,
    on_wait: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[None]:
    """Hold the lock at ``path`` for the duration of the block; wait up to ``timeout`` seconds for it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = clock() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                if clock() >= deadline:
                    raise LockedError(
                        f"another coderefine run (pid {holder}) has been writing in this project for over "
                        f"{timeout:g}s; wait for it or stop it"
                    ) from None
                if not told and on_wait is not None:
                    on_wait(f"waiting for another coderefine run in this project (pid {holder})")
                    told = True
                sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # closing releases the flock
