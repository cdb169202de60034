"""Run strategies over tasks: concurrently (bounded), resumably (a cache entry per task, strategy, model
and settings), and scored by the full hidden tests, which never reach the model or the signals."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine import __version__
from coderefine.bench.strategies import Strategy
from coderefine.bench.tasks import MODULE, Task
from coderefine.change import from_worktree
from coderefine.config import Settings
from coderefine.errors import ModelError, ToolError
from coderefine.evaluate import Evaluation, Evaluator
from coderefine.loop import refine
from coderefine.models.base import Model
from coderefine.prompting import PROTOCOL_VERSION
from coderefine.runner import Runner
from coderefine.signals.base import Comparison, SignalSet, SourceStatus
from coderefine.workspace import project_files

HIDDEN_TIMEOUT = 20.0


@dataclass(frozen=True)
class TaskResult:
    task_id: str
    bug_type: str
    strategy: str
    model: str
    passed_before: bool
    passed_after: bool
    rounds: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    seconds: float
    gate_rejections: int
    stop: str
    error: str = ""
    # Per role and model: {"role", "model", "tokens", "cost"} (a mixed strategy has one per model).
    models: tuple[dict[str, Any], ...] = ()

    @property
    def fixed(self) -> bool:
        return self.passed_after

    @property
    def regression(self) -> bool:
        return self.passed_before and not self.passed_after


class _NoSignals:
    """The evaluator of strategies without signals: nothing is measured, so nothing is ever worse."""

    def evaluate(self, texts: Mapping[str, str]) -> Evaluation:
        status = SourceStatus("signals", "skipped", "this strategy uses no signals")
        return Evaluation(SignalSet((), (status,)), Comparison((), (), (), (status,)))


def passes_hidden_tests(task: Task, module: str, folder: Path, runner: Runner) -> bool:
    program = folder / "hidden_check.py"
    program.write_text(task.hidden_program(module), encoding="utf-8")
    try:
        done = runner.run([sys.executable, str(program)], cwd=folder, timeout=HIDDEN_TIMEOUT)
    except ToolError:
        return False
    finally:
        program.unlink(missing_ok=True)
    return done.code == 0


def cache_key(task: Task, strategy: Strategy, model: str, settings: Settings) -> str:
    parts = [
        __version__,
        PROTOCOL_VERSION,
        task.task_id,
        dataclasses.astuple(strategy),
        model,
        settings.max_output_tokens,
        settings.test_timeout,
        settings.ruff_select,
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:20]


def run_task(
    task: Task,
    strategy: Strategy,
    model: Model,
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    clock: Callable[[], float] = time.monotonic,
) -> TaskResult:
    start = clock()
    with tempfile.TemporaryDirectory(prefix="coderefine-bench-") as scratch:
        folder = task.materialise(Path(scratch) / "task")
        before = passes_hidden_tests(task, task.buggy_program, Path(scratch), runner)
        change = from_worktree([Path(MODULE)], cwd=folder, repo=None, max_bytes=1 << 20)
        # Correctness is what is scored: lint warnings of the original code (HumanEval's "l" names) do
        # not block a pass; failing example tests and syntax errors do.
        run_settings = dataclasses.replace(
            settings, tests=strategy.signals, ruff_format=False, fail_on="error"
        )
        error = ""
        try:
            with Evaluator(change, run_settings, runner, environ, project_files(folder, None)) as evaluator:
                result = refine(
                    change,
                    run_settings,
                    model,
                    evaluator if strategy.signals else _NoSignals(),
                    intent=task.intent,
                    draft=strategy.draft,
                    max_rounds=strategy.rounds,
                    use_critic=strategy.critic,
                )
            final = result.final[MODULE]
        except ModelError as exc:
            error, final, result = str(exc), task.buggy_program, None
        after = passes_hidden_tests(task, final, Path(scratch), runner)
    usage = result.total_usage if result is not None else None
    return TaskResult(
        task_id=task.task_id,
        bug_type=task.bug_type,
        strategy=strategy.name,
        model=model.name,
        passed_before=before,
        passed_after=after,
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
        models=tuple(
            {"role": c.role, "model": c.model, "tokens": c.usage.total, "cost": c.cost}
            for c in result.charges
        )
        if result
        else (),
    )


def run_bench(
    tasks: Sequence[Task],
    strategies: Sequence[Strategy],
    model_for: Callable[[Task], Model],
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    *,
    cache_dir: Path | None,
    jobs: int,
    on_result: Callable[[TaskResult, bool], None] | None = None,
) -> list[TaskResult]:
    """Every (task, strategy) pair; a pair already in ``cache_dir`` is read back instead of run."""
    results: list[TaskResult] = []
    pending: list[tuple[Task, Strategy, Path | None]] = []
    for strategy in strategies:
        for task in tasks:
            entry = None
            if cache_dir is not None:
                entry = cache_dir / f"{cache_key(task, strategy, model_for(task).name, settings)}.json"
                if entry.exists():
                    try:
                        data = json.loads(entry.read_text())
                        cached = TaskResult(**{**data, "models": tuple(data.get("models", ()))})
                    except (ValueError, TypeError):
                        cached = None
                    if cached is not None:
                        results.append(cached)
                        if on_result:
                            on_result(cached, True)
                        continue
            pending.append((task, strategy, entry))
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        futures = {
            pool.submit(run_task, task, strategy, model_for(task), settings, runner, environ): entry
            for task, strategy, entry in pending
        }
        for future in as_completed(futures):
            result = future.result()
            entry = futures[future]
            if entry is not None and not result.error:
                entry.parent.mkdir(parents=True, exist_ok=True)
                entry.write_text(json.dumps(dataclasses.asdict(result)))
            results.append(result)
            if on_result:
                on_result(result, False)
    order = {s.name: i for i, s in enumerate(strategies)}
    return sorted(results, key=lambda r: (order.get(r.strategy, 99), _task_number(r.task_id)))


def _task_number(task_id: str) -> int:
    tail = task_id.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _by_model(rows: Sequence[TaskResult]) -> dict[str, dict[str, float]]:
    """Tokens and cost per "role model" over ``rows``."""
    totals: dict[str, dict[str, float]] = {}
    for row in rows:
        for charge in row.models:
            entry = totals.setdefault(f"{charge['role']} {charge['model']}", {"tokens": 0, "cost": 0.0})
            entry["tokens"] += charge["tokens"]
            entry["cost"] += charge["cost"]
    return totals


def summary(results: Sequence[TaskResult]) -> dict[str, Any]:
    """Per strategy: fix rate (overall, by bug type), rounds, tokens, cost, time, rejections, regressions."""
    by_strategy: dict[str, list[TaskResult]] = {}
    for result in results:
        by_strategy.setdefault(result.strategy, []).append(result)
    table: dict[str, Any] = {}
    for name, rows in by_strategy.items():
        kinds: dict[str, list[TaskResult]] = {}
        for row in rows:
            kinds.setdefault(row.bug_type, []).append(row)
        table[name] = {
            "tasks": len(rows),
            "fixed": sum(r.fixed for r in rows),
            "fix_rate": sum(r.fixed for r in rows) / len(rows),
            "by_bug_type": {k: sum(r.fixed for r in v) / len(v) for k, v in sorted(kinds.items())},
            "mean_rounds": sum(r.rounds for r in rows) / len(rows),
            "input_tokens": sum(r.input_tokens for r in rows),
            "output_tokens": sum(r.output_tokens for r in rows),
            "cache_read_tokens": sum(r.cache_read_tokens for r in rows),
            "cache_write_tokens": sum(r.cache_write_tokens for r in rows),
            "cost": sum(r.cost for r in rows),
            "seconds": sum(r.seconds for r in rows),
            "gate_rejections": sum(r.gate_rejections for r in rows),
            "regressions": sum(r.regression for r in rows),
            "errors": sum(bool(r.error) for r in rows),
            "by_model": _by_model(rows),
        }
    return table
