"""What a run of the loop returns: its rounds, why it stopped, and what it cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from coderefine.models.base import Usage
from coderefine.project.change import Change
from coderefine.refiner.critique import Critique
from coderefine.signals.base import Comparison
from coderefine.signals.evaluate import Evaluation
from coderefine.timings import Span

StopReason = Literal["passed", "no-progress", "repeated", "rounds", "budget", "timeout", "gate", "reviewed"]
Outcome = Literal[
    "passed",
    "accepted",
    "rejected",
    "edit-failed",
    "gate-failed",
    "no-edits",
    "budget",
    "timeout",
    "reviewed",
]


@dataclass(frozen=True)
class RoundRecord:
    number: int
    critique: Critique | None
    outcome: Outcome
    before: Comparison
    after: Comparison | None = None
    changed: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class ModelCharge:
    """Tokens and cost of one role on one model (a run with a model per role has one per role)."""

    role: str
    model: str
    usage: Usage
    cost: float


@dataclass(frozen=True)
class RefineResult:
    change: Change
    intent: str
    original: Mapping[str, str]
    final: Mapping[str, str]
    initial: Evaluation
    evaluation: Evaluation
    rounds: tuple[RoundRecord, ...]
    stop: StopReason
    usage: Mapping[str, Usage]
    cost: float
    timings: Mapping[str, float]
    drafted: bool = False
    critique: Critique | None = None
    charges: tuple[ModelCharge, ...] = ()
    edit_format: str = "search-replace"  # how the author and reviser wrote edits (edits/formats.py)
    spans: tuple[Span, ...] = ()  # the loop's phases as they happened (--timings)
    asks: int = 0  # answers that asked to see definitions not shown, and were shown them (asks.py)
    largest_call: int = 0  # the most input tokens one call sent
    # What the run's first request showed of each file: its excerpts' (first, last) lines, () for whole.
    first_shown: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return dict(self.final) != dict(self.original)

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for usage in self.usage.values():
            total = total + usage
        return total

    def changed_paths(self) -> tuple[str, ...]:
        return tuple(p for p, text in self.final.items() if self.original.get(p) != text)
