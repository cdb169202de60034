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
    # "ok" only when every test passed: a failing run says how many ran and how many failed.
    assert "pytest: 3 tests ran, 1 failed (from tests/test_api.py, tests/test_lazy.py)" in out
    code, out = run(root, monkeypatch, "src/altsvc/_scan.py", "--format", "json")
    data = json.loads(out)
    assert data["tests"] == ["tests/test_api.py", "tests/test_lazy.py"]
    assert "3 tests ran" in next(s["note"] for s in data["statuses"] if s["source"] == "pytest")


def test_tests_reached_through_private_modules_run_and_explain_how(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(
        {
            **SRC_LAYOUT,
            "src/altsvc/_scan.py": "from ._split import split\n\n\ndef scan(text):\n    return split(text)\n",
            "src/altsvc/_split.py": "def split(text):\n    return text.split(',')\n",
        }
    )
    write_files(root, {"src/altsvc/_split.py": "def split(text):\n    return text.split(';')\n"})
    code, out = run(root, monkeypatch, "src/altsvc/_split.py", "--explain")
    assert code == 1, out
    assert "tests/test_api.py::test_scan" in out
    assert "Tests: 2 of 27 test files, related to the change:" in out
    assert (
        "  tests/test_api.py: imports altsvc, which imports altsvc._scan, which imports altsvc._split" in out
    )
    code, out = run(root, monkeypatch, "src/altsvc/_split.py", "--format", "json")
    data = json.loads(out)
    assert data["tests"] == ["tests/test_api.py", "tests/test_lazy.py"]
    assert data["tests_why"]["tests/test_lazy.py"].startswith("imports altsvc, which imports altsvc._scan")


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


# A one-line bug failing every test in one helper that pytest does not rewrite (tabulate's shape:
# tests/common.py's assert_equal, imported as `common` from the test folder).
FLOOD_TESTS = 30
FLOOD: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/table.py": (
        "def padleft(width, s):\n    return s.rjust(width)\n\n\n"
        "def row(cells, width):\n    return ' '.join(padleft(width, c) for c in cells)\n"
    ),
    "tests/common.py": "def assert_equal(expected, result):\n    assert expected == result\n",
    "tests/test_table.py": "from common import assert_equal\n\nfrom pkg.table import row\n"
    + "".join(
        f"\n\ndef test_row_{n}():\n    assert_equal('  x{n}', row(['x{n}'], {len(f'x{n}') + 2}))\n"
        for n in range(FLOOD_TESTS)
    ),
}


def flooded(make_repo: RepoFactory) -> Path:
    root = make_repo(FLOOD)
    write_files(root, {"pkg/table.py": str(FLOOD["pkg/table.py"]).replace("rjust", "ljust")})
    return root


def test_a_flood_of_failures_in_one_helper_is_folded_with_its_values(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = flooded(make_repo)
    code, out = run(root, monkeypatch, "pkg/table.py")
    assert code == 1, out
    report = out.split("sources:")[0]
    # The first two in full, a few by id and message, the rest counted as failing the same way; the JSON
    # report has every one.
    assert report.count("in assert_equal") == 2
    assert "  tests/test_table.py::test_row_2 test failed: AssertionError\n" in report
    assert f"... and {FLOOD_TESTS - 7} more that failed the same way at tests/common.py:2" in report
    assert "`coderefine check --format json` lists every one" in report
    assert len(report.splitlines()) < 40
    # The helper's assert is not rewritten: its local values say expected against actual.
    assert "Local values where the assert failed (tests/common.py:2):" in report
    assert "expected = '  x0'" in report and "result = 'x0  '" in report
    # "ok" only when every test passed.
    assert f"pytest: {FLOOD_TESTS} tests ran, {FLOOD_TESTS} failed (from tests/test_table.py)" in out
    assert "pytest ok" not in out
    code, out = run(root, monkeypatch, "pkg/table.py", "--format", "json")
    assert len([s for s in json.loads(out)["introduced"] if s["source"] == "pytest"]) == FLOOD_TESTS


def test_pytest_is_ok_when_every_test_passed(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(FLOOD)
    write_files(root, {"pkg/table.py": str(FLOOD["pkg/table.py"]) + "\n"})
    _, out = run(root, monkeypatch, "pkg/table.py")
    assert f"pytest ok ({FLOOD_TESTS} tests ran from tests/test_table.py)" in out, out


def test_a_package_importing_its_ignored_generated_version_is_tested(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # isodate 0.7.2's layout: setuptools-scm writes src/isodate/version.py, .gitignore lists it, and the
    # package imports it. The copies lacked it: every test failed to collect, in the baseline too, and a
    # broken change read "pytest ok (0 tests ran) ... Clean".
    root = make_repo(
        {
            ".gitignore": "pkg/version.py\n",
            "pkg/__init__.py": "from pkg.version import version\n",
            "pkg/mod.py": "def add(a, b):\n    return a + b\n",
            "tests/test_mod.py": "from pkg.mod import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        }
    )
    write_files(
        root, {"pkg/version.py": "version = '1.0'\n", "pkg/mod.py": "def add(a, b):\n    return a - b\n"}
    )
    code, out = run(root, monkeypatch, "pkg/mod.py")
    assert code == 1, out
    assert "tests/test_mod.py::test_add" in out and "0 tests ran" not in out
    # Without the file (a build not run yet), the report says that nothing tested the change.
    (root / "pkg" / "version.py").unlink()
    code, out = run(root, monkeypatch, "pkg/mod.py")
    assert (
        "0 tests ran from tests/test_mod.py: 1 test file failed to collect, so nothing tested the change"
        in out
    )
