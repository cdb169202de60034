"""Which files a sweep selects: folders, --all, --exclude; real git in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from coderefine.doors.sweep.select import excluded, select_files
from coderefine.errors import InputError
from coderefine.project.gitio import GitRepo
from tests.conftest import RepoFactory, write_files

FILES: dict[str, str | bytes] = {
    "src/app/__init__.py": "",
    "src/app/core.py": "x = 1\n",
    "src/app/legacy/old.py": "y = 2\n",
    "src/app/proto_pb2.py": "z = 3\n",
    "tests/test_core.py": "def test():\n    pass\n",
    "README.md": "hi\n",
    ".gitignore": "build/\n",
}


@pytest.fixture
def repo_root(make_repo: RepoFactory) -> Path:
    root = make_repo(FILES)
    write_files(root, {"src/app/new.py": "n = 1\n", "build/gen.py": "g = 1\n"})
    return root


def test_a_folder_is_its_python_files_git_tracks_or_would_add(repo_root: Path) -> None:
    repo = GitRepo.find(repo_root)
    assert select_files(repo_root, ["src"], repo=repo) == [
        "src/app/__init__.py",
        "src/app/core.py",
        "src/app/legacy/old.py",
        "src/app/new.py",
        "src/app/proto_pb2.py",
    ]
    # Paths are relative to the current folder; the result to the root.
    assert select_files(repo_root, ["legacy"], repo=repo, cwd=repo_root / "src/app") == [
        "src/app/legacy/old.py"
    ]


def test_all_is_every_tracked_python_file(repo_root: Path) -> None:
    selected = select_files(repo_root, [], all_tracked=True, repo=GitRepo.find(repo_root))
    assert "src/app/new.py" not in selected and "build/gen.py" not in selected
    assert selected == sorted(selected) and "tests/test_core.py" in selected and len(selected) == 5


def test_exclude_matches_a_path_a_name_or_a_folder(repo_root: Path) -> None:
    repo = GitRepo.find(repo_root)
    selected = select_files(
        repo_root, ["."], excludes=["*_pb2.py", "src/app/legacy", "tests/*", "new.py"], repo=repo
    )
    assert selected == ["src/app/__init__.py", "src/app/core.py"]
    assert excluded("a/b/c.py", ["b"]) and excluded("a/b/c.py", ["a/*"]) and not excluded("a/bc.py", ["b"])


def test_bad_selections_say_what_to_do(repo_root: Path) -> None:
    repo = GitRepo.find(repo_root)
    with pytest.raises(InputError, match="no such file or folder"):
        select_files(repo_root, ["nowhere"], repo=repo)
    with pytest.raises(InputError, match="not a Python file"):
        select_files(repo_root, ["README.md"], repo=repo)
    with pytest.raises(InputError, match="every file was excluded"):
        select_files(repo_root, ["src"], excludes=["*.py"], repo=repo)
    with pytest.raises(InputError, match="outside the project"):
        select_files(repo_root / "src", ["../tests"], repo=repo)
