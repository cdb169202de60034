"""Tool results stay within their size limits; what does not fit is written to a report file."""

from __future__ import annotations

import json
from pathlib import Path

from coderefine.doors.mcp.results import MAX_TEXT_CHARS, bounded


def test_a_small_result_is_returned_whole(tmp_path: Path) -> None:
    out = bounded("check", "clean\n", {"failed": False, "introduced": []}, lambda: tmp_path / "reports")
    assert out.text == "clean\n" and out.data == {"failed": False, "introduced": []}
    assert not (tmp_path / "reports").exists()


def test_a_large_result_is_summarised_with_a_pointer_to_the_full_report(tmp_path: Path) -> None:
    data = {
        "failed": True,
        "introduced": [{"code": f"E{i}", "detail": "x" * 500} for i in range(100)],
        "diff": "+" * 100_000,
    }
    out = bounded(
        "refine",
        "y" * (MAX_TEXT_CHARS * 2),
        data,
        lambda: tmp_path / "reports",
        limit=20_000,
        clock=lambda: 1.5,
    )
    report = tmp_path / "reports" / "refine-1500.json"
    assert json.loads(report.read_text()) == data
    assert out.data["truncated"] is True and out.data["full_report"] == str(report)
    assert out.data["failed"] is True
    assert len(json.dumps(out.data)) <= 20_000
    assert len(out.text) < MAX_TEXT_CHARS + 500 and str(report) in out.text
    assert out.data["introduced"][-1] == "[... 90 more in the full report]"
