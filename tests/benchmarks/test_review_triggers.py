"""The replay of a history behind the cost of `init --reviews`: pull requests from merge commits, commits
close in time as one push, and each choice's reviews and critic calls."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchmarks.review_triggers import PullHistory, calls, main, pulls


def commit(repo: Path, files: dict[str, str], message: str, when: int) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    env = {**os.environ, "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True, env=env)


def merge(repo: Path, branch: str, title: str, when: int) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    subprocess.run(["git", "merge", "-q", "--no-ff", "-m", title, branch], cwd=repo, check=True, env=env)


def history(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    commit(repo, {"a.py": "a = 1\n", "b.py": "b = 1\n", "README": "x\n"}, "start", 1_000_000)
    # #1: two commits a minute apart (one push), then one a day later touching a second file (a second push)
    subprocess.run(["git", "checkout", "-q", "-b", "one"], cwd=repo, check=True)
    commit(repo, {"a.py": "a = 2\n"}, "a", 1_000_100)
    commit(repo, {"a.py": "a = 3\n"}, "a again", 1_000_160)
    commit(repo, {"b.py": "b = 2\n"}, "b", 1_090_000)
    merge(repo, "one", "Change a and b (#1)", 1_100_000)
    # #2: documentation only: nothing for coderefine to review
    subprocess.run(["git", "checkout", "-q", "-b", "two"], cwd=repo, check=True)
    commit(repo, {"README": "y\n"}, "docs", 1_200_000)
    merge(repo, "two", "Docs (#2)", 1_200_100)
    return repo


def test_pushes_are_commits_close_in_time_and_a_review_counts_the_changed_python_files(
    tmp_path: Path,
) -> None:
    (found,) = pulls(history(tmp_path), last=10, gap=600)
    assert found.title == "Change a and b (#1)"
    assert found.pushes == (1, 2)  # a.py at the first push; a.py and b.py at the second


def test_each_choice_counts_its_reviews_and_critic_calls() -> None:
    pull = PullHistory("m", "t", (1, 2, 2))
    assert calls(pull, "push", 1) == (3, 5)
    assert calls(pull, "opened", 0) == (1, 1)
    assert calls(pull, "opened", 1) == (2, 3)
    assert calls(pull, "request", 2) == (2, 4)


def test_the_table_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = history(tmp_path)
    assert main([str(repo), "--last", "5"]) == 0
    out = capsys.readouterr().out
    assert "1 merged pull requests with Python changes" in out
    assert (
        "push              2.00             3.00" in out and "request           1.00             2.00" in out
    )
