"""Findings of a review: located, fingerprinted, and anchored only where the diff allows.

A finding comes from a signal the pull request introduced (ruff, format, a failing test, a syntax error)
or from an issue the critic raised. Its fingerprint is stable across pushes (rule, path, the text of the
anchored line, and an occurrence number), so a re-run neither repeats nor loses it. Whether it may be an
inline comment is decided here too: only lines of the head file that the diff shows (RIGHT side) may carry
one; everything else goes to the summary.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from coderefine.refiner.critique import Issue
from coderefine.signals.base import Signal, failure_excerpt
from coderefine.signals.failures import split_locals

Severity = Literal["error", "warning", "info"]
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_RANK = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Suggestion:
    """A verified fix: replace head lines ``start``..``end`` (1-based, inclusive) with ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Finding:
    rule_id: str
    severity: Severity
    path: str
    line: int
    end_line: int
    title: str
    message: str
    source: str  # "critic" or a signal source
    anchor: str = ""  # the stripped text of ``line`` in the head file
    suggestion: Suggestion | None = None
    fingerprint: str = ""
    note: str = ""  # why a fix was not offered, when one was tried

    @property
    def rank(self) -> tuple[int, int, str, int]:
        return (_RANK[self.severity], 0 if self.source == "critic" else 1, self.path, self.line)


def _anchor(texts: Mapping[str, str], path: str, line: int) -> str:
    lines = texts.get(path, "").splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def from_signal(signal: Signal, texts: Mapping[str, str]) -> Finding:
    rule = {
        "ruff": f"ruff/{signal.code}",
        "format": "ruff/format",
        "pytest": "pytest/failing-test",
        "syntax": "python/syntax-error",
    }.get(signal.source, f"{signal.source}/{signal.code}")
    title = {
        "pytest": f"Test fails: {signal.code}",
        "format": "ruff format would rewrite these lines",
        "syntax": "Syntax error",
    }.get(signal.source, f"{signal.code}: {signal.message}")
    message = signal.message
    if signal.source == "pytest" and signal.detail:
        trace, values = split_locals(signal.detail)
        message += "\n\n" + "\n".join([*failure_excerpt(trace), *values.strip().splitlines()])
    return Finding(
        rule_id=rule,
        severity=signal.severity,
        path=signal.path,
        line=signal.line,
        end_line=max(signal.end_line, signal.line),
        title=title,
        message=message,
        source=signal.source,
        anchor=signal.anchor or _anchor(texts, signal.path, signal.line),
    )


def from_issue(issue: Issue, texts: Mapping[str, str]) -> Finding:
    message = issue.suggestion
    if issue.evidence:
        message = f"{issue.suggestion}\n\nEvidence: {issue.evidence}" if issue.suggestion else issue.evidence
    if issue.rule:
        # The project's own rule is the reason: quoted, with where it is written (refiner/rules.py).
        message = f"Project rule {issue.rule}\n\n{message}".rstrip()
    return Finding(
        rule_id=f"coderefine/critic-{issue.severity}",
        severity=issue.severity,
        path=issue.path,
        line=issue.line,
        end_line=max(issue.end_line, issue.line),
        title=issue.title,
        message=message,
        source="critic",
        anchor=_anchor(texts, issue.path, issue.line),
    )


def fingerprinted(findings: Iterable[Finding]) -> list[Finding]:
    """Give each finding a fingerprint that survives line moves and repeated runs."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out: list[Finding] = []
    for finding in findings:
        base = (finding.rule_id, finding.path, finding.anchor)
        seen[base] += 1
        digest = hashlib.sha256("\0".join((*base, str(seen[base]))).encode("utf-8")).hexdigest()[:16]
        out.append(replace(finding, fingerprint=digest))
    return out


def dedupe(findings: Sequence[Finding]) -> list[Finding]:
    """Drop a critic issue without a verified fix that restates a signal on the same line: the signal is
    the fact, and saying it twice is noise."""
    covered = {(f.path, n) for f in findings if f.source != "critic" for n in range(f.line, f.end_line + 1)}
    return [
        f
        for f in findings
        if f.source != "critic" or f.suggestion is not None or (f.path, f.line) not in covered
    ]


def right_side_lines(diff: str) -> dict[str, set[int]]:
    """For each file of a unified diff, the head-side line numbers its hunks show (added or context)."""
    lines: dict[str, set[int]] = {}
    current: set[int] | None = None
    number = 0
    for row in diff.splitlines():
        if row.startswith("+++ "):
            name = row[4:].split("\t")[0]
            name = name[2:] if name.startswith("b/") else name
            current = lines.setdefault(name, set()) if name != "/dev/null" else None
            continue
        match = _HUNK.match(row)
        if match:
            number = int(match.group(1))
            continue
        if current is None or row.startswith(("--- ", "diff ", "index ", "\\")):
            continue
        if row.startswith("+") or row.startswith(" ") or row == "":
            current.add(number)
            number += 1
    return lines


def commentable(finding: Finding, right: Mapping[str, frozenset[int] | set[int]]) -> bool:
    """Whether every line the comment (or its suggestion) spans is shown by the diff on the RIGHT side."""
    shown = right.get(finding.path, set())
    start, end = finding.line, finding.end_line
    if finding.suggestion is not None:
        start, end = finding.suggestion.start, finding.suggestion.end
    return all(line in shown for line in range(start, end + 1))
