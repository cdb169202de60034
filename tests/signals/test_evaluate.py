"""The Evaluator: format work across edits (old debt that moves is not new; only touched lines count), the
baseline's test run alongside the head's, and no run repeated for the same inputs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.project.runner import Completed, SubprocessRunner
from coderefine.signals.evaluate import Evaluator
from tests.conftest import RepoFactory, write_files
from tests.refiner.test_loop import BUGGY, buggy_change

ENV = {"PATH": "/usr/bin:/bin"}


class CountingRunner(SubprocessRunner):
    """The real runner, counting the pytest runs it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.pytest_runs: list[tuple[str, ...]] = []

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> Completed:
        if "pytest" in argv:
            self.pytest_runs.append(tuple(argv))
        return super().run(argv, cwd=cwd, timeout=timeout, env=env, stdin=stdin)


def test_the_same_candidate_is_tested_once(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    runner = CountingRunner()
    with Evaluator(change, Settings(warm_tests=False), runner, ENV, files) as evaluator:
        first = evaluator.evaluate({"pkg/mod.py": BUGGY})
        again = evaluator.evaluate({"pkg/mod.py": BUGGY})
        fixed = evaluator.evaluate({"pkg/mod.py": BUGGY.replace("a - b", "a + b")})
    assert first.comparison == again.comparison
    assert [s.code for s in first.comparison.introduced] == ["tests/test_mod.py::test_add"]
    assert fixed.comparison.clean
    # head, the baseline of its failing file, then the fixed candidate: the repeat cost nothing.
    assert len(runner.pytest_runs) == 3


def test_a_speculative_baseline_replaces_the_later_one(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    runner = CountingRunner()
    with Evaluator(change, Settings(warm_tests=False), runner, ENV, files) as evaluator:
        evaluator.start_baseline(tests=True)
        evaluation = evaluator.evaluate({"pkg/mod.py": BUGGY})
    assert [s.code for s in evaluation.comparison.introduced] == ["tests/test_mod.py::test_add"]
    assert len(runner.pytest_runs) == 2  # the head's and the base's, side by side; no third


def test_a_run_started_at_the_gate_is_the_one_evaluate_uses(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    runner = CountingRunner()
    fixed = {"pkg/mod.py": BUGGY.replace("a - b", "a + b")}
    other = {"pkg/mod.py": BUGGY.replace("a - b", "b + a")}
    with Evaluator(change, Settings(warm_tests=False), runner, ENV, files) as evaluator:
        evaluator.evaluate({"pkg/mod.py": BUGGY})
        before = len(runner.pytest_runs)
        evaluator.start(other)  # a candidate the gate then refused: its run must not disturb the next
        evaluator.start(fixed)
        evaluation = evaluator.evaluate(fixed)
    assert evaluation.comparison.clean
    assert len(runner.pytest_runs) == before + 2  # the refused one and the fixed one, never twice


# Two runs of old format debt, far apart, in a file whose tests pass.
DEBT = "def add(a,b):\n    return a+b\n\n\ndef mul(a, b):\n    return a * b\n\n\nTABLE = {  'a':1}\n"
PROJECT: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/mod.py": DEBT,
    "tests/test_mod.py": "from pkg.mod import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def check_json(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, object]]]:
    monkeypatch.chdir(root)
    out = io.StringIO()
    main(["check", "pkg/mod.py", "--format", "json", "--fail-on", "info"], out=out)
    data: dict[str, list[dict[str, object]]] = json.loads(out.getvalue())
    return data


def test_old_format_debt_that_moves_down_is_not_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(PROJECT)
    write_files(root, {"pkg/mod.py": "# a comment\n" + DEBT})
    data = check_json(root, monkeypatch)
    assert [s for s in data["introduced"] if s["source"] == "format"] == []
    assert data["fixed"] == []
    assert len([s for s in data["existing"] if s["source"] == "format"]) == 2


def test_only_format_work_on_touched_lines_is_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(PROJECT)
    # A badly formatted new line, and a change at the end that moves nothing above it.
    write_files(root, {"pkg/mod.py": DEBT.replace("    return a * b\n", "    return  a*b\n")})
    data = check_json(root, monkeypatch)
    introduced = [s for s in data["introduced"] if s["source"] == "format"]
    assert [s["line"] for s in introduced] == [6]
    assert len([s for s in data["existing"] if s["source"] == "format"]) == 2


def test_editing_a_badly_formatted_line_that_stays_so_is_not_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(PROJECT)
    write_files(root, {"pkg/mod.py": DEBT.replace("return a+b", "return a+b+0")})
    data = check_json(root, monkeypatch)
    assert [s for s in data["introduced"] if s["source"] == "format"] == []
    assert data["fixed"] == []


def test_pinned_files_are_seen_as_given_not_as_the_working_tree_has_them(make_repo: RepoFactory) -> None:
    """A sweep pins the files it already wrote to their old bytes: a later file's tests see the project as
    the sweep found it, even though the persistent tree follows the working tree."""
    from coderefine.project.change import from_worktree
    from coderefine.project.gitio import GitRepo
    from coderefine.project.workspace import project_files

    root = make_repo(
        {
            "a.py": "X = 1\n",
            "b.py": "from a import X\n\n\ndef y():\n    return X\n",
            "tests/test_b.py": "from b import y\n\n\ndef test_y():\n    assert y() == 1\n",
        }
    )
    write_files(root, {"a.py": "X = 2\n", "extra.py": "raise SystemExit('not in the sweep')\n"})
    repo = GitRepo.find(root)
    change = from_worktree([Path("b.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    files = project_files(root, repo)
    text = (root / "b.py").read_text()
    with Evaluator(change, Settings(warm_tests=False), SubprocessRunner(), ENV, files) as loose:
        seen = loose.evaluate({"b.py": text}).signals.signals
        assert [s.code for s in seen if s.source == "pytest"] == ["tests/test_b.py::test_y"]  # X == 2
    pins = {"a.py": b"X = 1\n", "extra.py": None}
    with Evaluator(
        change, Settings(warm_tests=False), SubprocessRunner(), ENV, files, pinned=lambda: pins
    ) as pinned:
        seen = pinned.evaluate({"b.py": text}).signals.signals
        assert [s.code for s in seen if s.source == "pytest"] == []
    assert (root / "a.py").read_text() == "X = 2\n"  # the working tree is untouched


@pytest.mark.parametrize("persistent", [True, False])
def test_persistent_trees_can_be_turned_off(make_repo: RepoFactory, tmp_path: Path, persistent: bool) -> None:
    change, files = buggy_change(make_repo)
    cache = tmp_path / "xdg"
    environ = {**ENV, "XDG_CACHE_HOME": str(cache)}
    settings = Settings(warm_tests=False, persistent_trees=persistent)
    with Evaluator(change, settings, SubprocessRunner(), environ, files) as evaluator:
        evaluator.evaluate({"pkg/mod.py": BUGGY})
    assert (cache / "coderefine" / "trees").exists() == persistent


def test_syntax_signals_come_from_compile_alone(make_repo: RepoFactory) -> None:
    """libcst's parse is the gate's (it guards writes), not a signal: evaluating a change never imports
    libcst, and a compile() error reads as introduced or as existing like any other signal."""
    from coderefine.project.change import from_worktree
    from coderefine.project.gitio import GitRepo
    from coderefine.project.workspace import project_files
    from tests.conftest import SMALL_PROJECT

    old = BUGGY + "def broken(:\n"
    root = make_repo({**SMALL_PROJECT, "pkg/mod.py": old})
    write_files(root, {"pkg/mod.py": old + "# edited\n"})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    files = project_files(root, repo)
    with Evaluator(change, Settings(tests=False), SubprocessRunner(), ENV, files) as evaluator:
        seen = evaluator.evaluate({"pkg/mod.py": old + "# edited\n"})
        fixed = evaluator.evaluate({"pkg/mod.py": BUGGY})
    assert [s.code for s in seen.comparison.introduced if s.source == "syntax"] == []
    assert [s.code for s in seen.comparison.existing if s.source == "syntax"] == ["syntax-error"]
    assert [s.code for s in fixed.comparison.fixed if s.source == "syntax"] == ["syntax-error"]
    probe = "import sys, coderefine.signals.evaluate; print('libcst' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# Old lint: B007 (a loop variable the body never uses) on line 3, there before any change.
LOOP = "def count(n, m):\n    total = 0\n    for i in range(n):\n        total += 1\n    return total\n"
OTHER = "\n\ndef other(x):\n    return x * 2\n"
LINT_PROJECT: dict[str, str | bytes] = {"pkg/__init__.py": "", "pkg/mod.py": LOOP + OTHER}


def ruff_of(data: dict[str, list[dict[str, object]]], key: str) -> list[tuple[object, object]]:
    return [(s["code"], s["line"]) for s in data[key] if s["source"] == "ruff"]


def test_old_lint_on_an_edited_line_is_not_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(LINT_PROJECT)
    write_files(root, {"pkg/mod.py": LOOP.replace("range(n)", "range(m)") + OTHER})
    data = check_json(root, monkeypatch)
    assert ruff_of(data, "introduced") == [] and ruff_of(data, "fixed") == []
    assert ruff_of(data, "existing") == [("B007", 3)]


def test_old_lint_on_a_moved_and_edited_line_is_not_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(LINT_PROJECT)
    moved = OTHER.lstrip("\n") + "\n\n" + LOOP.replace("range(n)", "range(m)")
    write_files(root, {"pkg/mod.py": moved})
    data = check_json(root, monkeypatch)
    assert ruff_of(data, "introduced") == [] and ruff_of(data, "existing") == [("B007", 7)]


def test_a_copy_of_old_lint_and_a_new_rule_on_an_edited_line_are_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(LINT_PROJECT)
    edited = LOOP.replace("range(n)", "range(m)")
    copy = "\n\n" + edited.replace("def count", "def count_again")
    write_files(root, {"pkg/mod.py": edited.replace("total += 1", "total += missing") + OTHER + copy})
    data = check_json(root, monkeypatch)
    # The old B007 pairs once (with the edited line); its copy and the new F821 are the change's.
    assert sorted(ruff_of(data, "introduced")) == [("B007", 14), ("F821", 4)]
    assert ruff_of(data, "existing") == [("B007", 3)]
