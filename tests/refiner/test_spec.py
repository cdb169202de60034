"""The failing tests' source in a request: which tests, within what budget, and what was cut."""

from __future__ import annotations

from pathlib import Path

from coderefine.config import Settings
from coderefine.models.scripted import ScriptedModel
from coderefine.project.change import from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import project_files
from coderefine.refiner.loop import refine
from coderefine.refiner.sections import fence
from coderefine.refiner.spec import (
    FENCE,
    HEADING,
    SpecSource,
    build_spec,
    failing_tests,
    fit,
    module_names,
    section,
)
from coderefine.signals.base import Signal
from coderefine.signals.evaluate import Evaluator
from coderefine.signals.test_source import TestSources
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files
from tests.refiner.test_loop import PASS

CASES = "".join(f'    ("case{n}", {n}),\n' for n in range(40))
TESTS = (
    "import pytest\n\nfrom lib import size\n\n\n"
    f'@pytest.mark.parametrize(("text", "expected"), [\n{CASES}])\n'
    "def test_size(text, expected):\n    got = size(text)\n    assert got == expected\n\n\n"
    "def test_empty():\n    assert size('') == 0\n\n\n"
    "def test_passing():\n    assert True\n"
)
LIB = "def other():\n    return 1\n\n\ndef size(text):\n    raise NotImplementedError\n"
FILES = {"tests/test_lib.py": TESTS, "lib.py": LIB}


def failure(nodeid: str, place: str = "lib.py:6") -> Signal:
    detail = (
        f"tests/test_lib.py:12: in test_size\n    got = size(text)\n{place}: in size\nE   NotImplementedError"
    )
    return Signal(
        "pytest", "tests/test_lib.py", 12, 12, nodeid, "NotImplementedError", "error", detail=detail
    )


def test_failing_tests_are_taken_once_per_function_round_robin_over_where_they_fail() -> None:
    signals = [
        failure("tests/test_lib.py::test_size[case0-0]"),
        failure("tests/test_lib.py::test_size[case1-1]"),
        failure("tests/test_lib.py::test_other", "lib.py:2"),
        Signal("ruff", "lib.py", 1, 1, "F401", "unused", "warning"),
    ]
    assert failing_tests(signals) == [
        "tests/test_lib.py::test_size[case0-0]",
        "tests/test_lib.py::test_other",
    ]


def test_without_a_budget_every_case_shows_and_the_code_the_tests_call_is_named() -> None:
    spec = build_spec(
        ["tests/test_lib.py::test_size[case0-0]", "tests/test_lib.py::test_empty"],
        TestSources(FILES.get, exclude=["lib.py"]),
        0,
        {"lib.py": LIB},
        [failure("tests/test_lib.py::test_size[case0-0]")],
    )
    text = section(spec, fence)
    assert '("case39", 39)' in text and "def test_empty():" in text and "test_passing" not in text
    assert "lib.py: `size` (lines 5-6); their failures pass through line 6" in text
    assert "`other`" not in text


def test_a_budget_cuts_the_largest_piece_first_at_whole_cases_and_says_so() -> None:
    spec = build_spec(
        ["tests/test_lib.py::test_size[case0-0]", "tests/test_lib.py::test_empty"],
        TestSources(FILES.get),
        600,
        {"lib.py": LIB},
    )
    text = section(spec, fence)
    shown = "".join(p.text for p in spec.pieces)
    assert len(shown) <= 600
    assert '("case0", 0)' in shown and '("case1", 1)' in shown  # the first cases are kept longest
    assert '("case39", 39)' not in shown
    assert "got = size(text)" in shown and "assert got == expected" in shown  # cases go before statements
    assert "def test_empty():\n    assert size('') == 0\n" in shown  # the small piece is untouched
    assert "more lines cut to keep this request short" in shown
    assert f"{spec.cut_lines} lines of this test source were cut to fit" in text
    for piece in spec.pieces:
        compile(piece.text, piece.name, "exec")  # cut at whole cases and statements: still Python


