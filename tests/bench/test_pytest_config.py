"""A library's own pytest configuration: kept as its root, and the addopts that choose its tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from coderefine.bench.library import run_suite
from coderefine.bench.pytest_config import pin_pytest_root, selection_addopts
from coderefine.project.runner import SubprocessRunner
from tests.bench.test_library import ENV


def test_a_pytest_table_in_any_toml_spelling_is_the_librarys_own_configuration(tmp_path: Path) -> None:
    spellings = {
        "native": '[tool.pytest]\npythonpath = ["tests"]\n',
        "dotted": '[tool]\npytest.ini_options.pythonpath = ["tests"]\n',
        "classic": '[tool.pytest.ini_options]\npythonpath = ["tests"]\n',
    }
    for name, text in spellings.items():
        tree = tmp_path / name
        tree.mkdir()
        (tree / "pyproject.toml").write_text(text)
        pin_pytest_root(tree)
        assert not (tree / "pytest.ini").exists(), name
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    pin_pytest_root(other)
    assert (other / "pytest.ini").read_text() == "[pytest]\n"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "pytest.ini",
            "[pytest]\naddopts = -m 'not stress' --cov=lib -p no:randomly --ignore=tests/big -ra\n",
        ),
        (
            "tox.ini",
            "[tox]\n[pytest]\naddopts = -m 'not stress' --cov lib -pno:randomly --ignore tests/big\n",
        ),
        ("setup.cfg", "[tool:pytest]\naddopts = -m'not stress' -p no:randomly --ignore=tests/big\n"),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\naddopts = \"-m 'not stress' -p no:randomly --ignore=tests/big\"\n",
        ),
        (
            "pyproject.toml",
            '[tool.pytest]\naddopts = ["-m", "not stress", "-p", "no:randomly", "--ignore=tests/big"]\n',
        ),
    ],
)
def test_the_addopts_that_choose_tests_are_kept_and_the_rest_dropped(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text)
    assert selection_addopts(tmp_path) == ["-mnot stress", "-pno:randomly", "--ignore=tests/big"]


def test_no_configuration_or_one_pytest_cannot_read_keeps_nothing(tmp_path: Path) -> None:
    assert selection_addopts(tmp_path) == []
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -m 'unclosed\n")
    assert selection_addopts(tmp_path) == []


def test_a_suite_runs_what_its_marker_filter_selects(tmp_path: Path) -> None:
    # click's addopts keep its stress tests out: dropped with the rest, they made its suite time out.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "-m \'not stress\' --cov=nothing"\nmarkers = ["stress"]\n'
    )
    (tmp_path / "test_lib.py").write_text(
        "import pytest\n\n\ndef test_quick():\n    pass\n\n\n@pytest.mark.stress\ndef test_stress():\n    pass\n"
    )
    pin_pytest_root(tmp_path)
    run = run_suite(sys.executable, tmp_path, SubprocessRunner(), ENV)
    assert run.passed() == {"test_lib.py::test_quick"}


def test_pytest_toml_is_a_configuration_and_its_addopts_are_read(tmp_path: Path) -> None:
    # pytest 9 reads pytest.toml before pytest.ini: a pytest.ini written beside it would be read by nobody.
    (tmp_path / "pytest.toml").write_text('[pytest]\naddopts = ["-m", "not stress", "--cov=lib"]\n')
    pin_pytest_root(tmp_path)
    assert not (tmp_path / "pytest.ini").exists()
    assert selection_addopts(tmp_path) == ["-mnot stress"]
