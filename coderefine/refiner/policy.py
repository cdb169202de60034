"""When a call can be saved: a revision needs no confirming critique when the signals that motivated it
are resolved and every issue the critic raised stood on one of those signals; a round needs no reviser
call when the critic's one issue stands on a signal and the critic attached its fix (``merge``).

With the setting ``confirm = "signals"``, the loop then stops after the accepted revision instead of
asking the critic once more. The critic's issues were all restatements of facts a tool measured, and
the tools now say those facts are gone; a confirming critique could only find something new, which the
default (``"always"``) still asks for.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from coderefine.refiner.critique import Critique, Issue
from coderefine.signals.base import SEVERITY_RANK, Comparison, Signal

SLACK = 2  # lines: a critic often anchors an issue a line above or below the signal's own line


def _enclosing_function(text: str, line: int) -> str:
    """The name of the innermost function holding ``line``, or an empty string."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ""
    best: tuple[int, str] = (-1, "")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and node.lineno > best[0]:
                best = (node.lineno, node.name)
    return best[1]


def backed(issue: Issue, signal: Signal, texts: Mapping[str, str]) -> bool:
    """Whether ``signal`` is the fact behind ``issue``.

    A signal backs an issue on its own lines of its own file; a failing test also backs an issue in a
    function that the test's report names (its traceback, its assertion)."""
    end = issue.end_line or issue.line
    if signal.path == issue.path and (
        signal.line - SLACK <= end and issue.line <= (signal.end_line or signal.line) + SLACK
    ):
        return True
    if signal.source != "pytest":
        return False
    name = _enclosing_function(texts.get(issue.path, ""), issue.line)
    report = f"{signal.message}\n{signal.detail}"
    return bool(name) and re.search(rf"\b{re.escape(name)}\b", report) is not None


def motivating(comparison: Comparison, fail_on: str) -> tuple[Signal, ...]:
    """The introduced signals at or above ``fail_on``: what a revision must resolve."""
    if fail_on == "never":
        return ()
    floor = SEVERITY_RANK[fail_on]
    return tuple(s for s in comparison.introduced if SEVERITY_RANK[s.severity] >= floor)


def confirmed_by_signals(
    critique: Critique,
    before: Comparison,
    after: Comparison,
    texts: Mapping[str, str],
    fail_on: str,
) -> bool:
    """Whether an accepted revision may end the run without a confirming critique."""
    reasons: Sequence[Signal] = motivating(before, fail_on)
    if not critique.issues or not reasons or fail_on == "never":
        return False
    if motivating(after, fail_on) or after.missing():
        return False
    return all(any(backed(issue, s, texts) for s in reasons) for issue in critique.issues)


def mergeable(critique: Critique, before: Comparison, texts: Mapping[str, str], fail_on: str) -> bool:
    """Whether the critic's attached edits may stand in for the reviser: it raised exactly one issue,
    a motivating signal backs it, and it attached edit blocks. The edits still pass the gate and the
    signals like any revision."""
    if len(critique.issues) != 1 or not critique.edits.strip():
        return False
    (issue,) = critique.issues
    return any(backed(issue, s, texts) for s in motivating(before, fail_on))
