"""``coderefine check`` on small projects shaped like real libraries."""

import io
import json
from pathlib import Path

import pytest

from coderefine.cli.main import main
from tests.conftest import RepoFactory, write_files

# A src layout with a private module re-exported by its package, tests importing the package only.
SRC_LAYOUT: dict[str, str | bytes] = {
    "src/altsvc/__init__.py": "from ._scan import scan\n\n__all__ = ['scan']\n",
    "src/altsvc/_scan.py": "def scan(text):\n    return text.split(',')\n",
    "tests/test_api.py": (
        "import altsvc as a\n\n\ndef test_scan():\n    assert a.scan('x,y') == ['x', 'y']\n\n\n"
        "def test_one():\n    assert a.scan('x') == ['x']\n"
    ),
    "tests/test_lazy.py": "def test_late():\n    from altsvc import scan\n\n    assert scan('') == ['']\n",
}
SRC_LAYOUT.update({f"tests/test_unrelated_{n}.py": "def test_x():\n    assert True\n" for n in range(25)})


def run(root: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str]:
    monkeypatch.chdir(root)
    out = io.StringIO()
    return main(["check", *argv], out=out), out.getvalue()


def test_tests_reached_through_a_re_exporting_package_run(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(SRC_LAYOUT)
    write_files(root, {"src/altsvc/_scan.py": "def scan(text):\n    return text.split(';')\n"})
    code, out = run(root, monkeypatch, "src/altsvc/_scan.py")
    assert code == 1, out
    assert "tests/test_api.py::test_scan" in out
    assert "tests/test_lazy.py" not in out.split("sources:")[0]  # it still passes
    assert "pytest ok (3 tests ran from tests/test_api.py, tests/test_lazy.py)" in out
    code, out = run(root, monkeypatch, "src/altsvc/_scan.py", "--format", "json")
    data = json.loads(out)
    assert data["tests"] == ["tests/test_api.py", "tests/test_lazy.py"]
    assert "3 tests ran" in next(s["note"] for s in data["statuses"] if s["source"] == "pytest")


def test_whole_suite_on_request(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(SRC_LAYOUT)
    write_files(root, {"src/altsvc/_scan.py": "def scan(text):\n    return text.split(',')  # same\n"})
    code, out = run(root, monkeypatch, "src/altsvc/_scan.py", "--all-tests")
    assert code == 0, out
    assert 'the whole suite (tests = "all"): 28 tests ran from' in out


def test_a_small_suite_runs_whole_when_nothing_is_related(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(
        {
            "tool.py": "def half(n):\n    return n / 2\n",
            "tests/test_cli.py": "import subprocess\n\n\ndef test_half():\n    from tool import half\n\n    assert half(4) == 2\n",
        }
    )
    write_files(root, {"tool.py": "def half(n):\n    return n / 3\n"})
    # The test imports the module inside a function: related by import, no fallback needed.
    code, out = run(root, monkeypatch, "tool.py")
    assert code == 1 and "tests/test_cli.py::test_half" in out, out
    write_files(
        root,
        {
            "tests/test_cli.py": "def test_half():\n    half = __import__('tool').half\n    assert half(4) == 2\n"
        },
    )
    code, out = run(root, monkeypatch, "tool.py")
    assert code == 1 and "tests/test_cli.py::test_half" in out, out
    assert "no test is related to the change, so the whole suite ran" in out


def test_a_failing_assert_keeps_its_location_and_line_in_the_text_output(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(
        {
            "letters.py": 'def spell(word):\n    return check(list(word))\n\n\ndef check(letters):\n    if "x" in letters:\n        raise ValueError("no x please")\n    return letters\n',
            "tests/test_letters.py": (
                "from letters import spell\n\n\ndef spelled(word):\n    return spell(word)\n\n\n"
                "def test_spell():\n    word = 'abcdef'\n    assert spelled(word) == ['a', 'b', 'c', 'd', 'e', 'f']\n"
            ),
        }
    )
    write_files(
        root, {"letters.py": (root / "letters.py").read_text().replace("list(word)", "list(word[:-1] + 'x')")}
    )
    code, out = run(root, monkeypatch, "letters.py")
    assert code == 1, out
    assert "tests/test_letters.py:10: tests/test_letters.py::test_spell test failed" in out
    assert "      tests/test_letters.py:10: in test_spell" in out
    assert "          assert spelled(word) == ['a', 'b', 'c', 'd', 'e', 'f']" in out
    assert "      ...\n" in out  # the middle of the traceback is trimmed
    assert "      E   ValueError: no x please" in out
