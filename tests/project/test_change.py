from pathlib import Path

import pytest

from coderefine.errors import GitError, InputError
from coderefine.project.change import from_branch, from_patch, from_staged, from_worktree, load_change
from coderefine.project.gitio import GitRepo
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files

MAX = 1024 * 1024


def test_worktree_change_against_head(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    (root / "pkg/mod.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=GitRepo.find(root), max_bytes=MAX)
    [f] = change.files
    assert f.kind == "modified"
    assert f.before is not None and "a + b" in f.before.text
    assert "-    return a + b" in change.diff()
    assert change.source == "worktree"


def test_unchanged_file_is_reviewed_whole(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=GitRepo.find(root), max_bytes=MAX)
    assert change.files[0].kind == "whole"
    assert change.files[0].before is None
    assert change.diff() == ""


def test_untracked_file_is_added(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/new.py": "x = 1\n"})
    change = from_worktree([Path("pkg/new.py")], cwd=root, repo=GitRepo.find(root), max_bytes=MAX)
    assert change.files[0].kind == "added"
    assert "+x = 1" in change.diff()


def test_paths_relative_to_a_subfolder(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    change = from_worktree([Path("mod.py")], cwd=root / "pkg", repo=GitRepo.find(root), max_bytes=MAX)
    assert change.paths == ("pkg/mod.py",)


def test_staged_change_ignores_unstaged_work(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    (root / "pkg/mod.py").write_text("def add(a, b):\n    return b + a\n", encoding="utf-8")
    git(root, "add", "pkg/mod.py")
    (root / "pkg/mod.py").write_text("UNSTAGED = 1\n", encoding="utf-8")
    change = from_staged(None, cwd=root, repo=GitRepo.find(root), max_bytes=MAX)
    [f] = change.files
    assert "b + a" in f.after.text
    assert "UNSTAGED" not in f.after.text


def test_branch_against_merge_base(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"pkg/mod.py": "def add(a, b):\n    return a - b\n", "README.txt": "x"})
    git(root, "commit", "-qam", "break add")
    git(root, "add", "README.txt")
    git(root, "commit", "-qm", "docs")
    git(root, "checkout", "-q", "main")
    write_files(root, {"tests/test_other.py": "def test_other():\n    assert 1\n"})
    git(root, "commit", "-qam", "main moves on")
    git(root, "checkout", "-q", "feature")
    change = from_branch(GitRepo.find(root), "main", max_bytes=MAX)  # type: ignore[arg-type]
    assert change.paths == ("pkg/mod.py",)
    assert change.messages == ("docs", "break add")


def test_unknown_base_is_a_git_error(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        from_branch(GitRepo.find(root), "nope", max_bytes=MAX)  # type: ignore[arg-type]


def test_detached_head_works(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "--detach")
    (root / "pkg/mod.py").write_text("x = 2\n", encoding="utf-8")
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=GitRepo.find(root), max_bytes=MAX)
    assert change.files[0].kind == "modified"


def test_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write_files(tmp_path, {"m.py": "x = 1\n"})
    change = from_worktree([Path("m.py")], cwd=tmp_path, repo=GitRepo.find(tmp_path), max_bytes=MAX)
    assert change.files[0].kind == "whole"


def test_outside_git_is_whole_file_review(tmp_path: Path) -> None:
    write_files(tmp_path, {"proj/pyproject.toml": "", "proj/pkg/m.py": "x = 1\n"})
    change = from_worktree([Path("proj/pkg/m.py")], cwd=tmp_path, repo=None, max_bytes=MAX)
    assert change.root == tmp_path / "proj"
    assert change.paths == ("pkg/m.py",)
    assert change.source == "files"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.py", None, "no such file"),
        ("notes.txt", "hello", "not a Python file"),
        ("nb.ipynb", "{}", "notebooks"),
        ("bin.py", b"\x00\x00", "binary"),
    ],
)
def test_bad_inputs(tmp_path: Path, name: str, content: str | bytes | None, message: str) -> None:
    if content is not None:
        write_files(tmp_path, {name: content})
    with pytest.raises(InputError, match=message):
        from_worktree([Path(name)], cwd=tmp_path, repo=None, max_bytes=MAX)


def test_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pkg.py").mkdir()
    with pytest.raises(InputError, match="directory"):
        from_worktree([Path("pkg.py")], cwd=tmp_path, repo=None, max_bytes=MAX)


def test_patch_not_yet_applied_and_already_applied(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.py": "x = 1\ny = 2\n"})
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 3\n y = 2\n"
    change = from_patch(diff, root=tmp_path, max_bytes=MAX)
    assert change.files[0].after.text == "x = 3\ny = 2\n"
    write_files(tmp_path, {"m.py": "x = 3\ny = 2\n"})
    change = from_patch(diff, root=tmp_path, max_bytes=MAX)
    assert change.files[0].before is not None and change.files[0].before.text == "x = 1\ny = 2\n"


def test_patch_outside_project_is_refused(tmp_path: Path) -> None:
    diff = "--- a/../x.py\n+++ b/../x.py\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(InputError, match="outside"):
        from_patch(diff, root=tmp_path, max_bytes=MAX)


def test_load_change_dispatches(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    repo = GitRepo.find(root)
    with pytest.raises(GitError, match="--base needs a git repository"):
        load_change([], cwd=root, repo=None, base="main", max_bytes=MAX)
    assert load_change([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=MAX).source == "worktree"
