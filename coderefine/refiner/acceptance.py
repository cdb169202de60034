"""When a candidate is accepted, and the critiques the loop makes without a critic: from the signals, or
from what a discarded candidate made worse."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from coderefine.refiner.critique import Critique, Issue
from coderefine.signals.base import SEVERITY_RANK, Comparison, Signal


def blocking(comparison: Comparison, fail_on: str) -> int:
    """Introduced signals at or above ``fail_on`` (never 0 when a source is missing)."""
    if fail_on == "never":
        return 0
    floor = SEVERITY_RANK[fail_on]
    count = sum(1 for s in comparison.introduced if SEVERITY_RANK[s.severity] >= floor)
    return count + len(comparison.missing())


def no_worse(candidate: Comparison, current: Comparison) -> bool:
    """Whether the candidate's introduced signals weigh no more than the current ones, severity first
    (one failing test fewer outweighs a new lint warning), and no source went missing."""
    return candidate.weight() <= current.weight() and len(candidate.missing()) <= len(current.missing())


def digest(texts: Mapping[str, str]) -> str:
    return hashlib.sha256("\0".join(f"{p}\0{t}" for p, t in sorted(texts.items())).encode()).hexdigest()


def worse_critique(candidate: Comparison, current: Comparison) -> Critique:
    """What a discarded candidate made worse, as the critique of the next revision."""
    before = {(s.path, s.code, s.message) for s in current.introduced}
    issues = tuple(
        _issue(
            s,
            f"your last revision was discarded: it introduced {s.code}: {s.message}",
            "revise again from the current files without introducing this",
        )
        for s in candidate.introduced
        if (s.path, s.code, s.message) not in before
    )
    return Critique("revise", "the last revision made a signal worse and was discarded", issues)


def signal_critique(comparison: Comparison) -> Critique:
    """A critique made of the introduced signals alone: what the reviser sees when there is no critic."""
    issues = tuple(
        _issue(s, f"{s.code}: {s.message}", "make this signal go away without changing intended behaviour")
        for s in comparison.introduced
        if s.severity != "info"
    )
    return Critique("revise" if issues else "pass", "the signals of the current code", issues)


def _issue(signal: Signal, title: str, suggestion: str) -> Issue:
    """An issue standing on ``signal``, at its lines, quoting its anchor (or the end of its detail)."""
    return Issue(
        title=title[:200],
        severity=signal.severity,
        path=signal.path,
        line=signal.line,
        end_line=signal.end_line,
        evidence=signal.anchor or signal.detail[-500:],
        suggestion=suggestion,
    )
