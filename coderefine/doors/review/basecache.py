"""The base's test results of a review, kept between runs, keyed by the tree they ran in.

A review's baseline is the head's tree with its changed Python files put back as the merge base had
them (its other changes, configuration or data, stay), so the base commit alone does not name it. Its
content does: the key hashes every path of the head with its blob id, the changed Python files' blob ids
taken from their base text, the interpreter (its path, and the modification times of its executable and
site-packages, which an install changes), the test command and limits, and coderefine's version. A
review run again on the same head, or on a later push that changed only the files under review, finds
the base's results of the test files it needs there and does not run them. The results live in the
review cache (``project/cache.py``): bounded, cleared by ``coderefine cache clear``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coderefine.config import Settings
from coderefine.project.cache import ReviewCache, cache_key
from coderefine.project.change import Change
from coderefine.signals.base import Signal
from coderefine.version import __version__


def _blob_id(data: bytes) -> str:
    """git's id of a blob with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def interpreter_identity(python: str) -> list[object]:
    """What names an interpreter with its packages: its path, and the modification times of the
    executable and of every site-packages folder of its prefix (an install or removal changes one).
    A virtual environment's python is a link to the base interpreter: both prefixes count, the venv's
    own packages and the base's."""
    given = Path(python).absolute()
    real = given.resolve()
    prefixes = dict.fromkeys((given.parent.parent, real.parent.parent))
    folders = [f for prefix in prefixes for f in sorted(prefix.glob("lib*/python*/site-packages"))]
    marks: list[object] = [str(given), str(real)]
    for path in (real, *folders):
        try:
            marks.append([str(path), os.stat(path).st_mtime_ns])
        except OSError:
            marks.append([str(path), None])
    return marks


@dataclasses.dataclass(frozen=True)
class BaseResults:
    """The ``signals.evaluate.BaselineStore`` of one review: results per test file under one tree key."""

    cache: ReviewCache
    key: str

    def get(self, test_file: str) -> tuple[Signal, ...] | None:
        data = self.cache.get(self._key(test_file))
        if data is None or not isinstance(data.get("signals"), list):
            return None
        try:
            return tuple(Signal(**entry) for entry in data["signals"])
        except TypeError:
            return None  # written by a coderefine whose signals had other fields

    def put(self, test_file: str, signals: tuple[Signal, ...]) -> None:
        value: dict[str, Any] = {"signals": [dataclasses.asdict(s) for s in signals]}
        self.cache.put(self._key(test_file), value)

    def _key(self, test_file: str) -> str:
        return cache_key({"kind": "review-base-tests", "tree": self.key, "test_file": test_file})


def base_results(
    change: Change, head_blobs: Mapping[str, str], settings: Settings, python: str, cache: ReviewCache
) -> BaseResults:
    """The store for ``change``'s baseline, where the review's tree is exactly the head commit (its
    ``head_blobs``, path -> blob id)."""
    tree = dict(head_blobs)
    for file in change.files:
        if file.kind == "added" or file.before is None:
            tree.pop(file.path, None)
        else:
            tree[file.path] = _blob_id(file.before.encode())
    digest = hashlib.sha256("\0".join(f"{p}\0{b}" for p, b in sorted(tree.items())).encode()).hexdigest()
    key = cache_key(
        {
            "tree": digest,
            "python": interpreter_identity(python),
            "command": list(settings.test_command),
            "test_timeout": settings.test_timeout,
            "run_timeout": settings.run_timeout,
            "coderefine": __version__,
        }
    )
    return BaseResults(cache, key)
