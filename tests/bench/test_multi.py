"""Multi-location tasks on a small local project of two modules: three bugs in one module, and a bug
in each of two files; each bug shown by a visible failing test, fixed by the oracle, not by doing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from coderefine.bench.build import Source, make_suite
from coderefine.bench.harness import run_bench
from coderefine.bench.localized import bug_lines, task_changes
from coderefine.bench.models import DoNothingModel, OracleModel
from coderefine.bench.multi import MULTI_KIND, THREE, TWO_FILES
from coderefine.bench.strategies import strategies
from coderefine.bench.suite import load_suite
from coderefine.config import Settings
from coderefine.project.runner import SubprocessRunner
from tests.bench.test_build import ENV, MODULE, TESTS

NUMS = '''"""Small number helpers."""


def halve(value):
    """Half of ``value``, rounded down."""
    return value // 2


def sign(value):
    """-1, 0 or 1, as ``value`` is below, at or above zero."""
    if value < 0:
        return -1
    if value > 0:
        return 1
    return 0


def total(values, start=0):
    """The sum of ``values`` added to ``start``."""
    result = start
    for value in values:
        result += value
    return result
'''

NUMS_TESTS = """from textkit.nums import halve, sign, total


def test_halve():
    assert [halve(n) for n in (0, 1, 2, 7)] == [0, 0, 1, 3]


def test_sign():
    assert [sign(n) for n in (-3, 0, 4)] == [-1, 0, 1]


def test_total():
    assert total([1, 2, 3]) == 6
    assert total([], 5) == 5
"""


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("multi")
    project = root / "textkit-src"
    (project / "textkit").mkdir(parents=True)
    (project / "textkit" / "__init__.py").write_text("")
    (project / "textkit" / "core.py").write_text(MODULE)
    (project / "textkit" / "nums.py").write_text(NUMS)
    (project / "tests").mkdir()
    (project / "tests" / "test_core.py").write_text(TESTS)
    (project / "tests" / "test_nums.py").write_text(NUMS_TESTS)
    (project / "pyproject.toml").write_text('[project]\nname = "textkit"\nversion = "0"\n')
    make_suite(
        Source(path=project), root / "suite", SubprocessRunner(), ENV, tasks=24, seed=2, progress=print
    )
    return root / "suite"


@pytest.mark.slow
def test_the_family_has_three_bugs_in_one_module_and_bugs_in_two_files(suite: Path, tmp_path: Path) -> None:
    _, tasks = load_suite(suite)
    family = [t for t in tasks if t.kind == MULTI_KIND]
    assert {t.shape for t in family} == {THREE, TWO_FILES}, [(t.task_id, t.shape) for t in tasks]
    # Built last: every earlier task keeps its place and number.
    assert tasks[-len(family) :] == family
    for task in family:
        starts = task.start_texts()
        lines = bug_lines(task_changes(task), starts)
        if task.shape == THREE:
            assert len({e.clean for e in task.edits}) == 3 and len(starts) == 1
        else:
            assert set(task.files) == {"textkit/core.py", "textkit/nums.py"} and set(lines) == set(task.files)
        assert task.visible and not set(task.visible) & set(task.hidden)
        assert sum(len(found) for found in lines.values()) >= len(task.mutation.split("+"))
    # The two-bug tasks too: each of their bugs keeps a visible failing test (multi.each_shown).
    two_bugs = [t for t in tasks if t.shape == "multi"]
    assert two_bugs and all(t.visible for t in two_bugs)
    args = (Settings(), SubprocessRunner(), ENV)
    fixed = run_bench(
        [*family, *two_bugs],
        strategies("coderefine"),
        lambda t, s: OracleModel(t),
        *args,
        cache_dir=None,
        jobs=2,
    )
    assert all(r.fixed for r in fixed), [r for r in fixed if not r.fixed]
    # The first critic request showed every line the bugs changed (the views put them in focus).
    assert all(r.localized for r in fixed), [(r.task_id, r.localized) for r in fixed]
    nothing = DoNothingModel()
    none = run_bench(family, strategies("one-shot"), lambda t, s: nothing, *args, cache_dir=None, jobs=2)
    assert not any(r.fixed for r in none)


def test_every_bug_keeps_a_visible_failing_test_unless_another_masks_it() -> None:
    from coderefine.bench.library import SuiteRun, TestOutcome
    from coderefine.bench.multi import each_shown, masked

    def failing(*nodeids: str, message: str = "AssertionError: 1 != 2") -> SuiteRun:
        return SuiteRun(tuple(TestOutcome(n, "failed", message) for n in nodeids), True)

    first, second = failing("t.py::test_a", "t.py::test_b"), failing("t.py::test_c", "t.py::test_d")
    together = failing("t.py::test_a", "t.py::test_b", "t.py::test_c", "t.py::test_d")
    # The split held back both of the second bug's tests: the first of them comes back.
    assert each_shown(
        ["t.py::test_a"], ["t.py::test_b", "t.py::test_d", "t.py::test_c"], [first, second], together
    ) == (
        ("t.py::test_a", "t.py::test_c"),
        ("t.py::test_b", "t.py::test_d"),
    )
    # Shown already: nothing moves. Masked (none of its tests fails with the others): nothing to move.
    assert each_shown(["t.py::test_a", "t.py::test_d"], ["t.py::test_b"], [first, second], together) == (
        ("t.py::test_a", "t.py::test_d"),
        ("t.py::test_b",),
    )
    assert each_shown(["t.py::test_a"], [], [first, second], failing("t.py::test_a")) == (
        ("t.py::test_a",),
        (),
    )
    assert not masked([first, second], together)


def test_a_test_failing_another_way_with_the_others_shows_another_bug() -> None:
    """toolz: the second bug's test, which fails alone at its assert, crashed in the first bug with both
    in place; a task of those two gives its first request no evidence of the second."""
    from coderefine.bench.library import SuiteRun, TestOutcome
    from coderefine.bench.multi import each_shown, masked, shown_by

    def run(*outcomes: tuple[str, str]) -> SuiteRun:
        return SuiteRun(tuple(TestOutcome(n, "failed", m) for n, m in outcomes), True)

    first = run(("t.py::test_a", "TypeError: bad sigspec\n  at f"))
    second = run(("t.py::test_c", "AssertionError: skip\n  at g:12"), ("t.py::test_d", "AssertionError: 0"))
    crashed = ("t.py::test_c", "TypeError: bad sigspec\n  at f")
    together = run(
        ("t.py::test_a", "TypeError: bad sigspec\n  at f"), crashed, ("t.py::test_d", "AssertionError: 0")
    )
    # test_c fails with both, but for the first bug: test_d shows the second (the first line decides:
    # the lines after it can move with the module's line numbers).
    assert shown_by(second, together) == {"t.py::test_d"}
    assert each_shown(["t.py::test_a", "t.py::test_c"], ["t.py::test_d"], [first, second], together) == (
        ("t.py::test_a", "t.py::test_c", "t.py::test_d"),
        (),
    )
    alike = run(("t.py::test_c", "AssertionError: skip\n  at g:14"))
    assert shown_by(run(("t.py::test_c", "AssertionError: skip\n  at g:12")), alike) == {"t.py::test_c"}
    # With no test of the second failing its own way, the pair is masked: no task is made of it.
    assert masked([first, second], run(("t.py::test_a", "TypeError: bad sigspec"), crashed))
