"""``coderefine fix`` and ``draft``: run the loop on a change and write the accepted result safely."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from coderefine.config import Settings
from coderefine.errors import LockedError, WriteError
from coderefine.models.base import Model
from coderefine.project.change import Change
from coderefine.project.runner import Runner
from coderefine.project.writes import FileWrite, Writer
from coderefine.refiner.acceptance import blocking
from coderefine.refiner.loop import refine
from coderefine.refiner.records import RefineResult
from coderefine.refiner.session import Progress
from coderefine.signals.base import SEVERITY_RANK
from coderefine.signals.evaluate import Evaluator, Pinned
from coderefine.signals.snapshot import ProjectSnapshot
from coderefine.signals.warm import WarmPytest
from coderefine.timings import Timeline, phase


@dataclass(frozen=True)
class WriteDecision:
    """Whether the run's final version may be written, and why not when it may not."""

    write: bool
    reason: str = ""


def write_decision(result: RefineResult) -> WriteDecision:
    """Write only what is shown better than the files as they are.

    Shown better: fewer introduced signals at some severity and more at none, or a version the critic
    passed with signals no worse. A draft is written when its signals are no worse: the intent asked
    for the new code. Anything else would leave the user with a different file that is not better.
    """
    if not result.changed:
        return WriteDecision(False)
    before, after = result.initial.comparison, result.evaluation.comparison
    if after.better_than(before):
        return WriteDecision(True)
    if not after.no_worse_than(before):
        return WriteDecision(False, "the best candidate's signals are worse than the files as they are")
    passed = bool(result.rounds) and result.rounds[-1].outcome == "passed"
    if passed or result.drafted:
        return WriteDecision(True)
    return WriteDecision(
        False, "the best candidate fixes no signal and the critic did not pass it, so it is not better"
    )


@dataclass(frozen=True)
class FixOutcome:
    result: RefineResult
    written: tuple[str, ...] = ()
    journal_entry: str = ""
    # Why a changed result was not written because it is not shown better ("" when written or unchanged).
    not_written: str = ""

    def findings_remain(self, fail_on: str) -> bool:
        """Blocking signals remain, or the critic's last word was issues at or above ``fail_on``.

        When the final version was not written (not shown better), the files as they were are judged.
        """
        if fail_on == "never":
            return False
        declined = self.result.changed and not write_decision(self.result).write
        comparison = self.result.initial.comparison if declined else self.result.evaluation.comparison
        if blocking(comparison, fail_on):
            return True
        critique = self.result.critique
        if critique is None or self.result.stop == "passed":
            return False
        floor = SEVERITY_RANK[fail_on]
        if not declined and self.result.rounds and self.result.rounds[-1].outcome == "accepted":
            return False  # the last critique's issues were addressed by an accepted revision
        return any(SEVERITY_RANK[i.severity] >= floor for i in critique.issues)


def run_refine(
    change: Change,
    settings: Settings,
    model: Model,
    runner: Runner,
    environ: Mapping[str, str],
    project_files: Sequence[str],
    *,
    intent: str | None = None,
    draft: bool = False,
    progress: Progress | None = None,
    pinned: Pinned | None = None,
    warm: WarmPytest | None = None,
    snapshot: ProjectSnapshot | None = None,
    timeline: Timeline | None = None,
) -> RefineResult:
    """``warm``: a warm test server already started for the project (``signals.prestart``); the run
    owns it. ``timeline`` gets the loop's phases, and the Evaluator's closing (its trees given back)."""
    with phase(timeline, "evaluator set-up"):
        evaluator = Evaluator(
            change, settings, runner, environ, project_files, pinned=pinned, warm=warm, snapshot=snapshot
        )
    with evaluator:
        result = refine(change, settings, model, evaluator, intent=intent, draft=draft, progress=progress)
        if timeline is not None:
            timeline.add(result.spans)
        # Timed apart: closing waits for the pool's last work and gives the trees back.
        with phase(timeline, "evaluator closed"):
            evaluator.close()
    return result


def pending_writes(result: RefineResult) -> tuple[list[FileWrite], list[str]]:
    """The writes of ``result``'s changed files, and the paths that changed on disk during the run
    (or, for a staged change, hold unstaged work): those must not be overwritten."""
    root: Path = result.change.root
    writes: list[FileWrite] = []
    conflicts: list[str] = []
    for path in result.changed_paths():
        file = result.change.file(path)
        target = root / path
        on_disk = target.read_bytes() if target.exists() else None
        expected = (
            None if file.kind == "added" and not target.exists() else file.after.encode(result.original[path])
        )
        if on_disk != expected:
            conflicts.append(path)
            continue
        writes.append(FileWrite(path, on_disk, file.after.encode(result.final[path])))
    return writes, conflicts


def write_result(result: RefineResult, journal: Writer) -> tuple[tuple[str, ...], str]:
    """Write the changed files of ``result`` atomically, with an undo journal entry.

    A file that changed on disk while the run was going is not overwritten: nothing is written then.
    """
    writes, conflicts = pending_writes(result)
    if conflicts:
        raise WriteError(
            f"{', '.join(conflicts)} changed while coderefine was running; nothing was written. "
            "Run coderefine again."
        )
    if not writes:
        return (), ""
    entry = journal.write(writes)
    return tuple(w.path for w in writes), entry


def disk_state(change: Change) -> dict[str, bytes | None]:
    """What the change's files hold on disk now (None: absent). For a change read from the working tree
    or named files, what was read is what the disk held, so that is the state, from the moment it was
    read; ``stale_paths`` compares it with the disk later."""
    now = {f.path: _read(change.root / f.path) for f in change.files}
    if change.source in ("worktree", "files"):
        # a draft's new file is not on disk yet: nothing was read
        return {f.path: f.after.encode() if now[f.path] is not None else None for f in change.files}
    return now


def current_change(
    change: Change, seen: Mapping[str, bytes | None], reload: Callable[[], Change] | None
) -> Change:
    """``change``, or the change read again when its files moved on while the lock was awaited: the
    model is never paid for a version that could not be written."""
    stale = stale_paths(change, seen)
    if not stale:
        return change
    again = reload() if reload is not None else None
    if again is None or not again.files:
        raise LockedError(
            f"{', '.join(stale)} changed while this run waited for another coderefine run in the project; "
            "nothing was sent to the model. Run coderefine again to refine the new content."
        )
    return again


def stale_paths(change: Change, seen: Mapping[str, bytes | None]) -> list[str]:
    """The change's files whose disk content is no longer ``seen``."""
    return [f.path for f in change.files if _read(change.root / f.path) != seen.get(f.path)]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
