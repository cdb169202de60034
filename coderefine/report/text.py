"""Plain text for terminals and logs, in the ``path:line:col: CODE message`` shape editors understand."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from coderefine.signals.base import Signal, SourceStatus, failure_excerpt
from coderefine.signals.check import CheckResult
from coderefine.signals.failures import fold, split_locals

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


# The introduced signals of a text report, folded to about a screen (see ``failures.fold``): at most
# ``SCREEN`` characters, and a few one-line members per group before the count.
SCREEN = 2_500
SCREEN_SHORT = 5
# The total of the "... and N more" lines above it, so that its number is not read as another group's.
LEFT_OUT = (
    "{count} signal{s} in all {are} only counted above, not listed: `coderefine check --format json` lists "
    "every one."
)


def full_entry(signal: Signal) -> str:
    """A signal's line and, for a failing test, the rows of its traceback worth reading."""
    rows = ["  " + signal_line(signal)]
    if signal.source == "pytest" and signal.detail:
        trace, values = split_locals(signal.detail)
        rows.extend("      " + row for row in failure_excerpt(trace))
        rows.extend("      " + row for row in values.strip().splitlines())
    return "\n".join(rows)


def short_entry(signal: Signal) -> str:
    return f"  {signal.code} {signal.message}"


def signal_entries(
    signals: Iterable[Signal], budget: int = SCREEN, full: Callable[[Signal], str] = full_entry
) -> list[str]:
    """``signals`` folded by where tests fail, within about ``budget`` characters."""
    folded = fold(tuple(signals), full, short_entry, budget, bullet="  ", short_cap=SCREEN_SHORT)
    count = folded.counted
    left_out = LEFT_OUT.format(count=count, s="s" if count != 1 else "", are="are" if count != 1 else "is")
    return [*folded.lines, *([left_out] if count else [])]


def status_line(statuses: Iterable[SourceStatus], failed: int = 0) -> str:
    """The state of each source. pytest is ``ok`` only when every test it ran passed; with ``failed``
    tests it says how many ran and how many failed."""
    parts = []
    for status in statuses:
        if status.source == "pytest" and status.state == "ok" and failed:
            ran, _, rest = status.note.partition(" from ")
            where = f" (from {rest})" if rest else ""
            count = f"{ran}, " if ran.endswith(" ran") else ""
            parts.append(f"pytest: {count}{failed} failed{where if count else ''}")
            continue
        note = f" ({status.note})" if status.note else ""
        parts.append(f"{status.source} {status.state}{note}")
    return "sources: " + "; ".join(parts)


def failed_tests(signals: Iterable[Signal]) -> int:
    """The failing tests among ``signals`` (collection errors are not tests that ran)."""
    return sum(1 for s in signals if s.source == "pytest" and not s.code.startswith("collect:"))


def test_reasons(result: CheckResult) -> list[str]:
    """``check --explain``: which tests ran, and how each was found."""
    selection = result.selection
    if not result.tests:
        return ["Tests: none ran" + (f": {selection.describe()}" if selection.describe() else ".")]
    if selection.scope != "related":
        return [f"Tests: {len(result.tests)} test files, {selection.describe()}."]
    reasons = dict(selection.reasons)
    return [
        f"Tests: {len(result.tests)} of {selection.suite} test files, related to the change:",
        *(f"  {test}: {reasons.get(test, 'related')}" for test in result.tests),
    ]


def render_check(result: CheckResult, fail_on: str, explain: bool = False) -> str:
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
        lines.extend(signal_entries(comparison.introduced))
    if comparison.existing:
        lines.append(f"\nAlready there before the change (not counted): {len(comparison.existing)}")
    if comparison.fixed:
        lines.append(f"Fixed by the change: {len(comparison.fixed)}")
    lines.append("")
    if explain:
        lines.extend([*test_reasons(result), ""])
    lines.append(status_line(comparison.statuses, failed_tests(comparison.introduced + comparison.existing)))
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
