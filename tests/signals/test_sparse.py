"""What a run of some tests needs of the project: followed through import lines, with the files on the
way and the data beside; and the failures that say a sparse copy fell short."""

from __future__ import annotations

from coderefine.signals.base import Signal, SignalSet, SourceStatus
from coderefine.signals.sparse import missing_files, needed_files

PROJECT = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "conftest.py": "",
    "pkg/__init__.py": "from pkg.core import run\n",
    "pkg/core.py": "from . import helpers\nfrom .sub.deep import VALUE\n",
    "pkg/helpers.py": "import os\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "VALUE = 1\n",
    "pkg/templates/page.html": "<p></p>\n",
    "pkg/unused.py": "import other\n",
    "other/__init__.py": "",
    "src/lib2/__init__.py": "",
    "src/lib2/tool.py": "",
    "tests/conftest.py": "",
    "tests/unit/test_core.py": "import pkg\nfrom lib2.tool import x\n\n\ndef test():\n    pass\n",
    "tests/unit/data/input.json": "{}\n",
    "tests/other/test_other.py": "import other\n",
    "tests/other/data.txt": "x\n",
    "docs/conf.py": "",
}


def test_the_tests_reach_what_they_import_and_the_files_on_the_way() -> None:
    needed = needed_files(list(PROJECT), ["tests/unit/test_core.py"], PROJECT.get)
    assert needed == {
        "pyproject.toml",
        "conftest.py",
        "tests/conftest.py",
        "tests/unit/test_core.py",
        "tests/unit/data/input.json",
        "tests/other/data.txt",  # data below tests/, whose conftest.py was taken
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/helpers.py",
        "pkg/sub/__init__.py",
        "pkg/sub/deep.py",
        "pkg/templates/page.html",
        "src/lib2/__init__.py",
        "src/lib2/tool.py",
    }


def test_an_unreadable_file_imports_nothing() -> None:
    needed = needed_files(list(PROJECT), ["tests/other/test_other.py"], lambda rel: None)
    assert "other/__init__.py" not in needed and "tests/other/data.txt" in needed


def _failing(message: str, detail: str = "", code: str = "tests/test_a.py::test") -> SignalSet:
    signal = Signal("pytest", "tests/test_a.py", 1, 1, code, message, "error", detail=detail)
    return SignalSet((signal,), (SourceStatus("pytest", "ok", ""),))


def test_failures_of_a_missing_file_are_told_from_ordinary_ones() -> None:
    assert not missing_files(_failing("assert 3 == 2"))
    assert not missing_files(SignalSet((), (SourceStatus("pytest", "ok", ""),)))
    assert missing_files(_failing("ModuleNotFoundError: No module named 'pkg.plugins'"))
    assert missing_files(
        _failing("failed", "E   FileNotFoundError: [Errno 2] No such file or directory: 'x'")
    )
    assert missing_files(_failing("fixture 'db' not found"))
    assert missing_files(_failing("error", code="collect:tests/test_a.py"))
    assert missing_files(SignalSet((), (SourceStatus("pytest", "timeout", ""),)))
