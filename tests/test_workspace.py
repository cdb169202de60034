from pathlib import Path

import pytest

from coderefine.gitio import GitRepo
from coderefine.workspace import IsolatedTree, project_files
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files


def test_copy_holds_tracked_and_untracked_but_not_ignored(make_repo: RepoFactory) -> None:
    root = make_repo({**SMALL_PROJECT, ".gitignore": "secret.txt\n"})
    write_files(root, {"untracked.py": "y = 1\n", "secret.txt": "s"})
    files = project_files(root, GitRepo.find(root))
    assert "untracked.py" in files and "secret.txt" not in files
    with IsolatedTree(root, files, {"pkg/mod.py": b"CHANGED = 1\n"}) as tree:
        assert (tree.path / "untracked.py").exists()
        assert (tree.path / "pkg/mod.py").read_bytes() == b"CHANGED = 1\n"
        copied = tree.path
    assert not copied.exists()
    assert "return a + b" in (root / "pkg/mod.py").read_text()


def test_walk_outside_git_skips_environments(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.py": "", ".venv/lib/x.py": "", "pkg/__pycache__/m.pyc": "", "pkg/a.py": ""})
    assert project_files(tmp_path, None) == ["m.py", "pkg/a.py"]


def test_writes_stay_inside_the_copy(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.py": ""})
    with IsolatedTree(tmp_path, ["m.py"]) as tree, pytest.raises(ValueError, match="outside"):
        tree.write("../escape.py", b"x")


def test_bytecode_is_never_copied(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.py": "x = 1\n", "__pycache__/m.cpython-311.pyc": b"stale"})
    files = [*project_files(tmp_path, None), "__pycache__/m.cpython-311.pyc"]
    with IsolatedTree(tmp_path, files) as tree:
        assert not (tree.path / "__pycache__").exists()
