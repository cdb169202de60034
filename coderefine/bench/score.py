"""A task's score, re-run once when it fails: a busy machine may fail a test that passes alone (a test
that passed its time limit, a run cut short), so a failing score runs again with limits many times
longer, and a task whose two runs disagree is flaky, not failed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from coderefine.bench.task import Task
from coderefine.project.runner import Runner

GENEROUS = 5  # the re-run's limits, as a multiple of the scoring run's


@dataclass(frozen=True)
class Score:
    passed: bool  # the re-run's verdict when there was one
    reran: bool = False
    flaky: bool = False  # the two runs disagreed


def score(
    task: Task,
    module_text: str,
    scratch: Path,
    runner: Runner,
    environ: Mapping[str, str],
    expect_failure: bool = False,
) -> Score:
    """Whether ``module_text`` passes ``task``'s scoring run; a failure is run once more, generously,
    unless it was the expected verdict (``expect_failure``: a bug task's starting code, which fails
    by construction; re-running it would double the cost of every task and could flip nothing that is
    scored)."""
    if task.passes(module_text, scratch, runner, environ):
        return Score(True)
    if expect_failure:
        return Score(False)
    again = task.passes(module_text, scratch, runner, environ, slack=GENEROUS)
    return Score(again, reran=True, flaky=again)
