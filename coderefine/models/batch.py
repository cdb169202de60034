"""``--batch``: model calls answered through a provider's batch API, at half price, when no one waits.

A ``BatchModel`` is a ``Model`` whose ``complete`` blocks. The calls of every worker that shares a
``BatchRun`` are gathered (until every worker waits, or no new call came for ``gather`` seconds), sent as one
batch, polled with progress on stderr, and each caller gets its own result by ``custom_id`` (a hash of what
the request sends). The first caller of a gather does the waiting for the whole group, so no thread is
started. Batch ids are stored (``batch_state.py``) before the wait: a run interrupted while it waited asks
the same requests again, finds them in a stored batch and waits for that one instead of paying twice.

Requests that come back errored (a retryable error), expired or canceled are sent once more in a new batch;
what fails again is a ``ProviderUnavailableError`` (exit 4). Results that succeeded are never sent again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from coderefine.errors import ModelError, ProviderUnavailableError, UsageError
from coderefine.models.base import Model, ModelReply, ModelRequest, Wrapped
from coderefine.models.batch_api import BatchBackend, BatchStatus, Failure, Outcome
from coderefine.models.batch_state import BatchStore

BATCH_PROVIDERS = "Anthropic's API (anthropic:MODEL or a bare Claude name) or OpenAI's (openai:MODEL)"


def custom_id(params: Mapping[str, Any]) -> str:
    """A stable id of what a request sends (the model included): ``[a-zA-Z0-9_-]{1,64}`` as both APIs ask."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "cr-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


@dataclass
class _Waiter:
    custom_id: str
    request: ModelRequest
    params: dict[str, Any]
    done: threading.Event = field(default_factory=threading.Event)
    reply: ModelReply | None = None
    error: BaseException | None = None


