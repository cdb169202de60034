"""Running a library's suite: test ids are relative to the library, whatever folder holds it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from coderefine.bench.library import pin_pytest_root, run_suite
from coderefine.runner import SubprocessRunner

ENV = {"PATH": os.environ["PATH"]}


def test_a_suite_inside_another_pytest_project_keeps_its_own_root(tmp_path: Path) -> None:
    # As when a suite is built under a checkout of coderefine itself: its pyproject has a pytest table.
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')
    tree = tmp_path / "cache" / "suites" / "lib" / "source"
    tree.mkdir(parents=True)
    (tree / "test_lib.py").write_text("def test_one():\n    pass\n")
    pin_pytest_root(tree)
    run = run_suite(sys.executable, tree, SubprocessRunner(), ENV)
    assert run.passed() == {"test_lib.py::test_one"}


def test_a_library_with_its_own_pytest_configuration_is_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\ntestpaths = tests\n")
    pin_pytest_root(tmp_path)
    assert not (tmp_path / "pytest.ini").exists()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text("[project]\nname = 'y'\n")
    pin_pytest_root(other)
    assert (other / "pytest.ini").read_text() == "[pytest]\n"
