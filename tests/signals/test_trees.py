"""A big project's first test trees are sparse: the files its tests reach. A run that falls short of a
file is made again in a whole copy, which then persists."""

from __future__ import annotations

from pathlib import Path

import pytest

from coderefine.config import Settings
from coderefine.project.basetree import TreeCache, tree_cache_folder
from coderefine.project.change import from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import project_files
from coderefine.signals.evaluate import Evaluator
from tests.conftest import RepoFactory

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from pkg.mod import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
# A module that only a computed name reaches: no import line leads the sparse reading to it.
DYNAMIC = (
    "import importlib\n\nfrom pkg.mod import add\n\n\n"
    "def test_plugin():\n    assert importlib.import_module('junk.' + 'f001').X == add(0, 1)\n"
)


def _project(make_repo: RepoFactory, test: str) -> Path:
    files: dict[str, str | bytes] = {f"junk/f{n:03d}.py": "X = 1\n" for n in range(120)}
    files |= {"pkg/__init__.py": "", "pkg/mod.py": BUGGY, "tests/test_mod.py": test, "tests/data.txt": "x\n"}
    return make_repo(files)


def _evaluate(root: Path, environ: dict[str, str]) -> tuple[list[str], int, int]:
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    with Evaluator(
        change, Settings(warm_tests=False), SubprocessRunner(), environ, project_files(root, repo)
    ) as ev:
        signals = ev.evaluate({"pkg/mod.py": FIXED}).signals.signals
        tree = ev._trees.path("candidate")
        held = sum(1 for p in tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        return [s.code for s in signals if s.source == "pytest"], held, ev._trees.made_whole


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("coderefine.signals.trees.SPARSE_MIN", 50)


def test_the_first_tree_of_a_big_project_holds_what_its_tests_reach(
    make_repo: RepoFactory, tmp_path: Path, small_threshold: None
) -> None:
    root = _project(make_repo, TEST)
    environ = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    failing, held, made_whole = _evaluate(root, environ)
    assert failing == [] and made_whole == 0
    assert held < 10  # the test, its module and package, the data beside, the top files
    folder = tree_cache_folder(environ)
    assert folder is not None and not TreeCache(folder).filled(root)


def test_a_sparse_run_short_of_a_file_is_made_again_whole_and_the_copy_persists(
    make_repo: RepoFactory, tmp_path: Path, small_threshold: None
) -> None:
    root = _project(make_repo, DYNAMIC)
    environ = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    failing, held, made_whole = _evaluate(root, environ)
    assert failing == [] and made_whole == 1 and held > 120
    folder = tree_cache_folder(environ)
    assert folder is not None and TreeCache(folder).filled(root)
    # The next run takes the whole copy from the start.
    failing, held, made_whole = _evaluate(root, environ)
    assert failing == [] and made_whole == 0 and held > 120
