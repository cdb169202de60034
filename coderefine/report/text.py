"""Plain text for terminals and logs, in the ``path:line:col: CODE message`` shape editors understand."""

from __future__ import annotations

import re
from collections.abc import Iterable

from coderefine.check import CheckResult
from coderefine.signals.base import Signal, SourceStatus

_SOURCE_LABEL = {"ruff": "ruff", "format": "format", "pytest": "test", "syntax": "syntax"}
_CHANGE_LABEL = {
    "worktree": "working tree against HEAD",
    "staged": "staged change against HEAD",
    "branch": "branch against its merge base",
    "patch": "patch",
    "files": "whole files (no git)",
}


def signal_line(signal: Signal) -> str:
    code = signal.code
    fix = " [fixable]" if signal.fixable and signal.source == "ruff" else ""
    return f"{signal.location()}: {code} {signal.message}{fix}"


_LOCATION = re.compile(r"^\S.*:\d+: in \S+")


def failure_excerpt(detail: str, tail: int = 3) -> list[str]:
    """The rows of a short pytest traceback worth reading: where the test failed and the line there
    (the assert), where the error was raised if elsewhere, the first error row and the last ``tail`` rows;
    the middle is trimmed to "..."."""
    rows = [row for row in detail.strip().splitlines() if row.strip()]
    keep: set[int] = set()
    places = [i for i, row in enumerate(rows) if _LOCATION.match(row)]
    for i in places[:1] + places[-1:]:
        keep.update((i, i + 1))
    errors = [i for i, row in enumerate(rows) if row.startswith("E ")]
    keep.update(errors[:1])
    keep.update(range(max(len(rows) - tail, 0), len(rows)))
    if len(rows) <= len(keep) + 1:
        return rows
    excerpt: list[str] = []
    previous = -1
    for i in sorted(k for k in keep if k < len(rows)):
        if i - previous > 1:
            excerpt.append("...")
        excerpt.append(rows[i])
        previous = i
    return excerpt


def status_line(statuses: Iterable[SourceStatus]) -> str:
    parts = []
    for status in statuses:
        note = f" ({status.note})" if status.note else ""
        parts.append(f"{status.source} {status.state}{note}")
    return "sources: " + "; ".join(parts)


def render_check(result: CheckResult, fail_on: str) -> str:
    comparison = result.evaluation.comparison
    files = result.change.files
    whole = sum(1 for f in files if f.kind == "whole")
    lines = [
        f"coderefine check: {len(files)} file{'s' if len(files) != 1 else ''} "
        f"({_CHANGE_LABEL[result.change.source]}"
        + (f"; {whole} reviewed whole" if whole and result.change.source != "files" else "")
        + ")"
    ]
    if comparison.introduced:
        lines.append("")
        lines.append("Introduced by the change:" if whole < len(files) else "Found:")
        for signal in comparison.introduced:
            lines.append("  " + signal_line(signal))
            if signal.source == "pytest" and signal.detail:
                lines.extend("      " + row for row in failure_excerpt(signal.detail))
    if comparison.existing:
        lines.append(f"\nAlready there before the change (not counted): {len(comparison.existing)}")
    if comparison.fixed:
        lines.append(f"Fixed by the change: {len(comparison.fixed)}")
    lines.append("")
    lines.append(status_line(comparison.statuses))
    for missing in comparison.missing():
        lines.append(f"warning: {missing.source} did not run cleanly: {missing.note}")
    blocking = result.blocking(fail_on)
    if blocking:
        lines.append(
            f"{len(blocking)} introduced signal{'s' if len(blocking) != 1 else ''} at or above '{fail_on}'."
        )
    elif not comparison.missing():
        lines.append(
            "Clean: the change introduced nothing"
            + (f" at or above '{fail_on}'." if comparison.introduced else ".")
        )
    return "\n".join(lines) + "\n"
