"""GitLab code quality JSON (the Code Climate subset GitLab reads)."""

from __future__ import annotations

import json

from coderefine.doors.review.run import ReviewReport

_SEVERITY = {"error": "critical", "warning": "major", "info": "info"}


def render_gitlab(report: ReviewReport) -> str:
    issues = [
        {
            "description": f"{f.title}: {f.message.splitlines()[0] if f.message else ''}".strip(": "),
            "check_name": f.rule_id,
            "fingerprint": f.fingerprint,
            "severity": _SEVERITY[f.severity],
            "location": {"path": f.path, "lines": {"begin": f.line, "end": f.end_line}},
        }
        for f in report.findings
    ]
    return json.dumps(issues, indent=2) + "\n"
