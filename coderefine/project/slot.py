"""One persistent copy of a project ("slot"), brought up to date file by file.

Every use brings the copy up to date by comparing two records per file with the manifest written last
time: the project file's ``lstat`` (a file the user edited is copied again) and the copy's own (a file a
test wrote to, or a file under review written into the copy by the last run, is copied again). Folders
whose modification time changed are listed, and whatever a test created in them is removed. An empty
slot is filled with one bulk copy (``bulkcopy.py``). A slot held between the evaluations of one run
(``treepool.py``) keeps its manifest in memory and learns what changed in the copy from a folder watch
(``watch.py``), falling back to the stat of every file when the watch cannot tell.

The copies are real copies, never links: a test that writes to a project file in place writes to the
copy, never to the user's file.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from coderefine.project.bulkcopy import BULK_MIN, tar_copy
from coderefine.project.watch import FolderWatch

# Copies beyond this many in one sync make it save its manifest (see ``Slot.sync``).
SAVE_AFTER = 64
MANIFEST = "manifest.marshal"
# Changes when the manifest's meaning (or marshal's format) changes: an older slot is then rebuilt.
_FORMAT = f"1-{sys.version_info[0]}.{sys.version_info[1]}"

Stat = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns
Entry = tuple[Stat, Stat | None]  # the project file's stat, the copy's


def _stat(path: str) -> Stat | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class SyncReport:
    """What bringing a slot up to date cost: files copied, files and folders removed."""

    copied: int
    removed: int
    kept: int


class Slot:
    """One persistent copy, held (locked) until ``release``."""

    def __init__(self, folder: Path, root: Path, fd: int) -> None:
        self.folder = folder
        self.root = root
        self.path = folder / "tree" / root.name
        self._fd = fd
        # Held between the evaluations of one run (``TreePool``): the manifest as the last sync left it,
        # so a later sync neither reads it again nor looks at the project's files (see ``hold``).
        self._memory: tuple[dict[str, Entry], dict[str, int]] | None = None
        self._held = False
        self._watch: FolderWatch | None = None

    def hold(self) -> None:
        """Keep this slot between the evaluations of one run: the project is taken as it was at the
        first sync (the run's view of it, as a sweep's is), so later syncs stat only the copy's side and
        put back what a run changed in it. ``flush`` saves the manifest before the slot is released."""
        self._held = True

    def flush(self) -> None:
        if self._memory is not None:
            self._save(*self._memory)

    def sync(self, root: Path, files: Iterable[str]) -> SyncReport:
        """Make the copy hold exactly ``files`` of ``root`` as they are now (plus folders)."""
        if self._watch is not None:
            changed = self._watch.changed()
            report = None if changed is None else self._sync_changed(root, files, changed)
            if report is not None:
                return report
            self._watch.close()
            self._watch = None
        trusted = self._memory is not None
        entries, dirs = self._memory if self._memory is not None else self._load()
        if not entries:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path.mkdir(parents=True, exist_ok=True)
            return self._fill(root, files)
        self.path.mkdir(parents=True, exist_ok=True)
        src_prefix = str(root) + os.sep
        dst_prefix = str(self.path) + os.sep
        wanted: dict[str, Entry] = {}
        fresh: list[str] = []
        kept = removed = 0
        # Folders that changed since the last sync may hold files a test created: list them first, so
        # what is to be removed is known before any file of this sync changes the folder again.
        strays = self._strays(dirs, entries)
        lstat = os.lstat
        for rel in files:
            if rel.endswith((".pyc", ".pyo")):
                continue  # stale bytecode could shadow the candidate's source (see signals/pytest.py)
            # The hot loop of a big tree (twice per file): the stat calls are inlined.
            old = entries.get(rel)
            if trusted and old is not None:
                source = old[0]  # the project as this run first saw it
            else:
                try:
                    st = lstat(src_prefix + rel)
                except OSError:
                    continue  # tracked but deleted in the working tree
                source = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            target = dst_prefix + rel
            if old is not None and old[0] == source:
                try:
                    st = lstat(target)
                except OSError:
                    pass
                else:
                    if old[1] == (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns):
                        wanted[rel] = old
                        kept += 1
                        continue
            if trusted and old is not None:
                fresh_source = _stat(src_prefix + rel)  # what is copied now is the file as it is now
                if fresh_source is None:
                    continue
                source = fresh_source
            copy = _copy(src_prefix + rel, target)
            if copy is None:
                continue  # unreadable files cannot matter to the tests more than to the user
            wanted[rel] = (source, copy)
            fresh.append(rel)
        for rel in entries.keys() - wanted.keys():
            with contextlib.suppress(OSError):
                os.unlink(dst_prefix + rel)
                removed += 1
        if strays:
            # A folder a test made may also be where a file new to the project now goes.
            needed = _parents(fresh)
            for rel in strays - wanted.keys() - needed:
                removed += _remove(dst_prefix + rel)
        # A few files copied again (the ones the last run put under review) are cheaper to copy again
        # next time than a rewrite of the whole manifest; many (a pull, a checkout) are worth saving.
        if self._held:
            # The folders are the last sync's and those of the files copied now: _parents of every
            # file cost 20 ms a sync at 20,000 files. A folder that went is dropped by its stat.
            folders = set(dirs) | _parents(fresh) if dirs else _parents(wanted)
            self._remember(wanted, self._stat_folders(folders))
        elif not dirs or len(fresh) + removed > SAVE_AFTER:
            self._save(wanted, self._stat_folders(_parents(wanted)))
        return SyncReport(len(fresh), removed, kept)

    def _fill(self, root: Path, files: Iterable[str]) -> SyncReport:
        """The first copy of an empty slot: one bulk copy (``bulkcopy.py``), then a stat of each side.

        Each source is stat'ed before it is copied, so a file the user changes meanwhile has a newer stat
        than the one recorded and is copied again by the next sync. A copy whose size is not the source's
        (tar stopped part way) or that is missing is copied again in Python, or left out as unreadable."""
        src_prefix = str(root) + os.sep
        dst_prefix = str(self.path) + os.sep
        sources: dict[str, Stat] = {}
        for rel in files:
            if rel.endswith((".pyc", ".pyo")):
                continue  # stale bytecode could shadow the candidate's source (see signals/pytest.py)
            source = _stat(src_prefix + rel)
            if source is not None:
                sources[rel] = source
        if len(sources) >= BULK_MIN:
            tar_copy(str(root), list(sources), str(self.path))
        wanted: dict[str, Entry] = {}
        for rel, source in sources.items():
            copy = _stat(dst_prefix + rel)
            if copy is None or copy[1] != source[1]:
                copy = _copy(src_prefix + rel, dst_prefix + rel, replace=copy is not None)
            if copy is not None:
                wanted[rel] = (source, copy)
        folders = self._stat_folders(_parents(wanted))
        self._save(wanted, folders)
        if self._held:
            self._remember(wanted, folders)
        return SyncReport(len(wanted), 0, 0)

    def _remember(self, files: dict[str, Entry], dirs: dict[str, int]) -> None:
        """Keep the manifest of a held slot in memory, and watch its folders from now on."""
        self._memory = (files, dirs)
        if self._watch is None:
            self._watch = FolderWatch.start(str(self.path), dirs)

    def _sync_changed(self, root: Path, files: Iterable[str], changed: set[str]) -> SyncReport | None:
        """A held slot brought up to date from what its watch saw (``changed``, relative paths) and the
        difference between ``files`` and the files it holds; None when only a full sync can tell (a
        folder it holds went, or a new folder cannot be watched)."""
        assert self._memory is not None and self._watch is not None
        entries, dirs = self._memory
        listed = {rel for rel in files if not rel.endswith((".pyc", ".pyo"))}
        wanted = dict(entries)
        src_prefix = str(root) + os.sep
        dst_prefix = str(self.path) + os.sep
        copied = removed = 0
        for rel in sorted(changed):
            if rel in dirs:
                if not os.path.isdir(dst_prefix + rel) or os.path.islink(dst_prefix + rel):
                    return None  # a folder it holds was replaced or went
                continue
            old = wanted.get(rel)
            if old is not None:
                if _stat(dst_prefix + rel) == old[1]:
                    continue  # touched and put back as it was (a sync of ours)
                source = _stat(src_prefix + rel)
                copy = None if source is None else _copy(src_prefix + rel, dst_prefix + rel)
                if source is None or copy is None:
                    del wanted[rel]
                    removed += _remove(dst_prefix + rel)
                    continue
                wanted[rel] = (source, copy)
                copied += 1
            else:
                # Made by a test: a file, or a folder with its files (the watch reports names in the
                # folders the copy holds, so whatever a test made below a new folder goes with it).
                removed += _remove(dst_prefix + rel)
        for rel in entries.keys() - listed:
            del wanted[rel]
            with contextlib.suppress(OSError):
                os.unlink(dst_prefix + rel)
                removed += 1
        new = sorted(listed - entries.keys())
        for rel in new:
            source = _stat(src_prefix + rel)
            copy = None if source is None else _copy(src_prefix + rel, dst_prefix + rel)
            if source is not None and copy is not None:
                wanted[rel] = (source, copy)
                copied += 1
        folders = {d for d in _parents(new) if d not in dirs}
        if folders:
            if not self._watch.add(sorted(folders)):
                return None
            dirs = {**dirs, **self._stat_folders(folders)}
        self._memory = (wanted, dirs)
        return SyncReport(copied, removed, len(wanted) - copied)

    def _strays(self, dirs: Mapping[str, int], entries: Mapping[str, object]) -> set[str]:
        """Entries of changed folders that the manifest does not know (made by a test)."""
        found: set[str] = set()
        prefix = str(self.path) + os.sep
        for rel, mtime in dirs.items():
            folder = prefix + rel if rel else str(self.path)
            try:
                if os.lstat(folder).st_mtime_ns == mtime:
                    continue
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                child = f"{rel}/{name}" if rel else name
                if child not in entries and child not in dirs:
                    found.add(child)
        return found

    def _stat_folders(self, folders: Iterable[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        top = str(self.path)
        prefix = top + os.sep
        for rel in folders:
            with contextlib.suppress(OSError):
                out[rel] = os.lstat(prefix + rel if rel else top).st_mtime_ns
        return out

    def _load(self) -> tuple[dict[str, Entry], dict[str, int]]:
        """The files (project stat, copy stat) and folders (mtime) of the last saved sync; empty when
        unknown. ``marshal``, not JSON: it loads a 20,000-file manifest in a few milliseconds, and the
        file is the user's own cache, written by this same code (the format names the Python version)."""
        try:
            data = marshal.loads((self.folder / MANIFEST).read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            return {}, {}
        if not (isinstance(data, tuple) and len(data) == 3 and data[0] == _FORMAT):
            return {}, {}
        files, dirs = data[1], data[2]
        if not isinstance(files, dict) or not isinstance(dirs, dict):
            return {}, {}
        return files, dirs

    def _save(self, files: Mapping[str, Entry], dirs: Mapping[str, int]) -> None:
        temp = self.folder / f"{MANIFEST}.tmp"
        temp.write_bytes(marshal.dumps((_FORMAT, dict(files), dict(dirs))))
        os.replace(temp, self.folder / MANIFEST)

    def release(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = -1


def _copy(source: str, target: str, replace: bool = True) -> tuple[int, int, int, int] | None:
    """Copy one file (a symlink as a symlink), replacing what was there; the copy's stat."""
    # Whatever is there goes first: copying over a symlink a test left would write through it. A copy
    # made from scratch (an empty tree) has nothing to replace.
    if replace:
        _remove(target)
    try:
        try:
            shutil.copy2(source, target, follow_symlinks=False)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    except OSError:
        return None
    return _stat(target)


def _parents(files: Iterable[str]) -> set[str]:
    """Every folder that holds one of ``files`` (the top as ``""``)."""
    folders = {""}
    for rel in files:
        parts = rel.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            folders.add("/".join(parts[:end]))
    return folders


def _remove(path: str) -> int:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        return 0
    return 1