class BatchRun:
    """What the batch models of one run share: the state file, the workers' count, the clock, the sleep,
    the progress stream, and one collector per model. Pass the same ``BatchRun`` to every model of a run
    (``models.factory.make_role_model(..., batch=run)``) so that concurrent workers share batches."""

    def __init__(
        self,
        store: BatchStore,
        *,
        workers: int = 1,
        gather: float = 2.0,
        poll: float = 10.0,
        max_poll: float = 60.0,
        report_every: float = 60.0,
        poll_misses: int = 5,
        progress: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.workers = max(1, workers)
        self.gather = gather
        self.poll = poll
        self.max_poll = max_poll
        self.report_every = report_every
        self.poll_misses = poll_misses
        self.progress = progress
        self.clock = clock
        self.sleep = sleep
        self._collectors: dict[str, _Collector] = {}
        self._lock = threading.Lock()

    def wrap(self, model: Model, backend: BatchBackend | None = None) -> BatchModel:
        """``model`` answered through its provider's batch API (or ``backend``); a UsageError for a provider
        without one."""
        backend = backend or backend_for(model)
        with self._lock:
            collector = self._collectors.get(backend.name)
            if collector is None:
                collector = self._collectors[backend.name] = _Collector(backend, self)
        return BatchModel(model, collector)

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress.write(f"coderefine: {line}\n")
            self.progress.flush()


def batch_run(state: Path, *, workers: int = 1, progress: TextIO | None = None) -> BatchRun:
    """The ``BatchRun`` of a command, its batch ids stored in the file ``state`` (``batch_state.state_path``
    for a project: beside its undo journal)."""
    return BatchRun(BatchStore(state), workers=workers, progress=progress)


def backend_for(model: Model) -> BatchBackend:
    from coderefine.models.anthropic import AnthropicModel
    from coderefine.models.openai_chat import OpenAIChatModel

    if isinstance(model, AnthropicModel) and model.platform == "anthropic":
        from coderefine.models.batch_anthropic import AnthropicBatches

        return AnthropicBatches(model)
    if isinstance(model, OpenAIChatModel) and model.spec.provider.name == "openai":
        from coderefine.models.batch_openai import OpenAIBatches

        return OpenAIBatches(model)
    raise UsageError(
        f"--batch: {model.name} has no batch API that coderefine can use; it needs {BATCH_PROVIDERS}. "
        "Run without --batch, or choose such a model with --model"
    )


class BatchModel(Wrapped):
    """A model whose calls go through a shared collector and its provider's batch API."""

    def __init__(self, inner: Model, collector: _Collector) -> None:
        super().__init__(inner)
        self._collector = collector

    def complete(self, request: ModelRequest) -> ModelReply:
        return self._collector.complete(request)


class _Collector:
    def __init__(self, backend: BatchBackend, run: BatchRun) -> None:
        self._backend = backend
        self._run = run
        self._cond = threading.Condition()
        self._pending: list[_Waiter] = []
        self._gathering = False
        self._last = 0.0

    def complete(self, request: ModelRequest) -> ModelReply:
        params = self._backend.params(request)
        waiter = _Waiter(custom_id(params), request, params)
        with self._cond:
            self._pending.append(waiter)
            self._last = time.monotonic()
            self._cond.notify_all()
            lead = not self._gathering
            self._gathering = True
        if lead:
            group = self._gather()
            try:
                self._serve(group)
            except BaseException as exc:
                # Ctrl-C or a provider error while waiting: every caller of the group hears of it.
                for other in group:
                    if not other.done.is_set():
                        other.error = exc
                        other.done.set()
                raise
        waiter.done.wait()
        if waiter.error is not None:
            raise waiter.error
        assert waiter.reply is not None
        return waiter.reply

    def _gather(self) -> list[_Waiter]:
        """The calls to send together: wait until every worker is waiting, or no call came for a while."""
        with self._cond:
            while len(self._pending) < self._run.workers:
                quiet = self._run.gather - (time.monotonic() - self._last)
                if quiet <= 0:
                    break
                self._cond.wait(quiet)
            group, self._pending = self._pending, []
            self._gathering = False
            return group

    def _serve(self, group: list[_Waiter]) -> None:
        store, name = self._run.store, self._backend.name
        waiters: dict[str, list[_Waiter]] = {}
        for waiter in group:
            waiters.setdefault(waiter.custom_id, []).append(waiter)
        requests = {cid: ws[0].request for cid, ws in waiters.items()}
        params = {cid: ws[0].params for cid, ws in waiters.items()}
        jobs: dict[str, list[str]] = {}
        for cid in waiters:
            stored = store.find(name, cid)
            if stored is not None:
                jobs.setdefault(stored, []).append(cid)
        if jobs:
            self._run.say(f"resuming {len(jobs)} stored batch(es) of {name}: {', '.join(jobs)}")
        resumed = set(jobs)
        fresh = [cid for cid in waiters if not any(cid in ids for ids in jobs.values())]
        if fresh:
            jobs[self._submit(fresh, params)] = fresh
        outcomes = self._wait(jobs, requests, resumed)
        retry = [cid for cid, o in outcomes.items() if isinstance(o, Failure) and o.retryable]
        if retry:
            kinds = sorted({o.kind for o in outcomes.values() if isinstance(o, Failure) and o.retryable})
            self._run.say(f"{len(retry)} request(s) came back {', '.join(kinds)}; sending them once more")
            try:
                again = self._submit(retry, params)
                jobs[again] = retry
                outcomes.update(self._wait({again: retry}, requests, set()))
            except ProviderUnavailableError as exc:
                # The answers in hand are still handed over; only the failed requests end in this error.
                for cid in retry:
                    failed = outcomes[cid]
                    assert isinstance(failed, Failure)
                    outcomes[cid] = Failure(failed.kind, f"{failed.message}; the second try failed: {exc}")
        for cid, ws in waiters.items():
            outcome = outcomes.get(cid) or Failure("missing", "the batch's results did not include it")
            for waiter in ws:
                if isinstance(outcome, Failure):
                    waiter.error = _error(outcome, name)
                else:
                    waiter.reply = dataclasses.replace(outcome, batch=True)
        for batch_id, ids in jobs.items():
            try:
                store.deliver(batch_id, ids)
            except OSError as exc:
                # The answers are in hand; an unwritable state file only costs the resume.
                self._run.say(f"cannot update {store.path} ({exc}); the answers are kept")
        for waiter in group:
            waiter.done.set()

    def _submit(self, ids: Sequence[str], params: Mapping[str, dict[str, Any]]) -> str:
        batch_id = self._backend.create([(cid, params[cid]) for cid in ids])
        try:
            # Stored before any wait: from here on an interrupted run resumes this batch.
            self._run.store.add(self._backend.name, batch_id, ids)
        except OSError as exc:
            self._run.say(
                f"cannot store batch {batch_id} in {self._run.store.path} ({exc}); it cannot be resumed"
            )
        self._run.say(f"sent {len(ids)} request(s) to {self._backend.name} as batch {batch_id}")
        return batch_id

    def _wait(
        self, jobs: Mapping[str, Sequence[str]], requests: Mapping[str, ModelRequest], resumed: set[str]
    ) -> dict[str, Outcome]:
        """Poll each batch of ``jobs`` until it ends; the outcome of each of its requests."""
        run = self._run
        outcomes: dict[str, Outcome] = {}
        open_jobs = dict(jobs)
        start = last_report = run.clock()
        interval = run.poll
        last_line = ""
        misses = 0
        while open_jobs:
            done = total = 0
            try:
                for batch_id, ids in list(open_jobs.items()):
                    status = self._status(batch_id, ids, batch_id in resumed, outcomes)
                    if status is None:
                        del open_jobs[batch_id]
                        continue
                    done, total = done + status.done, total + status.total
                    if status.failed:
                        outcomes.update({c: Failure("failed", status.failed, retryable=False) for c in ids})
                        del open_jobs[batch_id]
                    elif status.ended:
                        found = self._backend.results(batch_id, {cid: requests[cid] for cid in ids})
                        outcomes.update({c: found.get(c) or Failure("missing", "no result") for c in ids})
                        del open_jobs[batch_id]
                misses = 0
            except ProviderUnavailableError as exc:
                # A wait can last hours: a network blip or an overloaded API between two polls is not
                # worth ending the run for. Past a few in a row it is, and the stored ids resume it.
                misses += 1
                if misses > run.poll_misses:
                    raise type(exc)(
                        f"{exc}; the batch is stored: run the same command again to resume it"
                    ) from exc
            if not open_jobs:
                break
            now = run.clock()
            line = f"batch of {self._backend.name}: {done}/{total} requests done"
            if line != last_line or now - last_report >= run.report_every:
                run.say(f"{line}, waiting {_duration(now - start)} (batches take minutes, at most 24 h)")
                last_line, last_report = line, now
            run.sleep(interval)
            interval = min(interval * 1.5, run.max_poll)
        return outcomes

    def _status(
        self, batch_id: str, ids: Sequence[str], resumed: bool, outcomes: dict[str, Outcome]
    ) -> BatchStatus | None:
        """The status of ``batch_id``; None for a stored batch the provider no longer knows (deleted, its
        results gone), whose requests are then failures to send again."""
        try:
            return self._backend.status(batch_id)
        except ModelError as exc:
            if not resumed or isinstance(exc, ProviderUnavailableError):
                raise
            self._run.store.forget(batch_id)
            outcomes.update({cid: Failure("gone", str(exc)) for cid in ids})
            return None


def _error(failure: Failure, name: str) -> ModelError:
    if not failure.retryable:
        return ModelError(f"the batch API refused a request to {name} ({failure.kind}): {failure.message}")
    return ProviderUnavailableError(
        f"a batch request to {name} got no answer after a second try ({failure.kind}: {failure.message}); "
        "run again later, or without --batch"
    )


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"
