"""``make-suite NAME --released-after DATE``: every pair of releases after the date tried, and a table of
what each gave (its tasks, or why none), with the share of pairs that gave a task."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coderefine.bench.counts import plural
from coderefine.errors import UsageError

TABLE_FILE = "pairs.md"


@dataclass(frozen=True)
class PairResult:
    old: str
    new: str
    tasks: int
    reason: str = ""  # why the pair gave no task
    tried: bool = True  # False: the sweep stopped before it (interrupted, or the same failure again)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep, with what the pairs tried so far gave: the table is still written."""

    def __init__(self, results: list[PairResult]) -> None:
        super().__init__()
        self.results = results


def try_pairs(
    name: str,
    pairs: Sequence[tuple[str, str]],
    build: Callable[[str, str], int],
    progress: Callable[[str], None] = lambda message: None,
) -> list[PairResult]:
    """Each pair built with ``build`` (OLD, NEW -> its tasks); a pair that gives none, or whose build is
    refused, is recorded with the reason (and told to ``progress`` at once), and the next pair is tried.
    Two pairs in a row whose tests lack the same packages stop the sweep: every later pair would fail
    the same way, each after a download and a venv. Ctrl-C raises ``SweepInterrupted`` with the rows."""
    results: list[PairResult] = []
    for index, (old, new) in enumerate(pairs):
        try:
            made = build(old, new)
        except UsageError as exc:
            progress(f"skipped {old} -> {new}: {exc}")
            results.append(PairResult(old, new, 0, _own(str(exc), f"{name}=={old} -> {new}")))
            missing = _same_missing(results[-2:])
            if missing and index + 1 < len(pairs):
                progress(
                    f"stopped: two pairs in a row lack {missing} for their tests; run again with "
                    f"--requires {missing} ({_left(len(pairs) - index - 1)})"
                )
                why = f"not tried: the pairs before lack {missing} (--requires)"
                results += [PairResult(o, n, 0, why, tried=False) for o, n in pairs[index + 1 :]]
                break
            continue
        except KeyboardInterrupt:
            results.append(PairResult(old, new, 0, "interrupted", tried=False))
            results += [
                PairResult(o, n, 0, "not tried: interrupted", tried=False) for o, n in pairs[index + 1 :]
            ]
            raise SweepInterrupted(results) from None
        results.append(PairResult(old, new, made, "" if made else "no task"))
    return results


def share(results: Sequence[PairResult]) -> str:
    """'3 of 5 pairs gave tasks (60%), 14 tasks' (of the pairs tried; the others are counted apart)."""
    tried = [r for r in results if r.tried]
    good = sum(1 for r in tried if r.tasks)
    percent = round(100 * good / len(tried)) if tried else 0
    total = sum(r.tasks for r in tried)
    untried = len(results) - len(tried)
    rest = f"; {untried} not tried" if untried else ""
    return f"{good} of {len(tried)} pairs gave tasks ({percent}%), {plural(total, 'task')}{rest}"


def table(name: str, results: Sequence[PairResult]) -> str:
    """A Markdown table of the pairs tried, then the share."""
    rows = ["| pair | tasks | reason for none |", "| --- | --- | --- |"]
    for result in results:
        reason = result.reason.replace("|", "\\|") if not result.tasks else ""
        rows.append(f"| {name} {result.old} -> {result.new} | {result.tasks} | {reason} |")
    return "\n".join(rows) + f"\n\n{name}: {share(results)}\n"


_MISSING = re.compile(r"adding (\S+) to --requires")


def _same_missing(last: Sequence[PairResult]) -> str:
    """The packages the last two failed pairs both lack (their ``adding X to --requires``), or ""."""
    if len(last) < 2:
        return ""
    found = {m.group(1) if (m := _MISSING.search(r.reason)) else "" for r in last}
    return found.pop() if len(found) == 1 else ""


def _own(message: str, label: str) -> str:
    """``message`` without the pair's own label in front: the table's row already names it."""
    return message.removeprefix(f"{label}: ")


def _left(count: int) -> str:
    return "the pair left was not tried" if count == 1 else f"the {count} pairs left were not tried"
