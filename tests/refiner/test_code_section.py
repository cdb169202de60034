"""The code a request shows: the lines a critique names that the views leave out, and what a request
says of a file shown in part."""

from __future__ import annotations

from coderefine.refiner.code_section import whole_note
from coderefine.refiner.context import FileView


def test_an_issue_on_a_definitions_first_line_shows_the_reviser_its_body() -> None:
    """A critic quoting the `def` line anchors its issue there; the reviser needs the body below it."""
    from coderefine.refiner.code_section import issue_excerpts
    from coderefine.refiner.context import view_of
    from coderefine.refiner.critique import Critique, Issue

    body = "".join(f"    step{i} = {i}\n" for i in range(20))
    text = "import os\n\n\ndef shown():\n    return 1\n\n\n" + "\n".join(
        f"def f{n}(x):\n{body}    return x + {n}\n\n" for n in range(30)
    )
    start = text.splitlines().index("def f20(x):") + 1
    # The function before it is in focus: its surrounding lines show f20's def line, not its body.
    view = view_of("m.py", text, [start - 5], 40)
    assert not view.whole and view.shows(start, start) and not view.shows(start + 21, start + 21)
    issue = Issue("bug", "error", "m.py", start, start, "def f20(x):", "fix it")
    extra = issue_excerpts({"m.py": view}, Critique("revise", "wrong", (issue,)))
    assert "return x + 20" in extra


def test_a_file_under_review_whole_but_shown_in_part_says_which_parts() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 101))
    assert "Only parts" not in whole_note(["m.py"], {"m.py": FileView("m.py", text)})
    note = whole_note(["m.py"], {"m.py": FileView("m.py", text, ((1, 10), (40, 60)))})
    assert "all of each file is under review" in note
    assert "Only parts are shown above (m.py: lines 1-10, 40-60)" in note and "the outline" in note
    assert whole_note([], {}) == ""


def test_the_lines_a_critique_names_keep_to_the_room_and_the_rest_are_named_to_ask_for() -> None:
    from coderefine.refiner.code_section import issue_excerpts
    from coderefine.refiner.context import view_of
    from coderefine.refiner.critique import Critique, Issue

    body = "".join(f"    step{i} = {i}\n" for i in range(20))
    text = "".join(f"def f{n}(x):\n{body}    return x + {n}\n\n\n" for n in range(40))
    lines = text.splitlines()
    view = view_of("m.py", text, [1], 40)
    assert not view.whole

    def issue_at(name: str) -> Issue:
        start = lines.index(f"def {name}(x):") + 1
        return Issue("bug", "error", "m.py", start + 5, start + 8, "step", "fix it")

    critique = Critique("revise", "wrong", tuple(issue_at(f"f{n}") for n in (10, 20, 30)))
    whole = issue_excerpts({"m.py": view}, critique)
    assert all(f"step{i} = {i}" in whole for i in (4, 7)) and "not shown to keep" not in whole
    one = len(issue_excerpts({"m.py": view}, Critique("revise", "w", critique.issues[:1])))
    room = one + 10
    bounded = issue_excerpts({"m.py": view}, critique, room)
    assert len(bounded) < len(whole)
    shown = bounded.split("Also referred to")[0]
    assert len(shown) <= room + 100
    assert "not shown to keep this request short" in bounded and "(in `f20`)" in bounded
    assert "(in `f30`)" in bounded and "SHOW: name" in bounded
    # The issue this call fixes comes first.
    first = issue_excerpts({"m.py": view}, critique, room, first=(2,))
    assert "(in `f10`)" in first and "(in `f30`)" not in first


def test_each_line_a_critique_names_is_shown_once() -> None:
    """Issues near each other, or near the view's own excerpts, name overlapping lines: each is cut to what
    is not shown yet, and what meets is one excerpt."""
    from coderefine.refiner.code_section import issue_excerpts, joined, uncovered
    from coderefine.refiner.critique import Critique, Issue

    assert uncovered((1, 58), [(1, 43)]) == [(44, 58)]
    assert uncovered((1, 68), [(1, 43), (44, 58)]) == [(59, 68)]
    assert uncovered((10, 20), [(12, 13), (15, 30)]) == [(10, 11), (14, 14)]
    assert uncovered((10, 20), [(1, 30)]) == []
    assert joined([(59, 68), (44, 58), (80, 90), (85, 86)]) == [(44, 68), (80, 90)]

    text = "".join(f"value_{n} = {n}\n" for n in range(1, 301))
    view = FileView("m.py", text, ((1, 43),), outline="(outline)")

    def issue(line: int, end: int) -> Issue:
        return Issue("bug", "error", "m.py", line, end, f"value_{line}", "fix it")

    critique = Critique("revise", "wrong", (issue(20, 58), issue(30, 68), issue(200, 200)))
    shown = issue_excerpts({"m.py": view}, critique)
    for n in (44, 58, 68, 200):
        assert shown.count(f"value_{n} = {n}\n") == 1
    assert "value_20 = 20\n" not in shown  # the view shows it already
    assert "lines=44-" in shown and shown.count("<<<DATA kind=code") == 2
