"""make-suite on a small local project (``--from``), with the real pytest, ruff and libcst; and the
harness's self-checks on the suite it builds."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from coderefine.bench.build import Source, make_suite
from coderefine.bench.harness import run_bench
from coderefine.bench.models import DoNothingModel, OracleModel
from coderefine.bench.strategies import strategies
from coderefine.bench.suite import SUITE_FILE, differing_lines, load_suite
from coderefine.bench.summary import summary
from coderefine.config import Settings
from coderefine.errors import UsageError
from coderefine.project.runner import SubprocessRunner

ENV = {"PATH": os.environ["PATH"]}

MODULE = '''"""Small text helpers."""


def clamp(value, low, high):
    """Return ``value`` limited to the range from ``low`` to ``high``."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def ordinal(number):
    """Return the English ordinal suffix of ``number``: 1 -> "st", 12 -> "th", 23 -> "rd"."""
    if 10 <= number % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def chunks(items, size):
    """Split ``items`` into lists of at most ``size`` items, in order."""
    found = []
    for start in range(0, len(items), size):
        found.append(items[start : start + size])
    return found


def words(text, limit=3):
    """The first ``limit`` words of ``text``, joined by single spaces."""
    parts = text.split()
    if len(parts) > limit and limit >= 0:
        parts = parts[:limit]
    return " ".join(parts)
