"""When a revision may end the run without a confirming critique."""

from __future__ import annotations

from coderefine.config import Settings
from coderefine.critique import Critique, Issue
from coderefine.policy import backed, confirmed_by_signals
from coderefine.signals.base import Comparison, Signal, SourceStatus
from tests.conftest import RepoFactory
from tests.test_loop import FIX, PASS, buggy_change, revise, run, scripted

TEXT = "def add(a, b):\n    return a - b\n"
FAILING = Signal(
    "pytest",
    "tests/test_mod.py",
    4,
    4,
    "tests/test_mod.py::test_add",
    "test failed: assert -1 == 3",
    "error",
    detail="tests/test_mod.py:5: in test_add\n    assert add(1, 2) == 3\nE   assert -1 == 3",
)
LINT = Signal("ruff", "pkg/mod.py", 2, 2, "F821", "undefined name", "error")
OK = (SourceStatus("pytest", "ok"),)


def issue(line: int = 2, path: str = "pkg/mod.py") -> Issue:
    return Issue("t", "error", path, line, line, "e", "s")


def test_a_failing_test_backs_an_issue_in_the_function_it_calls() -> None:
    assert backed(issue(), FAILING, {"pkg/mod.py": TEXT})
    assert not backed(issue(), FAILING, {"pkg/mod.py": "def sub(a, b):\n    return a - b\n"})


def test_a_lint_signal_backs_an_issue_on_its_lines_only() -> None:
    assert backed(issue(2), LINT, {})
    assert not backed(issue(9), LINT, {})
    assert not backed(issue(2, "pkg/other.py"), LINT, {})


def test_confirmed_only_when_every_issue_is_backed_and_resolved() -> None:
    before = Comparison((FAILING,), (), (), OK)
    after = Comparison((), (), (FAILING,), OK)
    texts = {"pkg/mod.py": TEXT}
    one = Critique("revise", "s", (issue(),))
    assert confirmed_by_signals(one, before, after, texts, "warning")
    assert not confirmed_by_signals(one, before, before, texts, "warning")  # still failing
    unbacked = Critique("revise", "s", (issue(), issue(path="pkg/other.py")))
    assert not confirmed_by_signals(unbacked, before, after, texts, "warning")
    missing = Comparison((), (), (), (SourceStatus("pytest", "timeout", "slow"),))
    assert not confirmed_by_signals(one, before, missing, texts, "warning")
    assert not confirmed_by_signals(one, Comparison((), (), (), OK), after, texts, "warning")  # no reason


def test_the_loop_skips_the_confirming_critique_when_signals_settle_it(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(revise(), FIX)
    result = run(change, files, model, Settings(confirm="signals"))
    assert result.stop == "passed"
    assert [r.role for r in model.history] == ["critic", "reviser"]
    assert "no confirming critique" in result.rounds[0].note
    assert "return a + b" in result.final["pkg/mod.py"]


def test_the_loop_still_confirms_an_issue_no_signal_backs(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    style = {
        **revise(),
        "issues": [
            *revise()["issues"],
            {
                "title": "name b better",
                "severity": "info",  # type: ignore[list-item]
                "path": "pkg/mod.py",
                "line": 5,
                "evidence": "def mul(a, b):",
                "suggestion": "rename",
            },
        ],
    }
    model = scripted(style, FIX, PASS)
    result = run(change, files, model, Settings(confirm="signals"))
    assert [r.role for r in model.history] == ["critic", "reviser", "critic"]
    assert result.stop == "passed"


def test_signals_first_saves_the_critic_call_when_tests_already_fail(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(FIX)
    result = run(change, files, model, Settings(first_critique="signals", confirm="signals"))
    assert [r.role for r in model.history] == ["reviser"]
    assert result.stop == "passed"
    assert "tests/test_mod.py::test_add" in model.history[0].prompt_text()  # the critique is the signal
    assert "return a + b" in result.final["pkg/mod.py"]


def test_signals_first_with_confirmation_still_asks_the_critic(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(FIX, PASS)
    result = run(change, files, model, Settings(first_critique="signals"))
    assert [r.role for r in model.history] == ["reviser", "critic"]
    assert result.stop == "passed"
