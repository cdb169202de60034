"""What a run's requests show of the code: views within the code budget, and what they leave of it."""

from __future__ import annotations

from coderefine.models.windows import DIFF_ALLOWANCE
from coderefine.refiner.showing import change_diff
from coderefine.refiner.spec import CHARS_PER_TOKEN
from coderefine.signals.base import Comparison
from tests.refiner.test_session import module_of, session_for


def test_a_long_diff_is_paid_for_out_of_the_views() -> None:
    # 16 functions fit a local model's views whole; the diff of three rewritten docstrings beside them
    # would not, so the views become excerpts.
    before, after = module_of(16, set()), module_of(16, {3, 8, 13})
    session = session_for(before, after, "gguf:qwen2.5-coder-1.5b")
    assert session.budget.code_chars is not None and len(after) < session.budget.code_chars
    views = session.showing.views({"mod.py": after}, Comparison((), (), (), ()))
    diff = change_diff({"mod.py": before}, {"mod.py": after})
    assert not views["mod.py"].whole
    assert (
        views["mod.py"].shown_chars + len(diff)
        <= session.budget.code_chars + DIFF_ALLOWANCE * CHARS_PER_TOKEN
    )
    # One changed line leaves the file whole.
    one = after.replace("LONG", "long").replace("def f3(a, b):", "def f3(a, b=0):")
    assert (
        session_for(before, one, "gguf:qwen2.5-coder-1.5b")
        .showing.views({"mod.py": one}, Comparison((), (), (), ()))["mod.py"]
        .whole
    )


def test_the_whole_format_always_shows_files_whole() -> None:
    # Its answer is every line of each file, so it is shown every line, even past a small context.
    before, after = module_of(60, set()), module_of(60, {7})
    session = session_for(before, after, "gguf:qwen2.5-coder-1.5b", edit_format="whole")
    assert session.showing.views({"mod.py": after}, Comparison((), (), (), ()))["mod.py"].whole
    assert session.showing.author_views({"mod.py": after}, Comparison((), (), (), ())) is None
    assert (
        not session_for(before, after, "gguf:qwen2.5-coder-1.5b")
        .showing.views({"mod.py": after}, Comparison((), (), (), ()))["mod.py"]
        .whole
    )


def test_the_revisers_named_lines_take_what_the_views_leave_of_the_code_budget() -> None:
    """A critique naming lines all over a long module: the excerpts of those the views leave out keep
    to the code budget beside the views (they had no limit: a reviser's call of a release was 13,993
    tokens), and the rest are named, to ask for."""
    from coderefine.refiner.critique import Critique, Issue

    before, after = module_of(60, set()), module_of(60, {7})
    session = session_for(before, after, "gguf:qwen2.5-coder-1.5b")
    lines = after.splitlines()
    starts = [lines.index(f"def f{n}(a, b):") + 1 for n in range(20, 60, 2)]
    issues = tuple(Issue("bug", "error", "mod.py", s + 3, s + 4, "doc", "fix it") for s in starts)
    critique = Critique("revise", "wrong", issues)
    request = session.reviser_request({"mod.py": after}, critique, Comparison((), (), (), ()))
    views = sum(v.shown_chars for v in session.shown.values())
    budget = session.budget.code_chars
    assert budget is not None and not session.shown["mod.py"].whole
    message = request.messages[0].text
    unseen = message.split("Lines the critique refers to that are not shown above:")[1].split(
        "Also referred"
    )[0]
    assert views + len(unseen) <= max(budget, views + 4_000) + 200
    assert "not shown to keep this request short" in message and "(in `f58`)" in message


def test_while_tests_fail_the_lint_a_file_had_before_the_run_does_not_choose_its_views() -> None:
    """Old warnings of a file reviewed whole are context: while tests fail, the views are for the
    failures' evidence (four of them took half the views of a pyflakes task whose bugs they hid)."""
    from coderefine.signals.base import Signal

    text = module_of(60, set())
    assert text.count("\n") > 400
    lines = text.splitlines()
    lint_line = lines.index("def f5(a, b):") + 2
    frame = lines.index("def f40(a, b):") + 1
    lint = Signal("ruff", "mod.py", lint_line, lint_line, "E501", "long line", "warning")
    failing = Signal(
        "pytest",
        "tests/test_mod.py",
        3,
        3,
        "tests/test_mod.py::test_f",
        "boom",
        "error",
        detail=f"mod.py:{frame}: in f40\nE   boom",
    )
    comparison = Comparison((lint, failing), (), (), ())
    session = session_for(text, text, "claude-sonnet-4-5")
    assert session.showing.views({"mod.py": text}, comparison)["mod.py"].shows(lint_line, lint_line)
    session.showing.context = (lint,)
    view = session.showing.views({"mod.py": text}, comparison)["mod.py"]
    assert view.shows(frame, frame) and not view.shows(lint_line, lint_line)
    # With no failing test the lint is the work: it chooses the views again.
    only_lint = Comparison((lint,), (), (), ())
    assert session.showing.views({"mod.py": text}, only_lint)["mod.py"].shows(lint_line, lint_line)