'''

TESTS = """import pytest

from textkit.core import chunks, clamp, ordinal, words


@pytest.mark.parametrize(("value", "expected"), [(-5, 0), (0, 0), (5, 5), (10, 10), (11, 10)])
def test_clamp(value, expected):
    assert clamp(value, 0, 10) == expected


@pytest.mark.parametrize(
    ("number", "suffix"), [(1, "st"), (2, "nd"), (3, "rd"), (4, "th"), (11, "th"), (12, "th"), (21, "st")]
)
def test_ordinal(number, suffix):
    assert ordinal(number) == suffix


def test_ordinal_teens():
    assert [ordinal(n) for n in (111, 113, 120)] == ["th", "th", "th"]


def test_chunks():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunks_exact():
    assert chunks([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_words():
    assert words("a b c d e") == "a b c"
    assert words("a b", 3) == "a b"
    assert words("a  b   c d", 2) == "a b"


def test_words_exact_limit():
    assert words("a b c", 3) == "a b c"
"""


def make_project(root: Path) -> Path:
    (root / "textkit").mkdir(parents=True)
    (root / "textkit" / "__init__.py").write_text("")
    (root / "textkit" / "core.py").write_text(MODULE)
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[project]\nname = "textkit"\nversion = "0"\n')
    return root


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    project = make_project(root / "textkit-src")
    messages: list[str] = []
    make_suite(
        Source(path=project),
        root / "suite",
        SubprocessRunner(),
        ENV,
        tasks=8,
        seed=3,
        progress=messages.append,
    )
    assert any("running its tests twice" in m for m in messages)
    return root / "suite"


@pytest.mark.slow
def test_make_suite_builds_bug_and_feature_tasks(suite: Path) -> None:
    library, tasks = load_suite(suite)
    assert library["name"] == "textkit-src"
    assert library["python"] == str(Path(sys.executable).resolve()) or library["python"]
    kinds = {t.kind for t in tasks}
    assert {"bug", "feature", "feature-tests", "review", "review-clean"} <= kinds, [t.task_id for t in tasks]
    assert kinds <= {"bug", "feature", "feature-tests", "clean", "review", "review-clean"}
    for task in tasks:
        assert task.path == "textkit/core.py"
        if task.kind == "review-clean":
            assert not task.visible and task.oracle_edits() == []
            continue
        if task.kind == "review":
            assert task.intent.endswith("no behaviour change.") and task.strength == "refactor"
            assert task.edits[0].changed != task.intended
        if task.kind == "clean":
            assert not task.edits and task.strength == "function"
            continue
        assert task.visible, task.task_id
        assert not set(task.visible) & set(task.hidden)
        if task.kind == "feature":
            assert task.intent.startswith(f"Implement `{task.function}`")
            assert "NotImplementedError" in task.edits[0].changed
        elif task.kind == "feature-tests":
            # The spec is in the tests: no docstring left, and the intent names only function and file.
            assert (
                task.intent == f"Implement `{task.function}` in {task.path} so that the project's tests pass."
            )
            assert '"""' not in task.edits[0].changed and '"""' in task.edits[0].clean
            assert "NotImplementedError" in task.edits[0].changed
            assert task.function not in {t.function for t in tasks if t.kind == "feature"}
        elif task.kind == "bug":
            assert task.strength in ("function", "report", "tests")
    assert not list(suite.parent.glob(".suite.building-*"))


@pytest.mark.slow
def test_a_task_starts_broken_and_its_hidden_tests_are_gone(suite: Path, tmp_path: Path) -> None:
    _, tasks = load_suite(suite)
    task = next((t for t in tasks if t.hidden), tasks[0])
    folder = task.materialise(tmp_path / "task")
    text = (folder / task.path).read_text()
    assert text != MODULE
    runner = SubprocessRunner()
    assert not task.passes(text, tmp_path, runner, ENV)
    assert task.passes(MODULE, tmp_path, runner, ENV)
    tests = (folder / "tests" / "test_core.py").read_text()
    for nodeid in task.hidden:
        name = nodeid.split("::")[-1].split("[")[0]
        assert f"def {name}(" not in tests


@pytest.mark.slow
def test_the_same_seed_builds_the_same_suite(suite: Path, tmp_path: Path) -> None:
    project = make_project(tmp_path / "textkit-src")
    make_suite(Source(path=project), tmp_path / "again", SubprocessRunner(), ENV, tasks=8, seed=3)
    first = json.loads((suite / SUITE_FILE).read_text())["tasks"]
    second = json.loads((tmp_path / "again" / SUITE_FILE).read_text())["tasks"]
    assert first == second


@pytest.mark.slow
def test_oracle_fixes_all_and_do_nothing_none(suite: Path, tmp_path: Path) -> None:
    _, tasks = load_suite(suite)
    nothing = DoNothingModel()
    args = (Settings(), SubprocessRunner(), ENV)
    chosen = strategies("coderefine")
    fixed = run_bench(tasks, chosen, lambda t, s: OracleModel(t), *args, cache_dir=None, jobs=2)
    table = summary(fixed)
    assert table["coderefine"]["fix_rate"] == 1.0, [r for r in fixed if not r.fixed]
    assert all(r.changed and r.lines_changed > 0 for r in fixed if r.kind != "clean")
    assert not any(r.changed or r.regression for r in fixed if r.kind == "clean")
    # one-shot is the cheaper do-nothing run (no rounds); the oracle's one-shot runs in test_command.
    none = run_bench(tasks, strategies("one-shot"), lambda t, s: nothing, *args, cache_dir=None, jobs=2)
    assert summary(none)["one-shot"]["fixed"] == 0
    assert not any(r.changed for r in none)


@pytest.mark.slow
def test_review_tasks_hide_one_mutated_line_among_many_changed(suite: Path) -> None:
    _, tasks = load_suite(suite)
    review = next(t for t in tasks if t.kind == "review")
    negative = next(t for t in tasks if t.task_id == review.task_id.replace("review-", "review-clean-"))
    head = review.start_text(MODULE)
    mutated = review.mutated_lines(MODULE)
    assert 1 <= len(mutated) <= 3 and review.line in mutated
    changed = differing_lines(MODULE, head)
    assert len(changed) >= 3 and len(changed) > len(mutated) and mutated <= set(changed)
    assert negative.start_text(MODULE) == head.replace(review.edits[0].changed, review.intended)
    assert negative.mutated_lines(MODULE) == frozenset()


@pytest.mark.slow
def test_review_self_checks(suite: Path) -> None:
    """Oracle: every mutant caught, its verified fix fixes it, no false alarm; do-nothing: nothing."""
    _, tasks = load_suite(suite)
    reviews = [t for t in tasks if t.kind in ("review", "review-clean")]
    args = (Settings(), SubprocessRunner(), ENV)
    chosen = strategies("review")
    oracle = summary(run_bench(reviews, chosen, lambda t, s: OracleModel(t), *args, cache_dir=None, jobs=2))
    figures = oracle["review"]["review"]
    assert figures["caught"] == figures["tasks"] >= 1
    assert figures["verified"] == figures["verified_fixing"] == figures["tasks"]
    assert figures["false_alarms"] == 0 and figures["clean_changes"] == figures["tasks"]
    nothing = DoNothingModel()
    none = summary(run_bench(reviews, chosen, lambda t, s: nothing, *args, cache_dir=None, jobs=2))
    figures = none["review"]["review"]
    assert figures["caught"] == figures["false_alarms"] == figures["verified"] == 0


def test_a_red_baseline_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    (project / "tests" / "test_core.py").write_text("def test_red():\n    assert False\n")
    with pytest.raises(UsageError, match="does not run green"):
        make_suite(Source(path=project), tmp_path / "suite", SubprocessRunner(), ENV, tasks=4)
    assert not (tmp_path / "suite").exists()
    assert not list(tmp_path.glob(".suite.building-*"))


def test_an_existing_target_is_refused(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    with pytest.raises(UsageError, match="exists"):
        make_suite(Source(path=tmp_path), tmp_path / "suite", SubprocessRunner(), ENV)
