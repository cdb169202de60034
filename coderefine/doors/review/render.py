"""Review reports for people: plain text for logs, Markdown for job summaries and PR comments, and JSON."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable

from coderefine.doors.review.findings import Finding
from coderefine.doors.review.run import ReviewReport
from coderefine.report.usage import charges_data, charges_text
from coderefine.version import __version__

SUMMARY_MARKER = "<!-- coderefine:summary -->"
_ICONS = {"error": "🔴", "warning": "🟠", "info": "🔵"}


def fence_for(text: str, info: str = "") -> tuple[str, str]:
    """An opening and closing fence longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return ticks + info, ticks


def message_markdown(finding: Finding) -> list[str]:
    """A finding's message as Markdown rows; a test's traceback goes in a code fence, where Markdown
    keeps its indentation and does not read its ``*``, ``_`` or ``<`` as markup."""
    if finding.source != "pytest" or "\n\n" not in finding.message:
        return [finding.message]
    summary, _, trace = finding.message.partition("\n\n")
    opening, closing = fence_for(trace, "text")
    return [summary, "", opening, trace, closing]


def suggestion_block(finding: Finding) -> str:
    assert finding.suggestion is not None
    opening, closing = fence_for(finding.suggestion.text, "suggestion")
    return f"{opening}\n{finding.suggestion.text}\n{closing}"


def _where(finding: Finding) -> str:
    span = f"{finding.line}-{finding.end_line}" if finding.end_line > finding.line else str(finding.line)
    return f"{finding.path}:{span}"


def _counts(report: ReviewReport) -> str:
    by = {
        level: sum(1 for f in report.findings if f.severity == level)
        for level in ("error", "warning", "info")
    }
    parts = [f"{n} {label}{'s' if n != 1 else ''}" for label, n in by.items() if n]
    return ", ".join(parts) or "no findings"


def held_back_line(report: ReviewReport) -> str:
    """How many findings were held back because a person dismissed them earlier (dismissed.py)."""
    count = len(report.held_back)
    return (
        f"held back: {count} finding{'s' if count != 1 else ''} a person dismissed earlier on the same code "
        "(a resolved thread, a thumbs-down, or the ignore file)"
    )


def render_text(report: ReviewReport) -> str:
    lines = [
        f"coderefine review: {report.base[:10]}..{report.head[:10]} — {_counts(report)}",
        f"intent ({report.intent_source}): {report.intent.splitlines()[0] if report.intent else ''}",
    ]
    for finding in report.findings:
        fix = " [verified fix]" if finding.suggestion else ""
        lines.append(f"  {_where(finding)}: [{finding.severity}] {finding.title} ({finding.rule_id}){fix}")
        if finding.note:
            lines.append(f"      ({finding.note})")
    lines.append(
        "sources: "
        + "; ".join(f"{s.source} {s.state}" + (f" ({s.note})" if s.note else "") for s in report.statuses)
    )
    if report.model_note:
        lines.append(f"note: {report.model_note}")
    if report.shard:
        lines.append(f"shard {report.shard[0]}/{report.shard[1]}: {', '.join(report.files) or 'no files'}")
    if report.not_reviewed:
        lines.append(f"not reviewed by the model (budget): {', '.join(report.not_reviewed)}")
    if report.held_back:
        lines.append(held_back_line(report))
    if report.usage:
        total_in = sum(u.total_input for u in report.usage.values())
        total_out = sum(u.output_tokens for u in report.usage.values())
        lines.append(
            f"tokens: {total_in / 1000:.1f}k in / {total_out / 1000:.1f}k out · cost ${report.cost:.4f}"
        )
        if report.charges:
            lines.append(f"per role and model: {charges_text(report.charges)}")
    return "\n".join(lines) + "\n"


def render_markdown(report: ReviewReport, *, placed: set[str] | None = None) -> str:
    """The summary: every finding in a table, then in full (with its verified fix) each one that is not
    already an inline comment (``placed``: fingerprints posted inline; none for a job summary)."""
    placed = placed or set()
    lines = [
        "## coderefine review",
        SUMMARY_MARKER,
        "",
        f"**{_counts(report)}** in `{report.base[:10]}..{report.head[:10]}` "
        f"(intent from the {report.intent_source}).",
    ]
    if report.findings:
        lines += ["", "| | where | finding | fix |", "| --- | --- | --- | --- |"]
        for f in report.findings:
            fix = "verified suggestion" if f.suggestion else "—"
            title = f.title.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {_ICONS[f.severity]} {f.severity} | `{_where(f)}` | {title} | {fix} |")
    elsewhere = [f for f in report.findings if f.fingerprint not in placed]
    if elsewhere:
        heading = "Findings without an inline comment" if placed else "Details"
        lines += ["", f"### {heading}", ""]
        for f in elsewhere:
            lines.append(f"**{_ICONS[f.severity]} {f.title}** — `{_where(f)}` (`{f.rule_id}`)")
            lines.append("")
            lines += message_markdown(f)
            if f.suggestion:
                opening, closing = fence_for(f.suggestion.text, "python")
                lines += [
                    "",
                    f"Verified fix for lines {f.suggestion.start}-{f.suggestion.end}:",
                    opening,
                    f.suggestion.text,
                    closing,
                ]
            lines.append("")
    status = "; ".join(f"{s.source} {s.state}" + (f" ({s.note})" if s.note else "") for s in report.statuses)
    lines += ["", f"Signals: {status}."]
    if report.model_note:
        lines.append(f"\n> {report.model_note}")
    if report.held_back:
        lines.append(f"\n{held_back_line(report)}")
    if report.not_reviewed:
        lines.append(
            f"\nNot reviewed by the model (token or cost budget reached): {', '.join(report.not_reviewed)}."
        )
    if report.usage:
        total = sum(u.total for u in report.usage.values())
        lines.append(
            f"\n<sub>coderefine {__version__} · {total / 1000:.1f}k tokens · ${report.cost:.4f}</sub>"
        )
    return "\n".join(lines) + "\n"


def render_json(report: ReviewReport) -> str:
    data = {
        "version": 1,
        "base": report.base,
        "head": report.head,
        "intent": report.intent,
        "intent_source": report.intent_source,
        "findings": [{**dataclasses.asdict(f), "inline": report.inline(f)} for f in report.findings],
        "statuses": [dataclasses.asdict(s) for s in report.statuses],
        "reviewed": list(report.reviewed),
        "not_reviewed": list(report.not_reviewed),
        "model_note": report.model_note,
        "usage": {role: dataclasses.asdict(u) for role, u in report.usage.items()},
        "cost_usd": round(report.cost, 6),
        "models": charges_data(report.charges),
        "files": list(report.files),
        "shard": {"index": report.shard[0], "count": report.shard[1]} if report.shard else None,
        "right": {path: line_ranges(lines) for path, lines in sorted(report.right.items())},
        "held_back": list(report.held_back),
    }
    return json.dumps(data, indent=2) + "\n"


def line_ranges(lines: Iterable[int]) -> list[list[int]]:
    """``{1, 2, 3, 7}`` → ``[[1, 3], [7, 7]]``: the diff's RIGHT-side lines, compactly."""
    ranges: list[list[int]] = []
    for line in sorted(lines):
        if ranges and line == ranges[-1][1] + 1:
            ranges[-1][1] = line
        else:
            ranges.append([line, line])
    return ranges
