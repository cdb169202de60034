"""What a request shows of a file: whole when small, focused excerpts and an outline when large."""

from __future__ import annotations

from pathlib import Path

from benchmarks.fixtures import big_module
from coderefine.config import Settings
from coderefine.edits.blocks import apply_edits, parse_edit_blocks
from coderefine.models.scripted import ScriptedModel
from coderefine.project.change import from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import project_files
from coderefine.refiner.context import (
    FileView,
    changed_lines,
    fit_views,
    named_spans,
    view_of,
    views_for,
)
from coderefine.refiner.critique import Critique, Issue
from coderefine.refiner.frames import crashed, signal_lines
from coderefine.refiner.loop import refine
from coderefine.refiner.prompting import PromptBuilder
from coderefine.signals.base import Comparison, Signal
from coderefine.signals.evaluate import Evaluator
from tests.conftest import RepoFactory, write_files

MODULE = "import os\n\n" + big_module(100)  # about 1,000 lines
BUGGY = MODULE.replace("return value + 1\n\n\ndef step_51(", "return value + 2\n\n\ndef step_51(", 1)


def test_a_small_file_is_shown_whole() -> None:
    view = view_of("m.py", "def f():\n    return 1\n", {2}, threshold=400)
    assert view.whole and view.shows(1, 2)


def test_a_large_module_shows_the_changed_definition_its_header_and_an_outline() -> None:
    view = views_for({"m.py": BUGGY}, {"m.py": MODULE}, (), threshold=400)["m.py"]
    lines = BUGGY.splitlines()
    changed = next(iter(changed_lines(MODULE, BUGGY)))
    assert lines[changed - 1] == "    return value + 2"
    assert not view.whole and view.shows(changed, changed)
    start = lines.index("def step_50(value: int, scale: int = 2) -> int:") + 1
    assert view.shows(start, changed)  # the whole definition
    assert view.shows(1, 1)  # the module's docstring and imports
    shown = sum(b - a + 1 for a, b in view.excerpts)
    assert shown < 40
    assert "def step_99(value, scale)" in view.outline
    assert "step_50(" not in view.outline
    # Excerpts are verbatim: an edit copied from one applies to the whole file.
    excerpt = next(view.excerpt_text(s) for s in view.excerpts if s[0] <= changed <= s[1])
    assert "    return value + 2\n" in excerpt
    edit = "m.py\n```python\n<<<<<<< SEARCH\n    return value + 2\n=======\n    return value + 1\n>>>>>>> REPLACE\n```\n"
    assert apply_edits({"m.py": BUGGY}, parse_edit_blocks(edit), ["m.py"])["m.py"] == MODULE


def test_threshold_zero_always_shows_whole_files() -> None:
    assert views_for({"m.py": BUGGY}, {"m.py": MODULE}, (), threshold=0)["m.py"].whole


def test_callees_in_the_module_are_shown_whole() -> None:
    text = MODULE.replace(
        "    return value + 1\n\n\ndef step_51(", "    return scaled(value)\n\n\ndef step_51(", 1
    )
    text += "\n\ndef scaled(value: int) -> int:\n    return value + 1\n"
    view = views_for({"m.py": text}, {"m.py": MODULE}, (), threshold=400)["m.py"]
    start = text.splitlines().index("def scaled(value: int) -> int:") + 1
    assert view.shows(start, start + 1)
    assert "scaled" not in view.outline


def test_failing_tests_point_at_lines_through_their_traceback() -> None:
    signal = Signal(
        "pytest",
        "tests/t.py",
        3,
        3,
        "tests/t.py::test_x",
        "test failed",
        "error",
        detail="tests/t.py:3: in test_x\n    f()\nm.py:512: in step_50\nE   ValueError",
    )
    assert signal_lines("m.py", [signal]) == {512}
    view = view_of("m.py", MODULE, signal_lines("m.py", [signal]), 400)
    assert view.shows(512, 512)


def test_the_reviser_sees_the_lines_the_critique_names() -> None:
    views = views_for({"m.py": BUGGY}, {"m.py": MODULE}, (), threshold=400)
    far = BUGGY.splitlines().index("def step_90(value: int, scale: int = 7) -> int:") + 3
    assert not views["m.py"].shows(far, far)
    critique = Critique("revise", "s", (Issue("t", "error", "m.py", far, far, "e", "s"),))
    request = PromptBuilder(1000).reviser(
        {"m.py": BUGGY}, intent="i", critique=critique, comparison=Comparison((), (), (), ()), views=views
    )
    text = request.prompt_text()
    assert "Lines the critique refers to" in text
    assert 'raise ValueError("negative value in step 90")' in text
    assert len(text) < len(BUGGY) / 2


