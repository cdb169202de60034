"""gitio: git through the git program on the paths every command takes; exporting a commit."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coderefine.errors import GitError
from coderefine.project.gitio import GitRepo
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files


def test_a_commit_with_a_link_out_of_the_tree_exports_without_it(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    root = make_repo({"pkg/mod.py": "X = 1\n", "pkg/__init__.py": ""})
    os.symlink("/etc/hostname", root / "outside")
    os.symlink("../../elsewhere", root / "pkg" / "up")
    os.symlink("mod.py", root / "pkg" / "alias.py")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")
    repo = GitRepo.find(root)
    assert repo is not None
    dest = tmp_path / "export"
    dest.mkdir()
    repo.export_commit("HEAD", dest)
    assert (dest / "pkg" / "mod.py").read_text() == "X = 1\n"
    assert (dest / "pkg" / "alias.py").read_text() == "X = 1\n"  # a link inside the tree is kept
    assert not (dest / "outside").is_symlink() and not (dest / "pkg" / "up").is_symlink()


def test_the_check_path_reads_git_without_importing_gitpython(make_repo: RepoFactory) -> None:
    root = make_repo({"pkg/mod.py": "X = 1\n", "pkg/__init__.py": ""})
    (root / "pkg/mod.py").write_text("X = 2\n")
    (root / "new.py").write_text("Y = 1\n")
    git(root, "add", "new.py")
    probe = (
        "import sys; from pathlib import Path; from coderefine.project.gitio import GitRepo\n"
        "repo = GitRepo.find(Path('pkg'))\n"
        "assert repo is not None and repo.root == Path.cwd().resolve(), repo\n"
        "assert repo.has_head() and repo.blob_at('HEAD', 'pkg/mod.py') == b'X = 1\\n'\n"
        "assert repo.blob_at('HEAD', 'new.py') is None and repo.index_blob('new.py') == b'Y = 1\\n'\n"
        "assert repo.project_files() == ['new.py', 'pkg/__init__.py', 'pkg/mod.py'], repo.project_files()\n"
        "assert repo.staged_paths() == ['new.py'] and 'pkg/mod.py' in repo.worktree_changed_paths()\n"
        "assert 'git' not in sys.modules, 'gitpython was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr


def test_outside_git_in_git_dir_and_without_head(make_repo: RepoFactory, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert GitRepo.find(plain) is None
    root = make_repo({"a.py": "A = 1\n"})
    assert GitRepo.find(root / ".git") is None
    found = GitRepo.find(root / "a.py")  # a file: its folder's repository
    assert found is not None and found.git_dir == (root / ".git").resolve()
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    fresh = GitRepo.find(empty)
    assert fresh is not None and not fresh.has_head()
    assert fresh.blob_at("HEAD", "a.py") is None and fresh.worktree_changed_paths() == []


def test_an_unknown_revision_is_an_error_not_a_missing_file(make_repo: RepoFactory) -> None:
    root = make_repo({"a.py": "A = 1\n"})
    repo = GitRepo.find(root)
    assert repo is not None
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        repo.blob_at("nope", "a.py")
    with pytest.raises(GitError, match="unknown revision"):
        repo.blob_at("--output=x", "a.py")
    assert repo.blob_at("main", "missing.py") is None
    assert repo.blob_at("main", "a.py") == b"A = 1\n"
    assert repo.changed_between("main", "HEAD") == []
    assert repo.hooks_dir() == (root / ".git" / "hooks").resolve()


def test_clean_at_names_the_tracked_files_only_of_a_clean_checkout(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    repo = GitRepo.find(root)
    assert repo is not None
    head = repo.rev_parse("HEAD")
    write_files(root, {"untracked.py": "x = 1\n"})
    assert repo.clean_at(head) == sorted(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": "changed = 1\n"})
    assert repo.clean_at(head) is None
    git(root, "commit", "-qam", "two")
    assert repo.clean_at(head) is None  # the checkout is another commit
    assert repo.clean_at("HEAD") is not None
