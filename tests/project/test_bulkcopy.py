"""The bulk copy of a project's files: the first fill of a persistent copy and a temporary copy take one
tar pipe, and whatever the pipe did not copy whole is copied one by one or left out, as before."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from coderefine.project.basetree import TreeCache
from coderefine.project.bulkcopy import BULK_MIN, tar_copy
from coderefine.project.workspace import copy_files
from tests.conftest import write_files


def _big_project(root: Path, count: int = BULK_MIN + 50) -> dict[str, str]:
    files = {f"pkg/sub{n % 7}/mod{n}.py": f"X = {n}\n" for n in range(count)}
    files["odd name with spaces.txt"] = "data\n"
    write_files(root, files)
    (root / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("pkg/sub0/mod0.py", root / "link.py")
    return {**files, "run.sh": "#!/bin/sh\n"}


def _listed(root: Path, files: dict[str, str]) -> list[str]:
    return [*files, "link.py", "gone.py", "stale.pyc"]


def test_tar_copies_files_modes_and_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    files = _big_project(root)
    dest = tmp_path / "copy"
    assert tar_copy(str(root), [*files, "link.py"], str(dest))
    assert all((dest / rel).read_text() == text for rel, text in files.items())
    assert os.readlink(dest / "link.py") == "pkg/sub0/mod0.py"
    assert stat.S_IMODE(os.stat(dest / "run.sh").st_mode) == 0o755


def test_without_tar_nothing_is_claimed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert not tar_copy(str(tmp_path), ["a.py"], str(tmp_path / "copy"))
    assert not tar_copy(str(tmp_path), [], str(tmp_path / "copy"))


def test_a_first_fill_copies_everything_and_the_next_sync_nothing(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    files = _big_project(root)
    slot = TreeCache(tmp_path / "cache").acquire(root)
    assert slot is not None
    first = slot.sync(root, _listed(root, files))  # a tracked file deleted, and bytecode: left out
    again = slot.sync(root, _listed(root, files))
    slot.release()
    assert first.copied == len(files) + 1
    assert (again.copied, again.kept) == (0, len(files) + 1)
    assert not (slot.path / "gone.py").exists() and not (slot.path / "stale.pyc").exists()
    assert (slot.path / "pkg/sub3/mod3.py").read_text() == "X = 3\n"


def test_a_tar_that_copies_nothing_leaves_the_copy_to_python(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "proj"
    files = _big_project(root)
    broken = tmp_path / "tar"
    broken.write_text("#!/bin/sh\ncat >/dev/null\nexit 2\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    dest = tmp_path / "copy"
    copy_files(root, _listed(root, files), dest)
    assert {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} == {*files, "link.py"}
    slot = TreeCache(tmp_path / "cache").acquire(root)
    assert slot is not None
    report = slot.sync(root, _listed(root, files))
    slot.release()
    assert report.copied == len(files) + 1
    assert (slot.path / "pkg/sub5/mod5.py").read_text() == "X = 5\n"


def test_a_copy_cut_short_is_copied_again(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "proj"
    files = _big_project(root)
    # A tar that stops part way: every file it wrote is empty.
    short = tmp_path / "tar"
    short.write_text(
        '#!/bin/sh\ncase "$1" in -x*) cat >/dev/null; mkdir -p pkg/sub1; : > pkg/sub1/mod1.py;; '
        "*) cat >/dev/null;; esac\n"
    )
    short.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    slot = TreeCache(tmp_path / "cache").acquire(root)
    assert slot is not None
    slot.sync(root, _listed(root, files))
    slot.release()
    assert (slot.path / "pkg/sub1/mod1.py").read_text() == "X = 1\n"
