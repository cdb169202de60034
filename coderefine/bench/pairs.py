"""``make-suite NAME --released-after DATE``: every pair of releases after the date tried, and a table of
what each gave (its tasks, or why none), with the share of pairs that gave a task."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coderefine.errors import UsageError

TABLE_FILE = "pairs.md"


@dataclass(frozen=True)
class PairResult:
    old: str
    new: str
    tasks: int
    reason: str = ""  # why the pair gave no task


def try_pairs(
    name: str,
    pairs: Sequence[tuple[str, str]],
    build: Callable[[str, str], int],
    progress: Callable[[str], None] = lambda message: None,
) -> list[PairResult]:
    """Each pair built with ``build`` (OLD, NEW -> its tasks); a pair that gives none, or whose build is
    refused, is recorded with the reason (and told to ``progress`` at once), and the next pair is tried."""
    results = []
    for old, new in pairs:
        try:
            made = build(old, new)
        except UsageError as exc:
            progress(f"skipped {old} -> {new}: {exc}")
            results.append(PairResult(old, new, 0, _own(str(exc), f"{name}=={old} -> {new}")))
            continue
        results.append(PairResult(old, new, made, "" if made else "no task"))
    return results


def share(results: Sequence[PairResult]) -> str:
    """'3 of 5 pairs gave tasks (60%), 14 tasks'."""
    good = sum(1 for r in results if r.tasks)
    percent = round(100 * good / len(results)) if results else 0
    total = sum(r.tasks for r in results)
    return f"{good} of {len(results)} pairs gave tasks ({percent}%), {total} tasks"


def table(name: str, results: Sequence[PairResult]) -> str:
    """A Markdown table of the pairs tried, then the share."""
    rows = ["| pair | tasks | reason for none |", "| --- | --- | --- |"]
    for result in results:
        reason = result.reason.replace("|", "\\|") if not result.tasks else ""
        rows.append(f"| {name} {result.old} -> {result.new} | {result.tasks} | {reason} |")
    return "\n".join(rows) + f"\n\n{name}: {share(results)}\n"


def _own(message: str, label: str) -> str:
    """``message`` without the pair's own label in front: the table's row already names it."""
    return message.removeprefix(f"{label}: ")
