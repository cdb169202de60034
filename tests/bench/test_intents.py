"""What a bug task's intent says: a report as a user would write it, never a build's accidents."""

from __future__ import annotations

from coderefine.bench import library
from coderefine.bench.intents import REPORT_CHARS, bug_intent, report_message

HYPOTHESIS_FAILURE = """ValueError: Dimension mismatch: expected 4, got 4.
Falsifying example: test_search(
    store=VectorStore(dim=4),
    query=[0.0, 0.0, 0.0, 0.0],
)
Explanation:
    These lines were always and only run by failing test cases:
        /home/u/suites/.vecstore.building-k2j3/source/src/vecstore/index.py:118
        /home/u/suites/.vecstore.building-k2j3/source/src/vecstore/index.py:121

You can reproduce this example by temporarily adding @reproduce_failure('6.170.17', b'AXicY2BgYGQAAAAUAAM=') as a decorator on your test case"""


def test_a_hypothesis_report_keeps_the_assertion_and_a_short_example() -> None:
    message = report_message(HYPOTHESIS_FAILURE)
    assert message == (
        "ValueError: Dimension mismatch: expected 4, got 4. Falsifying example: "
        "test_search(store=VectorStore(dim=4), query=[0.0, 0.0, 0.0, 0.0])"
    )
    run = library.SuiteRun(
        (library.TestOutcome("tests/test_x.py::test_search", "failed", HYPOTHESIS_FAILURE),), True
    )
    intent = bug_intent("report", "search", "src/vecstore/index.py", run, ["tests/test_x.py::test_search"])
    assert intent.startswith("A user reports a wrong result: ValueError: Dimension mismatch")
    assert ".." not in intent and "/" not in intent.split("Falsifying")[0]
    assert "Explanation" not in intent and "reproduce_failure" not in intent


def test_a_long_example_is_left_out_and_text_is_cut_at_a_word() -> None:
    long_example = "Falsifying example: test_x(\n    values=" + repr(list(range(80))) + ",\n)"
    assert report_message("AssertionError: assert 3 == 4\n" + long_example) == "AssertionError: assert 3 == 4"
    words = "AssertionError: " + " ".join(["src/pkg/module.py:12"] * 40)
    cut = report_message(words)
    assert len(cut) <= REPORT_CHARS and cut.endswith("src/pkg/module.py:12")


def test_a_path_inside_the_build_folder_is_named_relative_to_the_project() -> None:
    text = "FileNotFoundError: /tmp/out/.suite.building-x1y2/source/src/pkg/data.json is missing."
    assert report_message(text) == "FileNotFoundError: src/pkg/data.json is missing"