def test_named_spans_finds_hidden_definitions() -> None:
    view = views_for({"m.py": BUGGY}, {"m.py": MODULE}, (), threshold=400)["m.py"]
    spans = named_spans(view, "<<<<<<< SEARCH\ndef step_80(value: int) -> int:\n")
    assert len(spans) == 1 and "def step_80(" in view.excerpt_text(spans[0])


def test_a_search_on_unseen_lines_says_what_was_shown(make_repo: RepoFactory) -> None:
    root = make_repo({"pkg/__init__.py": "", "pkg/big.py": MODULE})
    write_files(root, {"pkg/big.py": BUGGY})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/big.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    issue = {
        "title": "t",
        "severity": "error",
        "path": "pkg/big.py",
        "line": 10,
        "evidence": "e",
        "suggestion": "s",
    }
    # The SEARCH copies step_80 with a wrong signature: it was never shown, so it cannot match.
    miss = "pkg/big.py\n```python\n<<<<<<< SEARCH\ndef step_80(value):\n=======\ndef step_80(v):\n>>>>>>> REPLACE\n```\n"
    model = ScriptedModel([{"verdict": "revise", "summary": "s", "issues": [issue]}, miss, miss])
    settings = Settings(tests=False)
    with Evaluator(
        change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    ) as ev:
        result = refine(change, settings, model, ev, intent="i")
    assert result.rounds[0].outcome == "edit-failed"
    retry = model.history[2].messages[-1].text
    assert "Only parts of the files were shown" in retry
    assert "def step_80(value: int, scale: int = 4) -> int:" in retry  # the hidden definition, shown now
    assert len(model.history[0].prompt_text()) < len(BUGGY) / 2


def test_a_change_all_over_a_large_module_sends_it_whole() -> None:
    everywhere = MODULE.replace("value * 1", "value * 2")
    assert views_for({"m.py": everywhere}, {"m.py": MODULE}, (), threshold=400)["m.py"].whole


def test_a_form_feed_is_no_line_break_for_excerpts() -> None:
    # A page break (^L) on a line of its own, as older modules have: str.splitlines breaks there too, so
    # the excerpt of a line Python numbers N was line N+1.
    functions = [
        f"def f{n}(a, b):\n" + "    x = a\n" * 20 + f"    return a + b  # f{n}\n\n\n" for n in range(20)
    ]
    text = "import os\n\n\x0c\n" + "\x0c\n".join(functions)
    target = next(i + 1 for i, line in enumerate(text.split("\n")) if "# f15" in line)
    view = view_of("m.py", text, [target], threshold=50, tight=True)
    shown = "".join(view.excerpt_text(span) for span in view.excerpts)
    assert "# f15\n" in shown
    assert changed_lines(text, text.replace("# f15", "# f15!")) == {target}


def test_a_file_nothing_points_into_shows_its_first_definitions_within_the_budget() -> None:
    # A review against the intent alone, of a module over the view budget: its header, then its
    # definitions in order as far as the budget goes, and an outline of the rest.
    whole = {"m.py": FileView("m.py", MODULE)}
    views = fit_views(whole, {"m.py": MODULE}, {}, (), {}, {}, 4_000)
    view = views["m.py"]
    assert not view.whole and view.excerpts[0][0] == 1
    assert view.shown_chars <= 4_000
    assert "def step_0(" in view.excerpt_text(view.excerpts[0]) and "step_90:" in view.outline


def test_lint_all_over_a_module_gives_way_to_the_error_within_the_budget() -> None:
    lines = MODULE.splitlines()
    starts = [n + 1 for n, line in enumerate(lines) if line.startswith("def step_")]
    lint = [Signal("ruff", "m.py", n, n, "E501", "long line", "warning") for n in starts[::3]]
    target = starts[51] + 5
    error = Signal("pytest", "m.py", target, target, "t::x", "test failed", "error")
    whole = {"m.py": FileView("m.py", MODULE)}
    views = fit_views(whole, {"m.py": MODULE}, {}, [*lint, error], {}, {}, 6_000)
    view = views["m.py"]
    assert view.shows(target, target)
    assert not view.shows(starts[0], starts[0] + 3) or not view.shows(starts[90], starts[90] + 3)
    assert view.shown_chars <= 6_000


