"""The base's test results of a review, kept between runs by the content of the baseline's tree: a
review run again, or after a push that changed only the files under review, does not run the base's
tests again; anything else the tree holds, the interpreter or the settings make a new key."""

from __future__ import annotations

import sys
from pathlib import Path

from coderefine.config import Settings
from coderefine.doors.review.basecache import base_results
from coderefine.doors.review.run import run_review
from coderefine.project.cache import ReviewCache
from coderefine.project.change import from_branch
from coderefine.project.gitio import GitRepo
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.signals.test_evaluate import CountingRunner

FEATURE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
SETTINGS = Settings(warm_tests=False)


def _feature(make_repo: RepoFactory) -> Path:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"pkg/mod.py": FEATURE})
    git(root, "commit", "-qam", "Make add faster")
    return root


def _review(root: Path, cache: ReviewCache) -> tuple[list[str], int, str]:
    repo = GitRepo.find(root)
    assert repo is not None
    change = from_branch(repo, "main", max_bytes=1 << 20)
    head = repo.rev_parse("HEAD")
    store = base_results(change, repo.blob_ids(head), SETTINGS, sys.executable, cache)
    runner = CountingRunner()
    report = run_review(
        change,
        SETTINGS,
        None,
        runner,
        {"PATH": "/usr/bin:/bin"},
        repo.project_files(),
        intent="make add faster",
        intent_source="commit messages",
        head=head,
        populate_tree=lambda dest: repo.export_commit(head, dest),
        base_results=store,
    )
    return (
        sorted(f"{f.rule_id} {f.path} {f.title}" for f in report.findings),
        len(runner.pytest_runs),
        store.key,
    )


def test_a_second_review_takes_the_bases_results_from_the_cache(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    root = _feature(make_repo)
    cache = ReviewCache(tmp_path / "cache", 100)
    first, runs, key = _review(root, cache)
    assert any("test_add" in f for f in first) and runs == 2  # the head's run and the base's
    again, runs_again, key_again = _review(root, cache)
    assert again == first and runs_again == 1 and key_again == key
    # A push that changed only the file under review: the same baseline, the same results.
    write_files(root, {"pkg/mod.py": FEATURE.replace("a - b", "a - b - 0")})
    git(root, "commit", "-qam", "again")
    pushed, runs_pushed, key_pushed = _review(root, cache)
    assert key_pushed == key and runs_pushed == 1
    assert any("test_add" in f for f in pushed)


def test_anything_else_in_the_tree_makes_a_new_key(make_repo: RepoFactory, tmp_path: Path) -> None:
    root = _feature(make_repo)
    cache = ReviewCache(tmp_path / "cache", 100)
    _, _, key = _review(root, cache)
    write_files(root, {"data.txt": "new data the tests may read\n"})
    git(root, "add", "data.txt")
    git(root, "commit", "-qm", "data")
    _, runs, other = _review(root, cache)
    assert other != key and runs == 2


def test_an_install_into_a_virtual_environment_changes_the_interpreter_identity(tmp_path: Path) -> None:
    """A venv's python links to the base interpreter: the venv's own site-packages counts too."""
    import os

    from coderefine.doors.review.basecache import interpreter_identity

    site = tmp_path / "venv/lib/python3.11/site-packages"
    site.mkdir(parents=True)
    (tmp_path / "venv/bin").mkdir()
    python = tmp_path / "venv/bin/python"
    python.symlink_to(sys.executable)
    before = interpreter_identity(str(python))
    (site / "newpkg").mkdir()
    os.utime(site, ns=(1, os.stat(site).st_mtime_ns + 1_000_000_000))  # an install a second later
    assert interpreter_identity(str(python)) != before
