"""The import lines of a project's Python files (tests, package ``__init__.py`` files and the modules
between them), cached between runs, so choosing related tests in a big tree does not read every file each
time.

An entry is keyed by the file's path and ``lstat`` (size, modification and change times): an unchanged
file is not opened. A file whose stat changed is read, and its imports are reused when its content hash
is the one recorded (a checkout that rewrote it unchanged), else parsed again. The index is one
``marshal`` file in the user's cache (beside the persistent trees of ``basetree.py``), replaced
atomically; a damaged or foreign one is ignored and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from coderefine.signals.related import (
    TestIndex,
    TestSelection,
    imported_modules,
    is_python,
    package_of,
    select_with,
)

# Changes when what an entry means changes (the import scan, marshal's format): older indexes are rebuilt.
_FORMAT = f"imports-1-{sys.version_info[0]}.{sys.version_info[1]}"

Key = tuple[int, int, int]  # size, mtime_ns, ctime_ns
Entry = tuple[Key, str, tuple[str, ...]]  # stat key, content hash, imported modules


def _key(path: str) -> Key | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class ImportIndex:
    """Imports per file of one project; ``path`` is where the index is kept (None: this run only)."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self.reads = 0  # files opened by the last ``imports`` call (for tests and benchmarks)

    def imports(
        self, root: Path, files: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> dict[str, set[str]]:
        """Imported modules of every Python file among ``files``, as
        ``related.imported_modules`` gives them; ``texts`` (path -> text) stands in for files on disk
        (the change under review), and is never cached."""
        texts = texts or {}
        old = self._load()
        entries: dict[str, Entry] = {}
        out: dict[str, set[str]] = {}
        prefix = str(root) + os.sep
        self.reads = 0
        for rel in files:
            if not is_python(rel):
                continue
            if rel in texts:
                out[rel] = imported_modules(texts[rel], package_of(rel))
                continue
            key = _key(prefix + rel)
            if key is None:
                continue  # gone: counts by name only, as an unreadable file always has
            entry = old.get(rel)
            if entry is None or entry[0] != key:
                entry = self._scan(prefix + rel, rel, key, entry)
                if entry is None:
                    continue
            entries[rel] = entry
            out[rel] = set(entry[2])
        if entries != old:
            self._save(entries)
        return out

    def _scan(self, path: str, rel: str, key: Key, old: Entry | None) -> Entry | None:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        self.reads += 1
        digest = _digest(data)
        if old is not None and old[1] == digest:
            return (key, digest, old[2])
        # Universal newlines, as ``Path.read_text`` gives: a ``\r`` left at the end hides an import.
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        return (key, digest, tuple(sorted(imported_modules(text, package_of(rel)))))

    def _load(self) -> dict[str, Entry]:
        if self._path is None:
            return {}
        try:
            data = marshal.loads(self._path.read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            return {}
        if isinstance(data, tuple) and len(data) == 2 and data[0] == _FORMAT and isinstance(data[1], dict):
            return data[1]
        return {}

    def _save(self, entries: Mapping[str, Entry]) -> None:
        if self._path is None:
            return
        temp = self._path.with_name(f"{self._path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            self._path.parent.mkdir(parents=True, exist_ok=True)
            temp.write_bytes(marshal.dumps((_FORMAT, dict(entries))))
            os.replace(temp, self._path)


class ImportSnapshot:
    """The imports of a project's files read once and shared by the runs of a sweep. A sweep's every
    file sees the project as the sweep found it (the files it wrote are pinned to their old bytes in the
    test trees), so one reading is right for all of them; without it each file's evaluation stat'ed every
    test file of the project again (0.3 s a file in a 20,000-file tree)."""

    def __init__(self, index: ImportIndex, root: Path, files: Sequence[str]) -> None:
        self._index = index
        self._root = root
        self._files = list(files)
        self._known = frozenset(self._files)
        self._imports: dict[str, set[str]] | None = None
        self._tests: TestIndex | None = None
        self._lock = threading.Lock()

    def _shared(self) -> tuple[dict[str, set[str]], TestIndex]:
        with self._lock:
            if self._imports is None or self._tests is None:
                self._imports = self._index.imports(self._root, self._files)
                self._tests = TestIndex(self._files, self._imports)
            return self._imports, self._tests

    def select(
        self, changed: Sequence[str], texts: Mapping[str, str], run_all: bool = False
    ) -> TestSelection:
        """The tests of ``changed`` (``related.select_tests``), from the index built once for the sweep; a
        file under review whose imports differ from the project's is indexed anew with its own, and
        ``changed`` paths the project does not list yet are added."""
        shared, index = self._shared()
        own = self._own(texts)
        added = [p for p in changed if p not in self._known]
        if added or any(shared.get(rel) != modules for rel, modules in own.items()):
            index = TestIndex([*self._files, *added], {**shared, **own})
        return select_with(index, changed, run_all=run_all)

    @staticmethod
    def _own(texts: Mapping[str, str]) -> dict[str, set[str]]:
        return {rel: imported_modules(text, package_of(rel)) for rel, text in texts.items() if is_python(rel)}
