"""Findings a person dismissed, held back from later reviews of the same code.

A finding's fingerprint (rule, path, the text of its anchored line, occurrence) names the same finding on
the same code across pushes, so a dismissal is a set of fingerprints:

- on GitHub, coderefine's inline comment whose thread a person resolved while the finding still stood
  (not one coderefine itself marked resolved), or that got a thumbs-down reaction;
- anywhere, the lines of the ignore file (setting ``ignore-file``): a fingerprint, then an optional
  ``# reason``. A relative path is read from the base of the review, never from the change under review,
  which must not silence its own findings; an absolute path is the CI's own file, read from disk.

A held-back finding is left out of every output and of the exit code; the report counts them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from coderefine.doors.review.github_api import FINGERPRINT, RESOLVED_MARKER, GitHubReviewer
from coderefine.doors.review.run import ReviewReport
from coderefine.errors import UsageError
from coderefine.project.gitio import GitRepo
from coderefine.project.rules import commit_reader

_LINE = re.compile(r"^\s*([0-9a-f]{8,64})\b\s*(?:#\s*(.*))?$")


def read_ignore_file(text: str | None) -> dict[str, str]:
    """Fingerprint -> reason of an ignore file's lines (blank lines and ``#`` comments skipped; a line
    that is not a fingerprint is skipped too, so a note in the file cannot break a review)."""
    found: dict[str, str] = {}
    for line in (text or "").splitlines():
        match = _LINE.match(line)
        if match:
            found[match.group(1)] = (match.group(2) or "").strip() or "listed in the ignore file"
    return found


def ignore_file_dismissals(name: str, read_base: Callable[[str], str | None]) -> dict[str, str]:
    """The ignore file's dismissals: a relative ``name`` from the review's base, an absolute one from
    disk ("" : none)."""
    if not name:
        return {}
    path = Path(name)
    if path.is_absolute():
        try:
            return read_ignore_file(path.read_text(encoding="utf-8") if path.is_file() else None)
        except OSError:
            return {}
    rel = name.replace("\\", "/")
    return read_ignore_file(read_base(rel[2:] if rel.startswith("./") else rel))


def comment_dismissals(comments: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Dismissals read from coderefine's review comments (the REST list): a thumbs-down reaction."""
    found: dict[str, str] = {}
    for comment in comments:
        body = comment.get("body") or ""
        match = FINGERPRINT.search(body)
        if not match or RESOLVED_MARKER in body:
            continue
        reactions = comment.get("reactions") or {}
        if int(reactions.get("-1", 0) or 0) > 0:
            found[match.group(1)] = "a thumbs-down reaction on its comment"
    return found


def thread_dismissals(threads: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Dismissals read from the pull request's review threads (GraphQL): a thread a person resolved on a
    comment coderefine had not marked resolved itself (a finding that went away is not a dismissal)."""
    found: dict[str, str] = {}
    for thread in threads:
        if not thread.get("isResolved"):
            continue
        first = ((thread.get("comments") or {}).get("nodes") or [{}])[0] or {}
        body = first.get("body") or ""
        match = FINGERPRINT.search(body)
        if not match or RESOLVED_MARKER in body:
            continue
        who = (thread.get("resolvedBy") or {}).get("login")
        found[match.group(1)] = f"its thread resolved by @{who}" if who else "its thread resolved"
    return found


def hold_back(report: ReviewReport, dismissed: Mapping[str, str]) -> ReviewReport:
    """``report`` without the findings a person dismissed; their fingerprints in ``held_back``."""
    if not dismissed:
        return report
    kept = tuple(f for f in report.findings if f.fingerprint not in dismissed)
    held = tuple(
        dict.fromkeys(
            [*report.held_back, *(f.fingerprint for f in report.findings if f.fingerprint in dismissed)]
        )
    )
    return dataclasses.replace(report, findings=kept, held_back=held)


def github_dismissals(reviewer: GitHubReviewer) -> tuple[dict[str, str], str]:
    """The dismissals on the pull request, and a note when the review threads could not be read (the
    reactions still count; the review goes on)."""
    found = comment_dismissals(reviewer.review_comments())
    try:
        threads = reviewer.review_threads()
    except (UsageError, KeyError, TypeError, ValueError) as exc:
        return found, f"resolved threads were not read ({str(exc)[:200]})"
    return {**thread_dismissals(threads), **found}, ""


def apply_dismissals(
    report: ReviewReport,
    ignore_file: str,
    repo: GitRepo | None,
    reviewer: GitHubReviewer | None = None,
) -> tuple[ReviewReport, str]:
    """``report`` with the findings dismissed in the ignore file (read from ``report.base`` of ``repo``)
    and, with ``reviewer``, on the pull request held back; and a note of what could not be read."""
    read_base = commit_reader(repo, report.base) if repo is not None and report.base else _nothing
    dismissed = ignore_file_dismissals(ignore_file, read_base)
    note = ""
    if reviewer is not None:
        on_github, note = github_dismissals(reviewer)
        dismissed.update(on_github)
    return hold_back(report, dismissed), note


def _nothing(rel: str) -> None:
    return None
