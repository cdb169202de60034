from coderefine.doors.review.findings import from_signal
from coderefine.doors.review.render import render_markdown
from coderefine.doors.review.run import ReviewReport
from coderefine.signals.base import Signal

TRACE = (
    "tests/test_mod.py:5: in test_add\n    assert add(1, 2) == 3\nE   assert -1 == 3\n"
    "E    +  where -1 = add(1, 2)"
)


def test_a_traceback_in_the_markdown_summary_is_fenced() -> None:
    signal = Signal(
        "pytest", "tests/test_mod.py", 5, 5, "tests/test_mod.py::test_add", "test failed: assert -1 == 3", "error",
        detail=TRACE,
    )  # fmt: skip
    finding = from_signal(signal, {})
    report = ReviewReport("a" * 40, "b" * 40, "intent", "default", (finding,), "", {}, (), ())
    text = render_markdown(report)
    assert (
        "test failed: assert -1 == 3\n\n```text\ntests/test_mod.py:5: in test_add\n    assert add(1, 2) == 3\n"
        in text
    )
    assert "E    +  where -1 = add(1, 2)\n```" in text
