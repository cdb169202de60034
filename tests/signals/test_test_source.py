"""A failing test's source: the function with its cases, its fixtures and helpers, in cuttable units."""

from __future__ import annotations

from coderefine.signals.test_source import TestSources, conftests, function_of, is_test_support

CONFTEST = """import pytest


@pytest.fixture
def words():
    return ["a", "bb", "ccc"]


@pytest.fixture(name="limit")
def _limit_fixture():
    return 2
"""

COMMON = """def assert_equal(expected, actual):
    assert expected == actual, (expected, actual)
"""

TESTS = """import pytest

from common import assert_equal
from lib import shorten

CASES = [
    ("abc", 2, "ab"),
    ("abcdef", 3, "abc"),
    ("", 3, ""),
    ("xy", 5, "xy"),
]


def unused_helper():
    return 0


@pytest.mark.parametrize(("text", "size", "expected"), CASES)
def test_shorten(text, size, expected):
    assert_equal(expected, shorten(text, size))


class TestMore:
    def helper(self):
        return 1

    def test_words(self, words, limit, tmp_path):
        result = [shorten(w, limit) for w in words]
        assert result == ["a", "bb", "cc"]
        assert self.helper() == 1
"""

FILES = {
    "tests/conftest.py": CONFTEST,
    "tests/common.py": COMMON,
    "tests/test_x.py": TESTS,
    "lib.py": "def shorten(text, size):\n    raise NotImplementedError\n",
}


def sources() -> TestSources:
    return TestSources(FILES.get, exclude=["lib.py"])


def test_a_node_id_names_its_file_and_function_without_its_case() -> None:
    assert function_of("tests/test_x.py::TestMore::test_words") == (
        "tests/test_x.py",
        ("TestMore", "test_words"),
    )
    assert function_of("t.py::test_a[1-x::y]") == ("t.py", ("test_a",))


def test_a_parametrized_test_comes_with_its_cases_and_the_helper_it_imports() -> None:
    pieces = sources().pieces("tests/test_x.py::test_shorten[abc-2-ab]")
    names = [(p.kind, p.path, p.name) for p in pieces]
    assert names[0] == ("test", "tests/test_x.py", "test_shorten")
    assert ("helper", "tests/test_x.py", "CASES") in names
    assert ("helper", "tests/common.py", "assert_equal") in names
    assert all(p.name != "unused_helper" for p in pieces)
    assert all(p.path != "lib.py" for p in pieces)  # the code under review is not a helper
    test = pieces[0]
    assert test.text.startswith("@pytest.mark.parametrize") and test.text.endswith("shorten(text, size))\n")
    assert (test.start, test.end) == (18, 20)
    cases = next(p for p in pieces if p.name == "CASES")
    assert [u.rank for u in cases.units] == [None, 2, 2, 0, 0, None]  # the first two cases are cut last


def test_a_method_gets_its_fixtures_from_the_conftest_by_name_and_its_class_helpers() -> None:
    pieces = sources().pieces("tests/test_x.py::TestMore::test_words")
    names = {(p.kind, p.path, p.name) for p in pieces}
    assert ("fixture", "tests/conftest.py", "words") in names
    assert ("fixture", "tests/conftest.py", "_limit_fixture") in names  # asked for as `limit`
    assert ("helper", "tests/test_x.py", "TestMore::helper") in names
    assert not any(p.name == "tmp_path" for p in pieces)  # pytest's own fixtures are not the project's
    body = [u.rank for u in pieces[0].units]
    assert body == [None, 1, 1, 1]  # the def line stays; each statement may go, never half of one


def test_a_missing_file_or_function_gives_nothing() -> None:
    assert sources().pieces("tests/test_gone.py::test_a") == []
    assert sources().pieces("tests/test_x.py::test_gone") == []
    assert TestSources({"t.py": "def test_a(:\n"}.get).pieces("t.py::test_a") == []


def test_the_conftests_on_the_way_up_and_what_counts_as_test_code() -> None:
    assert conftests("a/b/test_c.py") == ["a/b/conftest.py", "a/conftest.py", "conftest.py"]
    assert is_test_support("test/common.py") and is_test_support("pkg/test_x.py")
    assert not is_test_support("pkg/common.py")