def test_pieces_with_nothing_left_to_cut_are_dropped_helpers_first_the_first_test_last() -> None:
    sources = TestSources(FILES.get)
    pieces = sources.pieces("tests/test_lib.py::test_empty") + sources.pieces(
        "tests/test_lib.py::test_size[x]"
    )
    first = len(pieces[0].text) + FENCE + len(pieces[0].path) + len(pieces[0].name)
    kept, _, dropped = fit(pieces, first + 10)
    assert [p.name for p in kept] == ["test_empty"]
    assert dropped == ["tests/test_lib.py::test_size"]
    # The budget holds even for the first test: one that does not fit cut as far as it goes goes too.
    kept, _, dropped = fit(pieces, 10)
    assert kept == [] and dropped == ["tests/test_lib.py::test_empty", "tests/test_lib.py::test_size"]


def test_a_huge_case_list_by_keyword_is_cut_and_the_signature_stays() -> None:
    cases = "".join(f"        ({n}, {n + 1}),\n" for n in range(1500))
    test = (
        "import pytest\n\n\n@pytest.mark.parametrize(\n    ('a', 'b'),\n    argvalues=[\n"
        + cases
        + "        (7, 8)],\n    ids=str,\n)\ndef test_next(a, b):\n    assert a + 1 == b\n"
        "    assert b - 1 == a\n"
    )
    sources = TestSources({"tests/test_n.py": test}.get)
    spec = build_spec(["tests/test_n.py::test_next[0-1]"], sources, 2_000, {"n.py": "x = 1\n"})
    shown = spec.pieces[0].text
    assert len(shown) < 2_000 and "def test_next(a, b):" in shown and "(0, 1)," in shown
    assert "(7, 8)]," in shown  # the case the list closes on stays with its bracket
    compile(shown, "test_n.py", "exec")


def test_a_body_cut_to_nothing_is_still_python() -> None:
    body = "".join(f"    assert f({n}) == {n}\n" for n in range(200))
    sources = TestSources({"tests/test_f.py": "def test_f():\n" + body}.get)
    (piece,) = sources.pieces("tests/test_f.py::test_f")
    kept, cut, _ = fit([piece], 200)
    assert cut == 200 and kept[0].text.startswith("def test_f():\n    ...  # ... 200 more lines cut")
    compile(kept[0].text, "test_f.py", "exec")


def test_inherited_tests_set_up_indirect_and_overriding_fixtures_are_found() -> None:
    files = {
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef db():\n    return {'rows': 1}\n",
        "tests/test_c.py": (
            "import unittest\nimport pytest\n\n\n@pytest.fixture\ndef db(db):\n    db['x'] = 2\n"
            "    return db\n\n\n@pytest.fixture\ndef raw(request):\n    return request.param * 2\n\n\n"
            "class Base(unittest.TestCase):\n    def setUp(self):\n        self.data = [1, 2]\n\n"
            "    def test_value(self):\n        self.assertEqual(total(self.data), 3)\n\n\n"
            "class TestJson(Base):\n    pass\n\n\n"
            "@pytest.mark.parametrize('raw', [1, 2], indirect=True)\ndef test_raw(raw, db):\n"
            "    assert raw in db\n"
        ),
    }
    sources = TestSources(files.get)
    inherited = sources.pieces("tests/test_c.py::TestJson::test_value")
    assert inherited[0].name == "TestJson::test_value (inherited from Base)"
    assert "self.assertEqual(total(self.data), 3)" in inherited[0].text
    assert any(p.name == "Base::setUp" and "self.data = [1, 2]" in p.text for p in inherited)
    names = [(p.path, p.name) for p in sources.pieces("tests/test_c.py::test_raw[1]")]
    assert ("tests/test_c.py", "raw") in names  # indirect: the fixture gets the value
    assert ("tests/test_c.py", "db") in names and ("tests/conftest.py", "db") in names  # db(db) extends


def test_the_author_of_a_run_without_signals_is_shown_the_tests_it_was_given() -> None:
    source = SpecSource(TestSources(FILES.get), 0, ["tests/test_lib.py::test_empty"])
    assert "def test_empty" in source.section({"lib.py": LIB}, [], fence, given=True)
    assert source.section({"lib.py": LIB}, [], fence) == ""  # a critic with no failing test: nothing


