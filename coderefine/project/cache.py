"""The review cache: what a review concluded, keyed by everything that could change that conclusion.

The key hashes the content under review (before and after), the intent, the model, the settings that
shape a review, coderefine's version and the protocol version. An entry is one small JSON file written
atomically, so concurrent runs can share the folder; a damaged entry is a miss. The folder is bounded:
past ``max_entries`` the least recently used entries go. It lives under ``.git/coderefine/cache`` (or
``.coderefine/cache`` outside git); ``coderefine cache clear`` empties it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coderefine.project.writes import atomic_write

KEY_VERSION = "1"


def cache_key(parts: Mapping[str, object]) -> str:
    """A stable hash of ``parts`` (JSON with sorted keys)."""
    payload = json.dumps({"key_version": KEY_VERSION, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def content_hash(data: bytes | str | None) -> str | None:
    if data is None:
        return None
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


class ReviewCache:
    def __init__(self, folder: Path, max_entries: int) -> None:
        self.folder = folder
        self.max_entries = max_entries
        # Entries counted at the last listing plus those put since: a sweep puts thousands of entries,
        # and listing the folder on every put made that quadratic.
        self._count: int | None = None

    @classmethod
    def for_project(cls, root: Path, git_dir: Path | None, max_entries: int) -> ReviewCache:
        base = git_dir / "coderefine" if git_dir is not None else root / ".coderefine"
        return cls(base / "cache", max_entries)

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # least recently *used* goes first when pruning
        return data

    def put(self, key: str, value: Mapping[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self._path(key), json.dumps(value, indent=1).encode("utf-8"))
        self._prune()

    def clear(self) -> int:
        removed = 0
        if self.folder.is_dir():
            for entry in self.folder.glob("*.json"):
                with contextlib.suppress(OSError):
                    entry.unlink()
                    removed += 1
        return removed

    def __len__(self) -> int:
        return len(list(self.folder.glob("*.json"))) if self.folder.is_dir() else 0

    def _prune(self) -> None:
        if self._count is not None and self._count < self.max_entries:
            self._count += 1
            return
        entries = list(self.folder.glob("*.json"))
        self._count = min(len(entries), self.max_entries)
        if len(entries) <= self.max_entries:
            return

        def age(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

        for old in sorted(entries, key=age)[: len(entries) - self.max_entries]:
            with contextlib.suppress(OSError):
                old.unlink()  # another run may have removed it first
