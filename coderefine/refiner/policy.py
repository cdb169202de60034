"""When a call can be saved: a revision needs no confirming critique when the signals that motivated it
are resolved and every issue the critic raised stood on one of those signals; a round needs no reviser
call when the critic's one issue stands on a signal and the critic attached its fix (``merge``).

A failing test stands behind an issue its report names the function of; for the critic's own attached
fix it stands behind the one issue too when the fix changes the code where the issue is: a trimmed
traceback often names only the test, and the fix is measured anyway (``merge_refusal``, ``covers``).

With the setting ``confirm = "signals"``, the loop then stops after the accepted revision instead of
asking the critic once more. The critic's issues were all restatements of facts a tool measured, and
the tools now say those facts are gone; a confirming critique could only find something new, which the
default (``"always"``) still asks for.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping, Sequence

from coderefine.pyast import parse_module
from coderefine.refiner.critique import Critique, Issue
from coderefine.signals.base import SEVERITY_RANK, Comparison, Signal

SLACK = 2  # lines: a critic often anchors an issue a line above or below the signal's own line


def _enclosing_function(text: str, line: int) -> str:
    """The name of the innermost function holding ``line``, or an empty string."""
    return _enclosing(text, line)[2]


def _enclosing(text: str, line: int) -> tuple[int, int, str]:
    """The first and last line and the name of the innermost function holding ``line``; (0, 0, "")
    when none does."""
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError):
        return (0, 0, "")
    best: tuple[int, int, str] = (0, 0, "")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and node.lineno > best[0]:
                best = (node.lineno, end, node.name)
    return best


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
    merged: bool = False,
) -> bool:
    """Whether an accepted revision may end the run without a confirming critique. ``merged``: the
    revision is the critic's own edit for its one issue, which ``merge_refusal`` and ``covers`` found
    standing on the motivating signals, so the issue counts as backed."""
    reasons: Sequence[Signal] = motivating(before, fail_on)
    if not critique.issues or not reasons or fail_on == "never":
        return False
    if motivating(after, fail_on) or after.missing():
        return False
    if merged and len(critique.issues) == 1:
        return True
    return all(any(backed(issue, s, texts) for s in reasons) for issue in critique.issues)


def merge_refusal(critique: Critique, before: Comparison, texts: Mapping[str, str], fail_on: str) -> str:
    """Why the critic's attached edits may not stand in for the reviser ("" when they may): it must
    raise exactly one issue and attach edit blocks, and an introduced signal at or above ``fail_on``
    must back the issue, or be a failing test (whose report may not name the function: ``covers``
    then checks the edits against the issue). The edits still pass the gate and the signals like any
    revision."""
    if not critique.edits.strip():
        return "the critic attached no edits"
    if len(critique.issues) != 1:
        return (
            f"the critic's edits were not used: it raised {len(critique.issues)} issues, and edits stand "
            "in for the reviser only for a single issue"
        )
    (issue,) = critique.issues
    reasons = motivating(before, fail_on)
    if any(backed(issue, s, texts) or s.source == "pytest" for s in reasons):
        return ""
    if not reasons:
        return (
            f"the critic's edits were not used: no signal at or above '{fail_on}' was introduced to "
            "measure them by"
        )
    return (
        f"the critic's edits were not used: no failing test or finding backs its issue at "
        f"{issue.path}:{issue.line}"
    )


def mergeable(critique: Critique, before: Comparison, texts: Mapping[str, str], fail_on: str) -> bool:
    """Whether the critic's attached edits may stand in for the reviser (see ``merge_refusal``)."""
    return not merge_refusal(critique, before, texts, fail_on)


def name_backed(critique: Critique, before: Comparison, texts: Mapping[str, str], fail_on: str) -> bool:
    """Whether a motivating signal backs the critique's one issue by its lines or by name."""
    return len(critique.issues) == 1 and any(
        backed(critique.issues[0], s, texts) for s in motivating(before, fail_on)
    )


def covers(issue: Issue, before: Mapping[str, str], after: Mapping[str, str]) -> bool:
    """Whether ``after`` changes the code where ``issue`` is: inside the function holding the issue's
    line, or within ``SLACK`` lines of the issue outside any function."""
    old, new = before.get(issue.path), after.get(issue.path)
    if old is None or new is None or old == new:
        return False
    first, last, _ = _enclosing(old, issue.line)
    if not first:
        first, last = issue.line - SLACK, (issue.end_line or issue.line) + SLACK
    matcher = difflib.SequenceMatcher(None, old.split("\n"), new.split("\n"), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        # lines i1+1..i2 replaced (a pure insertion sits between lines i1 and i1+1)
        if i1 + 1 <= last and max(i2, i1 + 1) >= first:
            return True
    return False
