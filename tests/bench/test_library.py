"""Running a library's suite: test ids are relative to the library, whatever folder holds it."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from coderefine.bench.library import Coverage, covered_lines, make_venv, run_suite
from coderefine.bench.pytest_config import pin_pytest_root
from coderefine.errors import UsageError
from coderefine.project.runner import Completed, SubprocessRunner
from coderefine.signals.warm import WarmPytest

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


LIBRARY = """TABLE = {n: n * n for n in range(3)}


def square(n):
    if n in TABLE:
        return TABLE[n]
    return n * n


def shout(text):
    return text.upper() + "!"
"""

LIBRARY_TESTS = """import pytest

from lib import shout, square


@pytest.mark.parametrize("n", [1, 5])
def test_square(n):
    assert square(n) == n * n


def test_shout():
    assert shout("hi") == "HI!"
"""


def small_library(tmp_path: Path) -> Path:
    tree = tmp_path / "lib-tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "lib.py").write_text(LIBRARY)
    (tree / "tests" / "test_lib.py").write_text(LIBRARY_TESTS)
    pin_pytest_root(tree)
    return tree


def test_coverage_names_the_tests_that_run_each_line(tmp_path: Path) -> None:
    tree = small_library(tmp_path)
    coverage = covered_lines(sys.executable, tree, SubprocessRunner(), ENV, ())
    assert coverage
    shout_body, square_body = LIBRARY.count("\n", 0, LIBRARY.index("return text")) + 1, 5
    assert coverage.tests_for("lib.py", [shout_body]) == ("tests/test_lib.py::test_shout",)
    assert coverage.tests_for("lib.py", [square_body]) == (
        "tests/test_lib.py::test_square[1]",
        "tests/test_lib.py::test_square[5]",
    )
    assert coverage.tests_for("lib.py", [1]) is None  # the table is built at import: any test may see it
    assert {1, square_body, shout_body} <= coverage.lines_of("lib.py")
    assert not Coverage().tests_for("lib.py", [1]) and Coverage().tests_for("lib.py", [1]) is None


def test_only_the_listed_tests_run_warm_or_cold(tmp_path: Path) -> None:
    tree = small_library(tmp_path)
    only = ["tests/test_lib.py::test_square[5]"]
    cold = run_suite(sys.executable, tree, SubprocessRunner(), ENV, only=only)
    warm = WarmPytest(sys.executable, ENV, {"lib", "tests"})
    try:
        forked = run_suite(sys.executable, tree, SubprocessRunner(), ENV, only=only, warm=warm)
    finally:
        warm.close()
    assert cold.finished and forked.finished
    assert cold.passed() == forked.passed() == {"tests/test_lib.py::test_square[5]"}
    assert cold.outcomes == forked.outcomes


def test_a_deselected_file_is_not_collected_and_its_import_error_is_reported(tmp_path: Path) -> None:
    tree = tmp_path / "lib"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_ok.py").write_text("def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    (tree / "tests" / "test_ext.py").write_text(
        "import lib_speedups_missing\n\n\ndef test_fast():\n    pass\n"
    )
    pin_pytest_root(tree)
    broken = run_suite(sys.executable, tree, SubprocessRunner(), ENV)
    assert not broken.finished
    assert [(e.nodeid, e.message) for e in broken.errors] == [
        ("tests/test_ext.py", "ModuleNotFoundError: No module named 'lib_speedups_missing'")
    ]
    skip = ["tests/test_ext.py", "tests/test_ok.py::test_two"]
    run = run_suite(sys.executable, tree, SubprocessRunner(), ENV, deselect=skip)
    assert run.finished and run.passed() == {"tests/test_ok.py::test_one"} and not run.errors


def test_a_missing_fixture_is_the_failures_message(tmp_path: Path) -> None:
    # pytest gives a setup error no crash message; its "E" line is what advice reads the plugin from.
    (tmp_path / "test_lib.py").write_text("def test_mocked(no_such_fixture):\n    pass\n")
    pin_pytest_root(tmp_path)
    run = run_suite(sys.executable, tmp_path, SubprocessRunner(), ENV)
    [outcome] = run.outcomes
    assert (outcome.outcome, outcome.message) == ("failed", "fixture 'no_such_fixture' not found")


class Pip:
    """pip that fails to install any list holding one of ``missing``; records what it was asked."""

    def __init__(self, *missing: str) -> None:
        self.missing = missing
        self.asked: list[list[str]] = []

    def run(self, argv: Sequence[str], *, cwd: Path, timeout: float | None = None, **_: object) -> Completed:
        if "install" not in argv:
            return Completed(tuple(argv), 0, "", "")
        wanted = list(argv[argv.index("--disable-pip-version-check") + 1 :])
        self.asked.append(wanted)
        bad = next((m for m in self.missing if m in wanted), "")
        err = f"ERROR: No matching distribution found for {bad}\n" if bad else ""
        return Completed(tuple(argv), 1 if bad else 0, "", err)


def test_declared_dependencies_are_installed_with_requires_in_one_set(tmp_path: Path) -> None:
    pip = Pip()
    make_venv(tmp_path / "venv", ["pytest"], pip, "lib==1", ["attrs"], ["hypothesis"])
    assert pip.asked == [["attrs", "hypothesis", "pytest"]]


def test_a_test_extra_that_does_not_install_is_left_out_and_said(tmp_path: Path) -> None:
    pip, said = Pip("nosuchtool"), []
    make_venv(tmp_path / "venv", ["pytest"], pip, "lib==1", ["attrs"], ["nosuchtool"], said.append)
    assert pip.asked == [["attrs", "nosuchtool", "pytest"], ["attrs", "pytest"]]
    assert said and "nosuchtool: the package index has no distribution of that name" in said[0]
    assert said[0].endswith("installed without its test extra (nosuchtool)")


def test_a_declared_dependency_that_does_not_install_is_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as error:
        make_venv(tmp_path / "venv", ["pytest"], Pip("yaml"), "lib==1", ["yaml"])
    assert str(error.value) == (
        "lib==1: cannot install what its tests need (yaml, pytest): yaml: the package index has no "
        "distribution of that name; the module yaml is installed by the distribution PyYAML (one of the "
        "dependencies the library declares)"
    )
    with pytest.raises(UsageError, match=r"\(from --requires\)$"):
        make_venv(tmp_path / "venv", ["yaml"], Pip("yaml"), "lib==1")
