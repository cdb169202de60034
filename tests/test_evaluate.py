"""The Evaluator's test runs: the baseline's alongside the head's, and no run repeated for the same inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from coderefine.config import Settings
from coderefine.evaluate import Evaluator
from coderefine.runner import Completed, SubprocessRunner
from tests.conftest import RepoFactory
from tests.test_loop import BUGGY, buggy_change

ENV = {"PATH": "/usr/bin:/bin"}


class CountingRunner(SubprocessRunner):
    """The real runner, counting the pytest runs it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.pytest_runs: list[tuple[str, ...]] = []

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> Completed:
        if "pytest" in argv:
            self.pytest_runs.append(tuple(argv))
        return super().run(argv, cwd=cwd, timeout=timeout, env=env, stdin=stdin)


def test_the_same_candidate_is_tested_once(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    runner = CountingRunner()
    with Evaluator(change, Settings(warm_tests=False), runner, ENV, files) as evaluator:
        first = evaluator.evaluate({"pkg/mod.py": BUGGY})
        again = evaluator.evaluate({"pkg/mod.py": BUGGY})
        fixed = evaluator.evaluate({"pkg/mod.py": BUGGY.replace("a - b", "a + b")})
    assert first.comparison == again.comparison
    assert [s.code for s in first.comparison.introduced] == ["tests/test_mod.py::test_add"]
    assert fixed.comparison.clean
    # head, the baseline of its failing file, then the fixed candidate: the repeat cost nothing.
    assert len(runner.pytest_runs) == 3


def test_a_speculative_baseline_replaces_the_later_one(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    runner = CountingRunner()
    with Evaluator(change, Settings(warm_tests=False), runner, ENV, files) as evaluator:
        evaluator.start_baseline(tests=True)
        evaluation = evaluator.evaluate({"pkg/mod.py": BUGGY})
    assert [s.code for s in evaluation.comparison.introduced] == ["tests/test_mod.py::test_add"]
    assert len(runner.pytest_runs) == 2  # the head's and the base's, side by side; no third