def test_the_loops_critic_and_reviser_read_the_failing_tests_of_a_removed_body(
    make_repo: RepoFactory,
) -> None:
    """The spec in the tests: the body is gone, and only the tests say what it must do."""
    tests = (
        "from pkg.mod import add\n\n\n"
        "def check(a, b, total):\n    assert add(a, b) == total\n\n\n"
        "def test_add():\n    check(2, 3, 5)\n\n\n"
        "def test_unrelated():\n    assert 1 + 1 == 2\n"
    )
    root = make_repo({**SMALL_PROJECT, "tests/test_mod.py": tests})
    write_files(root, {"pkg/mod.py": "def add(a, b):\n    raise NotImplementedError\n"})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    issue = {
        "title": "add is not implemented",
        "severity": "error",
        "path": "pkg/mod.py",
        "line": 2,
        "end_line": 2,
        "evidence": "raise NotImplementedError",
        "suggestion": "return the sum",
    }
    fix = (
        "pkg/mod.py\n```python\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n"
        "    return a + b\n>>>>>>> REPLACE\n```\n"
    )
    model = ScriptedModel(({"verdict": "revise", "summary": "missing", "issues": [issue]}, fix, PASS))
    settings = Settings(confirm="always", merge="never")
    with Evaluator(
        change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    ) as ev:
        result = refine(
            change, settings, model, ev, intent="Implement `add` so that the project's tests pass."
        )
    assert result.stop == "passed"
    critic, reviser, confirming = model.history
    for request in (critic, reviser):
        message = request.messages[0].text
        assert HEADING in message and "def test_add():\n    check(2, 3, 5)\n" in message, request.role
        assert "def check(a, b, total):\n    assert add(a, b) == total\n" in message  # its helper
        assert "test_unrelated" not in message  # a test that does not fail is not shown
        assert "pkg/mod.py: `add` (lines 1-2)" in message
    assert HEADING not in confirming.messages[0].text  # nothing fails any more


def test_a_method_named_like_a_builtins_is_reached_only_through_its_class_or_module() -> None:
    code = (
        "def split(text):\n    return text.split()\n\n\n"
        "class Tokens:\n    def get(self, i):\n        return i\n\n\n"
        "class Cache:\n    def get(self, key):\n        return key\n\n    def evict(self):\n        pass\n\n\n"
        "def join(parts):\n    return ' '.join(parts)\n"
    )
    tests = (
        "import lib\nfrom lib import Cache\n\n\n"
        "def test_cache():\n    words = 'a b'.split()\n    assert {}.get(1) is None\n"
        "    cache = Cache()\n    assert cache.get(1) == 1\n    cache.evict()\n    assert lib.join(words) == 'a b'\n"
        "    assert pkg.lib.split('a') == ['a']\n"
    )
    spec = build_spec(
        ["tests/test_lib.py::test_cache"],
        TestSources({"tests/test_lib.py": tests}.get, exclude=["lib.py"]),
        0,
        {"lib.py": code},
        [],
    )
    [line] = spec.reached
    assert "`Cache`" in line and "`get` (lines 11-12)" in line and "`evict`" in line
    assert "`join`" in line  # lib.join: on its module
    assert "`split`" in line  # pkg.lib.split: on its module (and 'a b'.split() alone would not be)
    assert "`get` (lines 6-7)" not in line  # {}.get is dict's; Tokens is never named


def test_module_names_are_the_stem_and_its_packages() -> None:
    assert module_names("src/pkg/sub/mod.py") == ("mod", "sub", "pkg", "src")
    assert module_names("lib/__init__.py") == ("lib",)
    assert module_names("pkg/__init__.py") == ("pkg",)
    assert module_names("inflection.py") == ("inflection",)


def test_a_builtin_methods_name_on_any_object_reaches_no_function_of_that_name() -> None:
    tests = "def test_words():\n    assert 'a b'.split() == ['a', 'b']\n"
    spec = build_spec(
        ["tests/test_lib.py::test_words"],
        TestSources({"tests/test_lib.py": tests}.get, exclude=["lib.py"]),
        0,
        {"lib.py": "def split(text):\n    return text.split()\n"},
        [],
    )
    assert spec.reached == ()
