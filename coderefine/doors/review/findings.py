"""Findings of a review: located, fingerprinted, and anchored only where the diff allows.

A finding comes from a signal the pull request introduced (ruff, format, a failing test, a syntax error)
or from an issue the critic raised. Its fingerprint is stable across pushes (rule, path, the text of the
anchored line, and an occurrence number), so a re-run neither repeats nor loses it. Whether it may be an
inline comment is decided here too: only lines of the head file that the diff shows (RIGHT side) may carry
one; everything else goes to the summary.
"""

from __future__ import annotations

import difflib
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
    """A verified fix: replace head lines ``start``..``end`` (1-based, inclusive) with ``text``.

    ``text`` is the new lines joined by "\n", as a suggestion block shows them (empty: the lines go).
    ``exact`` is the same lines as the verified candidate holds them, each with its own line ending, so
    that a tool applying the fix (SARIF) writes the candidate byte for byte; ``to_newline`` says whether
    head line ``end`` ends with a line ending (not so only for a last line without one). ``exact`` is
    None in reports written before it existed: their lines are then taken to end with "\n".
    """

    start: int
    end: int
    text: str
    exact: str | None = None
    to_newline: bool = True


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


def take_fix(findings: list[Finding], critic: Finding, resolved: Sequence[Signal]) -> bool:
    """Give the critic's verified fix to the signal's finding it restates (the fix resolved a ruff
    finding on the issue's own line: one unused import is one finding, not the critic's and ruff's
    F401). True when a finding in ``findings`` took it: the critic's is then not reported."""
    keys = {(f.path, f.line, f.rule_id) for f in (from_signal(s, {}) for s in resolved)}
    for index, finding in enumerate(findings):
        if finding.suggestion is None and (finding.path, finding.line, finding.rule_id) in keys:
            findings[index] = replace(finding, suggestion=critic.suggestion)
            return True
    return False


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


def suggestion_for(before: str, after: str) -> Suggestion | None:
    """The smallest head-line range whose replacement turns ``before`` into ``after``.

    Lines end at "\n" only, as Python and the findings number them, and keep their endings, so a
    change of line ending counts and the replacement reproduces ``after`` exactly."""
    old, new = ending_lines(before), ending_lines(after)
    changes = [
        op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if not changes:
        return None
    i1, j1 = changes[0][1], changes[0][3]
    i2, j2 = changes[-1][2], changes[-1][4]
    if i1 == i2:  # a pure insertion: anchor on the line before it (or after, at the top)
        if i1 > 0:
            i1, j1 = i1 - 1, j1 - 1
        else:
            i2, j2 = i2 + 1, j2 + 1
    end = max(i2, i1 + 1)
    return Suggestion(
        start=i1 + 1,
        end=end,
        text="\n".join(line.rstrip("\n").removesuffix("\r") for line in new[j1:j2]),
        exact="".join(new[j1:j2]),
        to_newline=end > len(old) or old[end - 1].endswith("\n"),
    )


def ending_lines(text: str) -> list[str]:
    """``text`` split after each "\n", endings kept: ``"".join(ending_lines(t)) == t``."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
