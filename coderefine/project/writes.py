"""Atomic writes to the user's files, with an undo journal.

A write goes in three steps: the journal entry with every file's old bytes is written and synced
(state "pending"); each file is replaced atomically (temp file in the same folder + os.replace); the
entry is marked "done". A crash between the steps leaves each file either old or new, never half
written, and ``undo`` restores the old bytes of a pending or done entry alike.

A sweep writes many files over one run into one entry (``Journal.open_run``): each file is recorded
("pending") before it is written and marked "done" after, so a crash restores only the file it was
writing, keeps the finished ones, and one ``undo`` restores every file of the run.

The journal lives under the repository's git folder (``.git/coderefine/journal``), or in a
``.coderefine/`` folder at the project root outside git.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from coderefine.errors import UndoError, WriteError

KEEP_ENTRIES = 20


@dataclass(frozen=True)
class FileWrite:
    """One file to write: its path relative to the root, the bytes it had (None: new) and the new bytes."""

    path: str
    before: bytes | None
    after: bytes


class Writer(Protocol):
    """What writes a result: the journal (one entry per call) or a run entry (one entry per sweep)."""

    def write(self, writes: Sequence[FileWrite]) -> str: ...


@dataclass(frozen=True)
class UndoResult:
    entry: str
    restored: tuple[str, ...]


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new bytes, never a mix.

    The file keeps its permission bits; a symlink is written through to its target.
    """
    target = path.resolve() if path.is_symlink() else path
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".coderefine.tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _write_json(path: Path, data: object) -> None:
    atomic_write(path, json.dumps(data, indent=2).encode("utf-8"))


class Journal:
    """The undo journal of one project."""

    def __init__(self, folder: Path, root: Path) -> None:
        self.folder = folder
        self.root = root

    @property
    def lock_path(self) -> Path:
        """The run lock lives beside the journal."""
        return self.folder.parent / "lock"

    @classmethod
    def for_project(cls, root: Path, git_dir: Path | None) -> Journal:
        if git_dir is not None:
            return cls(git_dir / "coderefine" / "journal", root)
        private = root / ".coderefine"
        private.mkdir(exist_ok=True)
        ignore = private / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")
        return cls(private / "journal", root)

    def entries(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if (p / "manifest.json").is_file())

    def write(self, writes: Sequence[FileWrite]) -> str:
        """Journal and apply ``writes``; on any failure, restore what was written and raise WriteError."""
        entry = self._record(writes)
        written: list[FileWrite] = []
        try:
            for item in writes:
                target = self.root / item.path
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(target, item.after)
                written.append(item)
        except BaseException as exc:
            self._restore(written)
            self._set_state(entry, "rolled-back")
            if isinstance(exc, OSError):
                raise WriteError(f"cannot write {target}: {exc.strerror}; nothing was changed") from exc
            raise
        self._set_state(entry, "done")
        self._prune()
        return entry.name

    def recover(self) -> tuple[str, ...]:
        """Put back the old bytes of every write a crash left half-done ("pending"); return their paths.

        A file that already holds neither the old nor the new bytes was edited since: it is left alone.
        """
        restored: list[str] = []
        for entry in self.entries():
            manifest = self._manifest(entry)
            if manifest["state"] not in ("pending", "open"):
                continue
            run = manifest["state"] == "open"
            for item in manifest["files"]:
                if run and item.get("state") != "pending":
                    continue  # a finished file of an interrupted sweep stays written (and undoable)
                target = self.root / item["path"]
                current = _sha(target.read_bytes()) if target.exists() else None
                if current != item["after_sha"] or current == item["before_sha"]:
                    continue
                if item["blob"]:
                    atomic_write(target, (entry / item["blob"]).read_bytes())
                else:
                    target.unlink(missing_ok=True)
                restored.append(item["path"])
            self._set_state(entry, "done" if run else "recovered")
        return tuple(restored)

    def undo(self, force: bool = False) -> UndoResult:
        """Restore the files of the newest write that is not undone yet."""
        for entry in reversed(self.entries()):
            manifest = self._manifest(entry)
            if manifest["state"] not in ("done", "pending", "open"):
                continue
            restore: list[tuple[str, bytes | None]] = []
            for item in manifest["files"]:
                current_path = self.root / item["path"]
                current = _sha(current_path.read_bytes()) if current_path.exists() else None
                if current == item["before_sha"]:
                    continue  # never written (a crash came first) or already restored
                if current != item["after_sha"] and not force:
                    raise UndoError(
                        f"{item['path']} changed since coderefine wrote it; "
                        "undo would lose that work (use --force to restore it anyway)"
                    )
                before = (entry / item["blob"]).read_bytes() if item["blob"] else None
                restore.append((item["path"], before))
            for path, before in restore:
                if before is None:
                    (self.root / path).unlink(missing_ok=True)
                else:
                    atomic_write(self.root / path, before)
            self._set_state(entry, "undone")
            return UndoResult(entry.name, tuple(path for path, _ in restore))
        if self.entries():
            raise UndoError(
                "nothing left to undo: coderefine's writes in this project are all undone or restored already"
            )
        raise UndoError("nothing to undo: coderefine has not written any file in this project")

    def open_run(self) -> RunEntry:
        """A new entry for a run that writes files one at a time (a sweep); ``close`` it at the end."""
        self._prune(keep=KEEP_ENTRIES - 1)
        entry = self._new_entry()
        _write_json(entry / "manifest.json", {"state": "open", "created": time.time(), "files": []})
        return RunEntry(self, entry)

    def _new_entry(self) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        return Path(tempfile.mkdtemp(prefix=f"{stamp}-", dir=self.folder))

    def _record(self, writes: Sequence[FileWrite]) -> Path:
        entry = self._new_entry()
        files = [_blob_item(entry, index, item) for index, item in enumerate(writes)]
        _write_json(entry / "manifest.json", {"state": "pending", "created": time.time(), "files": files})
        return entry

    def _manifest(self, entry: Path) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((entry / "manifest.json").read_text("utf-8"))
        return data

    def _set_state(self, entry: Path, state: str) -> None:
        manifest = self._manifest(entry)
        manifest["state"] = state
        _write_json(entry / "manifest.json", manifest)

    def _restore(self, written: Sequence[FileWrite]) -> None:
        for item in reversed(written):
            target = self.root / item.path
            if item.before is None:
                target.unlink(missing_ok=True)
            else:
                atomic_write(target, item.before)

    def _prune(self, keep: int = KEEP_ENTRIES) -> None:
        entries = self.entries()
        for old in entries[: max(len(entries) - keep, 0)]:
            for child in old.iterdir():
                child.unlink()
            old.rmdir()


