"""Run strategies over tasks: concurrently (bounded), resumably (a cache entry per task, strategy, model
and settings), and scored by the full hidden tests, which never reach the model or the signals."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from coderefine.bench.contain import end_marked, marked
from coderefine.bench.localized import bug_lines, localized, task_changes
from coderefine.bench.result import TaskResult, lines_changed, round_note
from coderefine.bench.review_run import review_result
from coderefine.bench.score import score
from coderefine.bench.stable import stable_environ
from coderefine.bench.strategies import Strategy
from coderefine.bench.suite import REVIEW_KINDS
from coderefine.bench.task import BenchTask
from coderefine.config import Settings
from coderefine.errors import ModelError, ServerDiedError
from coderefine.models.base import Model
from coderefine.project.change import from_worktree
from coderefine.project.runner import Runner
from coderefine.project.workspace import project_files
from coderefine.refiner.loop import refine
from coderefine.refiner.prompting import PROTOCOL_VERSION
from coderefine.signals.base import Comparison, SignalSet, SourceStatus
from coderefine.signals.evaluate import Evaluation, Evaluator
from coderefine.version import __version__


class _NoSignals:
    """The evaluator of strategies without signals: nothing is measured, so nothing is ever worse."""

    def evaluate(self, texts: Mapping[str, str]) -> Evaluation:
        status = SourceStatus("signals", "skipped", "this strategy uses no signals")
        return Evaluation(SignalSet((), (status,)), Comparison((), (), (), (status,)))


def cache_key(task: BenchTask, strategy: Strategy, model: str, settings: Settings) -> str:
    parts = [
        __version__,
        PROTOCOL_VERSION,
        task.task_id,
        task.intent,
        task.oracle_edits(),
        dataclasses.astuple(strategy),
        model,
        settings.max_output_tokens,
        settings.test_timeout,
        settings.ruff_select,
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:20]


def run_task(
    task: BenchTask,
    strategy: Strategy,
    model: Model,
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    clock: Callable[[], float] = time.monotonic,
) -> TaskResult:
    # The loop's and the review's test runs, and the scoring, all see hypothesis without chance or
    # deadlines: a busy machine must not change what a model is shown or how a task scores. Their
    # temporary files go to a folder of the pair's own, and what their tests start ends with the pair.
    with tempfile.TemporaryDirectory(prefix="coderefine-bench-temp-") as temp:
        env = marked(stable_environ(environ), Path(temp))
        try:
            return _run_task(task, strategy, model, settings, runner, env, clock)
        finally:
            end_marked(env)


def _run_task(
    task: BenchTask,
    strategy: Strategy,
    model: Model,
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    clock: Callable[[], float],
) -> TaskResult:
    if task.kind in REVIEW_KINDS:
        return review_result(task, strategy, model, settings, runner, environ, clock)
    start = clock()
    with tempfile.TemporaryDirectory(prefix="coderefine-bench-") as scratch:
        folder = task.materialise(Path(scratch) / "task")
        paths = tuple(getattr(task, "paths", ()) or (task.path,))  # a release task may change several
        originals = {p: (folder / p).read_text("utf-8") for p in paths}
        # Only a clean task starts from correct code; every other task's starting code fails its score.
        before = score(
            task,
            _scored(task, originals),
            Path(scratch),
            runner,
            environ,
            expect_failure=task.kind != "clean",
        )
        # One-shot runs no test, so it is given the visible failing tests to read, as the loop reads
        # them from its signals: the same spec on both sides.
        shown = (
            task.failing_visible(folder, runner, environ) if strategy.draft and not strategy.signals else ()
        )
        change = from_worktree([Path(p) for p in paths], cwd=folder, repo=None, max_bytes=4 << 20)
        # Correctness is what is scored: lint warnings of the original code (HumanEval's "l" names) do
        # not block a pass; failing example tests and syntax errors do.
        run_settings = dataclasses.replace(
            settings,
            tests=strategy.signals,
            ruff_format=False,
            fail_on="error",
            python=task.python or settings.python,
            confirm=strategy.confirm,
            first_critique=strategy.first,
            merge=strategy.merge,
        )
        error = ""
        try:
            with Evaluator(
                change, run_settings, runner, environ, project_files(folder, None), persistent=False
            ) as evaluator:
                result = refine(
                    change,
                    run_settings,
                    model,
                    evaluator if strategy.signals else _NoSignals(),
                    intent=task.intent,
                    draft=strategy.draft,
                    max_rounds=strategy.rounds,
                    use_critic=strategy.critic,
                    retry_worse=strategy.retry_worse,
                    spec_tests=shown,
                )
            finals = {p: result.final.get(p, originals[p]) for p in paths}
        except ServerDiedError:
            raise  # every later task would meet the same dead server: the run stops here
        except ModelError as exc:
            error, finals, result = str(exc), originals, None
        # Unchanged code of a task that started failing fails again by construction: no re-run.
        unchanged_failure = task.kind != "clean" and finals == originals
        after = score(
            task, _scored(task, finals), Path(scratch), runner, environ, expect_failure=unchanged_failure
        )
    usage = result.total_usage if result is not None else None
    return TaskResult(
        task_id=task.task_id,
        bug_type=task.bug_type,
        strategy=strategy.name,
        model=model.name,
        passed_before=before.passed,
        passed_after=after.passed,
        rounds=sum(1 for r in result.rounds if r.number > 0) if result else 0,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        cache_read_tokens=usage.cache_read_tokens if usage else 0,
        cache_write_tokens=usage.cache_write_tokens if usage else 0,
        cost=result.cost if result else 0.0,
        seconds=clock() - start,
        gate_rejections=sum(1 for r in result.rounds if r.outcome in ("gate-failed", "edit-failed"))
        if result
        else 0,
        stop=result.stop if result else "error",
        error=error,
        kind=task.kind,
        shape=task.shape,
        strength=task.strength,
        mutation=task.mutation,
        changed=finals != originals,
        lines_changed=sum(lines_changed(originals[p], finals[p]) for p in paths),
        files=len(paths),
        models=tuple(
            {"role": c.role, "model": c.model, "tokens": c.usage.total, "cost": c.cost}
            for c in result.charges
        )
        if result
        else (),
        reruns=before.reran + after.reran,
        flaky=before.flaky or after.flaky,
        edit_format=result.edit_format if result else "",
        asks=result.asks if result else 0,
        largest_call=result.largest_call if result else 0,
        localized=localized(bug_lines(task_changes(task), originals), result.first_shown) if result else None,
        round_notes=tuple(
            round_note(r.number, r.outcome, r.note)
            for r in (result.rounds if result else ())
            if r.outcome != "accepted"  # "passed": the critic and the signals passed what was left
        ),
    )


def _scored(task: BenchTask, texts: Mapping[str, str]) -> Any:
    """What ``task.passes`` scores: the one file's text, or every file's for a task of several."""
    return texts[task.path] if len(texts) == 1 else texts


ModelFor = Callable[[BenchTask, Strategy], Model]
_Item = TypeVar("_Item")


def run_bench(
    tasks: Sequence[BenchTask],
    strategies: Sequence[Strategy],
    model_for: ModelFor,
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    *,
    cache_dir: Path | None,
    jobs: int,
    on_result: Callable[[TaskResult, bool], None] | None = None,
    keep: Callable[[BenchTask, Strategy], bool] | None = None,
    on_start: Callable[[BenchTask, Strategy], None] | None = None,
) -> list[TaskResult]:
    """Every (task, strategy) pair; a pair already in ``cache_dir`` is read back instead of run.

    ``model_for`` gives the model of a pair (a strategy may name its own). The pairs run on daemon
    threads: on Ctrl-C or SIGTERM the main thread stops the runner's processes and returns at once,
    without waiting for a model reply that may take a minute. ``keep`` chooses the pairs of a shard.
    ``on_start`` hears of each pair that is run (not read back) as it starts: a pair of a small local
    model can take half an hour, and a run that says nothing until then looks hung.
    """
    results: list[TaskResult] = []
    pending: list[tuple[BenchTask, Strategy, Path | None]] = []
    for strategy in strategies:
        for task in tasks:
            if strategy.review != (task.kind in REVIEW_KINDS):
                continue  # review tasks go through `coderefine review`, the others through the loop
            if keep is not None and not keep(task, strategy):
                continue
            entry = None
            if cache_dir is not None:
                key = cache_key(task, strategy, model_for(task, strategy).name, settings)
                entry = cache_dir / f"{key}.json"
                cached = _read_cached(entry)
                if cached is not None:
                    results.append(cached)
                    if on_result:
                        on_result(cached, True)
                    continue
            pending.append((task, strategy, entry))

    # A pair's end is told by the worker that ran it, before it starts another: with one job, a pair's
    # result comes before the next pair's start; the lock keeps each event's line whole.
    told = threading.Lock()

    def work(item: tuple[BenchTask, Strategy, Path | None]) -> TaskResult:
        task, strategy, _ = item
        if on_start:
            with told:
                on_start(task, strategy)
        result = run_task(task, strategy, model_for(task, strategy), settings, runner, environ)
        if on_result:
            with told:
                on_result(result, False)
        return result

    for (_, _, entry), result in _run_all(pending, work, jobs, runner):
        if entry is not None and not result.error:
            entry.parent.mkdir(parents=True, exist_ok=True)
            entry.write_text(json.dumps(dataclasses.asdict(result)))
        results.append(result)
    order = {s.name: i for i, s in enumerate(strategies)}
    return sorted(results, key=lambda r: (order.get(r.strategy, 99), _task_number(r.task_id), r.task_id))


def _read_cached(entry: Path) -> TaskResult | None:
    if not entry.exists():
        return None
    try:
        data = json.loads(entry.read_text())
        data["models"] = tuple(data.get("models", ()))
        data["round_notes"] = tuple(data.get("round_notes", ()))
        return TaskResult(**data)
    except (ValueError, TypeError):
        return None


def _run_all(
    items: Sequence[_Item], work: Callable[[_Item], TaskResult], jobs: int, runner: Runner
) -> Iterator[tuple[_Item, TaskResult]]:
    """``work`` on each item on up to ``jobs`` daemon threads, yielding results as they finish."""
    todo: queue.Queue[_Item] = queue.Queue()
    for item in items:
        todo.put(item)
    done: queue.Queue[tuple[_Item, TaskResult | None, BaseException | None]] = queue.Queue()
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((item, work(item), None))
            except BaseException as exc:  # handed to the main thread, which raises it
                done.put((item, None, exc))

    for _ in range(max(1, min(jobs, len(items)))):
        threading.Thread(target=worker, daemon=True, name="coderefine-bench").start()
    finished = False
    try:
        for _ in items:
            item, result, error = done.get()
            if error is not None:
                raise error
            assert result is not None
            yield item, result
        finished = True
    finally:
        stop.set()
        kill_all = getattr(runner, "kill_all", None)
        if not finished and kill_all is not None:
            kill_all()


def _task_number(task_id: str) -> int:
    tail = task_id.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else 0
