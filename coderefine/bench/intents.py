"""What a built task asks for: the intents of bug tasks at three strengths, and the clean twins of bug
tasks (correct code with the same kind of intent)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from coderefine.bench.library import SuiteRun
from coderefine.bench.suite import LibraryTask

STRENGTHS = ("function", "report", "tests")


def clean_twins(tasks: Sequence[LibraryTask], count: int) -> list[LibraryTask]:
    """Correct code with the same kind of intent: the functions of the first single-bug tasks of intent
    strength "function", without their mutant (one per function, at most ``count // 6``). A strategy
    should leave them alone: they measure how often correct code is changed, and broken."""
    twins: list[LibraryTask] = []
    seen: set[tuple[str, str]] = set()
    for task in tasks:
        if len(twins) >= count // 6:
            break
        if task.shape != "single" or task.strength != "function" or (task.path, task.function) in seen:
            continue
        seen.add((task.path, task.function))
        name = task.task_id.rsplit("/", 1)[0]
        twins.append(
            replace(
                task,
                task_id=f"{name}/clean-{len(twins):03d}",
                kind="clean",
                shape="clean",
                mutation="none",
                edits=(),
                visible=(),
                hidden=(),
            )
        )
    return twins


def bug_intent(strength: str, function: str, path: str, run: SuiteRun, visible: Sequence[str]) -> str:
    """Three strengths: a function and a vague symptom; a user's report of one failing assertion with
    no location; only that the tests fail."""
    if strength == "function":
        return f"Some results of `{function}` in {path} are wrong after recent edits; fix it."
    if strength == "report":
        message = next((run.message(n) for n in visible if run.message(n)), "")
        if message:
            return f"A user reports a wrong result: {message}. Find the cause and fix it."
    return "The tests fail after recent edits; make them pass without changing the tests."
