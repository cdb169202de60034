"""gitio: exporting a commit as a tree that tests can run in."""

import os
from pathlib import Path

from coderefine.gitio import GitRepo
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
