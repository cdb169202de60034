"""What a sweep did with each file, and the run's summary and exit code."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from coderefine.errors import EXIT_CLEAN, EXIT_FINDINGS, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE

# fixed: a better version was found (and written, unless a dry run); unchanged: nothing to write and
# nothing at or above fail-on remains; findings: nothing written but findings remain; failed: an error
# ended this file's run; skipped: not started (budget) or abandoned (interrupted).
Status = Literal["fixed", "unchanged", "findings", "failed", "skipped"]
STATUSES: tuple[Status, ...] = ("fixed", "unchanged", "findings", "failed", "skipped")

# Worst last: the run's exit code is the worst of its files'. A provider outage (4) is worse than a
# finding, a bug (3) worse than an outage, an interruption worst of all.
_SEVERITY = (EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, 4, EXIT_INTERNAL, EXIT_INTERRUPTED)


def worst(codes: list[int]) -> int:
    return max(codes, key=lambda c: _SEVERITY.index(c) if c in _SEVERITY else len(_SEVERITY) - 2)


@dataclass(frozen=True)
class FileOutcome:
    path: str
    status: Status
    exit_code: int = EXIT_CLEAN
    detail: str = ""
    cost: float = 0.0
    tokens: int = 0
    written: bool = False
    cached: bool = False
    diff: str = ""

    def data(self) -> dict[str, object]:
        return {
            "path": self.path,
            "status": self.status,
            "exit_code": self.exit_code,
            "detail": self.detail,
            "cost": round(self.cost, 6),
            "tokens": self.tokens,
            "written": self.written,
            "cached": self.cached,
        }


@dataclass(frozen=True)
class SweepResult:
    outcomes: tuple[FileOutcome, ...]
    cost: float
    journal_entry: str = ""
    interrupted: bool = False
    budget: float = 0.0
    elapsed: float = 0.0
    timings: Mapping[str, float] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
        for outcome in self.outcomes:
            counts[outcome.status] += 1
        return counts

    @property
    def written(self) -> tuple[str, ...]:
        return tuple(o.path for o in self.outcomes if o.written)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        return worst([o.exit_code for o in self.outcomes] or [EXIT_CLEAN])
