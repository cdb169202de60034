"""GitHub Actions output: workflow-command annotations and the job summary.

GitHub shows at most 10 annotations of each level per step, so findings are ranked and, past that,
the rest of a level is summed up in one annotation that points to the job summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from coderefine.doors.review.findings import Finding
from coderefine.doors.review.render import render_markdown
from coderefine.doors.review.run import ReviewReport

MAX_PER_LEVEL = 10
_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, properties: Mapping[str, object]) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{level} {props}::{escape_data(message)}" if props else f"::{level}::{escape_data(message)}"


def _finding_annotation(finding: Finding, summary: bool) -> str:
    properties: dict[str, object] = {"file": finding.path, "line": finding.line}
    if finding.end_line > finding.line:
        properties["endLine"] = finding.end_line
    properties["title"] = f"{finding.title} ({finding.rule_id})"
    message = finding.message
    if finding.suggestion is not None:
        fix = finding.suggestion
        # Outside Actions no job summary is written: the fix goes in the annotation itself.
        lines = f"line {fix.start}" if fix.start == fix.end else f"lines {fix.start}-{fix.end}"
        if summary:
            message += "\n\nA verified fix is in the job summary."
        elif fix.text:
            message += f"\n\nVerified fix, replacing {lines}:\n{fix.text}"
        else:
            message += f"\n\nVerified fix: delete {lines}."
    return annotation(_COMMANDS[finding.severity], message, properties)


def render_annotations(report: ReviewReport, summary: bool = True) -> str:
    """The findings as workflow commands; ``summary``: whether the job summary is written beside
    them (under Actions), which the annotations then point to."""
    lines: list[str] = []
    elsewhere = "see the job summary" if summary else "`coderefine review --format text` lists them all"
    for severity, command in _COMMANDS.items():
        of_level = [f for f in report.findings if f.severity == severity]  # already ranked
        if len(of_level) <= MAX_PER_LEVEL:
            lines.extend(_finding_annotation(f, summary) for f in of_level)
            continue
        lines.extend(_finding_annotation(f, summary) for f in of_level[: MAX_PER_LEVEL - 1])
        rest = len(of_level) - (MAX_PER_LEVEL - 1)
        lines.append(
            annotation(command, f"{rest} more {severity} findings: {elsewhere}", {"title": "coderefine"})
        )
    return "\n".join(lines) + ("\n" if lines else "")


def append_step_summary(report: ReviewReport, environ: Mapping[str, str]) -> bool:
    """Append the Markdown summary to GITHUB_STEP_SUMMARY; False when there is none."""
    target = environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    with Path(target).open("a", encoding="utf-8") as handle:
        handle.write(render_markdown(report) + "\n")
    return True
