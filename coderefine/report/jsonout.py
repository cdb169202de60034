"""JSON output: a stable, documented shape for scripts and CI (see docs/output.md)."""

from __future__ import annotations

import dataclasses
import json

from coderefine.signals.base import Signal
from coderefine.signals.check import CheckResult

SCHEMA_VERSION = 1


def signal_data(signal: Signal) -> dict[str, object]:
    return dataclasses.asdict(signal)


def check_data(result: CheckResult, fail_on: str) -> dict[str, object]:
    comparison = result.evaluation.comparison
    return {
        "version": SCHEMA_VERSION,
        "change": {
            "source": result.change.source,
            "root": str(result.change.root),
            "files": [{"path": f.path, "kind": f.kind} for f in result.change.files],
        },
        "tests": list(result.tests),
        "tests_why": tests_why(result),
        "introduced": [signal_data(s) for s in comparison.introduced],
        "existing": [signal_data(s) for s in comparison.existing],
        "fixed": [signal_data(s) for s in comparison.fixed],
        "statuses": [dataclasses.asdict(s) for s in comparison.statuses],
        "failed": result.failed(fail_on),
    }


def tests_why(result: CheckResult) -> dict[str, str]:
    """How each test run was chosen: the import chain or name that relates it to the change, or why
    the whole suite ran."""
    reasons = dict(result.selection.reasons)
    whole = result.selection.describe()
    return {test: reasons.get(test, whole) for test in result.tests}


def render_check_json(result: CheckResult, fail_on: str) -> str:
    return json.dumps(check_data(result, fail_on), indent=2) + "\n"
