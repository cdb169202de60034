"""What changed in a held copy since the last look: inotify on every folder of the copy (Linux).

A copy held between a sweep's files must be put back as the project was after each file's run: the
candidate written into it, and whatever its tests wrote, created or deleted. A stat of every file finds
that, at 60 ms a tree at 20,000 files, for each file of the sweep. The kernel can say it instead: a
watch on each folder reports every name in it that was written, created, deleted, moved or had its
metadata changed, by any process (a test's subprocess too). When the kernel's queue overflowed, a
watched folder went, or watches cannot be had (not Linux, the user's watch limit reached), ``changed``
answers None and the caller stats every file as before, so nothing is ever missed silently.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import sys
from collections.abc import Iterable
from typing import Any

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _UNMOUNT, _OVERFLOW, _IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_MASK = (
    _MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
)
_LOST = _DELETE_SELF | _MOVE_SELF | _UNMOUNT | _OVERFLOW | _IGNORED
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return libc if hasattr(libc, "inotify_init1") and hasattr(libc, "inotify_add_watch") else None


class FolderWatch:
    """Watches on folders of one tree; ``changed`` gives the paths (relative to the tree) touched since the
    last call. Make one with ``start``."""

    def __init__(self, libc: Any, fd: int, top: str) -> None:
        self._libc = libc
        self._fd = fd
        self._top = top
        self._folders: dict[int, str] = {}
        self._lost = False

    @classmethod
    def start(cls, top: str, folders: Iterable[str]) -> FolderWatch | None:
        """Watch ``folders`` (relative to ``top``; ``""`` is ``top``); None when it cannot."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return None
        watch = cls(libc, fd, top)
        if not watch.add(folders):
            watch.close()
            return None
        return watch

    def add(self, folders: Iterable[str]) -> bool:
        """Watch more folders; False (and every later ``changed`` None) when one cannot be watched."""
        for rel in folders:
            path = os.path.join(self._top, rel) if rel else self._top
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK | _ONLYDIR | _DONT_FOLLOW)
            if wd < 0:
                self._lost = True
                return False
            self._folders[wd] = rel
        return True

    def changed(self) -> set[str] | None:
        """The paths touched since the last call, or None when that cannot be known."""
        found: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                self._lost = True
                break
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + size].rstrip(b"\0")
                offset += _EVENT.size + size
                if mask & _LOST:
                    self._lost = True
                folder = self._folders.get(wd)
                if folder is not None and name:
                    rel = os.fsdecode(name)
                    found.add(f"{folder}/{rel}" if folder else rel)
        return None if self._lost else found

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
