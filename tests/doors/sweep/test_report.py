"""The sweep's progress line and summary."""

from __future__ import annotations

import io
import json

from coderefine.doors.sweep.records import FileOutcome, SweepResult
from coderefine.doors.sweep.report import SweepProgress, progress_line, render_sweep, render_sweep_json
from coderefine.doors.sweep.run import Snapshot


def test_the_progress_line_has_counts_cost_and_time_left() -> None:
    snapshot = Snapshot(
        40, 12, {"fixed": 5, "unchanged": 5, "findings": 1, "failed": 1}, 0.8412, 95.0, 4, 200.0
    )
    assert progress_line(snapshot) == (
        "coderefine sweep: 12/40 done (fixed 5, unchanged 5, findings 1, failed 1), 4 running, $0.84 so far, "
        "1m35s elapsed, ~3m20s left"
    )


def test_in_a_log_each_finished_file_is_a_line() -> None:
    stream = io.StringIO()
    progress = SweepProgress(stream, is_tty=False)
    progress.update(
        Snapshot(2, 1, {"failed": 1}, 0.0, 1.0, 1, None), FileOutcome("a.py", "failed", 4, "overloaded")
    )
    assert stream.getvalue() == "[1/2] a.py: failed: overloaded\n"


def test_the_summary_lists_every_file_and_how_to_continue() -> None:
    result = SweepResult(
        (
            FileOutcome("a.py", "fixed", written=True, cost=0.02),
            FileOutcome("b.py", "unchanged", cached=True),
            FileOutcome("c.py", "skipped", 1, "interrupted"),
        ),
        cost=0.02,
        interrupted=True,
    )
    text = render_sweep(result, "coderefine fix src")
    assert "a.py: fixed ($0.02)" in text and "b.py: unchanged cached" in text
    assert "run the same command again (coderefine fix src)" in text
    assert "'coderefine undo' restores them all" in text
    data = json.loads(render_sweep_json(result))
    assert data["exit_code"] == 130 and data["counts"]["skipped"] == 1 and data["written"] == ["a.py"]
    assert SweepResult((FileOutcome("a", "failed", 3), FileOutcome("b", "failed", 4)), 0.0).exit_code == 3
