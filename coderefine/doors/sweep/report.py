"""A sweep's progress on stderr and its summary (text and JSON): render, never compute."""

from __future__ import annotations

import json
from typing import TextIO

from coderefine.doors.sweep.records import STATUSES, FileOutcome, SweepResult
from coderefine.doors.sweep.run import Snapshot


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def progress_line(snapshot: Snapshot) -> str:
    counts = snapshot.counts
    # The same words as the summary: a file left unchanged with findings in it is counted as such.
    findings = f", findings {counts['findings']}" if counts.get("findings") else ""
    left = "" if snapshot.remaining is None else f", ~{_duration(snapshot.remaining)} left"
    return (
        f"coderefine sweep: {snapshot.done}/{snapshot.total} done "
        f"(fixed {counts.get('fixed', 0)}, unchanged {counts.get('unchanged', 0)}{findings}, "
        f"failed {counts.get('failed', 0)}), {snapshot.running} running, "
        f"${snapshot.cost:.2f} so far, {_duration(snapshot.elapsed)} elapsed{left}"
    )


def outcome_line(outcome: FileOutcome) -> str:
    tags: list[str] = [outcome.status]
    if outcome.cached:
        tags.append("cached")
    text = f"{outcome.path}: {' '.join(tags)}"
    if outcome.detail:
        text += f": {outcome.detail.splitlines()[0]}"
    if outcome.cost:
        text += f" (${outcome.cost:.2f})"
    return text


class SweepProgress:
    """On a terminal: one line rewritten in place. Otherwise (CI logs): a line per finished file and
    the counts every tenth file."""

    def __init__(self, stream: TextIO, is_tty: bool) -> None:
        self._stream = stream
        self._tty = is_tty

    def update(self, snapshot: Snapshot, finished: FileOutcome | None) -> None:
        line = progress_line(snapshot)
        if self._tty:
            if finished is not None and finished.status == "failed":
                self._stream.write("\r\x1b[2K" + outcome_line(finished) + "\n")
            self._stream.write("\r\x1b[2K" + line)
        else:
            if finished is not None:
                self._stream.write(f"[{snapshot.done}/{snapshot.total}] {outcome_line(finished)}\n")
            if snapshot.done % 10 == 0 or snapshot.done == snapshot.total:
                self._stream.write(line + "\n")
        self._stream.flush()

    def done(self) -> None:
        if self._tty:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()


def render_sweep(result: SweepResult, command: str) -> str:
    """Every file's outcome, the counts, the cost, and what to do next."""
    lines = [outcome_line(o) for o in result.outcomes]
    for outcome in result.outcomes:
        if outcome.diff:
            lines.append(outcome.diff.rstrip("\n"))
    counts = result.counts()
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
    cached = sum(1 for o in result.outcomes if o.cached)
    budget = f" of a ${result.budget:.2f} budget" if result.budget else ""
    lines.append(
        f"coderefine sweep: {len(result.outcomes)} file(s): {summary}; {cached} from earlier runs; "
        f"${result.cost:.2f}{budget}; {_duration(result.elapsed)}"
    )
    skipped = [o.path for o in result.outcomes if o.status == "skipped" and o.detail == "budget"]
    if skipped:
        lines.append(f"skipped: budget: {', '.join(skipped)}")
    if result.written:
        lines.append(f"wrote {len(result.written)} file(s); 'coderefine undo' restores them all")
    if result.interrupted or skipped:
        lines.append(f"to continue, run the same command again ({command}): finished files are not run again")
    return "\n".join(lines) + "\n"


def sweep_data(result: SweepResult) -> dict[str, object]:
    return {
        "files": [o.data() for o in result.outcomes],
        "counts": result.counts(),
        "cost": round(result.cost, 6),
        "budget": result.budget or None,
        "written": list(result.written),
        "journal_entry": result.journal_entry or None,
        "interrupted": result.interrupted,
        "elapsed": round(result.elapsed, 3),
        "exit_code": result.exit_code,
    }


def render_sweep_json(result: SweepResult) -> str:
    return json.dumps(sweep_data(result), indent=2) + "\n"
