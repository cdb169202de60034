"""The signals section: folded within its budget, and never "clean" when nothing was collected."""

from __future__ import annotations

from coderefine.refiner.prompting import PromptBuilder
from coderefine.signals.base import Comparison, Signal, SourceStatus


def test_signals_that_were_not_collected_are_not_called_clean() -> None:
    from coderefine.refiner.signal_section import NOT_COLLECTED, signals_section

    skipped = SourceStatus("signals", "skipped", "this strategy uses no signals")
    assert NOT_COLLECTED in signals_section(Comparison((), (), (), (skipped,)))
    ran = SourceStatus("ruff", "ok")
    assert "the change introduced no signal" in signals_section(Comparison((), (), (), (ran, skipped)))


def test_the_cases_of_one_parametrized_test_share_one_traceback() -> None:
    from coderefine.refiner.signal_section import signals_section
    from coderefine.signals.base import Comparison, Signal, SourceStatus

    def case(n: int) -> Signal:
        return Signal(
            "pytest",
            "tests/test_m.py",
            4,
            4,
            f"tests/test_m.py::test_plural[word{n}]",
            f"test failed: assert 'word{n}s' == 'word{n}'",
            "error",
            detail="tests/test_m.py:4: in test_plural\n    assert plural(w) == expected\nE   AssertionError",
        )

    other = Signal("pytest", "tests/test_m.py", 9, 9, "tests/test_m.py::test_other", "test failed", "error")
    comparison = Comparison(
        (*tuple(case(n) for n in range(5)), other), (), (), (SourceStatus("pytest", "ok"),)
    )
    text = signals_section(comparison)
    assert text.count("in test_plural") == 2  # two cases with their traceback
    assert all(f"test_plural[word{n}]: test failed: assert 'word{n}s'" in text for n in range(5))
    assert "test_other" in text


def test_the_signals_section_keeps_to_its_token_budget_and_says_what_it_left_out() -> None:
    from coderefine.refiner.signal_section import signals_section

    def case(n: int) -> Signal:
        return Signal(
            "pytest",
            "tests/test_m.py",
            n,
            n,
            f"tests/test_m.py::test_{n}",
            "test failed: AssertionError",
            "error",
            detail=f"tests/test_m.py:{n}: in test_{n}\n    check(x)\ntests/common.py:2: in check\n"
            "    assert x\nE   AssertionError",
        )

    comparison = Comparison(tuple(case(n) for n in range(200)), (), (), (SourceStatus("pytest", "ok"),))
    unbounded = signals_section(comparison, tokens=0)
    section = signals_section(comparison, tokens=500)
    assert len(section) < 500 * 4 + 400 < len(unbounded)
    assert section.count("in check") == 2
    assert "more that failed the same way at tests/common.py:2" in section
    assert "`coderefine check --format json` lists every one" in section
    prompts = PromptBuilder(1000, signal_tokens=500)
    request = prompts.critic({"m.py": "x = 1\n"}, intent="i", diff="", changed=[], comparison=comparison)
    assert section in request.messages[0].text


def test_old_lint_in_lines_the_request_does_not_show_is_counted_not_listed() -> None:
    from coderefine.refiner.context import FileView
    from coderefine.refiner.signal_section import signals_section

    def lint(line: int) -> Signal:
        return Signal("ruff", "m.py", line, line, "E731", f"lambda at {line}")

    old = (lint(5), lint(120), lint(130))
    comparison = Comparison(old, (), (), (SourceStatus("ruff", "ok"),))
    text = "".join(f"x{n} = {n}\n" for n in range(1, 201))
    view = FileView("m.py", text, ((1, 20),), outline="(outline)")
    section = signals_section(comparison, old, views={"m.py": view})
    assert "lambda at 5" in section and "lambda at 120" not in section
    assert "2 more in lines this request does not show" in section
    whole = signals_section(comparison, old)
    assert all(f"lambda at {n}" in whole for n in (5, 120, 130)) and "does not show" not in whole
