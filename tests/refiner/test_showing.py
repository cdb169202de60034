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
