"""What a built task asks for: the intents of bug tasks at three strengths, and the clean twins of bug
tasks (correct code with the same kind of intent)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from coderefine.bench.library import SuiteRun
from coderefine.bench.suite import LibraryTask

STRENGTHS = ("function", "report", "tests")
REPORT_CHARS = 240  # a user's report quotes one assertion, not a whole traceback
EXAMPLE_CHARS = 120  # a falsifying example longer than this is left out of a report
# hypothesis' notes that no user would paste into a report: which lines only failing cases ran (with
# absolute paths), how to reproduce the example, which seed to add.
_DROPPED_BLOCKS = (
    "Explanation:",
    "You can reproduce this example",
    "You can add @seed",
    "@reproduce_failure",
)
_EXAMPLE_BLOCKS = ("Falsifying example:", "Failing test case:", "Falsifying explicit example:")
_BUILDING = re.compile(r"\S*\.building-[^/\s]*/source/")


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
        message = report_message(next((run.message(n) for n in visible if run.message(n)), ""))
        if message:
            return f"A user reports a wrong result: {message}. Find the cause and fix it."
    return "The tests fail after recent edits; make them pass without changing the tests."


def report_message(raw: str, limit: int = REPORT_CHARS) -> str:
    """A failure's message as a user would quote it: one line, hypothesis' explanation and reproduction
    blocks dropped (its falsifying example kept when short and there is room), paths relative to the
    project, cut at a word (so never inside a path) and without trailing punctuation, which the intent's
    sentence adds."""
    kept: list[str] = []
    examples: list[str] = []
    block: list[str] | None = None  # the lines of the falsifying example being read
    dropping = False
    for line in [*raw.splitlines(), ""]:
        stripped = line.strip()
        if not stripped or stripped.startswith(_DROPPED_BLOCKS + _EXAMPLE_BLOCKS):
            if block is not None:
                examples.append(_compact(block))
            block = [stripped] if stripped.startswith(_EXAMPLE_BLOCKS) else None
            dropping = stripped.startswith(_DROPPED_BLOCKS)
        elif block is not None:
            block.append(stripped)
        elif not dropping or not line[:1].isspace():
            dropping = False
            kept.append(stripped)
    text = _BUILDING.sub("", " ".join(" ".join(kept).split())).rstrip(" .,:;")
    shown = [e for e in examples if len(e) <= EXAMPLE_CHARS]
    if shown and len(text) + 2 + sum(len(e) + 1 for e in shown) <= limit:
        text = f"{text}. {' '.join(shown)}"
    if len(text) > limit:
        cut = text[: limit + 1].rsplit(" ", 1)[0]
        text = cut if cut != text[: limit + 1] else text[:limit]
    return text.rstrip(" .,:;")


def _compact(lines: Sequence[str]) -> str:
    """A falsifying example on one line: ``f(x=1, y=2)``."""
    text = " ".join(" ".join(lines).split())
    return re.sub(r",?\s*\)", ")", re.sub(r"\(\s+", "(", text))
