"""``coderefine check``: the signals of a change, as a critic would be told them. No model involved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from coderefine.config import Settings
from coderefine.project.change import Change
from coderefine.project.runner import Runner
from coderefine.signals.base import SEVERITY_RANK, Signal
from coderefine.signals.evaluate import Evaluation, Evaluator
from coderefine.signals.related import TestSelection
from coderefine.signals.warm import WarmPytest


@dataclass(frozen=True)
class CheckResult:
    change: Change
    evaluation: Evaluation
    tests: tuple[str, ...]
    selection: TestSelection  # why these tests (``check --explain``)

    def blocking(self, fail_on: str) -> tuple[Signal, ...]:
        """Introduced signals at or above the ``fail_on`` severity."""
        if fail_on == "never":
            return ()
        floor = SEVERITY_RANK[fail_on]
        return tuple(s for s in self.evaluation.comparison.introduced if SEVERITY_RANK[s.severity] >= floor)

    def failed(self, fail_on: str) -> bool:
        """Something at or above ``fail_on`` was introduced, or a signal source could not run."""
        if fail_on == "never":
            return False
        return bool(self.blocking(fail_on) or self.evaluation.comparison.missing())


def run_check(
    change: Change,
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    project_files: Sequence[str],
    warm: WarmPytest | None = None,
) -> CheckResult:
    """Evaluate the change against its baseline, concurrently, in isolated copies of the project.
    ``warm``: a warm test server already started for the project (``signals.prestart``)."""
    with Evaluator(change, settings, runner, environ, project_files, warm=warm) as evaluator:
        evaluator.start_baseline()
        evaluation = evaluator.evaluate({f.path: f.after.text for f in change.files})
        return CheckResult(change, evaluation, tuple(evaluator.tests), evaluator.selection)
