"""SARIF fixes applied as the specification reads them reproduce the verified candidate byte for byte."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from coderefine.doors.review.findings import Finding, Suggestion, suggestion_for
from coderefine.doors.review.run import ReviewReport
from coderefine.doors.review.sarif import sarif_data
from coderefine.models.scripted import ScriptedModel
from tests.conftest import RepoFactory
from tests.doors.review.test_run import FEATURE, block, feature_repo, issue, review

__all__ = ["feature_repo"]  # the fixture, shared with test_run.py


def _line_starts(text: str) -> list[int]:
    return [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]


def _offset(text: str, line: int, column: int | None) -> int:
    """A SARIF (line, column) as an index into ``text``; no column: the end of the line, before its
    newline sequence (SARIF 3.30.2)."""
    starts = _line_starts(text)
    start = starts[line - 1]
    if column is not None:
        return start + column - 1
    end = starts[line] - 1 if line < len(starts) else len(text)
    return end - 1 if end > start and text[end - 1] == "\r" and end < len(text) else end


def apply_sarif(heads: Mapping[str, str], data: Mapping[str, object]) -> dict[str, dict[str, str]]:
    """Each fix of each result applied alone to its head file: {path: {rule title: fixed text}}."""
    fixed: dict[str, dict[str, str]] = {}
    for result in data["runs"][0]["results"]:  # type: ignore[index]
        for fix in result.get("fixes", ()):
            for change in fix["artifactChanges"]:
                path = change["artifactLocation"]["uri"]
                text = heads[path]
                edits = []
                for replacement in change["replacements"]:
                    region = replacement["deletedRegion"]
                    first = _offset(text, region["startLine"], region.get("startColumn", 1))
                    last = _offset(text, region.get("endLine", region["startLine"]), region.get("endColumn"))
                    edits.append((first, last, replacement["insertedContent"]["text"]))
                for first, last, inserted in sorted(edits, reverse=True):
                    text = text[:first] + inserted + text[last:]
                fixed.setdefault(path, {})[result["message"]["text"].split("\n")[0]] = text
    return fixed


def _report(findings: tuple[Finding, ...]) -> ReviewReport:
    return ReviewReport("base", "head", "", "none", findings, "", {}, (), ("m.py",))


@pytest.mark.parametrize(
    ("head", "candidate"),
    [
        ("import os\n\n\ndef f():\n    return 1\n", "def f():\n    return 1\n"),  # the unused import goes
        ("import os\r\nimport sys\r\n\r\nx = sys\r\n", "import sys\r\n\r\nx = sys\r\n"),  # CRLF kept
        ("a = 1\nb = 2", "a = 1\n"),  # the last line, which has no newline, goes
        ("a = 1\nb = 2", "a = 1\nb = 3"),  # replaced; still no final newline
        ("a = 1\nb = 2\n", "a = 1\nb = 2"),  # only the final newline goes
        ("b = 2\n", "a = 1\nb = 2\n"),  # inserted at the top
        ("a = 1\n", "a = 1\nb = 2\n"),  # inserted at the end
        ("x = '\x0c'\ny = 1\n", "x = '\x0c'\ny = 2\n"),  # a form feed does not end a line
    ],
)
def test_every_fix_applied_reproduces_the_candidate(head: str, candidate: str) -> None:
    suggestion = suggestion_for(head, candidate)
    assert suggestion is not None
    finding = Finding(
        "r", "error", "m.py", suggestion.start, suggestion.end, "t", "m", "critic", "", suggestion
    )
    fixed = apply_sarif({"m.py": head}, sarif_data(_report((finding,))))
    assert fixed["m.py"]["t"].encode() == candidate.encode()


def test_a_report_without_exact_text_still_deletes_lines_whole() -> None:
    old = Finding("r", "error", "m.py", 1, 1, "t", "m", "critic", "", Suggestion(1, 1, ""))
    fixed = apply_sarif({"m.py": "import os\nx = 1\n"}, sarif_data(_report((old,))))
    assert fixed["m.py"]["t"] == "x = 1\n"


def test_a_reviews_verified_fixes_applied_are_the_candidates(
    make_repo: RepoFactory, feature_repo: Path
) -> None:
    critique = {
        "verdict": "revise",
        "summary": "two slips",
        "issues": [issue("os is unused", 1, "import os"), issue("add subtracts", 5, "return a - b")],
    }
    model = ScriptedModel(
        [
            critique,
            block("import os\n\n\ndef add(a, b):\n", "def add(a, b):\n"),
            block("    return a - b\n", "    return a + b\n"),
        ]
    )
    report = review(feature_repo, model)
    fixed = apply_sarif({"pkg/mod.py": FEATURE}, sarif_data(report))["pkg/mod.py"]
    without_import = FEATURE.removeprefix("import os\n\n\n")
    (unused,) = [title for title in fixed if "F401" in title]  # the critic's fix, given to ruff's finding
    assert fixed[unused].encode() == without_import.encode()
    assert fixed["add subtracts"].encode() == FEATURE.replace("a - b", "a + b").encode()
