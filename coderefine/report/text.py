"""Plain text for terminals and logs, in the ``path:line:col: CODE message`` shape editors understand."""

from __future__ import annotations

from collections.abc import Iterable

from coderefine.signals.base import Signal, SourceStatus, failure_excerpt
from coderefine.signals.check import CheckResult

_SOURCE_LABEL = {"ruff": "ruff", "format": "format", "pytest": "test", "syntax": "syntax"}
_CHANGE_LABEL = {
    "worktree": "working tree against HEAD",
    "staged": "staged change against HEAD",
    "branch": "branch against its merge base",
    "patch": "patch",
    "files": "reviewed whole, outside git",
}


def signal_line(signal: Signal) -> str:
    code = signal.code
    fix = " [fixable]" if signal.fixable and signal.source == "ruff" else ""
    return f"{signal.location()}: {code} {signal.message}{fix}"


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
