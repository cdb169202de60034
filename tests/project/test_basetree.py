"""Persistent copies of a project: brought up to date by what changed, on either side, and never a way
for a test to reach the user's files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coderefine.project.basetree import STALE_SECONDS, TreeCache, tree_cache_folder
from tests.conftest import write_files

FILES = {"pkg/__init__.py": "", "pkg/mod.py": "X = 1\n", "tests/test_mod.py": "def test(): pass\n"}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_files(root, FILES)
    return root


def _tree_files(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_second_sync_copies_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache")
    slot = cache.acquire(root)
    assert slot is not None
    first = slot.sync(root, list(FILES))
    again = slot.sync(root, list(FILES))
    slot.release()
    assert (first.copied, again.copied, again.kept) == (3, 0, 3)
    assert _tree_files(slot.path) == {k: v.encode() for k, v in FILES.items()}


def test_edited_deleted_and_new_project_files_are_followed(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache")
    slot = cache.acquire(root)
    assert slot is not None
    slot.sync(root, list(FILES))
    (root / "pkg/mod.py").write_text("X = 2  # edited\n")
    (root / "tests/test_mod.py").unlink()
    write_files(root, {"pkg/new/extra.py": "Y = 1\n"})
    files = ["pkg/__init__.py", "pkg/mod.py", "tests/test_mod.py", "pkg/new/extra.py"]  # one is gone
    report = slot.sync(root, files)
    slot.release()
    assert report.copied == 2 and report.removed == 1
    assert _tree_files(slot.path) == {
        "pkg/__init__.py": b"",
        "pkg/mod.py": b"X = 2  # edited\n",
        "pkg/new/extra.py": b"Y = 1\n",
    }


def test_what_a_run_wrote_in_the_copy_is_undone_and_never_reaches_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache")
    slot = cache.acquire(root)
    assert slot is not None
    slot.sync(root, list(FILES))
    # What a test might do: write a project file in place, add files and folders, swap in a symlink.
    with open(slot.path / "pkg/mod.py", "r+b") as handle:
        handle.write(b"Y")
    write_files(slot.path, {"junk.txt": "x", "pkg/out/result.json": "{}"})
    (slot.path / "pkg/__init__.py").unlink()
    (slot.path / "pkg/__init__.py").symlink_to(root / "pkg/__init__.py")
    report = slot.sync(root, list(FILES))
    slot.release()
    assert (root / "pkg/mod.py").read_text() == "X = 1\n"
    assert (root / "pkg/__init__.py").read_text() == ""
    assert report.copied == 2 and report.removed == 2
    assert _tree_files(slot.path) == {k: v.encode() for k, v in FILES.items()}
    assert not (slot.path / "pkg/__init__.py").is_symlink()


def test_a_damaged_manifest_rebuilds_the_copy(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache")
    slot = cache.acquire(root)
    assert slot is not None
    slot.sync(root, list(FILES))
    write_files(slot.path, {"stray.txt": "x"})
    for manifest in slot.folder.glob("manifest*"):
        manifest.write_bytes(b"not a manifest")
    report = slot.sync(root, list(FILES))
    slot.release()
    assert report.copied == 3
    assert _tree_files(slot.path) == {k: v.encode() for k, v in FILES.items()}


def test_concurrent_users_get_their_own_slots(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache", slots=2)
    first, second = cache.acquire(root), cache.acquire(root)
    assert first is not None and second is not None
    assert first.path != second.path
    assert cache.acquire(root) is None  # all busy: the caller makes a temporary copy
    first.release()
    again = cache.acquire(root)
    assert again is not None and again.path == first.path
    again.release()
    second.release()


def test_copies_of_projects_unused_for_long_are_removed(tmp_path: Path) -> None:
    old, new = _project(tmp_path / "a"), _project(tmp_path / "b")
    cache = TreeCache(tmp_path / "cache")
    slot = cache.acquire(old)
    assert slot is not None
    slot.release()
    stamp = cache.project_folder(old) / "used"
    past = stamp.stat().st_mtime - STALE_SECONDS - 10
    os.utime(stamp, (past, past))
    kept = cache.acquire(new)
    assert kept is not None
    kept.release()
    assert not cache.project_folder(old).exists()
    assert cache.project_folder(new).exists()


def test_where_the_copies_live() -> None:
    assert tree_cache_folder({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/x/coderefine/trees")
    assert tree_cache_folder({"HOME": "/h"}) == Path("/h/.cache/coderefine/trees")
    assert tree_cache_folder({}) is None


def test_clear_removes_a_projects_copies_unless_a_run_holds_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cache = TreeCache(tmp_path / "cache")
    slot = cache.acquire(root)
    assert slot is not None
    slot.sync(root, list(FILES))
    assert cache.clear(root) is False and slot.path.exists()  # in use: nothing removed
    slot.release()
    assert cache.clear(root) is True and not cache.project_folder(root).exists()
    assert cache.clear(root) is True  # nothing there is nothing to do


def test_cache_clear_from_the_command_line_removes_the_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from coderefine.cli.main import main

    root = _project(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = TreeCache(tmp_path / "xdg" / "coderefine" / "trees")
    slot = cache.acquire(root)
    assert slot is not None
    slot.release()
    out = io.StringIO()
    assert main(["cache", "info"], out=out) == 0 and "test trees in" in out.getvalue()
    out = io.StringIO()
    assert main(["cache", "clear"], out=out) == 0 and "removed the test trees" in out.getvalue()
    assert not cache.project_folder(root).exists()
