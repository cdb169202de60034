"""One file of a review: a proposed fix is offered only when the critic shown it no longer raises the
issue on the lines it wrote (the end-to-end cases are in test_run.py)."""

from __future__ import annotations

from coderefine.doors.review.findings import suggestion_for
from coderefine.doors.review.verify import still_raised
from coderefine.refiner.critique import Critique, Issue


def test_an_issue_as_severe_on_the_fixed_lines_is_still_raised() -> None:
    suggestion = suggestion_for("a\nb\nc\nd\n", "a\nB\nC\nd\n")
    assert suggestion is not None and (suggestion.start, suggestion.end) == (2, 3)
    issue = Issue("bug", "warning", "m.py", 2, 2, "b", "fix b")
    on_fix = Issue("still", "error", "m.py", 3, 3, "C", "no")
    elsewhere = Issue("other", "error", "m.py", 4, 4, "d", "no")
    milder = Issue("nit", "info", "m.py", 2, 2, "B", "no")
    assert still_raised(Critique("revise", "s", (on_fix,)), issue, suggestion)
    assert not still_raised(Critique("revise", "s", (elsewhere, milder)), issue, suggestion)
    assert not still_raised(Critique("pass", "s", (on_fix,)), issue, suggestion)