def test_when_every_definition_the_tests_call_is_too_much_the_best_suspects_are_shown() -> None:
    body = "".join(f"    x = x + {n}\n" for n in range(30))
    text = "".join(f"def f{n}(x):\n{body}    return x\n\n\n" for n in range(40))
    starts = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("def ")]
    called = {"m.py": {line for start in starts for line in range(start, start + 32)}}
    best = starts[17]
    located = {"m.py": frozenset(range(best, best + 32))}
    # The failing tests' tracebacks end all over the module.
    errors = [
        Signal("pytest", "m.py", start + 5, start + 5, f"t::{start}", "failed", "error") for start in starts
    ]
    whole = {"m.py": FileView("m.py", text)}
    fitted = fit_views(whole, {"m.py": text}, {}, errors, {}, called, 6_000, located)["m.py"]
    assert fitted.shows(best, best + 31) and fitted.shown_chars <= 6_000
    # Without a ranking, nothing fits and the smallest candidate still holds every called definition.
    unranked = fit_views(whole, {"m.py": text}, {}, errors, {}, called, 6_000)["m.py"]
    assert unranked.shown_chars > 6_000


def test_frames_whose_callees_do_not_fit_are_shown_without_them() -> None:
    """pyflakes 3.0.1's release: each frame's definition with the helpers it calls passed the budget,
    and the header with one suspect was sent with two thirds of the budget unused."""
    body = "".join(f"    x = x + {n}\n" for n in range(30))
    helper_body = "".join(f"    x = x * {k}\n" for k in range(15))
    helpers = "".join(f"def h{n}(x):\n{helper_body}    return x\n\n\n" for n in range(12))
    calls = [f"h{(2 * n) % 12}(x) + h{(2 * n + 1) % 12}(x)" for n in range(40)]
    text = helpers + "".join(f"def f{n}(x):\n{body}    return {calls[n]}\n\n\n" for n in range(40))
    starts = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("def f")]
    chain = starts[1:4]
    detail = "tests/test_m.py:3: in test_x\n    f1(1)\n" + "".join(
        f"m.py:{start + 31}: in f{n}\n    return h0(x)\n" for n, start in enumerate(chain, 1)
    )
    crash = Signal(
        "pytest", "tests/test_m.py", 3, 3, "tests/test_m.py::test_x", "boom", "error", detail=detail
    )
    located = {"m.py": frozenset(range(starts[30], starts[30] + 32))}
    whole = {"m.py": FileView("m.py", text)}
    fitted = fit_views(whole, {"m.py": text}, {}, [crash], {}, located, 3_000, located)["m.py"]
    assert fitted.shown_chars <= 3_000
    assert all(fitted.shows(start, start + 31) for start in [*chain, starts[30]]), fitted.excerpts
    assert not fitted.shows(1, 17)  # no helper: they are what did not fit


def test_when_a_test_crashed_in_the_code_its_innermost_frames_stay_beside_the_best_suspects() -> None:
    """A traceback through six functions of the module and five suspects ranked against few passing
    tests: not all fit, and the suspects alone would hide where it raised (pyflakes 3.0.1's release)."""
    body = "".join(f"    x = x + {n}\n" for n in range(30))
    text = "".join(f"def f{n}(x):\n{body}    return g(x)\n\n\n" for n in range(40))
    starts = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("def ")]
    chain = starts[1:7]  # f1 (outermost) .. f6 (where it raised)
    detail = "tests/test_m.py:3: in test_x\n    f1(1)\n" + "".join(
        f"m.py:{start + 31}: in f{n}\n    return g(x)\n" for n, start in enumerate(chain, 1)
    )
    crash = Signal(
        "pytest", "tests/test_m.py", 3, 3, "tests/test_m.py::test_x", "boom", "error", detail=detail
    )
    suspects = starts[20:25]
    located = {"m.py": frozenset(n for s in suspects for n in range(s, s + 32))}
    # Old lint all over the module: the signals, frames and all, do not fit with it.
    lint = [Signal("ruff", "m.py", s + 3, s + 3, "E501", "long line", "warning") for s in starts[::4]]
    whole = {"m.py": FileView("m.py", text)}
    fitted = fit_views(whole, {"m.py": text}, {}, [*lint, crash], {}, located, 5_000, located)["m.py"]
    assert fitted.shown_chars <= 5_000
    assert all(fitted.shows(s, s + 31) for s in chain[-3:]), fitted.excerpts
    assert not all(fitted.shows(s, s + 31) for s in chain)
    assert fitted.shows(suspects[0], suspects[0] + 31)
    # An assertion that failed in the test itself has no frame in the code: the suspects are the evidence.
    failed = Signal("pytest", "tests/test_m.py", 3, 3, "tests/test_m.py::test_x", "assert", "error")
    assert not crashed({"m.py": text}, [failed]) and crashed({"m.py": text}, [crash])
