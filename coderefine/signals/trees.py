"""The test trees of one Evaluator: one per version kind (the candidate's, the baseline's), made on first
use, persistent or sparse.

A project with a filled persistent copy (``basetree.py``) gets it: bringing it up to date costs a stat of
every file. A big project without one (its first run, every CI job) gets a sparse copy instead: the files
the tests can reach (``sparse.needed_files``), a few dozen where the whole project is thousands. A run in
a sparse tree that failed as a missing file would make it fail is run again in a whole copy, which then
persists, and the Evaluator's later trees are whole too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from coderefine.project.basetree import Slots
from coderefine.project.workspace import IsolatedTree
from coderefine.signals.base import SignalSet
from coderefine.signals.sparse import SPARSE_MIN, ProjectFiles, missing_files

Collect = Callable[[Path, list[str]], SignalSet]


class TestTrees:
    """Trees by kind. ``prepare`` makes or updates one; ``collect`` runs tests in it."""

    __test__ = False  # not a test class, whatever pytest's name pattern says

    def __init__(
        self,
        root: Path,
        files: Sequence[str],
        slots: Slots | None,
        populate: Callable[[Path], None] | None,
        sparse: bool = True,
    ) -> None:
        """``sparse=False`` keeps every tree whole: a sweep's held copies cost a few milliseconds a file
        once filled, where a sparse copy is made again for every file."""
        self._root = root
        self._files = list(files)
        self._slots = slots
        self._populate = populate
        self._trees: dict[str, IsolatedTree] = {}
        # Per sparse tree: the files it holds, and how it was made (to make it whole the same way).
        self._sparse: dict[str, set[str]] = {}
        self._made: dict[str, tuple[list[str], dict[str, bytes], set[str]]] = {}
        self._whole = not sparse or populate is not None or len(self._files) < SPARSE_MIN or slots is None
        self._index: ProjectFiles | None = None
        if not self._whole and slots is not None and slots.filled(root):
            self._whole = True
        self._lock = threading.Lock()
        self.made_whole = 0  # sparse runs made again in a whole copy (for tests and reports)

    def has(self, which: str) -> bool:
        return which in self._trees

    def prepare(
        self,
        which: str,
        files: Sequence[str],
        overrides: Mapping[str, bytes],
        remove: set[str],
        tests: Sequence[str],
    ) -> None:
        """Make ``which``'s tree (``files`` of the project, ``overrides`` written, ``remove`` left out)."""
        with self._lock:
            if self._whole:
                self._trees[which] = self._whole_tree(files, overrides, remove)
                return
            listed = [rel for rel in files if rel not in remove]
            needed = self._needed(remove, tests, overrides)
            self._trees[which] = IsolatedTree(
                self._root, [rel for rel in listed if rel in needed], overrides, cache=None
            )
            self._sparse[which] = needed
            self._made[which] = (list(files), dict(overrides), set(remove))

    def write(self, which: str, data: Mapping[str, bytes], tests: Sequence[str]) -> None:
        """Put ``data`` into ``which``'s tree; a sparse one also gets the files the new texts reach."""
        with self._lock:
            tree = self._trees[which]
            held = self._sparse.get(which)
            if held is not None:
                _, overrides, remove = self._made[which]
                overrides.update(data)
                needed = self._needed(remove, tests, overrides)
                for rel in sorted(needed - held - set(data)):
                    try:
                        tree.write(rel, (self._root / rel).read_bytes())
                    except OSError:
                        continue
                held |= needed
            tree.write_all(data)

    def path(self, which: str) -> Path:
        with self._lock:
            return self._trees[which].path

    def collect(self, which: str, tests: list[str], collect: Collect) -> SignalSet:
        """Run ``tests`` in ``which``'s tree; a sparse tree whose run looks short of a file is made
        whole and the run made again there."""
        result = collect(self.path(which), tests)
        with self._lock:
            if which not in self._sparse or not missing_files(result):
                return result
            files, overrides, remove = self._made.pop(which)
            del self._sparse[which]
            self._trees.pop(which).close()
            self._whole = True
            self._trees[which] = self._whole_tree(files, overrides, remove)
            self.made_whole += 1
            path = self._trees[which].path
        return collect(path, tests)

    def _needed(self, remove: set[str], tests: Sequence[str], overrides: Mapping[str, bytes]) -> set[str]:
        if self._index is None:
            self._index = ProjectFiles(self._files)
        return (self._index.needed(tests, self._reader(overrides)) - remove) | set(overrides)

    def _whole_tree(
        self, files: Sequence[str], overrides: Mapping[str, bytes], remove: set[str]
    ) -> IsolatedTree:
        return IsolatedTree(
            self._root, files, overrides, populate=self._populate, remove=remove, cache=self._slots
        )

    def _reader(self, overrides: Mapping[str, bytes]) -> Callable[[str], str | None]:
        def read(rel: str) -> str | None:
            data = overrides.get(rel)
            if data is None:
                try:
                    data = (self._root / rel).read_bytes()
                except OSError:
                    return None
            return data.decode("utf-8", errors="replace")

        return read

    def close(self) -> None:
        with self._lock:
            for tree in self._trees.values():
                tree.close()
            self._trees.clear()
