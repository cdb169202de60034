"""SARIF 2.1.0 for code scanning: stable rule ids, partial fingerprints, and verified fixes."""

from __future__ import annotations

import json

from coderefine.doors.review.findings import Finding, Suggestion
from coderefine.doors.review.run import ReviewReport
from coderefine.version import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "coderefineFindingHash/v1"


def _rule(finding: Finding) -> dict[str, object]:
    return {
        "id": finding.rule_id,
        "name": finding.rule_id.replace("/", "-"),
        "shortDescription": {"text": finding.rule_id},
        "defaultConfiguration": {"level": _LEVELS[finding.severity]},
    }


def _result(finding: Finding, index: int) -> dict[str, object]:
    result: dict[str, object] = {
        "ruleId": finding.rule_id,
        "ruleIndex": index,
        "level": _LEVELS[finding.severity],
        "message": {"text": f"{finding.title}\n\n{finding.message}".strip()},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": finding.path, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": finding.line, "endLine": finding.end_line},
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
    }
    if finding.suggestion is not None:
        result["fixes"] = [
            {
                "description": {
                    "text": "verified by coderefine: gated and shown better by the signals or the critic"
                },
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": finding.path, "uriBaseId": "%SRCROOT%"},
                        "replacements": [
                            {
                                "deletedRegion": deleted_region(finding.suggestion),
                                "insertedContent": {"text": inserted_text(finding.suggestion)},
                            }
                        ],
                    }
                ],
            }
        ]
    return result


def deleted_region(suggestion: Suggestion) -> dict[str, int]:
    """Head lines ``start``..``end`` with their line endings. A region given by lines alone stops before
    the last line's ending (SARIF 3.30), so replacing it would leave a blank line where lines were
    deleted: the region runs to the first column of the next line instead, or to the end of a last line
    that has no ending."""
    if not suggestion.to_newline:
        return {"startLine": suggestion.start, "startColumn": 1, "endLine": suggestion.end}
    return {"startLine": suggestion.start, "startColumn": 1, "endLine": suggestion.end + 1, "endColumn": 1}


def inserted_text(suggestion: Suggestion) -> str:
    if suggestion.exact is not None:
        return suggestion.exact
    # A report from before ``exact``: its lines are taken to end with "\n".
    return "".join(f"{line}\n" for line in suggestion.text.split("\n")) if suggestion.text else ""


def sarif_data(report: ReviewReport) -> dict[str, object]:
    rules: dict[str, int] = {}
    rule_list: list[dict[str, object]] = []
    results = []
    for finding in report.findings:
        if finding.rule_id not in rules:
            rules[finding.rule_id] = len(rule_list)
            rule_list.append(_rule(finding))
        results.append(_result(finding, rules[finding.rule_id]))
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "coderefine",
                        "version": __version__,
                        "informationUri": "https://github.com/coderefine/coderefine",
                        "rules": rule_list,
                    }
                },
                "automationDetails": {"id": "coderefine/review/"},
                "results": results,
            }
        ],
    }


def render_sarif(report: ReviewReport) -> str:
    return json.dumps(sarif_data(report), indent=2) + "\n"
