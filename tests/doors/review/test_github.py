"""Annotations point to the job summary only when one is written beside them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from coderefine.cli.commands.ci import write_outputs
from coderefine.doors.review.findings import Finding, Suggestion
from coderefine.doors.review.github import render_annotations
from coderefine.doors.review.run import ReviewReport

FIXED = Finding(
    "coderefine/critic-error",
    "error",
    "m.py",
    2,
    2,
    "add subtracts",
    "use +",
    "critic",
    "",
    Suggestion(2, 2, "    return a + b", "    return a + b\n"),
)
REPORT = ReviewReport("b", "h", "", "none", (FIXED,), "", {}, (), ("m.py",))


def test_outside_actions_the_fix_is_in_the_annotation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = io.StringIO()
    write_outputs(REPORT, [("github", None)], out)
    assert "job summary" not in out.getvalue()
    assert "Verified fix, replacing line 2:%0A    return a + b" in out.getvalue()
    deleted = Finding(**{**FIXED.__dict__, "suggestion": Suggestion(1, 2, "", "")})
    annotations = render_annotations(ReviewReport("b", "h", "", "none", (deleted,), "", {}, (), ()), False)
    assert "Verified fix: delete lines 1-2." in annotations


def test_under_actions_the_annotation_points_to_the_summary_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = io.StringIO()
    write_outputs(REPORT, [("github", None)], out)
    assert "A verified fix is in the job summary." in out.getvalue()
    assert "return a + b" in summary.read_text()
    assert render_annotations(REPORT) == out.getvalue()
