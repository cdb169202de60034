"""One file of a review: its critique, and for each issue a fix the reviser proposes, offered only when
it applies to the head file, passes the gate, and is shown better (its signals improve, or they are no
worse and the critic shown the fixed file no longer raises the issue)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from coderefine.doors.review.findings import Finding, Suggestion, from_issue, suggestion_for
from coderefine.errors import BudgetExceededError
from coderefine.project.change import FileChange
from coderefine.refiner.critique import Critique, CritiqueError, Issue
from coderefine.refiner.session import RejectedEdit, Session
from coderefine.signals.base import SEVERITY_RANK, Comparison, Signal
from coderefine.signals.evaluate import Evaluation


@dataclass(frozen=True)
class FileReview:
    path: str
    started: bool = True  # False: not critiqued because the budget was reached first
    critiqued: bool = False
    findings: tuple[Finding, ...] = ()
    note: str = ""
    restates: tuple[tuple[Signal, ...], ...] = ()  # per finding: the lint its verified fix resolved


def review_file(
    session: Session,
    narrowed: Comparison,
    initial: Evaluation,
    file: FileChange,
    head_texts: Mapping[str, str],
) -> FileReview:
    """One file's critique, and a verified fix tried for each of its issues."""
    current = Evaluation(initial.signals, narrowed)
    try:
        critique = session.critique({file.path: file.after.text}, current, 1)
    except BudgetExceededError:
        return FileReview(file.path, started=False)
    except CritiqueError as exc:
        return FileReview(file.path, note=f"The critique of {file.path} was unusable ({exc}).")
    findings = []
    restates: list[tuple[Signal, ...]] = []
    for index, issue in enumerate(critique.issues):
        finding = from_issue(issue, head_texts)
        resolved: tuple[Signal, ...] = ()
        try:
            finding, resolved = verify(session, finding, index, critique, file.path, file.after.text, current)
        except BudgetExceededError:
            finding = replace(finding, note="no fix was tried: the budget was reached")
        findings.append(finding)
        restates.append(resolved)
    return FileReview(file.path, critiqued=True, findings=tuple(findings), restates=tuple(restates))


def verify(
    session: Session,
    finding: Finding,
    index: int,
    critique: Critique,
    path: str,
    head_text: str,
    current: Evaluation,
) -> tuple[Finding, tuple[Signal, ...]]:
    """Ask the reviser for a fix of issue ``index`` alone (shown the whole critique, that issue marked
    as the one to fix); keep it only if it is gated and shown better. With it, the lint on the issue's
    line the fix resolved: the issue restates it (``findings.take_fix``)."""
    issue = critique.issues[index]
    request = session.reviser_request({path: head_text}, critique, current.comparison, fix=(index,))
    try:
        candidate, _ = session.edit(request, {path: head_text}, 1)
    except RejectedEdit as exc:
        return replace(finding, note=f"the proposed fix was refused: {exc.feedback.splitlines()[0]}"), ()
    fixed = candidate[path]
    suggestion = suggestion_for(head_text, fixed)
    if suggestion is None:
        return replace(finding, note="the reviser proposed no change"), ()
    evaluation = session.evaluate({path: fixed}, 1)
    if evaluation.comparison.better_than(current.comparison):
        return replace(finding, suggestion=suggestion), _resolved_lint(issue, current, evaluation)
    if not evaluation.comparison.no_worse_than(current.comparison):
        return replace(finding, note="the proposed fix made a signal worse, so it is not offered"), ()
    # No signal shows the fix better: it is offered only if the critic, shown the fixed file, no
    # longer raises the issue where the fix changed the code (the rule `fix` writes by).
    try:
        recheck = session.critique({path: fixed}, evaluation, 1)
    except CritiqueError:
        return replace(
            finding, note="the critic's check of the proposed fix was unusable, so it is not offered"
        ), ()
    if still_raised(recheck, issue, suggestion):
        return replace(
            finding, note="the critic still raises the issue on the proposed fix, so it is not offered"
        ), ()
    return replace(finding, suggestion=suggestion), ()


def _resolved_lint(issue: Issue, before: Evaluation, after: Evaluation) -> tuple[Signal, ...]:
    """The ruff findings on ``issue``'s first line that are gone after the fix (matched by code and
    message, since the fix moves lines)."""
    left = {(s.source, s.code, s.message) for s in after.comparison.introduced}
    return tuple(
        s
        for s in before.comparison.introduced
        if s.source == "ruff"
        and s.path == issue.path
        and s.line <= issue.line <= max(s.end_line, s.line)
        and (s.source, s.code, s.message) not in left
    )


def still_raised(recheck: Critique, issue: Issue, suggestion: Suggestion) -> bool:
    """Whether ``recheck`` (a critique of the fixed file) raises an issue as severe as ``issue`` on the
    lines the suggestion wrote."""
    if recheck.verdict == "pass":
        return False
    first = suggestion.start
    last = first + max(len(suggestion.text.splitlines()), 1) - 1
    rank = SEVERITY_RANK[issue.severity]
    return any(
        SEVERITY_RANK[other.severity] >= rank
        and other.line <= last
        and max(other.end_line, other.line) >= first
        for other in recheck.issues
    )
