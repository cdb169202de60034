"""When a revision may end the run without a confirming critique."""

from __future__ import annotations

from coderefine.config import Settings
from coderefine.refiner.critique import Critique, Issue
from coderefine.refiner.policy import backed, confirmed_by_signals, covers, merge_refusal, mergeable
from coderefine.signals.base import Comparison, Signal, SourceStatus
from tests.conftest import RepoFactory
from tests.refiner.test_loop import FIX, PASS, buggy_change, revise, run, scripted

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
    result = run(change, files, model, Settings(first_critique="signals", confirm="always"))
    assert [r.role for r in model.history] == ["reviser", "critic"]
    assert result.stop == "passed"


MERGED = Settings(merge="one-issue", confirm="signals")


def with_edits(critique: dict[str, object], edits: str) -> dict[str, object]:
    return {**critique, "edits": edits}


def test_mergeable_only_for_one_signal_backed_issue_with_edits() -> None:
    before = Comparison((FAILING,), (), (), OK)
    texts = {"pkg/mod.py": TEXT}
    one = Critique("revise", "s", (issue(),), edits=FIX)
    assert mergeable(one, before, texts, "warning")
    assert not mergeable(Critique("revise", "s", (issue(),)), before, texts, "warning")  # no edits
    two = Critique("revise", "s", (issue(), issue()), edits=FIX)
    assert not mergeable(two, before, texts, "warning")
    unbacked = Critique("revise", "s", (issue(path="pkg/other.py"),), edits=FIX)
    assert not mergeable(unbacked, Comparison((LINT,), (), (), OK), texts, "warning")
    assert "no failing test or finding backs its issue at pkg/other.py:2" in merge_refusal(
        unbacked, Comparison((LINT,), (), (), OK), texts, "warning"
    )
    # A failing test may stand behind it even unnamed: ``covers`` decides once the edits are applied.
    assert mergeable(unbacked, before, texts, "warning")
    assert not mergeable(one, Comparison((), (), (), OK), texts, "warning")  # no signal motivates it
    assert "raised 2 issues" in merge_refusal(two, before, texts, "warning")


def test_an_edit_covers_an_issue_when_it_changes_the_function_the_issue_is_in() -> None:
    old = {"pkg/mod.py": "def f():\n    x = 1\n    return x\n\n\ndef g():\n    return 2\n"}
    in_f = {"pkg/mod.py": old["pkg/mod.py"].replace("return x", "return x + 1")}
    assert covers(issue(2), old, in_f)  # the issue on f's first line, the edit on its last
    assert not covers(issue(7), old, in_f)  # the issue in g
    assert not covers(issue(2, "pkg/other.py"), old, in_f)


def test_merged_the_critic_carries_the_fix_and_signals_still_check_it(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(with_edits(revise(), FIX))
    result = run(change, files, model, MERGED)
    assert [r.role for r in model.history] == ["critic"]
    assert result.stop == "passed"
    assert "no reviser call" in result.rounds[0].note and "no confirming critique" in result.rounds[0].note
    assert result.evaluation.comparison.clean  # measured like any revision
    assert "return a + b" in result.final["pkg/mod.py"]
    assert "`edits`" in model.history[0].messages[0].text


def test_merged_edits_that_make_a_signal_worse_are_discarded(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    worse = FIX.replace("return a + b", "return a + undefined")  # F821, and test_add still fails
    model = scripted(with_edits(revise(), worse))
    result = run(change, files, model, MERGED)
    assert [r.outcome for r in result.rounds] == ["rejected"]
    assert result.final == result.original


def test_merged_edits_of_an_unbacked_issue_go_to_the_reviser(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    style = revise(evidence="def mul(a, b):")  # anchored on mul, which no failing test names
    style["issues"][0]["line"] = 5  # type: ignore[index]
    model = scripted(with_edits(style, FIX), FIX, PASS)
    result = run(change, files, model, MERGED)
    assert [r.role for r in model.history] == ["critic", "reviser", "critic"]
    assert "return a + b" in result.final["pkg/mod.py"]


def test_merged_edits_that_do_not_apply_go_to_the_reviser(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    miss = FIX.replace("return a - b", "return a - c")
    model = scripted(with_edits(revise(), miss), FIX)
    result = run(change, files, model, MERGED)
    assert [r.role for r in model.history] == ["critic", "reviser"]
    assert result.stop == "passed"


HELPER = "def _step(a, b):\n    return a - b\n\n\ndef add(a, b):\n    return _step(a, b)\n\n\ndef mul(a, b):\n    return a * b\n"


def test_a_test_backed_issue_the_traceback_does_not_name_is_fixed_in_one_call(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo, HELPER)
    critique = with_edits(revise(), FIX)  # on _step's line 2, which test_add reaches only through add
    model = scripted(critique)
    result = run(change, files, model, MERGED)
    failing = result.initial.comparison.introduced[0]
    assert "_step" not in f"{failing.message}\n{failing.detail}"  # only the test's own frame is shown
    assert [r.role for r in model.history] == ["critic"]
    assert result.stop == "passed" and result.evaluation.comparison.clean
    assert "no reviser call" in result.rounds[0].note and "no confirming critique" in result.rounds[0].note


def test_edits_that_are_not_used_say_why_in_the_round(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    miss = FIX.replace("return a - b", "return a - c")
    result = run(change, files, scripted(with_edits(revise(), miss), FIX), MERGED)
    assert "the critic's edits were not used, so the reviser was asked:" in result.rounds[0].note
    elsewhere = revise(evidence="def mul(a, b):")
    elsewhere["issues"][0]["line"] = 5  # type: ignore[index]
    result = run(change, files, scripted(with_edits(elsewhere, FIX), FIX, PASS), MERGED)
    assert "they do not change the code of its issue at pkg/mod.py:5" in result.rounds[0].note
