"""A failing score runs once more with generous limits; two runs that disagree make a task flaky."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from coderefine.bench.score import GENEROUS, Score, score
from coderefine.project.runner import Runner, SubprocessRunner


class ScriptedTask:
    """A task whose scoring runs answer in turn, recording the slack each was given."""

    task_id, kind, path, intent, python = "lib/000", "bug", "m.py", "fix it", ""

    def __init__(self, *verdicts: bool) -> None:
        self.verdicts = list(verdicts)
        self.slack: list[float] = []

    def materialise(self, folder: Path) -> Path:
        return folder

    def passes(
        self, module_text: str, scratch: Path, runner: Runner, environ: Mapping[str, str], slack: float = 1
    ) -> bool:
        self.slack.append(slack)
        return self.verdicts.pop(0)


@pytest.mark.parametrize(
    ("verdicts", "expected", "slack"),
    [
        ((True,), Score(True), [1]),
        ((False, False), Score(False, reran=True), [1, GENEROUS]),
        ((False, True), Score(True, reran=True, flaky=True), [1, GENEROUS]),
    ],
)
def test_a_failing_score_reruns_once_generously(
    tmp_path: Path, verdicts: tuple[bool, ...], expected: Score, slack: list[float]
) -> None:
    task = ScriptedTask(*verdicts)
    assert score(task, "text", tmp_path, SubprocessRunner(), {}) == expected
    assert task.slack == slack


def test_an_expected_failure_is_not_run_again(tmp_path: Path) -> None:
    """A bug task's starting code fails by construction: its score is not re-run; a pass still counts."""
    task = ScriptedTask(False)
    assert score(task, "text", tmp_path, SubprocessRunner(), {}, expect_failure=True) == Score(False)
    assert task.slack == [1]
    task = ScriptedTask(True)
    assert score(task, "text", tmp_path, SubprocessRunner(), {}, expect_failure=True) == Score(True)
