"""The folder watch of a held copy: every name touched in a watched folder, by anyone; None whenever
that cannot be known, so the caller stats every file instead."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from coderefine.project.watch import FolderWatch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def test_names_written_created_and_deleted_are_reported(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/a.py").write_text("A = 1\n")
    (tmp_path / "b.py").write_text("B = 1\n")
    watch = FolderWatch.start(str(tmp_path), ["", "pkg"])
    assert watch is not None
    try:
        assert watch.changed() == set()
        with open(tmp_path / "pkg/a.py", "r+") as handle:
            handle.write("A")
        (tmp_path / "b.py").unlink()
        (tmp_path / "new").mkdir()
        (tmp_path / "new/inside.txt").write_text("x")  # not watched: its folder is the news
        os.chmod(tmp_path / "pkg", 0o755)  # a folder's metadata is its parent's news
        assert watch.changed() == {"pkg/a.py", "b.py", "new", "pkg"}
        assert watch.changed() == set()
    finally:
        watch.close()


def test_a_watched_folder_that_goes_makes_the_answer_unknown(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    watch = FolderWatch.start(str(tmp_path), ["", "pkg"])
    assert watch is not None
    try:
        (tmp_path / "pkg").rmdir()
        assert watch.changed() is None
        assert watch.changed() is None  # and stays unknown
    finally:
        watch.close()


def test_a_folder_that_cannot_be_watched_gives_no_watch(tmp_path: Path) -> None:
    assert FolderWatch.start(str(tmp_path), ["missing"]) is None