def _blob_item(entry: Path, index: int, item: FileWrite) -> dict[str, Any]:
    """Save ``item``'s old bytes in ``entry``; its record in the manifest."""
    blob = None
    if item.before is not None:
        blob = f"{index}.before"
        atomic_write(entry / blob, item.before)
    return {"path": item.path, "blob": blob, "before_sha": _sha(item.before), "after_sha": _sha(item.after)}


class RunEntry:
    """One journal entry that grows file by file, for a sweep: its writes are undone together.

    Writers on several threads are serialised. Each file is recorded as "pending" before it is written
    and "done" after, so ``Journal.recover`` after a crash restores only the file being written.
    """

    def __init__(self, journal: Journal, entry: Path) -> None:
        self._journal = journal
        self.entry = entry
        self._lock = threading.Lock()
        self.written: list[str] = []

    @property
    def name(self) -> str:
        return self.entry.name

    def write(self, writes: Sequence[FileWrite]) -> str:
        with self._lock:
            manifest = self._journal._manifest(self.entry)
            first = len(manifest["files"])
            items = [_blob_item(self.entry, first + i, w) for i, w in enumerate(writes)]
            manifest["files"] += [{**item, "state": "pending"} for item in items]
            _write_json(self.entry / "manifest.json", manifest)
            done: list[FileWrite] = []
            try:
                for item in writes:
                    target = self._journal.root / item.path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(target, item.after)
                    done.append(item)
            except BaseException as exc:
                self._journal._restore(done)
                manifest["files"] = manifest["files"][:first]
                _write_json(self.entry / "manifest.json", manifest)
                if isinstance(exc, OSError):
                    raise WriteError(f"cannot write {target}: {exc.strerror}; it was left as it was") from exc
                raise
            for item in manifest["files"][first:]:
                item["state"] = "done"
            _write_json(self.entry / "manifest.json", manifest)
            self.written.extend(w.path for w in writes)
            return self.entry.name

    def close(self) -> None:
        """Mark the run finished; an entry that wrote nothing is removed (there is nothing to undo)."""
        with self._lock:
            manifest = self._journal._manifest(self.entry)
            if not manifest["files"]:
                for child in self.entry.iterdir():
                    child.unlink()
                self.entry.rmdir()
                return
            manifest["state"] = "done"
            _write_json(self.entry / "manifest.json", manifest)
