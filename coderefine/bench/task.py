"""What every benchmark task offers, whichever door runs it (the loop's harness or the review's)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from coderefine.project.runner import Runner


class Task(Protocol):
    @property
    def task_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def intent(self) -> str: ...
    @property
    def python(self) -> str: ...

    def materialise(self, folder: Path) -> Path: ...
    def passes(
        self, module_text: str, scratch: Path, runner: Runner, environ: Mapping[str, str], slack: float = 1
    ) -> bool:
        """Whether the scoring run passes with ``module_text``; ``slack`` multiplies its time limits."""
        ...


class BenchTask(Task, Protocol):
    """What the harness needs of a task: HumanEvalFix's and a library suite's tasks both fit."""

    @property
    def shape(self) -> str: ...
    @property
    def strength(self) -> str: ...
    @property
    def mutation(self) -> str: ...
    @property
    def bug_type(self) -> str: ...

    @property
    def visible(self) -> tuple[str, ...]: ...

    def oracle_edits(self) -> list[tuple[str, str]]: ...

    def failing_visible(self, folder: Path, runner: Runner, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The visible tests that fail on the starting code in ``folder``."""
        ...
