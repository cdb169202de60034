"""One (task, strategy) pair's result, as the harness records it and every report reads it."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TaskResult:
    task_id: str
    bug_type: str
    strategy: str
    model: str
    passed_before: bool
    passed_after: bool
    rounds: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    seconds: float
    gate_rejections: int
    stop: str
    error: str = ""
    kind: str = "bug"
    shape: str = ""
    strength: str = ""
    mutation: str = ""
    changed: bool = False
    lines_changed: int = 0
    # Per role and model: {"role", "model", "tokens", "cost"} (a mixed strategy has one per model).
    models: tuple[dict[str, Any], ...] = ()
    # Review tasks (``coderefine review`` on a pull request): an error-level finding on the mutant's
    # lines; error-level findings elsewhere; fixes tried, offered (verified), and fixing the mutant.
    caught: bool = False
    false_alarms: int = 0
    fixes_tried: int = 0
    verified: int = 0
    verified_fixing: int = 0
    files: int = 1  # the files the task's change spans (a release task may span several)
    # Scoring runs that failed and ran again with generous limits; flaky: the two runs disagreed (the
    # task is reported apart, not as a failure).
    reruns: int = 0
    flaky: bool = False
    edit_format: str = ""  # how the author and reviser wrote edits (edits/formats.py); "" for a review
    # Each round that ended without a better version, as "N outcome: why" (the gate's or the edit's
    # first line): what a reader of a row of zeros needs to tell a wrong fix from an unusable reply.
    round_notes: tuple[str, ...] = ()
    asks: int = 0  # answers that asked to see code not shown, and were shown it (refiner/asks.py)
    largest_call: int = 0  # the most input tokens one call sent
    # Whether the first request showed every line the task's bugs touch (None: not known; localized.py).
    localized: bool | None = None

    @property
    def fixed(self) -> bool:
        return self.passed_after

    @property
    def regression(self) -> bool:
        return self.passed_before and not self.passed_after


def lines_changed(before: str, after: str) -> int:
    """Lines removed plus lines added."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


NOTE_CHARS = 240


CUT_OFF = "the answer was cut off at the output token limit"


def round_note(number: int, outcome: str, note: str) -> str:
    """A round's outcome and its first line of why, bounded: ``2 gate-failed: ... SyntaxError ...``. A
    heading line (``... does not pass the gate:``) takes the line after it; an answer cut off at the
    token limit says so wherever the note said it."""
    lines = [line.strip() for line in note.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if first.endswith(":") and len(lines) > 1:
        first = f"{first} {lines[1]}"
    if CUT_OFF in note and CUT_OFF not in first:
        first += f" ({CUT_OFF})"
    text = f"{number} {outcome}" + (f": {first}" if first else "")
    return text if len(text) <= NOTE_CHARS else text[: NOTE_CHARS - 3] + "..."


def charge_records(charges: Sequence[Any]) -> tuple[dict[str, Any], ...]:
    return tuple({"role": c.role, "model": c.model, "tokens": c.usage.total, "cost": c.cost} for c in charges)
