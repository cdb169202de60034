"""The builder's check of one candidate: only the tests that run its lines, and time limits that a busy
machine cannot turn into a verdict."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from coderefine.bench import builder as builder_module
from coderefine.bench.builder import Builder
from coderefine.bench.library import SuiteRun, covered_lines
from coderefine.bench.pytest_config import pin_pytest_root
from coderefine.project.runner import SubprocessRunner

ENV = {"PATH": os.environ["PATH"]}

LIBRARY = """import time


def slow_double(n):
    time.sleep(0.6)
    return n * 2


def loop(n):
    total = 0
    while n > 0:
        n -= 1
        total += n
    return total
"""

TESTS = """from lib import loop, slow_double


def test_slow_double():
    assert slow_double(2) == 4


def test_loop():
    assert loop(3) == 3
"""


def make_builder(tmp_path: Path) -> Builder:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "lib.py").write_text(LIBRARY)
    (tree / "test_lib.py").write_text(TESTS)
    pin_pytest_root(tree)
    runner = SubprocessRunner()
    coverage = covered_lines(sys.executable, tree, runner, ENV, ())
    return Builder("lib", tree, sys.executable, runner, ENV, (), random.Random(0), lambda m: None, coverage)


def test_a_candidate_runs_only_the_tests_of_its_lines(tmp_path: Path) -> None:
    builder = make_builder(tmp_path)
    run = builder.failing("lib.py", LIBRARY.replace("total += n", "total += n + 1"))
    assert run is not None
    assert run.failed() == {"test_lib.py::test_loop"}
    assert {o.nodeid for o in run.outcomes} == {"test_lib.py::test_loop"}  # the slow test never ran


def test_a_run_slowed_past_its_limit_is_run_again_with_more_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builder_module, "MUTANT_TEST_TIMEOUT", 0.3)  # as if the machine were busy
    builder = make_builder(tmp_path)
    run = builder.failing("lib.py", LIBRARY.replace("return n * 2", "return n * 3"))
    assert run is not None and run.failed() == {"test_lib.py::test_slow_double"}


def test_a_candidate_that_hangs_is_no_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builder_module, "MUTANT_TEST_TIMEOUT", 0.2)
    builder = make_builder(tmp_path)
    assert builder.failing("lib.py", LIBRARY.replace("n -= 1", "n -= 0")) is None
    assert (builder.tree / "lib.py").read_text() == LIBRARY  # put back


def test_a_run_cut_short_by_its_own_limit_is_run_again_with_more_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy machine that makes a whole run pass its limit does not decide that a mutant is no task."""
    builder = make_builder(tmp_path)
    real = builder_module.run_suite
    limits: list[float] = []

    def first_run_cut_short(*args: object, **kwargs: object) -> SuiteRun:
        limits.append(float(kwargs["timeout"]))  # type: ignore[arg-type]
        if len(limits) == 1:
            return SuiteRun((), False, "the run passed its limit")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builder_module, "run_suite", first_run_cut_short)
    run = builder.failing("lib.py", LIBRARY.replace("total += n", "total += n + 1"))
    assert run is not None and run.failed() == {"test_lib.py::test_loop"}
    assert limits[1] > limits[0]


def test_a_failing_test_named_like_a_visible_one_is_not_held_back() -> None:
    """pyflakes' test_doctests.py reruns every class of test_undefined_names.py under a doctest mixin:
    deleting the held-back base test deleted the visible one that inherits it, and the task's bug had
    no failing test left."""

    from coderefine.bench.builder import Builder
    from coderefine.bench.library import SuiteRun, TestOutcome

    failed = [f"t/test_{n}.py::Test::test_case{n}" for n in range(8)] + [
        "t/test_names.py::Test::test_augmented",
        "t/test_doctests.py::TestNames::test_augmented",
    ]
    run = SuiteRun(tuple(TestOutcome(n, "failed") for n in failed), True)
    for seed in range(20):
        visible, hidden = Builder.split(splitter(seed, Path("/nonexistent")), run)  # type: ignore[arg-type]
        assert visible and set(visible) | set(hidden) == set(failed)
        augmented = [n for n in hidden if n.endswith("::test_augmented")]
        assert not augmented or len(augmented) == 2  # held back together, or neither


def splitter(seed: int, tree: Path) -> object:
    """What ``Builder.split`` needs of a builder: its random draws and its tree."""
    import random
    from types import SimpleNamespace

    from coderefine.bench.builder import Builder

    fake = SimpleNamespace(rng=random.Random(seed), tree=tree)
    fake.called_by_another = lambda function: Builder.called_by_another(fake, function)  # type: ignore[arg-type]
    return fake


def test_a_failing_test_another_test_calls_is_not_held_back(tmp_path: Path) -> None:
    """toolz: a visible introspection test called a held-back one to reuse its checks, and failed with a
    NameError in the task once that one was deleted."""
    from coderefine.bench.builder import Builder
    from coderefine.bench.library import SuiteRun, TestOutcome

    names = [f"test_case{n}" for n in range(8)]
    body = "".join(f"def {name}():\n    assert False\n\n\n" for name in names)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_m.py").write_text(body + "def test_uses():\n    test_case3()\n", "utf-8")
    failed = [f"t/test_m.py::{name}" for name in [*names, "test_uses"]]
    run = SuiteRun(tuple(TestOutcome(n, "failed") for n in failed), True)
    held = set()
    for seed in range(20):
        visible, hidden = Builder.split(splitter(seed, tmp_path), run)  # type: ignore[arg-type]
        assert "t/test_m.py::test_case3" in visible and set(visible) | set(hidden) == set(failed)
        held |= set(hidden)
    assert held  # the others are still held back
