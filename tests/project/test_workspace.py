from pathlib import Path

import pytest

from coderefine.config import Settings
from coderefine.project.change import from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import IsolatedTree, project_files, tree_files
from coderefine.signals.evaluate import Evaluator
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


TOUCHY_TESTS = """from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_writes_project_files():
    assert not (ROOT / "pkg/leftover.txt").exists()  # what an earlier run left is gone
    (ROOT / "pkg/data.txt").write_text("written by a test")
    with open(ROOT / "pkg/mod.py", "a") as handle:
        handle.write("# appended by a test\\n")
    (ROOT / "pkg/leftover.txt").write_text("x")


def test_sees_the_candidate():
    names = sorted(p.name for p in (ROOT / "pkg").iterdir())
    assert "data.txt" in names and "mod.py" in names
    assert (ROOT / "pkg/mod.py").read_text().startswith("VALUE = 3")
"""


def test_tests_in_a_persistent_tree_never_touch_the_user_files(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    root = make_repo(
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": "VALUE = 1\n",
            "pkg/data.txt": "original\n",
            "tests/test_touchy.py": TOUCHY_TESTS,
        }
    )
    write_files(root, {"pkg/mod.py": "VALUE = 2\n"})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    settings = Settings(warm_tests=False, tests="all")
    for _ in range(2):  # the second run reuses the copies the first one left
        with Evaluator(change, settings, SubprocessRunner(), env, project_files(root, repo)) as evaluator:
            result = evaluator.evaluate({"pkg/mod.py": "VALUE = 3\n"})
        assert [s.code for s in result.signals.signals if s.source == "pytest"] == []
        assert any(s.source == "pytest" and s.state == "ok" for s in result.signals.statuses)
    assert (root / "pkg/data.txt").read_text() == "original\n"
    assert (root / "pkg/mod.py").read_text() == "VALUE = 2\n"
    assert not (root / "pkg/leftover.txt").exists()
    assert list((tmp_path / "cache/coderefine/trees").iterdir())  # the copies were persistent ones


def test_a_copy_holds_the_ignored_sources_a_build_wrote_into_a_package(make_repo: RepoFactory) -> None:
    # setuptools-scm writes pkg/version.py and the project ignores it; without it in the copy every test
    # that imports pkg fails at collection, and check said "pytest ok (0 tests ran)".
    root = make_repo(
        {
            **SMALL_PROJECT,
            ".gitignore": "pkg/version.py\n.venv/\nbuild/\n*.log\n",
            "pkg/__init__.py": "from pkg.version import version\n",
        }
    )
    write_files(
        root,
        {
            "pkg/version.py": "version = '1.0'\n",
            ".venv/lib/site.py": "x = 1\n",
            "build/lib/pkg/mod.py": "x = 1\n",
            "run.log": "noise\n",
        },
    )
    repo = GitRepo.find(root)
    assert repo is not None
    files = tree_files(root, repo)
    assert "pkg/version.py" in files
    assert not any(f.startswith((".venv", "build")) or f.endswith(".log") for f in files)
    # the files a folder expands to for review stay the project's own
    assert "pkg/version.py" not in project_files(root, repo)
