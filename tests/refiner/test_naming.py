"""Which of the definitions a failing test runs it is named after."""

from __future__ import annotations

from coderefine.refiner.localize import localize
from coderefine.refiner.naming import named_after, words, words_of_test
from coderefine.signals.base import CallRecord


def test_words_split_camel_and_snake_case_and_drop_what_names_no_code() -> None:
    assert words("handleDoctests") == {"handle", "doctests"}
    assert words("_handle_percent_format") == {"handle", "percent", "format"}
    assert words("AUGASSIGN") == {"augassign"}
    assert words_of_test("t/test_x.py::TestUndefinedNames::test_undefinedAugmentedAssignment[3]") == (
        {"undefined", "augmented", "assignment"}, {"undefined", "names"}
    )  # fmt: skip
    assert words_of_test("t/test_x.py") == (frozenset(), frozenset())


def test_a_test_is_named_after_the_definition_whose_words_it_shares() -> None:
    runs = ["Checker.report", "AUGASSIGN", "handleNodeLoad", "getParent"]
    assert named_after("t.py::TestUndefinedNames::test_undefinedAugmentedAssignment", runs) == ["AUGASSIGN"]
    assert named_after("t.py::Test::test_offsetInLambdasInDoctests", ["handleDoctests", "report"]) == [
        "handleDoctests"
    ]
    # The test function's own words first: its class names the family of cases.
    unused = ["EXCEPTHANDLER", "FunctionScope.unused_assignments"]
    assert named_after("t.py::TestUnusedAssignment::test_exceptWithoutName", unused) == ["EXCEPTHANDLER"]
    assert named_after("t.py::CheckTests::test_eofSyntaxErrorWithTab", ["check", "report"]) == ["check"]
    # Nothing in common, or too many equally: no answer.
    assert named_after("t.py::TestImports::test_usedInOperators", ["COMPARE", "handleNodeLoad"]) == []
    tied = ["format_a", "format_b", "format_c", "format_d"]
    assert named_after("t.py::test_format", tied) == []


MOD = "".join(f"def handler_{n}(node):\n    return node\n\n\n" for n in range(6)) + (
    "def handle_doctests(node):\n    return node\n"
)


def test_a_function_every_passing_test_runs_is_named_by_the_failing_test_after_it() -> None:
    """The bug is in a function hundreds of passing tests run: the spectrum ranks it last, its test's
    name finds it, and a view shows it whole."""
    doctests = ("pkg/mod.py", 25)
    runs = [
        CallRecord("t.py::Test::test_offsetInDoctests", True, frozenset({doctests, ("pkg/mod.py", 1)})),
        CallRecord("t.py::test_x", True, frozenset({("pkg/mod.py", 5), ("pkg/mod.py", 1)})),
        *(CallRecord(f"t.py::test_p{n}", False, frozenset({doctests})) for n in range(20)),
    ]
    found = localize(runs, {}.get, ["pkg/mod.py"], {"pkg/mod.py": MOD})
    assert found.suspects[-1].name == "handle_doctests"
    assert [s.name for s in found.named] == ["handle_doctests"]
    assert "handle_doctests: run by 1 of 2 failing tests, 20 of 20 passing; a failing test is named" in (
        found.section()
    )
    assert 25 in found.lines({"pkg/mod.py": MOD})["pkg/mod.py"]
