"""Run a sweep: one refine per file, ``jobs`` at a time, within a budget, resumable, one undo entry.

Each file is its own change (its uncommitted change, or the whole file), refined and written by the same
code as ``coderefine fix`` (``api.refine_and_write``) under one run lock, into one journal entry. A file's
failure is its outcome, never the run's end. Results are cached by the file's content (on disk and at
HEAD), intent, model and settings, so the same command run again after an interruption skips the files
that finished. The model is passed in (rate-limited, batched or recorded by the caller) and shared by the
workers; it must be safe to call from several threads, as the SDK clients are.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from coderefine.config import Settings
from coderefine.doors.sweep.costs import Meter, prior_cost
from coderefine.doors.sweep.records import FileOutcome, Status, SweepResult
from coderefine.doors.sweep.resume import cached_outcome, file_key
from coderefine.errors import EXIT_FINDINGS, EXIT_INTERNAL, CoderefineError
from coderefine.models.base import Model
from coderefine.project.cache import ReviewCache
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import Runner
from coderefine.project.writes import FileWrite, RunEntry
from coderefine.signals.snapshot import ProjectSnapshot


@dataclass(frozen=True)
class Snapshot:
    """Where a sweep stands, for a progress display."""

    total: int
    done: int
    counts: Mapping[str, int]
    cost: float
    elapsed: float
    running: int
    remaining: float | None  # seconds, estimated from the files finished so far (None: no estimate yet)


class Listener(Protocol):
    def update(self, snapshot: Snapshot, finished: FileOutcome | None) -> None: ...


class _Silent:
    def update(self, snapshot: Snapshot, finished: FileOutcome | None) -> None:
        pass


@dataclass(frozen=True)
class _Item:
    path: str
    key: str
    size: int


class Sweep:
    """One sweep over ``files`` (POSIX paths relative to ``root``). Build it, then ``run()``."""

    def __init__(
        self,
        root: Path,
        repo: GitRepo | None,
        settings: Settings,
        model: Model,
        *,
        runner: Runner,
        environ: Mapping[str, str],
        cache: ReviewCache,
        intent: str | None = None,
        write: bool = True,
        jobs: int | None = None,
        budget: float = 0.0,
        fail_on_fix: bool = False,
        listener: Listener | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self.repo = repo
        self.settings = settings
        self.model = model
        self.runner = runner
        self.environ = environ
        self.cache = cache
        self.intent = intent or settings.intent
        self.write = write
        self.jobs = max(jobs or settings.jobs, 1)
        self.budget = budget
        self.fail_on_fix = fail_on_fix
        self.listener = listener or _Silent()
        self.clock = clock
        self.cancel = threading.Event()
        self._lock = threading.Lock()
        # gitpython's persistent cat-file process serves one caller at a time.
        self._git_lock = threading.Lock()
        self._meters: dict[str, Meter] = {}
        self._spent = 0.0  # of finished files
        self._measured: list[float] = []  # the cost of each file that ran (no cache hit)
        self._heads: dict[str, str] = {}
        # The old bytes of every file this sweep wrote: each file's trees are the project as it was when
        # the sweep started, so a file written meanwhile cannot make a baseline and a candidate differ.
        self._originals: dict[str, bytes | None] = {}
        self._snapshot: ProjectSnapshot | None = None  # read once per run, for every file

    def run(
        self,
        files: Sequence[str],
        *,
        on_wait: Callable[[str], None] | None = None,
        on_recover: Callable[[tuple[str, ...]], None] | None = None,
    ) -> SweepResult:
        from coderefine.api import project_journal
        from coderefine.project.workspace import tree_files
        from coderefine.signals.snapshot import project_snapshot

        start = self.clock()
        with project_journal(self.root, self.repo, on_wait=on_wait, on_recover=on_recover) as journal:
            entry = journal.open_run() if self.write else None
            try:
                every = tree_files(self.root, self.repo)
                with project_snapshot(self.root, every, self.settings, self.environ) as snapshot:
                    self._snapshot = snapshot
                    outcomes, interrupted = self._schedule(self._items(files), every, entry, start)
            finally:
                self._snapshot = None
                if entry is not None:
                    entry.close()
        ordered = tuple(outcomes[path] for path in files)
        return SweepResult(
            ordered,
            cost=sum(o.cost for o in ordered),
            journal_entry=entry.name if entry is not None and entry.written else "",
            interrupted=interrupted,
            budget=self.budget,
            elapsed=self.clock() - start,
        )

    def _items(self, files: Sequence[str]) -> list[_Item]:
        heads = self.repo.blob_ids() if self.repo is not None and self.repo.root == self.root else {}
        self._heads = heads
        items = []
        for path in files:
            try:
                data = (self.root / path).read_bytes()
            except OSError:
                data = b""  # the worker reports the file as it fails to load it
            items.append(
                _Item(path, file_key(self.settings, self.intent, path, data, heads.get(path)), len(data))
            )
        return items

    def _schedule(
        self, items: list[_Item], files: list[str], entry: RunEntry | None, start: float
    ) -> tuple[dict[str, FileOutcome], bool]:
        outcomes: dict[str, FileOutcome] = {}
        waiting = deque(items)
        running: dict[Future[FileOutcome], _Item] = {}
        total = len(items)
        interrupted = False
        over_budget = False
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="coderefine-sweep")
        try:
            while waiting or running:
                while waiting and len(running) < self.jobs and not over_budget:
                    item = waiting[0]
                    hit = self.cache.get(item.key)
                    if hit is not None:
                        waiting.popleft()
                        outcomes[item.path] = cached_outcome(item.path, hit)
                        self._report(outcomes, total, len(running), start, outcomes[item.path])
                        continue
                    cap = self._room(item)
                    if cap is not None and cap <= 0:
                        over_budget = True
                        break
                    waiting.popleft()
                    settings = (
                        self.settings if cap is None else dataclasses.replace(self.settings, max_cost=cap)
                    )
                    running[pool.submit(self._one, item, settings, files, entry)] = item
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    item = running.pop(future)
                    outcomes[item.path] = self._finish(item, future.result(), start)
                    self._report(outcomes, total, len(running), start, outcomes[item.path])
        except KeyboardInterrupt:
            interrupted = True
            self.cancel.set()  # in-flight files stop at their next step; nothing is written after it
            for future, item in running.items():
                try:
                    outcomes[item.path] = self._finish(item, future.result(), start)
                except KeyboardInterrupt:
                    outcomes[item.path] = FileOutcome(item.path, "skipped", detail="interrupted")
        finally:
            pool.shutdown(wait=not interrupted, cancel_futures=True)
        reason = "interrupted" if interrupted else "budget"
        for item in items:
            if item.path not in outcomes:
                hit = None if interrupted else self.cache.get(item.key)  # done earlier: costs nothing now
                skipped = FileOutcome(item.path, "skipped", EXIT_FINDINGS, reason)
                outcomes[item.path] = skipped if hit is None else cached_outcome(item.path, hit)
        return outcomes, interrupted

    def _room(self, item: _Item) -> float | None:
        """The cost this file may take (None: no budget), or 0 when starting it would pass the budget.

        Spent so far, plus what the running files are still expected to cost, plus this file's expected
        cost must stay within the budget."""
        if not self.budget:
            return None
        with self._lock:
            expected = (
                sum(self._measured) / len(self._measured)
                if self._measured
                else prior_cost(item.size, self.settings)
            )
            live = sum(m.cost for m in self._meters.values())
            pending = sum(max(expected - m.cost, 0.0) for m in self._meters.values())
            left = self.budget - self._spent - live - pending
        if expected > left:
            return 0.0
        return min(left, self.settings.max_cost) if self.settings.max_cost else left

    def _one(self, item: _Item, settings: Settings, files: list[str], entry: RunEntry | None) -> FileOutcome:
        """One file, start to end; every error becomes the file's outcome."""
        from coderefine.api import CancelledError, refine_and_write
        from coderefine.doors.fix import write_decision
        from coderefine.project.change import from_worktree
        from coderefine.report.refine import final_diff

        meter = Meter(self.model, settings.prices)
        with self._lock:
            self._meters[item.path] = meter
        try:
            with self._git_lock:
                change = from_worktree(
                    [Path(item.path)], cwd=self.root, repo=self.repo, max_bytes=settings.max_file_kib * 1024
                )
            outcome = refine_and_write(
                change,
                settings,
                meter,
                files,
                writer=_Remembering(entry, self._originals, self._lock) if entry is not None else None,
                runner=self.runner,
                environ=self.environ,
                intent=self.intent,
                cancel=self.cancel,
                pinned=self._pins,
                snapshot=self._snapshot,
            )
        except CancelledError:
            return FileOutcome(item.path, "skipped", EXIT_FINDINGS, "interrupted", meter.cost, meter.tokens)
        except CoderefineError as exc:
            return FileOutcome(item.path, "failed", exc.exit_code, str(exc), meter.cost, meter.tokens)
        except Exception as exc:  # a bug on one file must not stop the others; it is reported as such
            detail = f"internal error: {type(exc).__name__}: {exc}"
            return FileOutcome(item.path, "failed", EXIT_INTERNAL, detail, meter.cost, meter.tokens)
        result = outcome.result
        findings = outcome.findings_remain(settings.fail_on)
        better = write_decision(result).write
        status: Status = "fixed" if better else "findings" if findings else "unchanged"
        code = EXIT_FINDINGS if findings or (self.fail_on_fix and outcome.written) else 0
        if better and not outcome.written:
            detail = "not written (dry run)"
        elif result.stop == "budget":
            detail = "stopped at the budget"
        else:
            detail = outcome.not_written
        return FileOutcome(
            item.path,
            status,
            code,
            detail,
            result.cost,
            result.total_usage.total,
            written=bool(outcome.written),
            diff=final_diff(result) if better and not outcome.written else "",
        )

    def _pins(self) -> dict[str, bytes | None]:
        """The files this sweep wrote, at their old bytes: every file's tests see the project as the sweep
        found it. Asked when a test tree is made, so a file written a moment before is caught too (its old
        bytes are noted before it is written)."""
        with self._lock:
            return dict(self._originals)

    def _finish(self, item: _Item, outcome: FileOutcome, start: float) -> FileOutcome:
        with self._lock:
            self._meters.pop(item.path, None)
            self._spent += outcome.cost
            if outcome.status != "skipped":
                self._measured.append(outcome.cost)
        if outcome.status in ("unchanged", "findings") or outcome.written:
            value = {
                k: v for k, v in outcome.data().items() if k in ("path", "status", "exit_code", "detail")
            }
            self.cache.put(item.key, value)
            if outcome.written:
                # The fixed content is done too: the same command again goes past this file.
                data = (self.root / item.path).read_bytes()
                after = file_key(self.settings, self.intent, item.path, data, self._heads.get(item.path))
                self.cache.put(after, {**value, "detail": "fixed by an earlier run"})
        return outcome

    def _report(
        self, outcomes: Mapping[str, FileOutcome], total: int, running: int, start: float, last: FileOutcome
    ) -> None:
        counts: dict[str, int] = {}
        for outcome in outcomes.values():
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
        with self._lock:
            cost = self._spent + sum(m.cost for m in self._meters.values())
            measured = len(self._measured)
        elapsed = self.clock() - start
        cached = sum(1 for o in outcomes.values() if o.cached)
        remaining = None
        if measured:
            left = total - len(outcomes)
            remaining = elapsed / (len(outcomes) - cached or 1) * left
        self.listener.update(Snapshot(total, len(outcomes), counts, cost, elapsed, running, remaining), last)


class _Remembering:
    """The run's journal entry, noting each file's old bytes before the file is written."""

    def __init__(self, entry: RunEntry, originals: dict[str, bytes | None], lock: threading.Lock) -> None:
        self._entry = entry
        self._originals = originals
        self._lock = lock

    def write(self, writes: Sequence[FileWrite]) -> str:
        with self._lock:
            for item in writes:
                self._originals.setdefault(item.path, item.before)
        return self._entry.write(writes)
